"""One comparison entry point: a checked
:class:`~bolt_pco64.bench.spec.ComparisonSpec` run on tables.

A comparison is *what* is compared and *how*
(:class:`~bolt_pco64.bench.spec.ComparisonSpec`:
methods, seeds, budget or GPU-hours, initial design, batch size, noise,
workers, early stopping, reference method; :mod:`~bolt_pco64.bench.spec`
holds every default) run on *tables* (a
:class:`TableSet`):

- :class:`SingleTable`: one problem's table, its results in ``out``;
- :class:`~bolt_pco64.bench.family.Family`: each instance of the family on
  its default table, into ``out/<problem>/``, with a combined report;
- :class:`~bolt_pco64.bench.variants.StandinVariants`: each stand-in variant
  of one instance, into ``out/<variant>/``, with a robustness report.

:func:`run_comparison` runs any of them: the spec was checked when it was
made (its settings alone); ``run_comparison`` checks what depends on the
tables (each table, its row count against the budget, its run times, each
output directory and the runs it holds) and the backend into one
:class:`~bolt_pco64.bench.plan.BenchPlan` before anything is created or
written, then runs what is missing and writes each report::

    from bolt_pco64.bench import ComparisonSpec, Family, run_comparison

    spec = ComparisonSpec(methods=("random", "qlognei"), seeds=5, budget=30)
    one = run_comparison(spec, out="my-results")  # pco64's default table
    family = run_comparison(spec, Family(), out="my-family")

The command line (``bolt-pco64 bench``) builds one spec from its options and
calls :func:`run_comparison`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from bolt_pco64.bench.plan import (
    BenchPlan,
    BenchResult,
    PlannedTable,
    execute_plan,
    make_plan,
)
from bolt_pco64.bench.spec import DEFAULT_LANE_WIDTH, DEFAULT_OUT, ComparisonSpec
from bolt_pco64.instances import DEFAULT_INSTANCE, get_instance
from bolt_pco64.tables.table import Table

if TYPE_CHECKING:
    from bolt_pco64.instances import Instance
    from bolt_pco64.problem import TableLike

__all__ = [
    "SingleTable",
    "TableSet",
    "run_comparison",
]

#: The result of a :class:`TableSet`, which its ``combine`` returns.
R_co = TypeVar("R_co", covariant=True)
#: The result of the table set given to :func:`run_comparison`, which it
#: returns.
R = TypeVar("R")


class TableSet(Protocol[R_co]):
    """The tables a comparison runs on, where each one's results go, and the
    report that combines them (:class:`SingleTable`,
    :class:`~bolt_pco64.bench.family.Family`,
    :class:`~bolt_pco64.bench.variants.StandinVariants`)."""

    def plan_tables(
        self,
        spec: ComparisonSpec,
        out: str | os.PathLike[str],
        arguments: dict[str, Any] | None,
    ) -> dict[str, PlannedTable]:
        """Each part's table, instance, output directory and ``meta.json``
        arguments, by label; checks what the set needs (creates nothing)."""
        ...

    def combine(
        self,
        spec: ComparisonSpec,
        plan: BenchPlan,
        results: dict[str, BenchResult],
        root: Path,
    ) -> R_co:
        """Write the combined report (if any) into ``root`` (the comparison's
        ``out``) and return the set's result."""
        ...


@dataclass(frozen=True)
class SingleTable:
    """One problem's table; its comparison is written into ``out`` itself.

    Attributes:
        table: A path, a DataFrame, a loaded :class:`~bolt_pco64.tables.table.Table`, or
            ``None`` for the problem's default source
            (:func:`bolt_pco64.load_table <bolt_pco64.tables.table.load_table>`); validated by
            the problem's own instance.
        problem: The instance (``"pco16"``, ``"pco32"``, ``"pco64"`` or any
            :class:`~bolt_pco64.instances.Instance`, a user's own too: its table is
            loaded and validated by it); ``None`` is a loaded table's own
            instance, else ``bolt_pco64.instances.DEFAULT_INSTANCE``.
    """

    table: TableLike = None
    problem: str | Instance | None = None

    def plan_tables(
        self,
        spec: ComparisonSpec,
        out: str | os.PathLike[str],
        arguments: dict[str, Any] | None,
    ) -> dict[str, PlannedTable]:
        """One part, labelled by the instance's name."""
        problem = self.problem
        if problem is None:
            problem = (
                self.table.instance
                if isinstance(self.table, Table)
                else DEFAULT_INSTANCE
            )
        name = get_instance(problem).name
        return {name: PlannedTable(problem, self.table, out, arguments)}

    def combine(
        self,
        spec: ComparisonSpec,
        plan: BenchPlan,
        results: dict[str, BenchResult],
        root: Path,
    ) -> BenchResult:
        """The one problem's result."""
        (result,) = results.values()
        return result


