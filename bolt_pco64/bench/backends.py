"""Where runs execute: in this process, in local worker processes, or on Dask.

All three implement :class:`Backend`: a context manager (``open`` acquires
what it needs and is where an unreachable Dask scheduler is refused, before
the harness writes anything) whose :meth:`Backend.run` yields each task's
:class:`~bolt_pco64.bench.records.RunOutcome` as it finishes. Every backend runs
the same :func:`~bolt_pco64.bench.run.run_task`, so the records are
bit-identical across them. A worker that crashes (rather than a method that
raises, which :func:`~bolt_pco64.bench.run.run_one` already catches) becomes a
failed run without rows.

For Dask, use single-threaded workers (``dask worker --nthreads 1``): GP
fitting seeds torch's global generator locally (see :mod:`bolt_pco64.bo`),
which threads of one process share. Registered methods travel with the task
(Dask pickles functions of ``__main__`` by value; worker processes import
them, so they must be importable).
"""

from __future__ import annotations

import functools
import importlib.util
import multiprocessing
import os
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from types import TracebackType
from typing import Any

from bolt_pco64.bench.problems import instance_of
from bolt_pco64.bench.records import RunOutcome, empty_records, error_line
from bolt_pco64.bench.run import Task, run_one, run_task
from bolt_pco64.params import POSITIVE_INT, check_param

__all__ = [
    "DASK_CONNECT_TIMEOUT_S",
    "Backend",
    "BackendError",
    "DaskBackend",
    "InProcessBackend",
    "ProcessBackend",
    "make_backend",
]

#: How long to try to reach a Dask scheduler before the run is refused.
DASK_CONNECT_TIMEOUT_S = 10.0

#: Called with a method's name and a number of its finished evaluations
#: (progress).
Progress = Callable[[str, int], None]


class BackendError(ConnectionError):
    """The backend cannot run anything (e.g. the Dask scheduler is unreachable)."""


class Backend(ABC):
    """Runs tasks and yields their outcomes as they finish.

    With :attr:`lane_width` set, each method's tasks run in lanes of that
    many seeds (:mod:`bolt_pco64.bench.lanes`); the work splits by method x
    lane, and the outcomes are still one per task.
    """

    #: Seeds per lane (:mod:`bolt_pco64.bench.lanes`); ``None`` runs each
    #: task alone with :func:`~bolt_pco64.bench.run.run_one`.
    lane_width: int | None = None

    def open(self) -> None:  # noqa: B027 - a no-op unless a backend needs resources
        """Acquire resources; raise :class:`BackendError` if unusable."""

    def close(self) -> None:  # noqa: B027
        """Release what :meth:`open` acquired."""

    def __enter__(self) -> Backend:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @abstractmethod
    def run(self, tasks: Sequence[Task], progress: Progress) -> Iterator[RunOutcome]:
        """Yield one outcome per task, in order of completion.

        ``progress`` is called with the task's method and new evaluation
        counts: per evaluation in this process, per finished run elsewhere.
        """


class InProcessBackend(Backend):
    """Run the tasks one after another in this process."""

    def run(self, tasks: Sequence[Task], progress: Progress) -> Iterator[RunOutcome]:
        if self.lane_width is not None:  # lanes (bench.lanes)
            from bolt_pco64.bench.lanes import lane_tasks, run_lane

            for lt in lane_tasks(tasks, self.lane_width):
                yield from run_lane(
                    lt.method,
                    lt.seeds,
                    lt.table,
                    lt.config,
                    lt.fn,
                    functools.partial(progress, lt.method),
                )
            return
        for t in tasks:
            yield run_one(
                t.method,
                t.seed,
                t.table,
                t.config,
                fn=t.fn,
                on_evaluation=functools.partial(progress, t.method),
            )


def _failed(task: Task, err: BaseException) -> RunOutcome:
    """A crashed worker's run: failed, without rows."""
    return RunOutcome(
        task.method,
        task.seed,
        empty_records(instance_of(task.table)),
        error_line(err),
        traceback.format_exc(),
    )


def _collect(
    result: Callable[[], RunOutcome], task: Task, progress: Progress
) -> RunOutcome:
    try:
        outcome = result()
    except Exception as err:
        outcome = _failed(task, err)
    progress(task.method, len(outcome.records))
    return outcome


def _units(tasks: Sequence[Task], lane_width: int | None) -> list[Any]:
    """What a worker runs: the tasks, or their lanes (bench.lanes)."""
    if lane_width is None:
        return list(tasks)
    from bolt_pco64.bench.lanes import lane_tasks

    return lane_tasks(tasks, lane_width)


