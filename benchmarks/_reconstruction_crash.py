"""The crash-share check of ``benchmarks/reconstruction_cv.py --crash``.

Random search's crash share on each shipped reconstruction, replayed with the
harness's draws (:func:`bolt_pco64.tables.reconstruct.replay.crash_share`),
beside the published random-search trace's; the records and tables it writes
are :data:`CRASH_FILES` (``docs/results/reconstruction/README.md``, "Crash
rates").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.instances import get_instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.reconstruct.replay import crash_share, harness_trial
from bolt_pco64.tables.table import load_table
from bolt_pco64.tables.traces import TraceFile, read_trace

__all__ = ["CRASH_FILES", "CRASH_FIRST_SEED", "CRASH_REPLICATES", "crash_check"]

#: Replicate publications of the crash check: 10-trial random searches with
#: fresh seeds (from :data:`CRASH_FIRST_SEED`, disjoint from the published 0-9).
CRASH_REPLICATES = 1000
CRASH_FIRST_SEED = 1000
CRASH_FILES = ("crash_rows.parquet", "crash.csv", "crash.md", "grid_rows.csv")


def _crash_replicates(
    name: str, ok: np.ndarray, trials: int, evaluations: int
) -> list[dict[str, Any]]:
    """:data:`CRASH_REPLICATES` fresh ``trials``-trial random searches on a
    table whose rows run where ``ok``: one record each."""
    recs = []
    for r in range(CRASH_REPLICATES):
        first = CRASH_FIRST_SEED + r * trials
        share = crash_share(ok, range(first, first + trials), 10, evaluations - 10)
        recs.append(
            {
                "instance": name,
                "replicate": r,
                "first_seed": first,
                "trials": trials,
                "evaluations": evaluations,
                "crash_share": share,
            }
        )
    return recs


def _crash_summary(
    name: str, ok: np.ndarray, trace: TraceFile, shares: np.ndarray, family: int
) -> dict[str, Any]:
    """One row of ``crash.csv``: the published random search ``trace`` beside
    the replicates' crash ``shares`` on the table ``ok``; the family-wise
    interval is Bonferroni's over ``family`` instances."""
    seeds = [t.seed for t in trace.trials]
    n = len(trace.trials[0].candidates)
    published = float(np.mean(np.concatenate([~t.feasible for t in trace.trials])))
    lo, hi = np.quantile(shares, [0.025, 0.975])
    lo99, hi99 = np.quantile(shares, [0.005, 0.995])
    a = 0.05 / family
    lo_f, hi_f = np.quantile(shares, [a / 2, 1 - a / 2])
    tail = float(np.mean(shares <= published))
    # The distinct rows the published seeds drew: a uniform sample of rows,
    # whatever they hold, so their crashes are hypergeometric given the
    # table's count.
    drawn = np.unique(
        np.concatenate([harness_trial(ok, int(s), 10, n - 10) for s in seeds])
    )
    crashed, bad = int((~ok[drawn]).sum()), int((~ok).sum())
    hyper = hypergeom(len(ok), bad, len(drawn))
    return {
        "instance": name,
        "rows": len(ok),
        "feasible": int(ok.sum()),
        "table_crash_share": float(np.mean(~ok)),
        "published_crash_share": published,
        "replayed_published_seeds": crash_share(ok, seeds, 10, n - 10),
        "replicate_mean": float(np.mean(shares)),
        "interval_low": float(lo),
        "interval_high": float(hi),
        "interval99_low": float(lo99),
        "interval99_high": float(hi99),
        "family_instances": family,
        "interval_family_low": float(lo_f),
        "interval_family_high": float(hi_f),
        "p_two_sided": float(min(1.0, 2 * min(tail, 1 - tail + 1e-12))),
        "distinct_rows_drawn": len(drawn),
        "distinct_rows_crashed": crashed,
        "distinct_rows_crashed_expected": len(drawn) * bad / len(ok),
        "p_distinct_two_sided": float(
            min(1.0, 2 * min(hyper.cdf(crashed), hyper.sf(crashed - 1)))
        ),
    }


