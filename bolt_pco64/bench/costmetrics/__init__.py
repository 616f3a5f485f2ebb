"""Cost metrics of a comparison: regret against GPU-hours and wall-clock, time to target.

A user pays in GPU-hours and waits in wall-clock time, not in evaluations.
These metrics read the harness's records (one row per evaluation, in the
order the results came in) on a *cost axis* (:data:`COST_AXES`):

- ``"gpu_hours"``: the record's ``gpu_hours``, the GPU-hours consumed when
  its result came in (:mod:`bolt_pco64.bench.clock`: with one worker the
  cumulative cost of the runs so far, with several the running ones counted
  in proportion);
- ``"wall_hours"``: the record's ``sim_end_s`` (the simulated wall-clock time
  its result came in) in hours.

**Curves** (:func:`cost_curves`). Each run's simple regret is a step
function of the axis (the regret of the last result in by then; before the
first one, or before the first feasible one, ``optimal - worst feasible``);
the runs of a method are evaluated on one grid shared by every method and
seed, never aligned by evaluation index; the line is the median over seeds,
the band its pointwise bootstrap interval (:func:`~bolt_pco64.bench.stats.
median_band`). The grid stops where the first run stops (or at the cost
budget), so that no curve holds a run's last value beyond its data.

**Time to target** (:func:`ert_table`). A target ``p`` (1 %, 2 %, 5 %:
:attr:`CostMetricsDefaults.targets`) is reached when the best feasible
throughput found is within ``p`` of the optimum (regret ``<= p x optimal``).
A run that reaches it spent the axis value at that result; one that does
not is charged its **whole budget** when there is one (``budget``: a run
stops once its budget is spent, so whatever it held back is still what an
unsuccessful seed costs), else its whole run (the axis value of its last
result: on an evaluation budget, all its evaluations). The
*expected running time* (ERT; Hansen et al. 2021, "COCO: a platform for
comparing continuous optimizers in a black-box setting", Optimization
Methods and Software 36) is the cost spent over all seeds divided by the
number of seeds that reached the target: the expected cost to reach it
when unsuccessful runs are restarted; infinite when no seed reached it.
Reported with the success rate; both with percentile-bootstrap intervals
over the seeds (generator keyed by method, axis and target).
:func:`ert_sensitivity` gives the ERT ratios against a reference at the
targets of :attr:`CostMetricsDefaults.sensitivity_targets` (0.5, 1, 2 and
5 %), so that the choice of target (and of a budget tied to it) can be seen.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    bootstrap_interval,
    complete_runs,
    keyed_rng,
    median_band,
)
from bolt_pco64.params import POSITIVE_INT, Interval, check_param

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = [
    "COST_AXES",
    "COST_METRICS_DEFAULTS",
    "CostAxis",
    "CostMetricsDefaults",
    "axis_values",
    "compare_costs",
    "cost_curves",
    "cost_grid",
    "ert_sensitivity",
    "ert_table",
    "evaluation_horizon",
    "random_search_costs",
    "regret_on_grid",
    "time_to_target",
    "within_budget",
]


@dataclass(frozen=True)
class CostMetricsDefaults:
    """The defaults of the cost metrics (one place).

    Attributes:
        targets: Relative distances to the optimum of the time-to-target
            metrics (0.01 = within 1 % of the optimal throughput).
        sensitivity_targets: The targets of the sensitivity table of ERT
            ratios (:func:`ert_sensitivity`).
        grid_points: Points of the shared cost grid of the curves.
    """

    targets: tuple[float, ...] = (0.01, 0.02, 0.05)
    sensitivity_targets: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05)
    grid_points: int = 200


#: The defaults used when no other value is passed.
COST_METRICS_DEFAULTS = CostMetricsDefaults()


@dataclass(frozen=True)
class CostAxis:
    """A cost axis of the records.

    Attributes:
        column: The record column it reads.
        scale: Factor from the column's unit to the axis's.
        label: The axis's label (its unit).
    """

    column: str
    scale: float
    label: str


#: The cost axes by name.
COST_AXES: Mapping[str, CostAxis] = MappingProxyType(
    {
        "gpu_hours": CostAxis("gpu_hours", 1.0, "GPU-hours (cumulative)"),
        "wall_hours": CostAxis("sim_end_s", 1.0 / 3600.0, "simulated wall-clock hours"),
    }
)


def _axis(axis: str) -> CostAxis:
    if axis not in COST_AXES:
        raise ValueError(f"Expected an axis of {sorted(COST_AXES)}, got {axis!r}.")
    return COST_AXES[axis]


def _check_columns(records: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = sorted(set(columns) - set(records.columns))
    if missing:
        raise ValueError(
            f"Expected record columns {missing} (records of the simulated clock), "
            f"got columns {list(records.columns)}."
        )


def _runs(records: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """One method's runs by seed (ascending), each in the order results came in."""
    return [
        (int(s), r.sort_values("iteration"))
        for s, r in records.groupby("seed", sort=True)
    ]