def _collect_unit(
    result: Callable[[], list[RunOutcome]], unit: Any, progress: Progress
) -> list[RunOutcome]:
    """A lane's outcomes (bench.lanes.run_lane_task); a crashed worker fails each seed."""
    from bolt_pco64.bench.lanes import LaneTask

    if not isinstance(unit, LaneTask):
        return [_collect(lambda: result()[0], unit, progress)]
    try:
        outcomes = result()
    except Exception as err:
        outcomes = [
            _failed(Task(unit.method, s, unit.table, unit.config, unit.fn), err)
            for s in unit.seeds
        ]
    for o in outcomes:
        progress(o.method, len(o.records))
    return outcomes


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: exit when the harness process is gone.

    A harness killed with SIGKILL cannot shut its pool down; without this a
    worker would finish its run and then wait for work forever.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="bolt-pco64-parent-watch", daemon=True).start()


class ProcessBackend(Backend):
    """Run the tasks in ``jobs`` local worker processes (spawned)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def run(self, tasks: Sequence[Task], progress: Progress) -> Iterator[RunOutcome]:
        if not tasks:
            return
        pool = ProcessPoolExecutor(
            max_workers=self.jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )
        try:
            if self.lane_width is not None:  # lanes (bench.lanes)
                from bolt_pco64.bench.lanes import run_lane_task

                units = {
                    pool.submit(run_lane_task, u): u
                    for u in _units(tasks, self.lane_width)
                }
                for fut in as_completed(units):
                    yield from _collect_unit(fut.result, units[fut], progress)
                return
            futures = {pool.submit(run_task, t): t for t in tasks}
            for fut in as_completed(futures):
                yield _collect(fut.result, futures[fut], progress)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


class DaskBackend(Backend):
    """Run the tasks on an existing Dask scheduler.

    Args:
        address: The scheduler's address (``tcp://host:8786``).
        timeout_s: How long :meth:`open` tries to reach it.
    """

    def __init__(self, address: str, timeout_s: float = DASK_CONNECT_TIMEOUT_S) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.client: Any = None

    def open(self) -> None:
        from distributed import Client

        try:
            self.client = Client(self.address, timeout=self.timeout_s)
        except (OSError, ValueError) as err:
            raise BackendError(
                f"Cannot reach the Dask scheduler {self.address!r} within "
                f"{self.timeout_s:g} s: {' '.join(str(err).split())}"
            ) from None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def run(self, tasks: Sequence[Task], progress: Progress) -> Iterator[RunOutcome]:
        from distributed import as_completed as dask_completed

        if not tasks:
            return
        if self.client is None:
            raise BackendError("Expected an open DaskBackend, got a closed one.")
        if self.lane_width is not None:  # lanes (bench.lanes)
            from bolt_pco64.bench.lanes import run_lane_task

            units = {
                self.client.submit(run_lane_task, u, pure=False): u
                for u in _units(tasks, self.lane_width)
            }
            try:
                for fut in dask_completed(list(units)):
                    yield from _collect_unit(fut.result, units[fut], progress)
            finally:
                for fut in units:
                    fut.cancel()
            return
        futures = {self.client.submit(run_task, t, pure=False): t for t in tasks}
        try:
            for fut in dask_completed(list(futures)):
                yield _collect(fut.result, futures[fut], progress)
        finally:
            for fut in futures:
                fut.cancel()


def make_backend(
    jobs: int = 1,
    dask_scheduler: str | None = None,
    lane_width: int | None = None,
) -> Backend:
    """The backend for these options (not opened yet).

    Args:
        jobs: Local worker processes; 1 runs in this process.
        dask_scheduler: Address of an existing Dask scheduler (overrides ``jobs``).
        lane_width: Seeds per lane (:mod:`bolt_pco64.bench.lanes`), ``None``
            for one :func:`~bolt_pco64.bench.run.run_one` per task.

    Raises:
        ValueError: If ``jobs`` is not an integer >= 1, or a scheduler is
            given but Dask is not installed.
    """
    check_param("jobs", jobs, POSITIVE_INT)
    if lane_width is not None:
        check_param("lane_width", lane_width, POSITIVE_INT)
    backend = _make_backend(jobs, dask_scheduler)
    backend.lane_width = lane_width
    return backend


def _make_backend(jobs: int, dask_scheduler: str | None) -> Backend:
    if dask_scheduler is not None:
        if importlib.util.find_spec("distributed") is None:
            raise ValueError(
                "Expected Dask for dask_scheduler (pip install 'bolt_pco64[dask]'), "
                "got no 'distributed' module."
            )
        return DaskBackend(dask_scheduler, DASK_CONNECT_TIMEOUT_S)
    return ProcessBackend(jobs) if jobs > 1 else InProcessBackend()
