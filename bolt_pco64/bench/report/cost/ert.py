"""Expected running time to a target (ERT), and paired comparisons on cost.

**ERT** (:func:`ert_table`). From each run's cost to a target
(:func:`~bolt_pco64.bench.report.cost.target.time_to_target`), the
*expected running time* (ERT; Hansen et al. 2021, "COCO: a platform for
comparing continuous optimizers in a black-box setting", Optimization
Methods and Software 36) is the cost spent over all seeds divided by the
number of seeds that reached the target: the expected cost to reach it
when unsuccessful runs are restarted; infinite when no seed reached it.
Reported with the success rate; both with percentile-bootstrap intervals
over the seeds (generator keyed by method, axis and target).
:func:`ert_sensitivity` gives the ERT ratios against a reference at the
targets of
:attr:`~bolt_pco64.bench.report.cost.base.CostMetricsDefaults.sensitivity_targets`
(0.5, 1, 2 and 5 %), so that the choice of target (and of a budget tied to
it) can be seen.

**Paired comparisons on cost** (:func:`compare_costs`): each method against a
reference over the seeds both ran (same initial design). Per seed, the cost
to the target, infinite for a run that did not reach it (two such runs tie):
the shares of seeds where the method is cheaper, tied and dearer, the
two-sided **sign test** p-value (``scipy.stats.binomtest`` of the untied
seeds; a failure is a censored cost, which a signed-rank test of differences
cannot rank), and the ratio of the two ERTs with a *paired* bootstrap
interval (the same resampled seeds for both). Where the reference reached
the target on none of the resampled seeds its ERT is infinite and the ratio
says nothing (0, or NaN when neither got there): ``reference_infinite`` is
the share of such resamples, and when it reaches the interval's lower tail
the lower bound is reported as NaN ("unbounded": the data cannot bound how
much cheaper the method is) instead of 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from bolt_pco64.bench.report.cost.base import COST_METRICS_DEFAULTS
from bolt_pco64.bench.report.cost.target import _check_targets, time_to_target
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    bootstrap_interval,
    keyed_rng,
    method_order,
    percentile_interval,
    reference_rows,
    seed_resamples,
)

__all__ = ["compare_costs", "ert_sensitivity", "ert_table"]


def _ert(cost: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """ERT along the last axis: total cost / successes (inf without one)."""
    n = reached.sum(axis=-1)
    total = cost.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.inf)


def ert_table(
    records: pd.DataFrame,
    optimal_value: float,
    targets: Sequence[float] = COST_METRICS_DEFAULTS.targets,
    axis: str = "gpu_hours",
    budget: float | None = None,
    methods: Sequence[str] | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """ERT and success rate per method and target, with bootstrap intervals.

    Args:
        records, optimal_value, targets, axis, budget: As in
            :func:`~bolt_pco64.bench.report.cost.target.time_to_target`.
        methods: Which methods, in order; default all, in order of appearance.
        level, resamples, seed: Of the bootstrap (seeds resampled).

    Returns:
        Columns ``method, target, runs, reached, success_rate, rate_low,
        rate_high, ert, ert_low, ert_high, median_cost`` (``ert`` is inf when
        no run reached the target; ``median_cost`` is the median over runs of
        the cost to the target, inf when fewer than half reached it).
    """
    ttt = time_to_target(records, optimal_value, targets, axis, budget)
    rows = []
    for m in method_order(records, methods):
        for t in _check_targets(targets):
            sub = ttt[(ttt["method"] == m) & (ttt["target"] == t)]
            if sub.empty:
                continue
            cost = sub["cost"].to_numpy(dtype=np.float64)
            ok = sub["reached"].to_numpy(dtype=bool)
            rng = keyed_rng(seed, m, axis, f"ert{t}")
            draws = seed_resamples(_ert, [cost, ok], resamples, rng)
            lo, hi = percentile_interval(draws, level)
            r_lo, r_hi = bootstrap_interval(
                ok.astype(np.float64),
                "mean",
                level,
                resamples,
                keyed_rng(seed, m, axis, f"rate{t}"),
            )
            rows.append(
                {
                    "method": m,
                    "target": t,
                    "runs": int(cost.size),
                    "reached": int(ok.sum()),
                    "success_rate": float(ok.mean()),
                    "rate_low": r_lo,
                    "rate_high": r_hi,
                    "ert": float(_ert(cost, ok)),
                    "ert_low": lo,
                    "ert_high": hi,
                    "median_cost": float(np.median(np.where(ok, cost, np.inf))),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "method",
            "target",
            "runs",
            "reached",
            "success_rate",
            "rate_low",
            "rate_high",
            "ert",
            "ert_low",
            "ert_high",
            "median_cost",
        ],
    )


def _sign_test_p(better: int, worse: int) -> float:
    if better + worse == 0:
        return 1.0
    return float(sps.binomtest(better, better + worse, 0.5).pvalue)


def compare_costs(
    records: pd.DataFrame,
    reference: str,
    optimal_value: float,
    targets: Sequence[float] = COST_METRICS_DEFAULTS.targets,
    axis: str = "gpu_hours",
    budget: float | None = None,
    methods: Sequence[str] | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Each method against ``reference`` on the cost to each target, seed by seed.

    Args:
        records: Records of complete runs; ``reference`` must be among them.
        reference: The reference method.
        Others: As in :func:`ert_table`.

    Returns:
        Columns ``method, reference, target, pairs, better, tied, worse``
        (shares of the paired seeds: cheaper, equal, dearer; a run that did
        not reach the target costs inf), ``p_value`` (two-sided sign test of
        the untied seeds, 1 when all tie), ``ert_ratio`` (the method's ERT
        over the reference's on the paired seeds; NaN when neither reached
        the target) and its paired bootstrap interval ``ratio_low``,
        ``ratio_high``.
    """
    ttt = time_to_target(records, optimal_value, targets, axis, budget)
    ref = reference_rows(ttt, reference)
    rows = []
    for m in method_order(records, methods):
        if m == reference:
            continue
        for t in _check_targets(targets):
            a = ttt[(ttt["method"] == m) & (ttt["target"] == t)].set_index("seed")
            b = ref[ref["target"] == t].set_index("seed")
            shared = sorted(set(a.index) & set(b.index))
            if not shared:
                continue
            rng = keyed_rng(seed, m, reference, axis, f"ratio{t}")
            row = _paired_costs(a.loc[shared], b.loc[shared], rng, level, resamples)
            rows.append({"method": m, "reference": reference, "target": t, **row})
    return pd.DataFrame(
        rows,
        columns=[
            "method",
            "reference",
            "target",
            "pairs",
            "better",
            "tied",
            "worse",
            "p_value",
            "ert_ratio",
            "ratio_low",
            "ratio_high",
            "reference_infinite",
        ],
    )


