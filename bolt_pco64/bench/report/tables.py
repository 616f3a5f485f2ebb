"""The summary of a comparison's records and its paired comparisons.

Regret before a run's first feasible evaluation counts as
``optimal_value - worst_feasible_value`` (as bad as the worst configuration
that runs).

Both the *simple* regret (``regret``: of the best configuration evaluated)
and the *inference* regret (``inference_regret``: of the configuration the
method recommends) are reported as medians over seeds with 95% bootstrap
intervals (:func:`summarize`), and every method is compared with a reference
method over the shared seeds (:func:`compare_to_reference`;
:mod:`bolt_pco64.bench.stats`). :mod:`bolt_pco64.bench.report.markdown` writes
both as text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from bolt_pco64.bench.records import PROPOSED_PREFIX
from bolt_pco64.bench.stats import (
    complete_runs,
    found_optimum_intervals,
    median_intervals,
    method_order,
    outcome_matrix,
    paired_comparisons,
    regret_fill,
    verdict,
)
from bolt_pco64.snap import FAR_SNAP_DISTANCE

__all__ = [
    "MEASURES",
    "REGRETS",
    "checkpoints_for",
    "compare_to_reference",
    "snap_counts",
    "summarize",
    "summary_checkpoints",
]


def checkpoints_for(budget: int, n_init: int | None = None) -> list[int]:
    """Evaluation counts reported in the summary: the quarters of the budget
    after the initial design.

    Every method of a seed shares its initial design, so a checkpoint at or
    before ``n_init`` evaluations is the same for all of them and says
    nothing: the quarters ``<= n_init`` are left out (the budget itself is
    always kept). ``n_init=None`` keeps every quarter.
    """
    quarters = {max(1, round(budget * f)) for f in (0.25, 0.5, 0.75, 1.0)}
    after = {k for k in quarters if n_init is None or k > n_init}
    return sorted(after | {budget})


def summary_checkpoints(summary: pd.DataFrame) -> list[int]:
    """The checkpoints a :func:`summarize` frame reports (its
    ``regret_median@k`` columns), ascending."""
    prefix = "regret_median@"
    return sorted(
        int(c[len(prefix) :]) for c in summary.columns if c.startswith(prefix)
    )


#: The regret columns reported, with their labels.
REGRETS: tuple[tuple[str, str], ...] = (
    ("regret", "regret"),
    ("inference_regret", "inference regret"),
)


def summarize(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
    n_init: int | None = None,
) -> pd.DataFrame:
    """Per-method summary of complete runs, at the checkpoints
    :func:`checkpoints_for` ``(budget, n_init)`` (after the initial design).

    A regret of NaN (no feasible evaluation yet) counts as
    ``optimal_value - worst_feasible_value``: as bad as the worst configuration
    that runs. Failed runs (``failed``) are left out and counted.

    Returns:
        One row per method: ``runs``, ``failed``; for each checkpoint ``k``
        ``regret_median@k``, ``regret_q25@k``, ``regret_q75@k``, the 95%
        bootstrap interval of the median ``regret_low@k``/``regret_high@k``,
        and the same median and interval of ``inference_regret`` (NaN for
        records without that column); ``found_optimum`` (share of runs) with
        ``found_optimum_low``/``found_optimum_high``,
        ``evals_to_optimum_median`` (inf when the median run did not find it),
        ``ooms_median``, ``ooms_total``, ``gpu_hours_median``, and, given
        ``n_init``, ``bo_oom_share_median``: the median over runs of the share
        of the evaluations after the initial design that ran out of memory;
        ``repeats_median``/``repeats_total``: evaluations of a row already
        evaluated in the run (a point method's snapped repeats; 0 for
        records without a ``repeat`` column); ``seconds_per_eval_median``:
        the median over runs of the proposal time (fit plus acquisition
        seconds) per evaluation after the initial design (wall time, so it
        varies between otherwise identical runs).
    """
    failed = failed or set()
    fill = regret_fill(optimal_value, worst_feasible_value)
    names = method_order(records, methods)
    rows = []
    complete = complete_runs(records, failed)
    for m in names:
        ok = complete[complete["method"] == m]
        row: dict[str, Any] = {"method": m, "runs": ok["seed"].nunique()}
        row["failed"] = sum(1 for (mm, _) in failed if mm == m)
        if row["runs"] > 0:
            _, mat = outcome_matrix(ok, budget, fill, "regret")
            row.update(_regret_columns(ok, mat, budget, fill, n_init, m))
            row.update(_optimum_columns(ok, mat, budget, fill, m))
            row.update(_count_columns(ok, budget, n_init))
        rows.append(row)
    return pd.DataFrame(rows)


def _regret_columns(
    ok: pd.DataFrame,
    mat: np.ndarray,
    budget: int,
    fill: float,
    n_init: int | None,
    method: str,
) -> dict[str, float]:
    """One method's regret quantiles and median intervals at the checkpoints."""
    row: dict[str, float] = {}
    ks = checkpoints_for(budget, n_init)
    for k in ks:
        col = mat[:, k - 1]
        row[f"regret_median@{k}"] = float(np.median(col))
        row[f"regret_q25@{k}"] = float(np.quantile(col, 0.25))
        row[f"regret_q75@{k}"] = float(np.quantile(col, 0.75))
    for column, _ in REGRETS:
        if column not in ok.columns:
            for k in ks:
                for what in ("median", "low", "high"):
                    row[f"{column}_{what}@{k}"] = math.nan
            continue
        ci = median_intervals(ok, budget, fill, ks, column, [method])
        for c in ci.to_dict("records"):
            k = c["checkpoint"]
            row[f"{column}_median@{k}"] = c["median"]
            row[f"{column}_low@{k}"] = c["low"]
            row[f"{column}_high@{k}"] = c["high"]
    return row


