"""Early termination on the clock: the same methods and seeds with --early-stop none, posterior, percentile.

What it does (the early-termination results, with their metrics), on one problem
(default pco64), into one result folder ``OUT``:

1. ``ComparisonSpec(methods, seeds, budget_hours=H, early_stop=S)`` run for
   each setting ``S`` into ``OUT/<S>`` (each a complete comparison with its
   per-evaluation records, ``runs.parquet``, its summary and cost report;
   rerunning resumes);
2. per method and setting (``benchmarks/_early_outcomes.py``): the
   found-optimum rate (the run evaluated the optimum fully), the regret-0
   rate, the regret at the end of the budget, and the runs that started
   the optimum and stopped it (never measured fully), with exact intervals
   over seeds; each setting against ``none`` paired by seed (end-of-budget
   regret: median difference, Wilcoxon p; found optimum lost / gained,
   exact McNemar p);
3. per method and setting (``benchmarks/_early_metrics.py``): runs
   stopped, GPU-hours saved, near-optimal runs (within 1 % of the optimum)
   proposed and wrongly stopped, with the rate's exact interval;
4. ERT to within 1 % (and 2 %, 5 %) of the optimum in GPU-hours per method
   and setting with its bootstrap interval, and each setting against
   ``none`` paired by seed (ERT ratio, paired bootstrap interval, sign test);
5. writes ``OUT/early_stop.md`` (the report, wall times included, measured
   under whatever load the machine has), ``outcomes.csv``,
   ``paired_outcomes.csv``, ``early_stop.csv``, ``ert.csv`` and
   ``comparisons.csv``, and ``OUT/report.json``: the marker of this
   script's folder (``benchmarks/report_results.py OUT`` runs ``--report OUT``) with
   the settings and the measured wall times.

``--results DIR`` (the folder to commit, e.g. ``docs/results/early-stop``)
then receives what a reader needs to check the report and nothing else: the
marker, the report files and, per setting, the comparison's files
(``runs.parquet``, ``meta.json``, its summaries and plots), not the per-run
files ``OUT/<setting>/runs/`` keeps for resuming.

``--report OUT`` rewrites the report files from the records in
``OUT/<setting>/runs.parquet`` and ``OUT/report.json`` without running
anything (byte for byte on one machine and environment), and prints the
files written. It reads the problem's default table for each row's true
throughput and full cost, and refuses a table whose fingerprint is not the
one the runs were made on (``meta.json``).

Run (the full form: 2 methods x 20 seeds x 3 settings; ``--seeds 2`` for a
first look)::

    python benchmarks/early_stop.py --seeds 20 --methods qlognei random \\
        --budget-hours 800 --jobs 2 --out bench-results/early-stop \\
        --results docs/results/early-stop
    python benchmarks/early_stop.py --report docs/results/early-stop
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
from _early_metrics import early_stop_summary, paired_ert
from _early_outcomes import optimum_outcomes, paired_outcomes

from bolt_pco64._io import atomic_write_bytes, atomic_write_text
from bolt_pco64.bench import ComparisonSpec, SingleTable, run_comparison
from bolt_pco64.bench.store import table_fingerprint
from bolt_pco64.bo.early_stop import EARLY_STOP_DEFAULTS
from bolt_pco64.tables.table import Table, load_table
from bolt_pco64.tables.time_model import COST_DEFAULTS

SETTINGS = ("none", "posterior", "percentile")
TARGETS = (0.01, 0.02, 0.05)
#: The default methods: one with a model (the posterior policy's prior is its
#: prediction) and one without (the policies read the steps alone).
METHODS = ("qlognei", "random")
#: The marker of a script's result folder (``bolt_pco64.bench.regenerate``'s
#: ``REPORT_MARKER``; ``benchmarks/report_results.py OUT`` runs ``--report OUT``).
REPORT_MARKER = "report.json"
#: The files ``--report`` writes into ``OUT``.
REPORT_FILES = (
    "early_stop.md",
    "outcomes.csv",
    "paired_outcomes.csv",
    "early_stop.csv",
    "ert.csv",
    "comparisons.csv",
)


def _f(x: float, digits: int = 3) -> str:
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "—"
    return f"{x:.{digits}g}"


def _ci(v: float, lo: float, hi: float, digits: int = 3) -> str:
    return f"{_f(v, digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def _rate(k: int, n: int, lo: float, hi: float) -> str:
    return f"{k}/{n} [{_f(lo, 2)}, {_f(hi, 2)}]"


def run(args: argparse.Namespace) -> Path:
    """Run every setting into ``OUT/<setting>`` and write the marker."""
    out = Path(args.out)
    seconds, ran = {}, {}
    for setting in args.settings:
        t0 = time.perf_counter()
        result = run_comparison(
            ComparisonSpec(
                args.methods,
                seeds=args.seeds,
                budget_hours=args.budget_hours,
                early_stop=setting,
            ),
            SingleTable(None, args.problem),
            jobs=args.jobs,
            out=out / setting,
            progress=False,
        )
        seconds[setting] = time.perf_counter() - t0
        ran[setting] = len(result.ran)
        if result.errors:
            raise SystemExit(f"{setting}: failed runs {sorted(result.errors)}")
    # A resumed setting that ran nothing keeps the wall time measured before.
    before = out / REPORT_MARKER
    if before.is_file():
        kept = json.loads(before.read_text())
        for setting in args.settings:
            if ran[setting] == 0 and setting in kept.get("wall_seconds", {}):
                seconds[setting] = kept["wall_seconds"][setting]
                ran[setting] = kept["runs_run"][setting]
    marker = {
        "script": "early_stop",
        "problem": args.problem,
        "methods": list(args.methods),
        "seeds": args.seeds,
        "budget_hours": args.budget_hours,
        "settings": list(args.settings),
        "jobs": args.jobs,
        "wall_seconds": seconds,
        "runs_run": ran,
    }
    atomic_write_text(out / REPORT_MARKER, json.dumps(marker, indent=2) + "\n")
    return out


def publish(out: Path, results: Path) -> list[Path]:
    """Copy ``OUT``'s marker, report files and each setting's comparison
    files (records, ``meta.json``, summaries, plots; not the per-run files
    of ``OUT/<setting>/runs/``) into ``results``, atomically, file by file."""
    marker = json.loads((out / REPORT_MARKER).read_text())
    names = [REPORT_MARKER, *REPORT_FILES]
    for setting in marker["settings"]:
        files = sorted(f for f in (out / setting).iterdir() if f.is_file())
        names += [f"{setting}/{f.name}" for f in files]
    for name in names:
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(results / name, (out / name).read_bytes())
    return [results / name for name in names]


def _records(out: Path, setting: str, table: Table) -> pd.DataFrame:
    """A setting's records, checked to be of ``table``."""
    meta = json.loads((out / setting / "meta.json").read_text())
    made_on = meta["table"]["fingerprint"]
    if made_on != table_fingerprint(table):
        raise SystemExit(
            f"Expected the table the runs of {setting!r} were made on "
            f"(fingerprint {made_on[:12]}), got {table.source} "
            f"({table_fingerprint(table)[:12]})."
        )
    if meta["runs"]["failed"]:
        raise SystemExit(f"{setting}: failed runs {meta['runs']['failed']}")
    records = pd.read_parquet(out / setting / "runs.parquet")
    records["method"] = records["method"].astype(object)
    return records


