"""The cost comparison: every method on a GPU-hour budget, with 1 and 4 workers.

What it does, on one problem (default pco64):

1. the budget: the median GPU-hours random search needs to get within 2 % of
   the optimum (:func:`~bolt_pco64.bench.report.cost.target.random_search_costs`,
   2,000 permutations of the table, rounded up to a multiple of 10), unless
   ``--budget-hours`` is given (``report.json`` then keeps both:
   ``budget_given`` and the rule's ``rule_hours``);
2. ``ComparisonSpec(methods, seeds, budget_hours=H, workers=1)`` run into
   ``OUT/workers1`` and the same with ``workers=4`` into ``OUT/workers4``
   (each writes its summary and its cost report, ``cost_summary.md``);
3. the targets: every method's ERT to within 1 % of the optimum in
   GPU-hours with its interval and success rate; the best cost-aware method's
   ERT over ``qlognei``'s (paired bootstrap interval, sign test); every
   method's ERT over ``random``'s; per method, the simulated wall-clock ERT
   with 4 workers over that with 1 (paired by seed);
4. prints a Markdown report and writes it to ``OUT/results.md``; each phase's
   wall time is in it (measured under whatever load the machine has).

``OUT/report.json`` marks the folder as this script's (``benchmarks/report_results.py
OUT`` runs ``--report OUT``) and keeps the settings and measured wall times;
``--report OUT`` rewrites ``results.md`` from the records in ``OUT/workers1``
and ``OUT/workers4``, without running anything, and prints the files written
(``benchmarks/report_results.py OUT`` calls it after ``bolt-pco64 report``
has rewritten the two comparisons' reports).

``--quick`` runs ``--problem all``'s quick form instead: random, qlognei and
eipu, 3 seeds x 20 evaluations on each problem with its cost report.

Run::

    python benchmarks/cost_comparison.py --seeds 20 --jobs 2 --out bench-results/cost
    python benchmarks/cost_comparison.py --quick --jobs 2
    python benchmarks/cost_comparison.py --report bench-results/cost

The harness's own output directories resume: rerunning with the same
arguments skips the runs already complete.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench import (
    DEFAULTS,
    ComparisonSpec,
    Family,
    SingleTable,
    run_comparison,
)
from bolt_pco64.bench.contract import RunKey
from bolt_pco64.bench.regenerate import REPORT_MARKER, read_comparison
from bolt_pco64.bench.report.cost import (
    compare_costs,
    ert_table,
    random_search_costs,
    within_budget,
)
from bolt_pco64.bench.report.cost.page import ratio_interval
from bolt_pco64.bench.stats import complete_runs
from bolt_pco64.tables.table import load_table

#: Every method of the comparison: the default ones and the cost-aware ones.
METHODS = (*DEFAULTS.methods, "eipu", "ei_cool")
COST_AWARE = ("eipu", "ei_cool")
TARGET = 0.01


def _ci(v: float, lo: float, hi: float) -> str:
    def f(x: float) -> str:
        return "∞" if math.isinf(x) else ("—" if math.isnan(x) else f"{x:.3g}")

    return f"{f(v)} [{f(lo)}, {f(hi)}]"


def budget_for(table_name: str, target: float) -> float:
    """The median GPU-hours random search needs to reach ``target``, rounded up."""
    table = load_table(instance=table_name)
    median = float(np.median(random_search_costs(table, target)))
    return float(math.ceil(median / 10.0) * 10.0)


def _complete(folder: Path) -> tuple[pd.DataFrame, float, int]:
    """A comparison folder's complete runs' records, its optimal value and
    how many runs failed (from its records and ``meta.json``)."""
    rec, meta = read_comparison(folder)
    bad = RunKey.parse_all(meta["runs"]["failed"])
    return complete_runs(rec, bad), float(meta["table"]["optimal_value"]), len(bad)


def _ratio(row: pd.Series) -> str:
    return ratio_interval(row["ert_ratio"], row["ratio_low"], row["ratio_high"])


def _relabel(records: pd.DataFrame, label: str) -> pd.DataFrame:
    out = records.copy()
    out["method"] = label
    return out


def report(
    r1: pd.DataFrame,
    r4: pd.DataFrame,
    methods: list[str],
    optimal: float,
    hours: float,
    failed: int,
) -> list[str]:
    """The targets' figures as Markdown lines."""
    one = within_budget(r1, hours)
    four = within_budget(r4, hours)
    lines = [
        f"## ERT to within {TARGET:.0%} of the optimum, in GPU-hours (1 worker)",
        "",
    ]
    ert = ert_table(one, optimal, (TARGET,), "gpu_hours", hours, methods)
    vs_random = compare_costs(
        one, "random", optimal, (TARGET,), "gpu_hours", hours, methods
    ).set_index("method")
    lines += [
        "| method | reached | ERT [95% CI] | ERT / random's [95% paired CI] |",
        "|---|---|---|---|",
    ]
    for r in ert.itertuples(index=False):
        ratio = _ratio(vs_random.loc[r.method]) if r.method in vs_random.index else "1"
        lines.append(
            f"| {r.method} | {r.reached}/{r.runs} | "
            f"{_ci(r.ert, r.ert_low, r.ert_high)} | {ratio} |"
        )
    vs_q = (
        compare_costs(
            one, "qlognei", optimal, (TARGET,), "gpu_hours", hours, methods
        ).set_index("method")
        if "qlognei" in methods
        else pd.DataFrame()
    )
    lines += [
        "",
        "## Cost-aware methods against qlognei (target: ERT ratio <= 0.75)",
        "",
    ]
    for m in COST_AWARE:
        if m not in vs_q.index:
            continue
        c = vs_q.loc[m]
        n = int(c["pairs"])
        lines.append(
            f"- {m}: ERT / qlognei's = {_ratio(c)}; cheaper on "
            f"{round(c['better'] * n)} of {n} seeds, dearer on "
            f"{round(c['worse'] * n)}, sign test p = {c['p_value']:.2g}"
        )
    lines += [
        "",
        f"## 4 workers against 1: simulated wall-clock ERT to {TARGET:.0%} "
        "(target: ratio <= 0.40)",
        "",
        "| method | 1 worker: ERT h [CI] | 4 workers: ERT h [CI] | ratio [95% paired CI] |",
        "|---|---|---|---|",
    ]
    for m in methods:
        a, b = one[one["method"] == m], four[four["method"] == m]
        if a.empty or b.empty:
            continue
        both = pd.concat([_relabel(a, "1"), _relabel(b, "4")], ignore_index=True)
        e = ert_table(both, optimal, (TARGET,), "wall_hours", None, ["1", "4"])
        c = compare_costs(both, "1", optimal, (TARGET,), "wall_hours", None, ["4"])
        e1, e4 = e.iloc[0], e.iloc[1]
        lines.append(
            f"| {m} | {_ci(e1.ert, e1.ert_low, e1.ert_high)} | "
            f"{_ci(e4.ert, e4.ert_low, e4.ert_high)} | "
            f"{_ratio(c.iloc[0])} |"
        )
    if failed:
        lines += ["", f"{failed} run(s) failed and are left out (see meta.json)."]
    return lines


