"""A whole comparison: validate, then run the missing runs, then report.

:func:`run_benchmark` checks everything first (methods, settings, seeds,
table, output directory, stored runs, backend), so a refused comparison
leaves the file system as it was; only then does it create the output
directory, run what is missing through a backend and write the report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bolt_pco64.bench.backends import make_backend
from bolt_pco64.bench.config import DEFAULTS, BenchConfig
from bolt_pco64.bench.methods import METHODS, check_methods, check_reference
from bolt_pco64.bench.report import write_summary
from bolt_pco64.bench.run import Task, make_problem
from bolt_pco64.bench.store import ResultStore, check_output_dir

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = ["BenchResult", "check_seeds", "run_benchmark"]


@dataclass
class BenchResult:
    """What :func:`run_benchmark` produced.

    Attributes:
        out: The output directory.
        records: All records (complete and failed runs), one row per evaluation.
        summary: The per-method summary (:func:`~bolt_pco64.bench.summarize`).
        summary_markdown: ``summary.md``'s text.
        plot: Path of ``regret.png``.
        errors: ``"method/seed" -> error`` for the failed runs.
        ran: ``(method, seed)`` pairs run by this call (the others were resumed).
    """

    out: Path
    records: pd.DataFrame
    summary: pd.DataFrame
    summary_markdown: str
    plot: Path
    errors: dict[str, str]
    ran: list[tuple[str, int]] = field(default_factory=list)


def check_seeds(seeds: int | Sequence[int]) -> list[int]:
    """A number ``N`` (seeds ``0..N-1``) or explicit distinct seeds ``>= 0``.

    Raises:
        TypeError: If ``seeds`` is a bool.
        ValueError: If ``N < 1`` or the seeds are empty, repeated or negative.
    """
    if isinstance(seeds, bool):
        raise TypeError(f"Expected an int or a sequence of ints, got {seeds!r}.")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"Expected seeds >= 1, got {seeds}.")
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out or len(set(out)) != len(out) or min(out) < 0:
        raise ValueError(f"Expected distinct seeds >= 0, got {list(seeds)}.")
    return out


class _Bars:
    """Two tqdm bars (runs, evaluations), or nothing."""

    def __init__(self, enabled: bool, runs: int, evals: int) -> None:
        self.runs: Any = None
        self.evals: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self.runs = tqdm(total=runs, desc="runs", unit="run", position=0)
            self.evals = tqdm(total=evals, desc="evaluations", unit="eval", position=1)

    def update(self, runs: int = 0, evals: int = 0) -> None:
        if self.runs is not None and runs:
            self.runs.update(runs)
        if self.evals is not None and evals:
            self.evals.update(evals)

    def close(self) -> None:
        for bar in (self.evals, self.runs):
            if bar is not None:
                bar.close()


def run_benchmark(
    methods: Sequence[str] = DEFAULTS.methods,
    seeds: int | Sequence[int] = DEFAULTS.seeds,
    budget: int = DEFAULTS.budget,
    n_init: int = DEFAULTS.n_init,
    q: int = DEFAULTS.q,
    out: str | os.PathLike[str] = DEFAULTS.out,
    table: str | os.PathLike[str] | pd.DataFrame | Table | None = None,
    noise: float | str | None = None,
    jobs: int = DEFAULTS.jobs,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
    reference: str = DEFAULTS.reference,
) -> BenchResult:
    """Run (or resume) a comparison and write all its files into ``out``.

    Defaults are :data:`~bolt_pco64.bench.DEFAULTS`'s.

    Args:
        methods: Names in :data:`~bolt_pco64.bench.METHODS`.
        seeds: A number ``N`` (seeds ``0..N-1``) or explicit seeds.
        budget: Evaluations per run, initial design included.
        n_init: Size of the shared initial design.
        q: Batch size of each proposal.
        out: Output directory (created once every check has passed).
        table: The table (see :func:`bolt_pco64.load_table`); default source
            when ``None``. A loaded :class:`~bolt_pco64.Table` brings its own
            instance; a path, DataFrame or ``None`` is pco64's.
        noise: ``None``, a standard deviation, or ``"measured"``.
        jobs: Local worker processes (1 = in this process).
        dask_scheduler: Address of an existing Dask scheduler (overrides jobs).
        progress: Show tqdm progress bars (on stderr).
        arguments: Recorded in ``meta.json`` as the arguments (the CLI passes
            its options); defaults to this call's arguments.
        reference: The method the summary compares every other one with
            over the shared seeds; when it is not among ``methods`` the
            summary says that there are no comparisons.

    Returns:
        A :class:`BenchResult`.

    Raises:
        OutputDirError: If ``out`` cannot be created or written.
        BackendError: If the Dask scheduler cannot be reached.
        FileNotFoundError, TableError: If the table cannot be loaded.
        ValueError: On unknown methods, bad settings or a directory holding
            runs of another configuration.

        Each of these is raised before anything is created or written.
    """
    from bolt_pco64.table import Table, load_table

    config = BenchConfig(budget=budget, n_init=n_init, q=q, noise=noise)
    names = check_methods(methods)
    check_reference(reference, names)
    backend = make_backend(jobs, dask_scheduler)
    seed_list = check_seeds(seeds)
    config.check()
    tab = load_table(
        table, instance=table.instance if isinstance(table, Table) else "pco64"
    )
    config.check(len(tab))
    path = check_output_dir(out)
    args = arguments or {
        "methods": names,
        "seeds": seed_list,
        "budget": budget,
        "n_init": n_init,
        "q": q,
        "out": str(path),
        "table": None
        if table is None or isinstance(table, pd.DataFrame | Table)
        else str(table),
        "noise": noise,
        "jobs": jobs,
        "dask_scheduler": dask_scheduler,
        "reference": reference,
    }
    store = ResultStore(path, config, tab, names, seed_list, args)
    problem = make_problem(tab)
    optimal = float(problem.optimal_value)
    worst = float(problem.worst_feasible_value)
    with backend:
        store.create()
        ran = _execute(store, backend, config, progress)
    records = store.records()
    summary, md = write_summary(
        path,
        records,
        tab,
        optimal,
        worst,
        names,
        seed_list,
        config,
        store.failed(),
        store.key["table"],
        reference,
    )
    store.write_meta("complete")
    return BenchResult(
        path, records, summary, md, path / "regret.png", store.errors(), ran
    )


def _execute(
    store: ResultStore, backend: Any, config: BenchConfig, progress: bool
) -> list[tuple[str, int]]:
    """Run the store's missing runs on ``backend``; finalise files on any exit."""
    todo = store.todo()
    n_sel = len(store.selected)
    tasks = [Task(m, s, store.table, config, METHODS[m]) for m, s in todo]
    bars = _Bars(progress, n_sel, n_sel * config.budget)
    bars.update(runs=n_sel - len(todo), evals=(n_sel - len(todo)) * config.budget)
    ran: list[tuple[str, int]] = []
    status = "complete"
    try:
        store.write_meta("running")
        for outcome in backend.run(tasks, lambda n: bars.update(evals=n)):
            store.persist(outcome)
            ran.append((outcome.method, outcome.seed))
            bars.update(runs=1, evals=config.budget - len(outcome.records))
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