@overload
def run_comparison(
    spec: ComparisonSpec,
    tables: TableSet[R],
    *,
    out: str | os.PathLike[str] = ...,
    jobs: int = ...,
    dask_scheduler: str | None = ...,
    progress: bool = ...,
    arguments: dict[str, Any] | None = ...,
    lane_width: int | None = ...,
) -> R: ...


@overload
def run_comparison(
    spec: ComparisonSpec,
    tables: TableLike = ...,
    *,
    out: str | os.PathLike[str] = ...,
    jobs: int = ...,
    dask_scheduler: str | None = ...,
    progress: bool = ...,
    arguments: dict[str, Any] | None = ...,
    lane_width: int | None = ...,
) -> BenchResult: ...


def run_comparison(
    spec: ComparisonSpec,
    tables: TableSet[Any] | TableLike = None,
    *,
    out: str | os.PathLike[str] = DEFAULT_OUT,
    jobs: int = 1,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
    lane_width: int | None = DEFAULT_LANE_WIDTH,
) -> Any:
    """Run (or resume) the comparison ``spec`` on ``tables``; write every file.

    Args:
        spec: The checked comparison.
        tables: A :class:`TableSet`, or one table as :class:`SingleTable`
            takes it (``None``: ``bolt_pco64.instances.DEFAULT_INSTANCE``'s default table).
        out: Output directory (created once every check has passed).
        jobs: Local worker processes (1 = in this process).
        dask_scheduler: Address of an existing Dask scheduler (overrides jobs).
        progress: Show tqdm progress bars (on stderr).
        arguments: Recorded in each ``meta.json`` as the arguments (the CLI
            passes its options); ``None`` records the checked ones.
        lane_width: Run each method's seeds in lanes of this many
            (:mod:`bolt_pco64.bench.lanes`; the default comparison's,
            :data:`~bolt_pco64.bench.spec.DEFAULT_LANE_WIDTH`); ``None``: one
            run at a time (:func:`~bolt_pco64.bench.run.run_one`). A folder's
            runs of a method that batches are all made one way: resuming it
            the other way is refused
            (:class:`~bolt_pco64.bench.lane_record.LaneSettingError`).

    Returns:
        The table set's result: a :class:`~bolt_pco64.bench.plan.BenchResult` for
        one table, a :class:`~bolt_pco64.bench.family.FamilyResult` or a
        :class:`~bolt_pco64.bench.variants.VariantsResult`.

    Raises:
        ComparisonSpecError: If a table has fewer rows than the budget or
            ``n_init``, or the table set refuses the spec (a GPU-hour budget
            across problems or variants).
        OutputDirError: If an output directory cannot be created or written.
        BackendError: If the Dask scheduler cannot be reached.
        FileNotFoundError, TableError: If a table cannot be loaded.
        ValueError: On a table of another problem or without usable run
            times, or a directory holding runs of another configuration.
        LaneSettingError: If a directory holds runs made another way (in
            lanes or one at a time) than ``lane_width`` makes them.

    Each of these is raised before anything is created or written.
    """
    table_set: TableSet[Any] = (
        tables if _is_table_set(tables) else SingleTable(tables)  # type: ignore[arg-type]
    )
    plan = make_plan(
        spec,
        table_set.plan_tables(spec, out, arguments),
        jobs,
        dask_scheduler,
        progress,
        lane_width,
    )
    results = execute_plan(plan)
    return table_set.combine(spec, plan, results, Path(out).expanduser())


def _is_table_set(tables: object) -> bool:
    """Whether ``tables`` is a :class:`TableSet` rather than one table."""
    return hasattr(tables, "plan_tables") and hasattr(tables, "combine")


def planned_tables(
    labels: Mapping[str, tuple[str | Instance, TableLike]],
    root: Path,
    base: dict[str, Any],
    key: str,
) -> dict[str, PlannedTable]:
    """Parts written into ``root/<label>/``, each recorded with ``base``'s
    arguments plus its own ``key`` (its label) and ``out``."""
    return {
        label: PlannedTable(
            instance,
            table,
            root / label,
            {**base, key: label, "out": str(root / label)},
        )
        for label, (instance, table) in labels.items()
    }
