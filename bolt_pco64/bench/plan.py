"""A comparison checked once: :class:`~bolt_pco64.bench.plan.BenchPlan`, what every
comparison runs.

A :class:`~bolt_pco64.bench.spec.ComparisonSpec` checks its settings
when it is made; :func:`make_plan` checks the rest (the backend, each part's
table, its row count against the budget, its run times, its output directory
and stored runs) and returns the plan: each part's :class:`ProblemPlan` holds
its table, its test problem (built once: optimum and worst feasible value
come from it) and its :class:`~bolt_pco64.bench.store.ResultStore` (built
once: it has read what the directory holds). Nothing is created or written
until :func:`execute_plan` runs it: it opens the backend once (an
unreachable Dask scheduler is refused there, before any directory is made),
then, per part, creates the output directory, runs what is missing and
writes the report. :func:`~bolt_pco64.bench.comparison.run_comparison` plans one table,
each problem of the family or each stand-in variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bolt_pco64.bench.backends import Backend, make_backend
from bolt_pco64.bench.methods.registry import get_method
from bolt_pco64.bench.problems import make_problem
from bolt_pco64.bench.report.context import ReportContext
from bolt_pco64.bench.report.facts import TableFacts
from bolt_pco64.bench.report.pages import write_report
from bolt_pco64.bench.run import Task
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.bench.store import ResultStore, check_output_dir
from bolt_pco64.tables.time_model import TimeModel

if TYPE_CHECKING:
    from bolt_pco64.bench.spec import ComparisonSpec
    from bolt_pco64.instances import Instance
    from bolt_pco64.problem import PCO, TableLike
    from bolt_pco64.tables.table import Table

__all__ = [
    "BenchPlan",
    "BenchResult",
    "PlannedTable",
    "ProblemPlan",
    "execute_plan",
    "make_plan",
    "run_store",
]


@dataclass
class BenchResult:
    """What a comparison on one table produced
    (:func:`~bolt_pco64.bench.comparison.run_comparison`).

    Attributes:
        out: The output directory.
        records: All records (complete and failed runs), one row per evaluation.
        summary: The per-method summary (:func:`~bolt_pco64.bench.report.tables.summarize`).
        summary_markdown: ``summary.md``'s text.
        plot: Path of ``regret.png``.
        errors: ``"method/seed" -> error`` for the failed runs.
        ran: ``(method, seed)`` pairs run by this call (the others were resumed).
        table: The table the comparison ran on (``table.is_simulated`` says
            whether it is a stand-in).
    """

    out: Path
    records: pd.DataFrame
    summary: pd.DataFrame
    summary_markdown: str
    plot: Path
    errors: dict[str, str]
    ran: list[tuple[str, int]] = field(default_factory=list)
    table: Table | None = None


@dataclass(frozen=True)
class ProblemPlan:
    """One problem of a checked comparison.

    Attributes:
        name: The instance's name (``"pco64"``).
        table: Its table.
        problem: Its test problem (optimum, worst feasible value).
        store: Its result store (directory read, nothing written yet).
    """

    name: str
    table: Table
    problem: PCO
    store: ResultStore

    @property
    def out(self) -> Path:
        """The problem's output directory."""
        return self.store.out


@dataclass(frozen=True)
class BenchPlan:
    """A checked comparison (:func:`make_plan`), run by :func:`execute_plan`.

    Attributes:
        methods: Method names, in report order.
        seeds: The seeds.
        config: Budget, ``n_init``, ``q`` and noise.
        reference: The method of the paired comparisons.
        backend: Where the runs execute (not opened yet).
        problems: Each part's plan, by label (an instance's or a stand-in
            variant's name), in order.
        progress: Whether to show progress bars.
        registry: Where the methods are looked up (the spec's); ``None``:
            :func:`~bolt_pco64.bench.methods.registry.method_registry`'s.
    """

    methods: list[str]
    seeds: list[int]
    config: BenchConfig
    reference: str
    backend: Backend
    problems: dict[str, ProblemPlan]
    progress: bool = True
    registry: Mapping[str, object] | None = None


@dataclass(frozen=True)
class PlannedTable:
    """One part of a comparison before it is checked: a table and where its
    results go.

    Attributes:
        instance: The instance (a name or an :class:`~bolt_pco64.instances.Instance`)
            that validates the table.
        table: A path, a DataFrame, a loaded :class:`~bolt_pco64.tables.table.Table` of
            that instance, or ``None`` for the instance's default source
            (:func:`~bolt_pco64.tables.table.load_table`).
        out: The part's output directory.
        arguments: The part's arguments for ``meta.json``; ``None`` records
            the checked arguments of the comparison.
    """

    instance: str | Instance
    table: TableLike
    out: Path | str | PathLike[str]
    arguments: dict[str, Any] | None = None