def _crash_markdown(summary: Sequence[Mapping[str, Any]]) -> str:
    """The text of ``crash.md`` from the rows of ``crash.csv``."""
    lines = [
        "| instance | rows / feasible | crash share of the table | published random "
        "search | replayed, published seeds | replayed, fresh seeds: mean "
        "[95 % interval] | 99 % interval | family-wise 95 % interval | "
        "two-sided p | distinct rows drawn: crashed / expected | its two-sided p |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['instance']} | {r['rows']} / {r['feasible']} "
            f"| {100 * r['table_crash_share']:.1f} % "
            f"| {100 * r['published_crash_share']:.1f} % "
            f"| {100 * r['replayed_published_seeds']:.1f} % "
            f"| {100 * r['replicate_mean']:.1f} % [{100 * r['interval_low']:.1f}, "
            f"{100 * r['interval_high']:.1f}] % "
            f"| [{100 * r['interval99_low']:.1f}, {100 * r['interval99_high']:.1f}] % "
            f"| [{100 * r['interval_family_low']:.1f}, "
            f"{100 * r['interval_family_high']:.1f}] % "
            f"| {r['p_two_sided']:.3f} "
            f"| {r['distinct_rows_drawn']}: {r['distinct_rows_crashed']} / "
            f"{r['distinct_rows_crashed_expected']:.1f} "
            f"| {r['p_distinct_two_sided']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def crash_check(results: Path, instances: Sequence[str]) -> str:
    """Random search's crash share on each shipped reconstruction, beside the
    published one, and each row's grid rule; writes
    :data:`CRASH_FILES` (the last: per instance and row, the knob columns, the
    :data:`~bolt_pco64.tables.reconstruct.grid.GRID_REASONS` key that put it in the
    grid, its ``source`` and whether it runs).

    The harness's draws are replayed (:func:`~bolt_pco64.tables.reconstruct.replay.crash_share`):
    with the published seeds (the same rows as the published trace), and for
    :data:`CRASH_REPLICATES` fresh 10-trial runs, whose 2.5-97.5 % quantiles
    are the interval the published share is compared with (with the 99 %
    one, and the family-wise 95 % one: Bonferroni's over the instances
    checked, as many comparisons as they are). The distinct rows the
    published seeds drew are a uniform sample of the table's rows: their
    crash count beside its hypergeometric expectation given the table's
    count, with its two-sided p.
    """
    recs, summary, grids = [], [], []
    for name in instances:
        inst = get_instance(name)
        path = Path(locations.reconstructed_table_path(inst))
        ok = load_table(path, instance=name).frame["ran_successfully"].to_numpy(bool)
        raw = pd.read_parquet(path)
        grid = raw[[*inst.input_columns, "grid_rule", "source", "ran_successfully"]]
        grids.append(grid.assign(instance=name, row=np.arange(len(raw))))
        for trace_path in locations.trace_paths(inst):
            trace = read_trace(trace_path, inst)
            if trace.method != "random":
                continue
            new = _crash_replicates(
                name, ok, len(trace.trials), len(trace.trials[0].candidates)
            )
            recs += new
            shares = np.array([r["crash_share"] for r in new])
            summary.append(_crash_summary(name, ok, trace, shares, len(instances)))
    atomic_write_parquet(results / CRASH_FILES[0], pd.DataFrame(recs))
    atomic_write_text(
        results / CRASH_FILES[1], pd.DataFrame(summary).to_csv(index=False)
    )
    text = _crash_markdown(summary)
    atomic_write_text(results / CRASH_FILES[2], text)
    grid_rows = pd.concat(grids, ignore_index=True)
    first = ["instance", "row", "grid_rule", "source", "ran_successfully"]
    grid_rows = grid_rows[first + [c for c in grid_rows.columns if c not in first]]
    atomic_write_text(results / CRASH_FILES[3], grid_rows.to_csv(index=False))
    return text
