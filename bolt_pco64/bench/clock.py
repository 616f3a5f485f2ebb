"""A discrete-event simulated clock: ``K`` workers running evaluations at once.

People who tune a parallelism configuration pay in GPU-hours and wait in
wall-clock time. The harness replays that with a simulated clock instead of
real time (pure Python, no BoTorch, no table: the caller says what each job
costs, :mod:`bolt_pco64.tables.time_model` is the one place that knows):

- there are ``workers`` workers, each a cluster of the instance's size; a job
  (one run of one configuration) occupies one worker from its start to its
  end, ``seconds`` later (what :class:`~bolt_pco64.tables.time_model.TimeModel` says the
  run takes);
- a job starts on the **free worker of lowest index** at the clock's current
  time (:meth:`SimulatedClock.start`), if the budget allows
  (:meth:`SimulatedClock.can_start`);
- :meth:`SimulatedClock.advance` moves the clock to the next instant at which
  a job ends and returns every job that ends then, **in worker order** (jobs
  ending at exactly the same time are returned together, so that the method
  asked next sees all of them). The worker is then free and the caller asks
  the method for the next configuration;
- the jobs still running are the *pending* ones (:attr:`SimulatedClock.running`,
  in start order): a model-based method receives them as ``X_pending`` so that
  it does not propose them again.

**Budgets** (:class:`ClockBudget`), exactly one of:

- ``evaluations``: exactly that many jobs start (and all of them end);
- ``gpu_hours``: a job may start while the GPU-hours *consumed so far* are
  below the budget. Consumed GPU-hours at time ``t`` count every job's cost
  in proportion to the part of it that has run by ``t`` (a job running half
  its length has consumed half its GPU-hours): what a cluster's meter would
  show. **The run that crosses the budget finishes and is charged in full**
  (stopping it would throw its observation away, which no user does), so a
  run's total can exceed the budget by at most the jobs that were running
  when it was crossed (at most one per worker). The cost metrics
  (:mod:`bolt_pco64.bench.report.cost`) read results up to the budget only,
  so the overshoot never favours a method.

Determinism: the clock is a pure function of the calls made on it; ties go
to the lowest worker index (starts) and are returned in worker order (ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Generic, Literal, TypeVar

from bolt_pco64.params import POSITIVE_INT, check_param

__all__ = [
    "ClockBudget",
    "Completion",
    "Job",
    "SimulatedClock",
]

#: The item a job carries (what the caller runs, e.g. a table row).
T = TypeVar("T")


def _positive_int(name: str, value: object) -> int:
    check_param(name, value, POSITIVE_INT)
    return int(value)  # type: ignore[call-overload]


@dataclass(frozen=True)
class ClockBudget:
    """The budget of one run on the clock: evaluations or GPU-hours, not both.

    Attributes:
        evaluations: Jobs to run (an integer ``>= 1``), or ``None``.
        gpu_hours: GPU-hours to spend (a finite number ``> 0``), or ``None``.

    Raises:
        ValueError: If neither or both are given, or the one given is not
            positive.
    """

    evaluations: int | None = None
    gpu_hours: float | None = None

    def __post_init__(self) -> None:
        if (self.evaluations is None) == (self.gpu_hours is None):
            raise ValueError(
                "Expected exactly one of evaluations and gpu_hours, got "
                f"evaluations={self.evaluations!r}, gpu_hours={self.gpu_hours!r}."
            )
        if self.evaluations is not None:
            _positive_int("evaluations", self.evaluations)
        else:
            h = self.gpu_hours
            if (
                isinstance(h, bool)
                or not isinstance(h, (int, float))
                or not math.isfinite(h)
                or h <= 0
            ):
                raise ValueError(
                    f"Expected gpu_hours to be a finite number > 0, got {h!r}."
                )

    @property
    def kind(self) -> Literal["evaluations", "gpu_hours"]:
        """Which budget this is."""
        return "evaluations" if self.evaluations is not None else "gpu_hours"

    @property
    def amount(self) -> float:
        """The budget's size, in its own unit."""
        return float(
            self.evaluations if self.evaluations is not None else self.gpu_hours
        )


@dataclass(frozen=True)
class Job(Generic[T]):
    """One evaluation on the clock.

    Attributes:
        id: Start order, from 0.
        item: What the caller runs (e.g. a table row).
        worker: The worker it occupies (0-based).
        start: Simulated start, seconds since the clock's zero.
        end: Simulated end, seconds.
        gpu_hours: What the job costs in full.
    """

    id: int
    item: T
    worker: int
    start: float
    end: float
    gpu_hours: float

    @property
    def seconds(self) -> float:
        """The job's length."""
        return self.end - self.start

    def consumed(self, at: float) -> float:
        """GPU-hours this job has consumed by time ``at`` (in proportion)."""
        if at <= self.start:
            return 0.0
        if at >= self.end:
            return self.gpu_hours
        return self.gpu_hours * (at - self.start) / (self.end - self.start)


@dataclass(frozen=True)
class Completion(Generic[T]):
    """A job that ended, and the clock's meter at its end.

    Attributes:
        job: The job.
        consumed_gpu_hours: GPU-hours consumed by all jobs started so far at
            ``job.end`` (running ones in proportion; with one worker, the
            cumulative cost of the jobs completed so far).
        completed: How many jobs had ended by then, this one included.
    """

    job: Job[T]
    consumed_gpu_hours: float
    completed: int


