"""The problem a table serves and its instance.

Small helpers that every part of the harness shares (the run, the store,
the backends, the plan and the report).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bolt_pco64.instances import Instance

if TYPE_CHECKING:
    from bolt_pco64.problem import PCO
    from bolt_pco64.tables.table import Table

__all__ = ["instance_of", "make_problem"]


def instance_of(table: Table) -> Instance:
    """The instance a table belongs to (``table.instance``)."""
    return table.instance


def make_problem(table: Table) -> PCO:
    """The test problem served by ``table``, of its instance's class."""
    from bolt_pco64.problem import problem_class

    return problem_class(table.instance)(table=table)