def report(out: Path) -> list[Path]:
    """Write the report files from ``OUT``'s records and marker."""
    m = json.loads((out / REPORT_MARKER).read_text())
    hours = float(m["budget_hours"])
    table = load_table(instance=m["problem"])
    optimum = float(table.frame["throughput_mean"].max())
    records = {s: _records(out, s, table) for s in m["settings"]}
    outcomes = pd.concat(
        [
            optimum_outcomes(r, table, budget_hours=hours).assign(setting=s)
            for s, r in records.items()
        ],
        ignore_index=True,
    )
    paired = paired_outcomes(records, table, "none", budget_hours=hours)
    summary = pd.concat(
        [
            early_stop_summary(r, table, budget_hours=hours).assign(setting=s)
            for s, r in records.items()
        ],
        ignore_index=True,
    )
    ert, cmp = paired_ert(records, optimum, "none", TARGETS, budget_hours=hours)
    frames = {
        "outcomes.csv": outcomes,
        "paired_outcomes.csv": paired,
        "early_stop.csv": summary,
        "ert.csv": ert,
        "comparisons.csv": cmp,
    }
    for name, frame in frames.items():
        atomic_write_text(out / name, frame.to_csv(index=False))
    label = _table_label(out / m["settings"][0] / "meta.json")
    text = "\n".join(_markdown(m, label, outcomes, paired, summary, ert, cmp))
    atomic_write_text(out / "early_stop.md", text)
    return [out / name for name in REPORT_FILES]


def _table_label(meta_path: Path) -> str:
    """The label of the table the runs were made on, as their meta.json says.

    The bracketed part of the recorded source (``[reconstructed from ...]``,
    ``[SIMULATED stand-in, ...]``), else the source's kind (``measured: ...``).
    """
    source = json.loads(meta_path.read_text())["table"]["source"]
    if "[" in source and source.endswith("]"):
        return source[source.index("[") + 1 : -1]
    return source.split(":", 1)[0] + " table"


