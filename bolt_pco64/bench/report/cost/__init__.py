"""Cost metrics of a comparison: regret against GPU-hours and wall-clock, time to target.

- :mod:`~bolt_pco64.bench.report.cost.base`: the defaults, the cost axes and
  the records read on them;
- :mod:`~bolt_pco64.bench.report.cost.curves`: median simple regret against
  an axis, with bootstrap bands;
- :mod:`~bolt_pco64.bench.report.cost.target`: the cost to come within a
  target of the optimum;
- :mod:`~bolt_pco64.bench.report.cost.ert`: the expected running time to a
  target, paired comparisons on cost and the ERT ratios' sensitivity.

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