def make_plan(
    spec: ComparisonSpec,
    tables: Mapping[str, PlannedTable],
    jobs: int,
    dask_scheduler: str | None,
    progress: bool = True,
    lane_width: int | None = None,
) -> BenchPlan:
    """Check what a comparison needs besides its (already checked) ``spec``;
    create nothing.

    Args:
        spec: The comparison (:class:`~bolt_pco64.bench.spec.ComparisonSpec`).
        tables: Each part's table and output directory, by label (an
            instance's or a variant's name), in report order.
        jobs, dask_scheduler, progress, lane_width: As in
            :func:`~bolt_pco64.bench.comparison.run_comparison`.

    Raises:
        ComparisonSpecError: If a table has fewer rows than the budget or
            ``n_init``.
        OutputDirError: If an output directory cannot be created or written.
        FileNotFoundError, TableError: If a table cannot be loaded.
        ValueError: On a table of another instance or without usable run
            times (:class:`~bolt_pco64.tables.time_model.TimeModel`), or a directory
            holding runs of another configuration.
        LaneSettingError: If a directory holds runs made another way (in
            lanes or one at a time) than ``lane_width`` makes them
            (:class:`~bolt_pco64.bench.lane_record.LaneSettingError`).
    """
    from bolt_pco64.instances import get_instance
    from bolt_pco64.tables.table import load_table

    if not tables:
        raise ValueError("Expected at least one problem, got none.")
    names = list(spec.methods)
    seed_list = list(spec.seeds)
    config = spec.config
    backend = make_backend(jobs, dask_scheduler, lane_width)
    problems: dict[str, ProblemPlan] = {}
    loaded = {
        label: load_table(part.table, instance=part.instance)
        for label, part in tables.items()
    }
    for label, table in loaded.items():
        part = tables[label]
        spec.check_rows(len(table))
        TimeModel(table)  # a table without usable run times is refused here
        out = check_output_dir(part.out)
        name = get_instance(part.instance).name
        args = part.arguments
        if args is None:
            raw = part.table
            args = {
                "problem": name,
                **_checked_arguments(spec, jobs, dask_scheduler, lane_width),
                "out": str(out),
                "table": None
                if raw is None or not isinstance(raw, str | PathLike)
                else str(raw),
            }
        problem = make_problem(table)
        store = ResultStore(
            out, config, table, names, seed_list, args, problem,
            lane_width=lane_width, registry=spec.registry,
        )  # fmt: skip
        problems[label] = ProblemPlan(name, table, problem, store)
    return BenchPlan(
        names,
        seed_list,
        config,
        str(spec.reference),
        backend,
        problems,
        progress,
        spec.registry,
    )


def _checked_arguments(
    spec: ComparisonSpec, jobs: int, dask_scheduler: str | None, lane_width: int | None
) -> dict[str, Any]:
    """The checked arguments ``meta.json`` records when none are given: the
    methods, the explicit seeds, the run settings and how the runs execute."""
    return {
        "methods": list(spec.methods),
        "seeds": list(spec.seeds),
        **asdict(spec.config),
        "jobs": jobs,
        "lane_width": lane_width,
        "dask_scheduler": dask_scheduler,
        "reference": spec.reference,
    }


def execute_plan(plan: BenchPlan) -> dict[str, BenchResult]:
    """Run a plan: open the backend, then each problem's missing runs and report.

    Raises:
        BackendError: If the Dask scheduler cannot be reached (nothing is
            created then).
    """
    results: dict[str, BenchResult] = {}
    with plan.backend:
        for name, p in plan.problems.items():
            store = p.store
            store.create()
            ran = run_store(
                store, plan.backend, plan.config, plan.progress, plan.registry
            )
            records = store.records()
            ctx = ReportContext(
                out=store.out,
                records=records,
                facts=TableFacts.of(p.table),
                optimal_value=float(p.problem.optimal_value),
                worst_feasible_value=float(p.problem.worst_feasible_value),
                methods=store.report_methods,
                seeds=store.report_seeds,
                config=plan.config,
                failed=store.failed(),
                fingerprint=store.key["table"],
                reference=plan.reference,
            )
            summary, md = write_report(ctx)
            store.write_meta("complete")
            results[name] = BenchResult(
                store.out,
                records,
                summary,
                md,
                store.out / "regret.png",
                store.errors(),
                ran,
                p.table,
            )
    return results


class _Bars:
    """One tqdm bar per method (its evaluations, so that its rate and ETA are
    its own), or nothing; off when standard error is not a terminal."""

    def __init__(self, enabled: bool, totals: dict[str, int | None]) -> None:
        self.bars: dict[str, Any] = {}
        if enabled:
            from tqdm.auto import tqdm

            width = max(map(len, totals), default=0)
            self.bars = {
                method: tqdm(
                    total=total,
                    desc=method.ljust(width),
                    unit="eval",
                    position=i,
                    disable=None,
                )
                for i, (method, total) in enumerate(totals.items())
            }

    def update(self, method: str, evals: int) -> None:
        bar = self.bars.get(method)
        if bar is not None and evals:
            bar.update(evals)

    def close(self) -> None:
        for bar in reversed(self.bars.values()):
            bar.close()


def run_store(
    store: ResultStore,
    backend: Backend,
    config: BenchConfig,
    progress: bool,
    registry: Mapping[str, object] | None = None,
) -> list[tuple[str, int]]:
    """Run the store's missing runs on an open ``backend``; finalise its files
    on any exit. Returns the ``(method, seed)`` pairs run. ``registry``: where
    the methods are looked up (``None``:
    :func:`~bolt_pco64.bench.methods.registry.method_registry`'s)."""
    todo = store.todo()
    tasks = [Task(m, s, store.table, config, get_method(m, registry)) for m, s in todo]
    # On a GPU-hour budget a run's evaluations are not known in advance.
    per = config.budget
    seeds = len(store.seeds)
    bars = _Bars(progress, {m: seeds * per if per else None for m in store.methods})
    for m, _ in set(store.selected) - set(todo):
        bars.update(m, per or 0)
    ran: list[tuple[str, int]] = []
    status = "complete"
    try:
        store.write_meta("running")
        for outcome in backend.run(tasks, bars.update):
            store.persist(outcome)
            ran.append((outcome.method, outcome.seed))
            bars.update(outcome.method, max(0, (per or 0) - len(outcome.records)))
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except BaseException:
        status = "aborted"  # e.g. the Dask scheduler went away
        raise
    finally:
        bars.close()
        store.write_records()
        store.write_meta(status if status != "complete" else "finishing")
    return ran