def _markdown(
    m: dict[str, Any],
    label: str,
    outcomes: pd.DataFrame,
    paired: pd.DataFrame,
    summary: pd.DataFrame,
    ert: pd.DataFrame,
    cmp: pd.DataFrame,
) -> list[str]:
    methods = " ".join(m["methods"])
    lines = [
        f"# Early termination on {m['problem']} ({label})",
        "",
        f"Methods {', '.join(m['methods'])}; seeds 0..{m['seeds'] - 1}; a budget "
        f"of {m['budget_hours']:g} GPU-hours per run, one worker; the same "
        "initial designs in every setting. Start-up "
        f"{COST_DEFAULTS.startup_seconds:g} s per run (assumed). Policies with "
        f"their defaults: {EARLY_STOP_DEFAULTS}.",
        "",
        "Command: `python benchmarks/early_stop.py "
        f"--problem {m['problem']} --methods {methods} --seeds {m['seeds']} "
        f"--budget-hours {m['budget_hours']:g} --jobs {m['jobs']} --out OUT`; "
        "every table below is rewritten from the records in `OUT/<setting>/` "
        "by `python benchmarks/early_stop.py --report OUT`.",
        "",
        "## Was the optimum found, or stopped?",
        "",
        "A stopped configuration is never measured fully, so stopping the "
        "optimum makes regret 0 unreachable. Per method and setting, over its "
        "seeds: runs that evaluated the optimum fully (found) and runs whose "
        "regret at the end of the budget is 0, with exact 95 % intervals; the "
        "median end-of-budget regret with a bootstrap 95 % interval; runs that "
        "started the optimum and stopped it (never measured fully) among the "
        "runs that started it, and how many evaluations of the optimum were "
        "stopped in all.",
        "",
        "| method | setting | found optimum [95 %] | regret 0 [95 %] | regret at "
        "the end [95 %] | started the optimum | stopped it, never measured "
        "[95 %] | stops of the optimum |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in outcomes.iterrows():
        lines.append(
            f"| {r['method']} | {r['setting']} | "
            f"{_rate(r['found'], r['seeds'], r['found_low'], r['found_high'])} | "
            f"{_rate(r['regret0'], r['seeds'], r['regret0_low'], r['regret0_high'])} | "
            f"{_ci(r['final_regret'], r['final_regret_low'], r['final_regret_high'])}"
            f" | {r['started_optimum']}/{r['seeds']} | "
            + _rate(
                r["stopped_optimum"],
                r["started_optimum"],
                r["stopped_optimum_low"],
                r["stopped_optimum_high"],
            )
            + f" | {r['optimum_stops']} |"
        )
    lines += [
        "",
        "Against `none`, paired by seed: the median over seeds of the "
        "end-of-budget regret under the setting minus under `none` (positive: "
        "early termination ended worse) with its bootstrap 95 % interval, "
        "seeds better / tied / worse and the two-sided Wilcoxon signed-rank p "
        "(Pratt); seeds that found the optimum under `none` but not under the "
        "setting (lost) and the other way round (gained), exact McNemar p.",
        "",
        "| method | setting | pairs | regret difference [95 %] | better / tied "
        "/ worse | p | found optimum lost / gained | McNemar p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in paired.iterrows():
        diff = _ci(r["regret_difference"], r["difference_low"], r["difference_high"], 2)
        lines.append(
            f"| {r['method']} | {r['setting']} | {r['pairs']} | {diff} | "
            f"{r['better']} / {r['tied']} / {r['worse']} | {r['p_value']:.2g} | "
            f"{r['lost']} / {r['gained']} | {r['mcnemar_p']:.2g} |"
        )
    lines += [
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
        "## ERT against `none`, paired by seed",
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
    walls = m["wall_seconds"]
    lines += [
        "",
        "Wall time per setting when its runs were made (this machine, under "
        "whatever load it had): "
        + ", ".join(
            f"{s} {v:.0f} s ({m['runs_run'][s]} runs run)" for s, v in walls.items()
        )
        + ".",
        "",
    ]
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="pco64")
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--budget-hours", type=float, default=800.0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--settings", nargs="+", default=list(SETTINGS))
    p.add_argument("--out", default="bench-results/early-stop")
    p.add_argument(
        "--results",
        default=None,
        help="copy the report and the records (not the per-run files) here",
    )
    p.add_argument(
        "--report",
        metavar="OUT",
        default=None,
        help="rewrite OUT's report files from its records; run nothing",
    )
    a = p.parse_args()
    warnings.simplefilter("ignore")
    if a.report is not None:
        for path in report(Path(a.report)):
            print(path)
        return
    if "none" not in a.settings:
        raise SystemExit("Expected 'none' among --settings (the paired reference).")
    out = run(a)
    report(out)
    print((out / "early_stop.md").read_text())
    if a.results is not None:
        publish(out, Path(a.results))


if __name__ == "__main__":
    main()
