"""Cost metrics of a comparison: regret against GPU-hours and wall-clock, time to target.

A user pays in GPU-hours and waits in wall-clock time, not in evaluations.
These metrics read the harness's records (one row per evaluation, in the
order the results came in) on a *cost axis*
(:data:`~bolt_pco64.bench.report.cost.base.COST_AXES`: ``"gpu_hours"``, the
GPU-hours consumed when a result came in; ``"wall_hours"``, the simulated
wall-clock time it came in).

- :mod:`~bolt_pco64.bench.report.cost.base`: the metrics' defaults
  (:data:`~bolt_pco64.bench.report.cost.base.COST_METRICS_DEFAULTS`), the
  cost axes and the records read on them (``axis_values``,
  ``within_budget``, ``evaluation_horizon``);
- :mod:`~bolt_pco64.bench.report.cost.curves`: median simple regret against
  an axis, on a grid shared by every run, with bootstrap bands
  (``cost_curves``, ``cost_grid``, ``regret_on_grid``);
- :mod:`~bolt_pco64.bench.report.cost.target`: the cost a run spent to come
  within a target of the optimum (``time_to_target``), and random search's
  on a table (``random_search_costs``);
- :mod:`~bolt_pco64.bench.report.cost.ert`: the expected running time to a
  target with its bootstrap intervals (``ert_table``), paired comparisons on
  cost with a sign test (``compare_costs``) and the ERT ratios' sensitivity
  to the target (``ert_sensitivity``).

Every name is importable from here (``from bolt_pco64.bench.report.cost
import ert_table``).
"""

from bolt_pco64.bench.report.cost.base import (
    COST_AXES,
    COST_METRICS_DEFAULTS,
    CostAxis,
    CostMetricsDefaults,
    axis_values,
    evaluation_horizon,
    within_budget,
)
from bolt_pco64.bench.report.cost.curves import cost_curves, cost_grid, regret_on_grid
from bolt_pco64.bench.report.cost.ert import compare_costs, ert_sensitivity, ert_table
from bolt_pco64.bench.report.cost.target import random_search_costs, time_to_target

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