def write_results(out: Path) -> Path:
    """Write ``OUT/results.md`` from the records of ``OUT/workers1`` and
    ``OUT/workers4`` and the settings in ``OUT/report.json``."""
    marker = json.loads((out / REPORT_MARKER).read_text())
    methods, hours = list(marker["methods"]), float(marker["budget_hours"])
    rule = "the median random search needs to get within 2 % of the optimum"
    if marker.get("budget_given", False):
        why = f"given with --budget-hours; {rule}: {marker['rule_hours']:g}"
    else:
        why = rule
    lines = [
        f"# Cost comparison on {marker['problem']}",
        "",
        f"{len(methods)} methods x {marker['seeds']} seeds, {hours:g} GPU-hours per "
        f"run ({why}); --jobs {marker['jobs']}.",
        "",
    ]
    for workers, seconds in marker["wall_seconds"].items():
        lines.append(f"- {workers} worker(s): {seconds:.0f} s of wall time")
    r1, optimal, failed1 = _complete(out / "workers1")
    r4, _, failed4 = _complete(out / "workers4")
    lines += ["", *report(r1, r4, methods, optimal, hours, failed1 + failed4)]
    atomic_write_text(out / "results.md", "\n".join(lines) + "\n")
    return out / "results.md"


def rewrite(out: Path) -> list[Path]:
    """``--report OUT``: ``results.md`` from the records (nothing runs; the
    comparisons' own reports are ``bolt-pco64 report``'s)."""
    return [write_results(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", default="pco64")
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="Seeds 0..N-1 (default: the default comparison's, DEFAULTS.seed_list).",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budget-hours", type=float, default=None)
    parser.add_argument("--out", default="bench-results/cost")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="Rewrite this output folder's reports from its records; run nothing.",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.report is not None:
        print("\n".join(str(p) for p in rewrite(args.report)))
        return
    out = Path(args.out)
    if args.quick:
        t0 = time.perf_counter()
        run_comparison(
            ComparisonSpec(("random", "qlognei", "eipu"), seeds=3, budget=20),
            Family(),
            out=out / "quick-all",
            jobs=args.jobs,
            progress=False,
        )
        print(
            f"--quick (--problem all): {time.perf_counter() - t0:.0f} s; {out}/quick-all"
        )
        return
    methods = args.methods.split(",")
    seeds = DEFAULTS.seed_list if args.seeds is None else args.seeds
    rule_hours = budget_for(args.problem, 0.02)
    hours = args.budget_hours or rule_hours
    wall: dict[str, float] = {}
    for workers in (1, 4):
        t0 = time.perf_counter()
        run_comparison(
            ComparisonSpec(methods, seeds=seeds, budget_hours=hours, workers=workers),
            SingleTable(None, args.problem),
            out=out / f"workers{workers}",
            jobs=args.jobs,
            progress=False,
        )
        wall[str(workers)] = time.perf_counter() - t0
    marker = {
        "script": "cost_comparison",
        "problem": args.problem,
        "methods": methods,
        "seeds": seeds if isinstance(seeds, int) else len(seeds),
        "jobs": args.jobs,
        "budget_hours": hours,
        "budget_given": args.budget_hours is not None,
        "rule_hours": rule_hours,
        "wall_seconds": wall,
    }
    atomic_write_text(out / REPORT_MARKER, json.dumps(marker, indent=2) + "\n")
    print(write_results(out).read_text())


if __name__ == "__main__":
    main()
