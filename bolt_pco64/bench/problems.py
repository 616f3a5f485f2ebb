"""The problem a table serves, its instance and the cost of each of its rows.

Small helpers that every part of the harness shares (the run, the store,
the backends, the plan and the report).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch import Tensor

from bolt_pco64.costs import TimeModel
from bolt_pco64.instances import Instance

if TYPE_CHECKING:
    from bolt_pco64.problem import PCO
    from bolt_pco64.table import Table

__all__ = ["cost_per_row", "instance_of", "make_problem"]


def instance_of(table: Table) -> Instance:
    """The instance a table belongs to (``table.instance``)."""
    return table.instance


def make_problem(table: Table) -> PCO:
    """The test problem served by ``table``, of its instance's class."""
    from bolt_pco64.problem import problem_class

    return problem_class(table.instance)(table=table)


def cost_per_row(table: Table) -> Tensor:
    """``N``-dim tensor: GPU-hours of evaluating each row (a crash included).

    :attr:`bolt_pco64.costs.TimeModel.gpu_hours` with the time model's defaults.
    """
    return TimeModel(table).gpu_hours