def _optimum_columns(
    ok: pd.DataFrame, mat: np.ndarray, budget: int, fill: float, method: str
) -> dict[str, float]:
    """One method's found-optimum rate (with its interval) and evaluations to it."""
    hit = mat <= 0
    found = hit.any(axis=1)
    first = np.where(found, hit.argmax(axis=1) + 1, np.inf)
    rate = found_optimum_intervals(ok, budget, fill, "regret", [method]).iloc[0]
    return {
        "found_optimum": float(found.mean()),
        "found_optimum_low": float(rate["low"]),
        "found_optimum_high": float(rate["high"]),
        "evals_to_optimum_median": float(np.median(first)),
    }


def _count_columns(
    ok: pd.DataFrame, budget: int, n_init: int | None
) -> dict[str, float | int]:
    """One method's OOMs, repeats, GPU-hours and proposal seconds per run."""
    row: dict[str, float | int] = {}
    per = ok.groupby("seed")
    ooms = per["feasible"].apply(lambda f: int((~f.astype(bool)).sum()))
    row["ooms_median"] = float(ooms.median())
    row["ooms_total"] = int(ooms.sum())
    if n_init is not None and budget > n_init:
        after = ok[ok["iteration"] > n_init].groupby("seed")["feasible"]
        share = after.apply(lambda f: float((~f.astype(bool)).mean()))
        row["bo_oom_share_median"] = float(share.median())
    if "repeat" in ok.columns:
        repeats = per["repeat"].apply(lambda f: int(f.astype(bool).sum()))
    else:
        repeats = ooms * 0
    row["repeats_median"] = float(repeats.median())
    row["repeats_total"] = int(repeats.sum())
    row["gpu_hours_median"] = float(per["gpu_hours"].max().median())
    bo = ok[ok["iteration"] > (n_init or 0)]
    if len(bo) and {"fit_seconds", "acq_seconds"} <= set(bo.columns):
        spent = (bo["fit_seconds"] + bo["acq_seconds"]).groupby(bo["seed"])
        row["seconds_per_eval_median"] = float(spent.mean().median())
    else:
        row["seconds_per_eval_median"] = math.nan
    return row