def _paired_costs(
    a: pd.DataFrame,
    b: pd.DataFrame,
    rng: np.random.Generator,
    level: float,
    resamples: int,
) -> dict[str, float]:
    """One method (``a``) against the reference (``b``) on the same seeds
    (rows): :func:`compare_costs`'s columns from ``pairs`` on."""
    ca, ra = (a[c].to_numpy() for c in ("cost", "reached"))
    cb, rb = (b[c].to_numpy() for c in ("cost", "reached"))
    ca, cb = ca.astype(np.float64), cb.astype(np.float64)
    ra, rb = ra.astype(bool), rb.astype(bool)
    ta, tb = np.where(ra, ca, np.inf), np.where(rb, cb, np.inf)
    n = len(a)
    better = int((ta < tb).sum())
    worse = int((ta > tb).sum())
    own_ert, ref_ert = seed_resamples(
        lambda ca, ra, cb, rb: (_ert(ca, ra), _ert(cb, rb)),
        [ca, ra, cb, rb],
        resamples,
        rng,
    )
    infinite = float(np.isinf(ref_ert).mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = own_ert / ref_ert
        whole = float(_ert(cb, rb))
        ratio = float(_ert(ca, ra) / whole) if math.isfinite(whole) else math.nan
    # A resample where the reference never got there has ratio 0 (or NaN):
    # it bounds nothing, so it is the lowest value of the ratio.
    ratios = np.where(np.isinf(ref_ert), -np.inf, ratios)
    lo, hi = percentile_interval(ratios, level)
    return {
        "pairs": n,
        "better": better / n,
        "tied": (n - better - worse) / n,
        "worse": worse / n,
        "p_value": _sign_test_p(better, worse),
        "ert_ratio": ratio,
        "ratio_low": lo if math.isfinite(lo) else math.nan,
        "ratio_high": hi,
        "reference_infinite": infinite,
    }


def ert_sensitivity(
    records: pd.DataFrame,
    reference: str,
    optimal_value: float,
    targets: Sequence[float] = COST_METRICS_DEFAULTS.sensitivity_targets,
    axis: str = "gpu_hours",
    budget: float | None = None,
    methods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """ERT ratios against ``reference`` at several targets: how much the
    conclusion depends on the target (and on a budget chosen for one).

    :func:`compare_costs` at each of ``targets``, with the number of seeds
    each method reached the target on.

    Returns:
        One row per method (the reference included, its ratio 1) and target:
        columns ``method, target, reached, runs, ert, ert_ratio, ratio_low,
        ratio_high, reference_infinite``.
    """
    ert = ert_table(records, optimal_value, targets, axis, budget, methods)
    cmp = compare_costs(
        records, reference, optimal_value, targets, axis, budget, methods
    )
    keep = ["method", "target", "ert_ratio", "ratio_low", "ratio_high"]
    out = ert.merge(
        cmp[[*keep, "reference_infinite"]], on=["method", "target"], how="left"
    )
    own = out["method"] == reference
    one = np.where(np.isfinite(out.loc[own, "ert"]), 1.0, np.nan)
    for c in ("ert_ratio", "ratio_low", "ratio_high"):
        out.loc[own, c] = one
    out.loc[own, "reference_infinite"] = np.nan
    columns = [
        "method",
        "target",
        "reached",
        "runs",
        "ert",
        "ert_ratio",
        "ratio_low",
        "ratio_high",
        "reference_infinite",
    ]
    return out[columns]