def _methods(records: pd.DataFrame, methods: Sequence[str] | None) -> list[str]:
    if methods is not None:
        return list(methods)
    return list(dict.fromkeys(records["method"].tolist()))


def evaluation_horizon(
    records: pd.DataFrame, failed: set[tuple[str, int]] | None = None
) -> int:
    """The fewest evaluations any complete run made (at least 1).

    On a GPU-hour budget runs make different numbers of evaluations; the
    evaluation-axis statistics are read up to this count, where every run
    has data.
    """
    done = complete_runs(records, failed)
    if not len(done):
        return 1
    return max(1, int(done.groupby(["method", "seed"]).size().min()))


def within_budget(records: pd.DataFrame, budget_hours: float | None) -> pd.DataFrame:
    """The records whose result came in within ``budget_hours`` consumed
    GPU-hours (all of them for ``None``): what a run on that budget may count
    (the run that crosses the budget finishes but does not count,
    :mod:`bolt_pco64.bench.clock`)."""
    if budget_hours is None:
        return records
    _check_columns(records, ["gpu_hours"])
    return records.loc[records["gpu_hours"].to_numpy(dtype=np.float64) <= budget_hours]


def axis_values(records: pd.DataFrame, axis: str) -> np.ndarray:
    """The records' values on ``axis`` (a :data:`COST_AXES` name), in their order."""
    spec = _axis(axis)
    _check_columns(records, [spec.column])
    return records[spec.column].to_numpy(dtype=np.float64) * spec.scale


def cost_grid(
    records: pd.DataFrame,
    axis: str,
    points: int = COST_METRICS_DEFAULTS.grid_points,
    upto: float | None = None,
) -> np.ndarray:
    """The shared grid of ``axis``: ``points`` values from 0 to the end.

    The end is ``upto`` if given, else where the first run (of any method)
    stops: the smallest final axis value over the runs.
    """
    check_param("points", points, Interval(Integral, 2, None))
    _check_columns(records, ["method", "seed", "iteration"])
    if upto is None:
        ends = [
            float(axis_values(r, axis)[-1])
            for _, sub in records.groupby("method", sort=False)
            for _, r in _runs(sub)
        ]
        if not ends:
            raise ValueError("Expected records of at least one run, got none.")
        upto = min(ends)
    if not (math.isfinite(upto) and upto > 0):
        raise ValueError(f"Expected the grid to end at a value > 0, got {upto!r}.")
    return np.linspace(0.0, float(upto), points)


def regret_on_grid(
    records: pd.DataFrame, axis: str, grid: np.ndarray, fill: float
) -> tuple[list[int], np.ndarray]:
    """One method's simple regret per seed at each grid value (forward-filled).

    Args:
        records: The records of *one* method.
        axis: A :data:`COST_AXES` name.
        grid: ``points``-dim array of axis values.
        fill: The regret before a run's first feasible result.

    Returns:
        ``(seeds, M)``: the sorted seeds and the ``seeds x points`` matrix.
    """
    _check_columns(records, ["seed", "iteration", "regret"])
    seeds, rows = [], []
    for s, r in _runs(records):
        x = axis_values(r, axis)
        reg = np.nan_to_num(r["regret"].to_numpy(dtype=np.float64), nan=fill)
        pos = np.searchsorted(x, grid, side="right") - 1
        rows.append(np.where(pos >= 0, reg[np.clip(pos, 0, None)], fill))
        seeds.append(s)
    return seeds, np.asarray(rows, dtype=np.float64).reshape(len(seeds), len(grid))