#: The measures of the paired comparisons (column, title, what "better" means).
MEASURES: tuple[tuple[str, str, str], ...] = (
    ("regret", "simple regret", "lower regret"),
    (
        "bo_ooms",
        "OOM runs after the initial design, counted up to the checkpoint",
        "fewer OOM runs",
    ),
)


def compare_to_reference(
    records: pd.DataFrame,
    reference: str,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
    n_init: int | None = None,
) -> pd.DataFrame:
    """Paired comparisons of every method with ``reference`` (complete runs).

    :func:`~bolt_pco64.bench.stats.paired_comparisons` at each checkpoint of
    the simple regret and, given ``n_init``, of the number of OOM runs after
    the initial design (``bo_ooms``; the initial design is shared, so only
    the method's own choices count); a ``measure`` column names which, and a
    ``verdict`` column says it in words (:func:`~bolt_pco64.bench.stats.verdict`;
    "better" is lower regret or fewer OOM runs). Empty when ``reference`` has
    no complete run.
    """
    ok = complete_runs(records, failed)
    if ok.empty or reference not in set(ok["method"]):
        return pd.DataFrame()
    fill = regret_fill(optimal_value, worst_feasible_value)
    order = method_order(ok, methods)
    ok = ok.sort_values(["method", "seed", "iteration"], kind="stable")
    frames = []
    for column, _, _ in MEASURES:
        if column == "bo_ooms":
            if n_init is None:
                continue
            crashed = (~ok["feasible"].astype(bool)) & (ok["iteration"] > n_init)
            ok = ok.assign(
                bo_ooms=crashed.astype(np.float64)
                .groupby([ok["method"], ok["seed"]])
                .cumsum()
            )
        cmp = paired_comparisons(
            ok, reference, budget, fill, checkpoints_for(budget, n_init), column, order
        )
        cmp.insert(2, "measure", column)
        frames.append(cmp)
    out = pd.concat(frames, ignore_index=True)
    out["verdict"] = [
        verdict(
            r["method"], reference, r["better"], r["worse"], r["p_value"], r["pairs"]
        )
        for r in out.to_dict("records")
    ]
    return out


def snap_counts(records: pd.DataFrame) -> pd.DataFrame:
    """Per method, the proposed points its runs evaluated, as
    :class:`~bolt_pco64.problem.SnapCounts` counts them.

    A method that proposes rows proposes configurations, which nothing moves;
    one that proposes points of the box (``qlognei-box``, ``qlognei-mixed``, a
    user's point method) has each point snapped to the nearest row. Counted
    from the records' ``proposed_*`` and input columns, so the counts are the
    same whether a run was computed now or resumed.

    Returns:
        Columns ``method``, ``points``, ``moved`` (proposed points that were
        not a configuration themselves) and ``far`` (moved points more than
        :data:`~bolt_pco64.snap.FAR_SNAP_DISTANCE` from the lattice point they
        round to), one row per method in order of appearance.
    """
    proposed = [c for c in records.columns if c.startswith(PROPOSED_PREFIX)]
    inputs = [c[len(PROPOSED_PREFIX) :] for c in proposed]
    x = records[proposed].to_numpy(dtype=float)
    rows = records[inputs].to_numpy(dtype=float)
    moved = (x != rows).any(axis=1)
    far = moved & (np.linalg.norm(np.round(x) - rows, axis=1) > FAR_SNAP_DISTANCE)
    frame = pd.DataFrame(
        {"method": records["method"], "points": 1, "moved": moved, "far": far}
    )
    return (
        frame.groupby("method", sort=False)[["points", "moved", "far"]]
        .sum()
        .astype(int)
        .reset_index()
    )
