"""One run: one method optimising one problem from one seed, on a simulated clock.

A run evaluates configurations until its budget is spent: ``budget``
evaluations (the initial design included), or ``budget_hours`` GPU-hours
(:class:`~bolt_pco64.bench.config.BenchConfig`). Evaluations run on the
discrete-event clock of :mod:`bolt_pco64.bench.clock` with
``config.workers`` workers, each a cluster of the instance's size: a run of a
configuration takes what the time model (:mod:`bolt_pco64.costs`) says it
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
from numbers import Integral
from typing import TYPE_CHECKING, Any

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.bench.config import BenchConfig
from bolt_pco64.bench.contract import Method, RunContext, as_method
from bolt_pco64.bench.loop import RunLoop
from bolt_pco64.bench.records import RunOutcome, record_columns
from bolt_pco64.bench.registry import get_method
from bolt_pco64.costs import TimeModel
from bolt_pco64.instances import PCO64_INSTANCE
from bolt_pco64.params import Interval, check_param

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = [
    "Task",
    "initial_design_size",
    "record_columns",
    "run_one",
    "run_task",
]

__getattr__ = deprecated_names(
    __name__,
    {
        "RECORD_COLUMNS": (
            lambda: record_columns(PCO64_INSTANCE),
            "record_columns(instance)",
        ),
        "cost_per_row": (
            lambda: lambda table: TimeModel(table).gpu_hours,
            "TimeModel(table).gpu_hours",
        ),
    },
)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    # Every thread pool, BLAS/OpenMP of NumPy and SciPy included (bench.lanes).
    from bolt_pco64.bench.lanes import one_thread_everywhere

    with one_thread_everywhere():
        yield


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
            :func:`~bolt_pco64.bench.registry.get_method` in ``registry``
            when ``fn`` is ``None``).
        seed: The run's seed.
        table: The problem's table.
        config: Budget, initial design, batch size and noise.
        fn: The method itself (a :class:`~bolt_pco64.bench.contract.Method` or
            a function; to run one that is not registered here).
        on_evaluation: Called with the number of new evaluations after each step.
        registry: Where ``method`` is looked up (``None``:
            :func:`~bolt_pco64.bench.registry.method_registry`'s).

    Returns:
        A :class:`~bolt_pco64.bench.records.RunOutcome`; when the method raises (or proposes invalid rows)
        the records hold every evaluation made before and ``error`` says why.

    Raises:
        ValueError: If ``method`` is not in the registry (and ``fn`` is ``None``),
            ``config`` does not fit the table, or the method's ``n_init`` does
            not fit the budget.
    """
    impl = get_method(method, registry) if fn is None else as_method(fn)
    config.check(len(table))
    n_init = initial_design_size(impl, config, method)
    with _one_thread():
        run = RunLoop(method, int(seed), table, config, on_evaluation)
        return run.execute(impl, n_init)


def initial_design_size(method: Method, config: BenchConfig, name: str = "") -> int:
    """The initial-design size of ``method`` under ``config``: its own
    ``n_init``, else ``config.n_init``.

    Raises:
        ValueError: If the method's ``n_init`` is not an integer in
            ``1..config.budget`` (``>= 1`` on a GPU-hour budget).
    """
    n = method.n_init
    if n is None:
        return config.n_init
    # At most the budget; on a GPU-hour budget, any integer >= 1.
    check_param(f"n_init of method {name!r}", n, Interval(Integral, 1, config.budget))
    return n


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