def cost_curves(
    records: pd.DataFrame,
    axis: str,
    fill: float,
    methods: Sequence[str] | None = None,
    grid: np.ndarray | None = None,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Median simple regret against ``axis`` with pointwise bootstrap bands.

    Args:
        records: Records of complete runs (any number of methods).
        axis: ``"gpu_hours"`` or ``"wall_hours"``.
        fill: Regret before a run's first feasible result.
        methods: Which methods, in order; default all, in order of appearance.
        grid: The axis values; default :func:`cost_grid`.
        seed: Base seed of the bootstrap.

    Returns:
        Columns ``method, x, median, low, high``.
    """
    g = cost_grid(records, axis) if grid is None else np.asarray(grid, float)
    parts = []
    for m in _methods(records, methods):
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        _, mat = regret_on_grid(sub, axis, g, fill)
        med, lo, hi = median_band(mat, rng=keyed_rng(seed, m, axis))
        parts.append(
            pd.DataFrame({"method": m, "x": g, "median": med, "low": lo, "high": hi})
        )
    columns = ["method", "x", "median", "low", "high"]
    return (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    )


def _check_targets(targets: Sequence[float]) -> list[float]:
    out = [float(t) for t in targets]
    if not out or not all(0.0 <= t < 1.0 for t in out):
        raise ValueError(f"Expected targets in [0, 1), got {list(targets)}.")
    return out


def time_to_target(
    records: pd.DataFrame,
    optimal_value: float,
    targets: Sequence[float] = COST_METRICS_DEFAULTS.targets,
    axis: str = "gpu_hours",
    budget: float | None = None,
) -> pd.DataFrame:
    """Per run and target: whether it was reached and the cost spent.

    Args:
        records: Records of complete runs.
        optimal_value: The problem's optimal (maximal) throughput, ``> 0``.
        targets: Relative distances to the optimum.
        axis: ``"gpu_hours"`` or ``"wall_hours"``.
        budget: Results beyond this axis value do not count, and an
            unsuccessful run is charged exactly this much (its whole
            budget); ``None``: no cap, an unsuccessful run is charged its
            last result's axis value.

    Returns:
        Columns ``method, seed, target, reached, cost``: ``cost`` is the axis
        value of the first result within the target, or, when the run never
        got there, ``budget`` (its last result's axis value without one).
    """
    if not (math.isfinite(optimal_value) and optimal_value > 0):
        raise ValueError(f"Expected an optimal value > 0, got {optimal_value!r}.")
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"Expected a budget > 0, got {budget!r}.")
    ts = _check_targets(targets)
    _check_columns(records, ["method", "seed", "iteration", "regret"])
    rows = []
    for m in _methods(records, None):
        for s, r in _runs(records[records["method"] == m]):
            x = axis_values(r, axis)
            reg = r["regret"].to_numpy(dtype=np.float64)
            inside = x <= budget if budget is not None else np.ones(x.size, bool)
            spent = float(budget) if budget is not None else float(x[-1])
            for t in ts:
                hit = np.flatnonzero(inside & (reg <= t * optimal_value))
                reached = hit.size > 0
                cost = float(x[hit[0]]) if reached else spent
                rows.append(
                    {
                        "method": m,
                        "seed": s,
                        "target": t,
                        "reached": reached,
                        "cost": cost,
                    }
                )
    return pd.DataFrame(rows, columns=["method", "seed", "target", "reached", "cost"])


def _ert(cost: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """ERT along the last axis: total cost / successes (inf without one)."""
    n = reached.sum(axis=-1)
    total = cost.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.inf)


def _percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval that tolerates infinities (no interpolation)."""
    v = values[~np.isnan(values)]
    if v.size == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2
    lo, hi = np.quantile(v, [tail, 1 - tail], method="inverted_cdf")
    return float(lo), float(hi)


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
            :func:`time_to_target`.
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
    for m in _methods(records, methods):
        for t in _check_targets(targets):
            sub = ttt[(ttt["method"] == m) & (ttt["target"] == t)]
            if sub.empty:
                continue
            cost = sub["cost"].to_numpy(dtype=np.float64)
            ok = sub["reached"].to_numpy(dtype=bool)
            rng = keyed_rng(seed, m, axis, f"ert{t}")
            idx = rng.integers(0, cost.size, size=(resamples, cost.size))
            lo, hi = _percentile_interval(_ert(cost[idx], ok[idx]), level)
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
    ref = ttt[ttt["method"] == reference]
    if ref.empty:
        raise ValueError(
            f"Expected reference method {reference!r} among the records, got "
            f"{sorted(set(records['method']))}."
        )
    rows = []
    for m in _methods(records, methods):
        if m == reference:
            continue
        for t in _check_targets(targets):
            a = ttt[(ttt["method"] == m) & (ttt["target"] == t)].set_index("seed")
            b = ref[ref["target"] == t].set_index("seed")
            shared = sorted(set(a.index) & set(b.index))
            if not shared:
                continue
            ca, ra = (a.loc[shared, c].to_numpy() for c in ("cost", "reached"))
            cb, rb = (b.loc[shared, c].to_numpy() for c in ("cost", "reached"))
            ca, cb = ca.astype(np.float64), cb.astype(np.float64)
            ra, rb = ra.astype(bool), rb.astype(bool)
            ta, tb = np.where(ra, ca, np.inf), np.where(rb, cb, np.inf)
            n = len(shared)
            better = int((ta < tb).sum())
            worse = int((ta > tb).sum())
            rng = keyed_rng(seed, m, reference, axis, f"ratio{t}")
            idx = rng.integers(0, n, size=(resamples, n))
            ref_ert = _ert(cb[idx], rb[idx])
            infinite = float(np.isinf(ref_ert).mean())
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = _ert(ca[idx], ra[idx]) / ref_ert
                whole = float(_ert(cb, rb))
                ratio = (
                    float(_ert(ca, ra) / whole) if math.isfinite(whole) else math.nan
                )
            # A resample where the reference never got there has ratio 0 (or
            # NaN): it bounds nothing, so it is the lowest value of the ratio.
            ratios = np.where(np.isinf(ref_ert), -np.inf, ratios)
            lo, hi = _percentile_interval(ratios, level)
            lo = lo if math.isfinite(lo) else math.nan
            rows.append(
                {
                    "method": m,
                    "reference": reference,
                    "target": t,
                    "pairs": n,
                    "better": better / n,
                    "tied": (n - better - worse) / n,
                    "worse": worse / n,
                    "p_value": _sign_test_p(better, worse),
                    "ert_ratio": ratio,
                    "ratio_low": lo,
                    "ratio_high": hi,
                    "reference_infinite": infinite,
                }
            )
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


def random_search_costs(
    table: Table,
    target: float,
    draws: int = 2000,
    seed: int = STATS_DEFAULTS.seed,
    startup_seconds: float | None = None,
) -> np.ndarray:
    """GPU-hours random search spends until a result within ``target`` of the optimum.

    Random search draws the table's rows uniformly without replacement, one
    at a time (as the harness's ``random`` with one worker); each draw here
    is a permutation from ``numpy.random.default_rng(seed)``, charged by the
    time model (:class:`~bolt_pco64.costs.TimeModel`). Works on any table.

    Args:
        table: The table.
        target: Relative distance to the optimum, in ``[0, 1)``.
        draws: Permutations drawn.
        seed: Their generator's seed.
        startup_seconds: The time model's start-up (default its own).

    Returns:
        ``draws``-dim array of GPU-hours (the median is the budget at which
        random search's median run reaches the target).
    """
    from bolt_pco64.costs import COST_DEFAULTS, TimeModel

    (t,) = _check_targets([target])
    check_param("draws", draws, POSITIVE_INT)
    startup = (
        COST_DEFAULTS.startup_seconds if startup_seconds is None else startup_seconds
    )
    hours = TimeModel(table, startup).gpu_hours.numpy()
    y = table.frame["throughput_mean"].to_numpy(dtype=np.float64)
    ok = table.frame["ran_successfully"].to_numpy(dtype=bool)
    best = float(np.max(y[ok]))
    good = ok & (np.nan_to_num(y, nan=-np.inf) >= best - t * best)
    rng = np.random.default_rng(seed)
    perms = np.argsort(rng.random((draws, len(y))), axis=1)
    first = np.argmax(good[perms], axis=1)
    spent = np.cumsum(hours[perms], axis=1)
    return spent[np.arange(draws), first]
