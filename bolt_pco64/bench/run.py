"""One run: one method optimising one problem from one seed, on a simulated clock.

A run evaluates configurations until its budget is spent: ``budget``
evaluations (the initial design included), or ``budget_hours`` GPU-hours
(:class:`~bolt_pco64.bench.spec.BenchConfig`). Evaluations run on the
discrete-event clock of :mod:`bolt_pco64.bench.clock` with
``config.workers`` workers, each a cluster of the instance's size: a run of a
configuration takes what the time model (:mod:`bolt_pco64.tables.time_model`) says it
takes; a worker that frees takes the next configuration of the current
proposal or, when there is none, asks the method for the next ones (``q`` at
a time). The configurations in flight are the method's pending rows
(``ctx.pending``); it sees the results that came in (``ctx.rows``,
``ctx.y``). The initial design is the first proposal. With one worker the
run is the plain sequential loop: propose, evaluate, propose, ...

Every evaluation is one row of the run's records, **in the order the results
came in** (:func:`~bolt_pco64.bench.records.record_columns`); the
loop itself is :class:`~bolt_pco64.bench.loop.RunLoop`.

Fairness: for a given seed every method starts from the same initial design
(the first ``n_init`` rows of a permutation drawn by a generator seeded by
the seed alone; a method that declares its own ``n_init`` takes that prefix
of the same permutation, and the run records the size it used) and, with
noise, sees the same noise on it.

Determinism: a run depends only on (method, seed, configuration, table). It
executes with every thread pool at one thread (torch's, and the BLAS and
OpenMP pools through threadpoolctl; restored afterwards), and the clock
breaks ties by worker index, so every backend gives bit-identical records
(``fit_seconds``/``acq_seconds`` aside).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from bolt_pco64.bench.contract import (
    Method,
    RunContext,
    as_method,
    initial_design_size,
)
from bolt_pco64.bench.loop import RunLoop
from bolt_pco64.bench.methods.registry import get_method
from bolt_pco64.bench.records import RunOutcome, record_columns
from bolt_pco64.bench.spec import BenchConfig

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = [
    "Task",
    "one_thread_everywhere",
    "record_columns",
    "run_one",
    "run_task",
]


@contextlib.contextmanager
def one_thread_everywhere() -> Iterator[None]:
    """Pin torch's intra-op pool and every BLAS/OpenMP pool to one thread.

    ``torch.set_num_threads(1)`` does not reach SciPy's and NumPy's
    OpenBLAS pools (whose idle threads spin on a busy machine: BoTorch's
    L-BFGS-B step took milliseconds instead of microseconds under load);
    ``threadpoolctl.threadpool_limits`` does, for the libraries loaded
    when it is entered, so the modules that load them are imported first.
    Everything is restored on exit.
    """
    import botorch.optim.batched_lbfgs_b  # noqa: F401 - loads SciPy's BLAS
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(before)


def run_one(
    method: str,
    seed: int,
    table: Table,
    config: BenchConfig,
    fn: Method | Callable[[RunContext], Any] | None = None,
    on_evaluation: Callable[[int], None] | None = None,
    registry: Mapping[str, object] | None = None,
) -> RunOutcome:
    """Run one method from one seed; never raises for a failing method.

    Args:
        method: The method's name (recorded; looked up with
            :func:`~bolt_pco64.bench.methods.registry.get_method` in ``registry``
            when ``fn`` is ``None``).
        seed: The run's seed.
        table: The problem's table.
        config: Budget, initial design, batch size and noise.
        fn: The method itself (a :class:`~bolt_pco64.bench.contract.Method` or
            a function; to run one that is not registered here).
        on_evaluation: Called with the number of new evaluations after each step.
        registry: Where ``method`` is looked up (``None``:
            :func:`~bolt_pco64.bench.methods.registry.method_registry`'s).

    Returns:
        A :class:`~bolt_pco64.bench.records.RunOutcome`; when the method raises (or proposes invalid rows)
        the records hold every evaluation made before and ``error`` says why.

    Raises:
        ValueError: If ``method`` is not in the registry (and ``fn`` is ``None``),
            ``config`` does not fit the table, or the method's ``n_init`` does
            not fit the budget.
    """
    impl = get_method(method, registry) if fn is None else as_method(fn)
    config.check_rows(len(table))
    n_init = initial_design_size(impl, config.n_init, config.budget, method)
    with one_thread_everywhere():
        run = RunLoop(method, int(seed), table, config, on_evaluation)
        return run.execute(impl, n_init)


@dataclass(frozen=True)
class Task:
    """One run to execute, self-contained so that a worker can run it."""

    method: str
    seed: int
    table: Table
    config: BenchConfig
    fn: Method


def run_task(task: Task) -> RunOutcome:
    """Worker entry point (every backend)."""
    return run_one(task.method, task.seed, task.table, task.config, fn=task.fn)
