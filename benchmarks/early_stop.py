"""Early termination on the clock: the same methods and seeds with --early-stop none, posterior, percentile.

What it does (issue 18's results), on one problem (default pco64):

1. ``run_benchmark(methods, seeds, budget_hours=H, early_stop=S, jobs)`` for
   each setting ``S`` into ``OUT/<S>`` (each a complete comparison with its
   summary and cost report; rerunning resumes);
2. per method and setting (:mod:`bolt_pco64.bench.earlymetrics`): runs
   stopped, GPU-hours saved, near-optimal runs (within 1 % of the optimum)
   proposed and wrongly stopped, with the rate's exact interval;
3. ERT to within 1 % (and 2 %, 5 %) of the optimum in GPU-hours per method
   and setting with its bootstrap interval, and each setting against
   ``none`` paired by seed (ERT ratio, paired bootstrap interval, sign test);
4. writes ``RESULTS/early_stop.md`` (the report, wall times included,
   measured under whatever load the machine has), ``early_stop.csv``,
   ``ert.csv`` and ``comparisons.csv``.

Run (the full form; ``--seeds 5`` for a first look)::

    python benchmarks/early_stop.py --seeds 20 --budget-hours 800 --jobs 2 \\
        --out bench-results/early-stop --results docs/results/early-stop
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench import run_benchmark
from bolt_pco64.bench.earlymetrics import early_stop_summary, paired_ert
from bolt_pco64.bo.early_stop import EARLY_STOP_DEFAULTS
from bolt_pco64.costs import COST_DEFAULTS
from bolt_pco64.table import load_table

SETTINGS = ("none", "posterior", "percentile")
TARGETS = (0.01, 0.02, 0.05)


def _f(x: float, digits: int = 3) -> str:
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "—"
    return f"{x:.{digits}g}"


def _ci(v: float, lo: float, hi: float) -> str:
    return f"{_f(v)} [{_f(lo)}, {_f(hi)}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="pco64")
    p.add_argument("--methods", nargs="+", default=["qlognei"])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--budget-hours", type=float, default=800.0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--settings", nargs="+", default=list(SETTINGS))
    p.add_argument("--out", default="bench-results/early-stop")
    p.add_argument("--results", default="docs/results/early-stop")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    table = load_table(instance=a.problem)
    optimum = float(table.frame["throughput_mean"].max())
    records, seconds, ran = {}, {}, {}
    for setting in a.settings:
        t0 = time.perf_counter()
        result = run_benchmark(
            methods=a.methods,
            seeds=a.seeds,
            budget_hours=a.budget_hours,
            early_stop=setting,
            jobs=a.jobs,
            out=Path(a.out) / setting,
            problem=a.problem,
            progress=False,
        )
        seconds[setting] = time.perf_counter() - t0
        ran[setting] = len(result.ran)
        if result.errors:
            raise SystemExit(f"{setting}: failed runs {sorted(result.errors)}")
        records[setting] = result.records
    summary = pd.concat(
        [
            early_stop_summary(r, table, budget_hours=a.budget_hours).assign(setting=s)
            for s, r in records.items()
        ],
        ignore_index=True,
    )
    ert, cmp = paired_ert(
        records, optimum, "none", TARGETS, budget_hours=a.budget_hours
    )
    out = Path(a.results)
    out.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out / "early_stop.csv", index=False)
    ert.to_csv(out / "ert.csv", index=False)
    cmp.to_csv(out / "comparisons.csv", index=False)
    lines = [
        f"# Early termination on the {a.problem} stand-in (simulated)",
        "",
        f"Methods {', '.join(a.methods)}; seeds 0..{a.seeds - 1}; a budget of "
        f"{a.budget_hours:g} GPU-hours per run, one worker; the same initial "
        "designs in every setting. Start-up "
        f"{COST_DEFAULTS.startup_seconds:g} s per run (assumed). Policies with "
        f"their defaults: {EARLY_STOP_DEFAULTS}.",
        "",
        "Command: `python benchmarks/early_stop.py "
        f"--problem {a.problem} --methods {' '.join(a.methods)} --seeds {a.seeds} "
        f"--budget-hours {a.budget_hours:g} --jobs {a.jobs}`",
        "",
        "## Runs stopped, GPU-hours saved, near-optimal runs stopped",
        "",
        "Near-optimal: true throughput within 1 % of the optimum. The rate is "
        "among the near-optimal runs proposed, pooled over seeds, with its "
        "exact 95 % interval; *before target*: the same among the near-optimal "
        "runs proposed while the run had not yet completed one (the stops that "
        "delay reaching the target; the others stop a second near-optimal "
        "configuration below an incumbent that already is one).",
        "",
        "| method | setting | evaluations | stopped | GPU-hours charged | saved "
        "(share) | wrongly stopped / near-optimal proposed | rate [95 %] | "
        "before target: wrongly stopped / proposed | rate [95 %] |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in summary.iterrows():
        lines.append(
            f"| {r['method']} | {r['setting']} | {r['evaluations']} | "
            f"{r['stopped']} | {r['gpu_hours']:.0f} | {r['gpu_hours_saved']:.0f} "
            f"({r['saved_share']:.0%}) | {r['wrongly_stopped']} / "
            f"{r['near_optimal']} | "
            f"{_ci(r['wrong_rate'], r['wrong_low'], r['wrong_high'])} | "
            f"{r['wrongly_stopped_open']} / {r['near_optimal_open']} | "
            f"{_ci(r['wrong_open_rate'], r['wrong_open_low'], r['wrong_open_high'])} |"
        )
    lines += [
        "",
        "## ERT to the target (GPU-hours), bootstrap 95 % intervals",
        "",
        "| method [setting] | target | reached | ERT [95 %] |",
        "|---|---|---|---|",
    ]
    for _, r in ert.iterrows():
        lines.append(
            f"| {r['method']} | {r['target']:.0%} | {r['reached']}/{r['runs']} | "
            f"{_ci(r['ert'], r['ert_low'], r['ert_high'])} |"
        )
    lines += [
        "",
        "## Against `none`, paired by seed",
        "",
        "ERT ratio < 1: early termination reached the target for fewer "
        "GPU-hours; interval: paired bootstrap over seeds; p: two-sided sign "
        "test of the per-seed costs.",
        "",
        "| method | setting | target | ERT ratio [95 %] | cheaper / tied / dearer | p |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in cmp.iterrows():
        lines.append(
            f"| {r['base_method']} | {r['setting']} | {r['target']:.0%} | "
            f"{_ci(r['ert_ratio'], r['ratio_low'], r['ratio_high'])} | "
            f"{r['better']:.0%} / {r['tied']:.0%} / {r['worse']:.0%} | "
            f"{r['p_value']:.3g} |"
        )
    lines += [
        "",
        "Wall time per setting (this machine, under load; runs resumed from "
        "`--out` are not rerun): "
        + ", ".join(f"{s} {v:.0f} s ({ran[s]} runs run)" for s, v in seconds.items())
        + ".",
        "",
    ]
    text = "\n".join(lines)
    atomic_write_text(out / "early_stop.md", text)
    print(text)


if __name__ == "__main__":
    main()
