"""A whole comparison on one problem: validate, then run the missing runs, then report.

:func:`run_benchmark` checks everything first (methods, settings, seeds,
table, output directory, stored runs, backend) into a
:class:`~bolt_pco64.bench.plan.BenchPlan`, so a refused comparison leaves the
file system as it was; only then does it create the output directory, run
what is missing through a backend and write the report
(:func:`~bolt_pco64.bench.plan.execute_plan`, shared with
:func:`~bolt_pco64.bench.run_problems`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from bolt_pco64.bench.config import DEFAULTS, BenchConfig, resolve_budget
from bolt_pco64.bench.plan import BenchResult, execute_plan, make_plan
from bolt_pco64.instances import INSTANCES, Instance, get_instance
from bolt_pco64.params import check_seeds

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = ["BenchResult", "check_seeds", "run_benchmark"]


def run_benchmark(
    methods: Sequence[str] = DEFAULTS.methods,
    seeds: int | Sequence[int] = DEFAULTS.seeds,
    budget: int | None = None,
    n_init: int = DEFAULTS.n_init,
    q: int = DEFAULTS.q,
    out: str | os.PathLike[str] = DEFAULTS.out,
    table: str | os.PathLike[str] | pd.DataFrame | Table | None = None,
    noise: float | str | None = None,
    jobs: int = DEFAULTS.jobs,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
    reference: str | None = None,
    problem: str | Instance | None = None,
    budget_hours: float | None = None,
    workers: int = DEFAULTS.workers,
    early_stop: str = DEFAULTS.early_stop,
) -> BenchResult:
    """Run (or resume) a comparison and write all its files into ``out``.

    Defaults are :data:`~bolt_pco64.bench.DEFAULTS`'s.

    Args:
        methods: Names in :data:`~bolt_pco64.bench.METHODS`.
        seeds: A number ``N`` (seeds ``0..N-1``) or explicit seeds.
        budget: Evaluations per run, initial design included; ``None`` is
            ``DEFAULTS.budget`` unless ``budget_hours`` is given.
        n_init: Size of the shared initial design.
        q: Batch size of each proposal.
        out: Output directory (created once every check has passed).
        table: The problem's table (see :func:`bolt_pco64.load_table`): a
            path, a DataFrame, a loaded :class:`~bolt_pco64.Table`, or ``None``
            for the problem's default source. It is validated by the
            problem's own instance.
        noise: ``None``, a standard deviation, or ``"measured"``.
        jobs: Local worker processes (1 = in this process).
        dask_scheduler: Address of an existing Dask scheduler (overrides jobs).
        progress: Show tqdm progress bars (on stderr).
        arguments: Recorded in ``meta.json`` as the arguments (the CLI passes
            its options); defaults to this call's arguments.
        reference: The method the summary compares every other one with
            over the shared seeds, one of ``methods``; ``None``:
            ``DEFAULTS.reference`` where it is compared, else the first
            method (:func:`~bolt_pco64.bench.methods.check_reference`).
        problem: The instance (``"pco16"``, ``"pco32"``, ``"pco64"`` or any
            :class:`~bolt_pco64.Instance`, a user's own too); ``None`` is a
            loaded table's own instance, else ``DEFAULTS.problem``.
        budget_hours: GPU-hours per run instead of ``budget`` (not both):
            a run evaluates until that many GPU-hours are consumed on the
            simulated clock (:mod:`bolt_pco64.bench.clock`).
        workers: Runs in flight at once on the simulated clock, each on a
            cluster of the instance's size.
        early_stop: Early termination of every run: ``"none"``,
            ``"posterior"`` or ``"percentile"`` (:mod:`bolt_pco64.bench.early`).

    Returns:
        A :class:`BenchResult`.

    Raises:
        OutputDirError: If ``out`` cannot be created or written.
        BackendError: If the Dask scheduler cannot be reached.
        FileNotFoundError, TableError: If the table cannot be loaded.
        ValueError: On unknown methods, bad settings, a table of another
            problem or a directory holding runs of another configuration.

        Each of these is raised before anything is created or written.
    """
    from bolt_pco64.table import Table, load_table

    if problem is None:
        problem = table.instance if isinstance(table, Table) else DEFAULTS.problem
    instance = get_instance(problem)
    name = instance.name
    if not isinstance(table, Table) and INSTANCES.get(name) != instance:
        # a user's own Instance: its table is loaded by it (the plan knows
        # the shipped instances by name only)
        table = load_table(table, instance=instance)
    config = BenchConfig(
        budget=resolve_budget(budget, budget_hours),
        n_init=n_init,
        q=q,
        noise=noise,
        budget_hours=budget_hours,
        workers=workers,
        early_stop=early_stop,
    )
    plan = make_plan(
        {name: table},
        {name: out},
        {name: arguments},
        methods,
        seeds,
        config,
        reference,
        jobs,
        dask_scheduler,
        progress,
    )
    return execute_plan(plan)[name]
