"""Time to a target: what a run spent to come within ``p`` of the optimum.

A target ``p`` (1 %, 2 %, 5 %:
:attr:`~bolt_pco64.bench.report.cost.base.CostMetricsDefaults.targets`) is
reached when the best feasible throughput found is within ``p`` of the
optimum (regret ``<= p x optimal``). A run that reaches it spent the axis
value at that result; one that does not is charged its **whole budget**
when there is one (``budget``: a run stops once its budget is spent, so
whatever it held back is still what an unsuccessful seed costs), else its
whole run (the axis value of its last result: on an evaluation budget, all
its evaluations): :func:`time_to_target`, per run, which the expected
running time of :mod:`~bolt_pco64.bench.report.cost.ert` reads.
:func:`random_search_costs` gives what random search spends on a table to
reach a target, drawn from the table alone (no run needed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bolt_pco64.bench.report.cost.base import (
    COST_METRICS_DEFAULTS,
    _check_columns,
    _runs,
    axis_values,
)
from bolt_pco64.bench.stats import STATS_DEFAULTS, method_order
from bolt_pco64.params import POSITIVE_INT, check_param

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = ["random_search_costs", "time_to_target"]


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
    for m in method_order(records, None):
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
    time model (:class:`~bolt_pco64.tables.time_model.TimeModel`). Works on any table.

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
    from bolt_pco64.tables.time_model import COST_DEFAULTS, TimeModel

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
