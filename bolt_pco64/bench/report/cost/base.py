"""What the cost metrics share: defaults, cost axes, the records read on them.

A user pays in GPU-hours and waits in wall-clock time, not in evaluations.
The cost metrics read the harness's records (one row per evaluation, in the
order the results came in) on a *cost axis* (:data:`COST_AXES`):

- ``"gpu_hours"``: the record's ``gpu_hours``, the GPU-hours consumed when
  its result came in (:mod:`bolt_pco64.bench.clock`: with one worker the
  cumulative cost of the runs so far, with several the running ones counted
  in proportion);
- ``"wall_hours"``: the record's ``sim_end_s`` (the simulated wall-clock time
  its result came in) in hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from bolt_pco64.bench.stats import complete_runs

__all__ = [
    "COST_AXES",
    "COST_METRICS_DEFAULTS",
    "CostAxis",
    "CostMetricsDefaults",
    "axis_values",
    "evaluation_horizon",
    "within_budget",
]


@dataclass(frozen=True)
class CostMetricsDefaults:
    """The defaults of the cost metrics (one place).

    Attributes:
        targets: Relative distances to the optimum of the time-to-target
            metrics (0.01 = within 1 % of the optimal throughput).
        sensitivity_targets: The targets of the sensitivity table of ERT
            ratios (:func:`~bolt_pco64.bench.report.cost.ert.ert_sensitivity`).
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
    # Sorted once: a group keeps the order of its rows.
    ordered = records.sort_values("iteration", kind="stable")
    return [(int(s), r) for s, r in ordered.groupby("seed", sort=True)]


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
