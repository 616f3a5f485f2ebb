"""One comparison entry point: a checked
:class:`~bolt_pco64.bench.comparison.ComparisonSpec` run on tables.

A comparison is *what* is compared and *how* (:class:`ComparisonSpec`:
methods, seeds, budget or GPU-hours, initial design, batch size, noise,
workers, early stopping, reference method; every default is
:data:`~bolt_pco64.bench.config.DEFAULTS`'s) run on *tables* (a
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
calls :func:`run_comparison`; :func:`~bolt_pco64.bench.benchmark.run_benchmark`,
:func:`~bolt_pco64.bench.family.run_problems` and
:func:`~bolt_pco64.bench.variants.run_variants` are deprecated wrappers.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from bolt_pco64.bench.config import DEFAULTS, BenchConfig, resolve_budget
from bolt_pco64.params import check_seeds

if TYPE_CHECKING:
    from bolt_pco64.bench.plan import BenchPlan, BenchResult, PlannedTable
    from bolt_pco64.instances import Instance
    from bolt_pco64.problem import TableLike

__all__ = [
    "ComparisonSpec",
    "ComparisonSpecError",
    "SingleTable",
    "TableSet",
    "run_comparison",
]

#: The result of a :class:`TableSet`, which its ``combine`` returns.
R_co = TypeVar("R_co", covariant=True)
#: The result of the table set given to :func:`run_comparison`, which it
#: returns.
R = TypeVar("R")


class ComparisonSpecError(ValueError):
    """A comparison setting refused by :class:`ComparisonSpec` (alone, or
    against a table's row count in :func:`run_comparison`)."""


@dataclass(frozen=True)
class ComparisonSpec:
    """What a comparison compares and how; checked once, when it is made.

    Defaults are :data:`~bolt_pco64.bench.config.DEFAULTS`'s. The checked
    values replace the given ones: ``methods`` becomes a tuple of distinct
    names (a bare string is one method, never its letters), ``seeds`` a tuple
    of seeds, ``budget`` the evaluation budget (``DEFAULTS.budget`` when
    neither ``budget`` nor ``budget_hours`` is given) and ``reference`` a
    compared method. Use :func:`dataclasses.replace` to vary one setting
    (``replace(spec, budget=None, budget_hours=500)`` for a GPU-hour budget).

    Attributes:
        methods: Names in :data:`~bolt_pco64.bench.registry.METHODS` (or the
            ``bolt_pco64.methods`` entry points), in report order.
        seeds: A number ``N`` (seeds ``0..N-1``) or explicit distinct seeds.
        budget: Evaluations per run, initial design included; ``None`` is
            ``DEFAULTS.budget`` unless ``budget_hours`` is given.
        budget_hours: GPU-hours per run instead of ``budget`` (not both): a
            run evaluates until that many GPU-hours are consumed on the
            simulated clock (:mod:`bolt_pco64.bench.clock`).
        n_init: Size of the initial design shared by the methods of a seed.
        q: Batch size of each proposal.
        noise: ``None`` (noise-free), a standard deviation, or ``"measured"``.
        workers: Runs in flight at once on the simulated clock, each on a
            cluster of the instance's size.
        early_stop: Early termination of every run: ``"none"``,
            ``"posterior"`` or ``"percentile"`` (:mod:`bolt_pco64.bench.early`).
        reference: The method the summary compares every other one with over
            the shared seeds, one of ``methods``; ``None``:
            ``DEFAULTS.reference`` where it is compared, else the first method.
        registry: Where ``methods`` are looked up (Ax's style): names to
            methods (a :class:`~bolt_pco64.bench.contract.Method` or a function);
            ``None`` for :func:`~bolt_pco64.bench.registry.method_registry`'s
            (registered, built-in and entry-point methods). The checked spec
            holds the mapping its methods were found in (entry points loaded
            once, into it); not compared, not recorded.

    Raises:
        ComparisonSpecError: On unknown methods, a reference not compared,
            bad seeds, inconsistent settings or a method's own ``n_init``
            beyond the budget.
        TypeError: If ``seeds`` is a bool.
    """

    methods: str | Sequence[str] = DEFAULTS.methods
    seeds: int | Sequence[int] = DEFAULTS.seeds
    budget: int | None = None
    budget_hours: float | None = None
    n_init: int = DEFAULTS.n_init
    q: int = DEFAULTS.q
    noise: float | str | None = DEFAULTS.noise
    workers: int = DEFAULTS.workers
    early_stop: str = DEFAULTS.early_stop
    reference: str | None = None
    registry: Mapping[str, object] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        from bolt_pco64.bench.registry import (
            check_methods,
            check_reference,
            get_method,
            method_registry,
        )
        from bolt_pco64.bench.run import initial_design_size

        given = [self.methods] if isinstance(self.methods, str) else self.methods
        found = method_registry() if self.registry is None else self.registry
        _set(self, registry=found)
        try:
            names = tuple(check_methods(given, found))
            seeds = tuple(check_seeds(self.seeds))
            budget = resolve_budget(self.budget, self.budget_hours)
            _set(self, methods=names, seeds=seeds, budget=budget)
            self.config.check()
            for m in names:
                initial_design_size(get_method(m, found), self.config, m)
            _set(self, reference=check_reference(self.reference, names))
        except ValueError as err:
            raise ComparisonSpecError(str(err)) from err

    @property
    def config(self) -> BenchConfig:
        """What makes the runs comparable (stored with each run; resume checks it)."""
        return BenchConfig(
            budget=self.budget,
            n_init=self.n_init,
            q=self.q,
            noise=self.noise,
            budget_hours=self.budget_hours,
            workers=self.workers,
            early_stop=self.early_stop,
        )

    def check_rows(self, n_rows: int) -> None:
        """Refuse a table of ``n_rows`` rows: fewer than the budget or ``n_init``.

        Raises:
            ComparisonSpecError: If the table is too small for the settings.
        """
        try:
            self.config.check(n_rows)
        except ValueError as err:
            raise ComparisonSpecError(str(err)) from err


def _set(spec: ComparisonSpec, **values: object) -> None:
    """Store checked values on a frozen spec (during ``__post_init__`` only)."""
    for name, value in values.items():
        object.__setattr__(spec, name, value)


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
        table: A path, a DataFrame, a loaded :class:`~bolt_pco64.table.Table`, or
            ``None`` for the problem's default source
            (:func:`bolt_pco64.load_table <bolt_pco64.table.load_table>`); validated by
            the problem's own instance.
        problem: The instance (``"pco16"``, ``"pco32"``, ``"pco64"`` or any
            :class:`~bolt_pco64.instances.Instance`, a user's own too: its table is
            loaded and validated by it); ``None`` is a loaded table's own
            instance, else ``DEFAULTS.problem``.
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
        from bolt_pco64.bench.plan import PlannedTable
        from bolt_pco64.instances import get_instance
        from bolt_pco64.table import Table

        problem = self.problem
        if problem is None:
            problem = (
                self.table.instance
                if isinstance(self.table, Table)
                else DEFAULTS.problem
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
    out: str | os.PathLike[str] = DEFAULTS.out,
    jobs: int = DEFAULTS.jobs,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
    lane_width: int | None = None,
) -> Any:
    """Run (or resume) the comparison ``spec`` on ``tables``; write every file.

    Args:
        spec: The checked comparison.
        tables: A :class:`TableSet`, or one table as :class:`SingleTable`
            takes it (``None``: ``DEFAULTS.problem``'s default table).
        out: Output directory (created once every check has passed).
        jobs: Local worker processes (1 = in this process).
        dask_scheduler: Address of an existing Dask scheduler (overrides jobs).
        progress: Show tqdm progress bars (on stderr).
        arguments: Recorded in each ``meta.json`` as the arguments (the CLI
            passes its options); ``None`` records the checked ones.
        lane_width: Run each method's seeds in lanes of this many
            (:mod:`bolt_pco64.bench.lanes`); ``None``: one run at a time.

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

    Each of these is raised before anything is created or written.
    """
    from bolt_pco64.bench.plan import execute_plan, make_plan

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
    from bolt_pco64.bench.plan import PlannedTable

    return {
        label: PlannedTable(
            instance,
            table,
            root / label,
            {**base, key: label, "out": str(root / label)},
        )
        for label, (instance, table) in labels.items()
    }


def _run_deprecated(
    old: str,
    replacement: str,
    tables: TableSet[R],
    spec_fields: Mapping[str, Any],
    **run: Any,
) -> R:
    """The deprecated entry points' one body: warn, naming their caller's line
    (``stacklevel=3``), then build the spec from ``spec_fields`` (checked, as
    :class:`ComparisonSpec` checks it) and :func:`run_comparison` it on
    ``tables`` with the ``run`` keywords.

    Args:
        old: The deprecated name, as a user imports it
            (``"bolt_pco64.bench.run_benchmark"``).
        replacement: How ``tables`` is spelled in the replacement call
            (``"SingleTable(table, problem)"``).
    """
    warnings.warn(
        f"{old} is deprecated and will be removed in a future 0.x release; use "
        f"bolt_pco64.bench.run_comparison(ComparisonSpec(...), {replacement}, out=...).",
        DeprecationWarning,
        stacklevel=3,
    )
    return run_comparison(ComparisonSpec(**spec_fields), tables, **run)
