"""Deprecated: :func:`~bolt_pco64.bench.benchmark.run_benchmark`, a comparison on one
problem.

:func:`~bolt_pco64.bench.comparison.run_comparison` with a
:class:`~bolt_pco64.bench.comparison.ComparisonSpec` replaces it; it stays as a thin
wrapper that builds the spec and calls it (``CHANGELOG.md``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from bolt_pco64.bench.comparison import (
    SingleTable,
    _run_deprecated,
)
from bolt_pco64.bench.config import DEFAULTS
from bolt_pco64.bench.plan import BenchResult
from bolt_pco64.params import check_seeds

if TYPE_CHECKING:
    from bolt_pco64.instances import Instance
    from bolt_pco64.tables.table import Table

__all__ = ["BenchResult", "check_seeds", "run_benchmark"]


def run_benchmark(
    methods: Sequence[str] = DEFAULTS.methods,
    seeds: int | Sequence[int] = DEFAULTS.seeds,
    budget: int | None = None,
    n_init: int = DEFAULTS.n_init,
    q: int = DEFAULTS.q,
    out: str | os.PathLike[str] = DEFAULTS.out,
    table: str | os.PathLike[str] | pd.DataFrame | Table | None = None,
    noise: float | str | None = DEFAULTS.noise,
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
    """Deprecated: run (or resume) a comparison on one problem into ``out``.

    Use :func:`~bolt_pco64.bench.comparison.run_comparison` instead::

        run_comparison(ComparisonSpec(methods, seeds, budget, ...),
                       SingleTable(table, problem), out=out, jobs=jobs)

    This wrapper builds that spec and calls it, with a ``DeprecationWarning``;
    its results are the same.

    Arguments: ``methods``, ``seeds``, ``budget``, ``n_init``, ``q``, ``noise``,
    ``reference``, ``budget_hours``, ``workers`` and ``early_stop`` are
    :class:`~bolt_pco64.bench.comparison.ComparisonSpec`'s; ``table`` and ``problem``
    are :class:`~bolt_pco64.bench.comparison.SingleTable`'s; ``out``, ``jobs``,
    ``dask_scheduler``, ``progress`` and ``arguments`` are
    :func:`~bolt_pco64.bench.comparison.run_comparison`'s.

    Returns:
        A :class:`~bolt_pco64.bench.plan.BenchResult`.

    Raises:
        ValueError: As :func:`~bolt_pco64.bench.comparison.run_comparison` and
            :class:`~bolt_pco64.bench.comparison.ComparisonSpec`
            (``ComparisonSpecError``, ``TableError``), before anything is created or
            written.
        OutputDirError: As :func:`~bolt_pco64.bench.comparison.run_comparison`.
        BackendError: As :func:`~bolt_pco64.bench.comparison.run_comparison`.
        FileNotFoundError: If a named table file does not exist.
    """
    return _run_deprecated(
        "bolt_pco64.bench.run_benchmark",
        "SingleTable(table, problem)",
        SingleTable(table, problem),
        dict(
            methods=methods,
            seeds=seeds,
            budget=budget,
            budget_hours=budget_hours,
            n_init=n_init,
            q=q,
            noise=noise,
            workers=workers,
            early_stop=early_stop,
            reference=reference,
        ),
        out=out,
        jobs=jobs,
        dask_scheduler=dask_scheduler,
        progress=progress,
        arguments=arguments,
    )