class SimulatedClock(Generic[T]):
    """The discrete-event clock (see the module docstring).

    Args:
        workers: Number of workers, an integer ``>= 1``.
        budget: A :class:`ClockBudget`.

    Raises:
        ValueError: If ``workers`` is not an integer ``>= 1``.
    """

    def __init__(self, workers: int, budget: ClockBudget) -> None:
        self.workers: int = _positive_int("workers", workers)
        if not isinstance(budget, ClockBudget):
            raise TypeError(f"Expected a ClockBudget, got {type(budget).__name__}.")
        self.budget: ClockBudget = budget
        self.now: float = 0.0
        self._running: dict[int, Job[T]] = {}  # by worker
        self._jobs: list[Job[T]] = []
        self._completed = 0
        self._closed = False

    def __repr__(self) -> str:
        return (
            f"SimulatedClock(workers={self.workers}, budget={self.budget}, "
            f"now={self.now}, started={self.started}, running={len(self._running)})"
        )

    @property
    def started(self) -> int:
        """Jobs started so far."""
        return len(self._jobs)

    @property
    def completed(self) -> int:
        """Jobs ended so far."""
        return self._completed

    @property
    def jobs(self) -> list[Job[T]]:
        """Every job started so far, in start order."""
        return list(self._jobs)

    @property
    def running(self) -> list[Job[T]]:
        """The pending jobs (started, not ended), in start order."""
        return sorted(self._running.values(), key=lambda j: j.id)

    @property
    def free_workers(self) -> list[int]:
        """The free workers, ascending."""
        return [w for w in range(self.workers) if w not in self._running]

    def consumed_gpu_hours(self, at: float | None = None) -> float:
        """GPU-hours consumed by time ``at`` (default now) by the jobs started so far."""
        t = self.now if at is None else float(at)
        return math.fsum(j.consumed(t) for j in self._jobs)

    def spent_fraction(self) -> float:
        """The share of the budget spent now, in ``[0, 1]`` (may reach 1 early).

        Jobs started over ``evaluations``, or consumed GPU-hours over
        ``gpu_hours``.
        """
        if self.budget.evaluations is not None:
            spent = self.started / self.budget.evaluations
        else:
            spent = self.consumed_gpu_hours() / self.budget.amount
        return min(1.0, spent)

    def remaining_starts(self) -> int | None:
        """Jobs the budget still allows to start (``None`` for a GPU-hour budget)."""
        if self.budget.evaluations is None:
            return None
        return max(0, self.budget.evaluations - self.started)

    def budget_allows(self) -> bool:
        """Whether the budget allows another job to start now."""
        if self._closed:
            return False
        if self.budget.evaluations is not None:
            return self.started < self.budget.evaluations
        return self.consumed_gpu_hours() < self.budget.amount

    def can_start(self) -> bool:
        """Whether a job may start now: a worker is free and the budget allows."""
        return len(self._running) < self.workers and self.budget_allows()

    def close(self) -> None:
        """Start nothing more (e.g. nothing is left to propose); running jobs end."""
        self._closed = True

    def start(self, item: T, seconds: float, gpu_hours: float) -> Job[T]:
        """Start ``item`` now on the free worker of lowest index.

        Args:
            item: What runs (returned with the job).
            seconds: Its length, a finite number ``>= 0``.
            gpu_hours: Its full cost, a finite number ``>= 0``.

        Raises:
            ValueError: If no job may start now (:meth:`can_start`) or a number
                is invalid.
        """
        for name, v in (("seconds", seconds), ("gpu_hours", gpu_hours)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(
                    f"Expected {name} to be a finite number >= 0, got {v!r}."
                )
        if not self.can_start():
            raise ValueError(
                f"Expected a free worker and budget left to start a job, got "
                f"{len(self._running)} of {self.workers} workers busy and "
                f"{self.spent_fraction():.3g} of the budget spent."
            )
        worker = self.free_workers[0]
        job = Job(
            id=len(self._jobs),
            item=item,
            worker=worker,
            start=self.now,
            end=self.now + float(seconds),
            gpu_hours=float(gpu_hours),
        )
        self._jobs.append(job)
        self._running[worker] = job
        return job

    def shorten(self, job: Job[T], seconds: float, gpu_hours: float) -> Job[T]:
        """End a running job earlier than planned (early termination).

        The job keeps its start and worker; it now ends ``seconds`` after its
        start, not before the current time, and costs ``gpu_hours``.

        Raises:
            ValueError: If ``job`` is not running, or it would end before now
                or after its planned end.
        """
        current = self._running.get(job.worker)
        if current is None or current.id != job.id:
            raise ValueError(f"Expected a running job, got job {job.id}.")
        end = job.start + float(seconds)
        if not self.now <= end <= current.end:
            raise ValueError(
                f"Expected the new end within [{self.now}, {current.end}], got {end}."
            )
        new = replace(current, end=end, gpu_hours=float(gpu_hours))
        self._running[job.worker] = new
        self._jobs[job.id] = new
        return new

    def advance(self) -> list[Completion[T]]:
        """Move to the next end of a job; the jobs ending then, in worker order.

        Returns:
            The completions (empty when nothing is running).
        """
        if not self._running:
            return []
        t = min(j.end for j in self._running.values())
        self.now = t
        ending = sorted(
            (j for j in self._running.values() if j.end == t), key=lambda j: j.worker
        )
        meter = self.consumed_gpu_hours(t)
        out = []
        for job in ending:
            del self._running[job.worker]
            self._completed += 1
            out.append(Completion(job, meter, self._completed))
        return out
