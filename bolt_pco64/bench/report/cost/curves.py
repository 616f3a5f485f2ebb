"""Regret against cost: median curves on one grid shared by every run.

Each run's simple regret is a step function of the cost axis
(:data:`~bolt_pco64.bench.report.cost.base.COST_AXES`: the regret of the
last result in by then; before the first one, or before the first feasible
one, ``optimal - worst feasible``); the runs of a method are evaluated on
one grid shared by every method and seed (:func:`cost_grid`), never aligned
by evaluation index (:func:`regret_on_grid`); the line is the median over
seeds, the band its pointwise bootstrap interval
(:func:`~bolt_pco64.bench.stats.median_band`): :func:`cost_curves`. The
grid stops where the first run stops (or at the cost budget), so that no
curve holds a run's last value beyond its data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
import pandas as pd

from bolt_pco64.bench.report.cost.base import (
    COST_METRICS_DEFAULTS,
    _check_columns,
    _runs,
    axis_values,
)
from bolt_pco64.bench.stats import STATS_DEFAULTS, by_method, keyed_rng, median_band
from bolt_pco64.params import Interval, check_param

__all__ = ["cost_curves", "cost_grid", "regret_on_grid"]


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
        axis: A :data:`~bolt_pco64.bench.report.cost.base.COST_AXES` name.
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
    for m, sub in by_method(records, methods):
        _, mat = regret_on_grid(sub, axis, g, fill)
        med, lo, hi = median_band(mat, rng=keyed_rng(seed, m, axis))
        parts.append(
            pd.DataFrame({"method": m, "x": g, "median": med, "low": lo, "high": hi})
        )
    columns = ["method", "x", "median", "low", "high"]
    return (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    )
