"""The loop of one run on the simulated clock (:class:`~bolt_pco64.bench.loop.RunLoop`).

:func:`~bolt_pco64.bench.run.run_one` creates a :class:`RunLoop` and executes
it: proposals are queued for the clock's workers, and each result is
recorded as it comes in. What a run does (budget, workers, the shared
initial design, determinism) is described in :mod:`bolt_pco64.bench.run`,
its records in :mod:`bolt_pco64.bench.records`.

**What the runs on one table share** (:class:`TableParts`, one per table,
:func:`table_parts`): the time model and, for a run that stops early, the
partial runs (:class:`~bolt_pco64.tables.partial_runs.PartialRuns`) are built when a run
first uses them and kept as long as the table lives, so a comparison builds
each once per table, not once per run, and a run with ``early_stop="none"``
never builds the partial runs. A run's own state (its problem, generators,
evaluations, and its :class:`~bolt_pco64.bench.early.EarlyStopper`) is its
own. A worker process gets its own copy of a task's table, so it builds them
for that copy.
"""

from __future__ import annotations

import math
import time
import traceback
import weakref
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from bolt_pco64.bench.clock import Completion, SimulatedClock
from bolt_pco64.bench.contract import Method, RunContext
from bolt_pco64.bench.early import EarlyStopper, StepResult, prediction_prior
from bolt_pco64.bench.problems import instance_of, make_problem
from bolt_pco64.bench.proposals import resolve_proposal
from bolt_pco64.bench.records import RunOutcome, build_records, error_line
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.bo.early_stop import get_policy
from bolt_pco64.tables.partial_runs import PartialRuns
from bolt_pco64.tables.time_model import TimeModel

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = ["RunLoop", "TableParts", "table_parts"]


def _method_seed(method: str, seed: int) -> int:
    """A seed for the method's generator, stable across processes and platforms."""
    return (int(seed) * 1_000_003 + zlib.crc32(method.encode("utf-8"))) % (2**62)


class TableParts:
    """What every run on one table shares, each piece built on first use.

    Holds the table weakly (it is the key of :func:`table_parts`' cache);
    the pieces hold no reference to it.

    Args:
        table: The table.
    """

    def __init__(self, table: Table) -> None:
        self._table = weakref.ref(table)

    def _get(self) -> Table:
        table = self._table()
        if table is None:  # pragma: no cover - a holder outlives its table only if kept
            raise RuntimeError("Expected the table of these parts to exist, got None.")
        return table

    @cached_property
    def time_model(self) -> TimeModel:
        """The table's :class:`~bolt_pco64.tables.time_model.TimeModel` (its defaults)."""
        return TimeModel(self._get())

    @cached_property
    def run_seconds(self) -> list[float]:
        """Each row's :attr:`~bolt_pco64.tables.time_model.TimeModel.run_seconds`."""
        return self.time_model.run_seconds.tolist()

    @cached_property
    def run_hours(self) -> list[float]:
        """Each row's :attr:`~bolt_pco64.tables.time_model.TimeModel.gpu_hours`."""
        return self.time_model.gpu_hours.tolist()

    @cached_property
    def steps(self) -> list[int]:
        """Each row's recorded steps, 0 for a crash (what a complete run ran)."""
        return self.time_model.n_steps.tolist()

    @cached_property
    def partial(self) -> PartialRuns:
        """The table's :class:`~bolt_pco64.tables.partial_runs.PartialRuns` on
        :attr:`time_model` (what early termination reads)."""
        return PartialRuns(self._get(), self.time_model)


_PARTS: weakref.WeakKeyDictionary[Table, TableParts] = weakref.WeakKeyDictionary()


def table_parts(table: Table) -> TableParts:
    """The :class:`TableParts` of ``table``: one per table object, dropped
    with the table."""
    parts = _PARTS.get(table)
    if parts is None:
        parts = _PARTS.setdefault(table, TableParts(table))
    return parts


@dataclass
class _Queued:
    """A proposed evaluation waiting for a worker (its observation drawn)."""

    row: int
    point: Tensor
    obs: float
    repeat: bool
    fit: float
    acq: float
    prior: tuple[float, float] | None = None


class RunLoop:
    """The state of one run while it executes."""

    def __init__(
        self,
        method: str,
        seed: int,
        table: Table,
        config: BenchConfig,
        on_evaluation: Callable[[int], None] | None,
    ) -> None:
        self.method, self.seed, self.table, self.config = method, seed, table, config
        self.on_evaluation = on_evaluation
        self.problem = make_problem(table)
        self.cand = self.problem.candidates().to(torch.double)
        n_rows = self.cand.shape[0]
        self.true_y = self.problem.evaluate_true(self.cand).to(torch.double)
        self.margins = self.problem.outcome_constraint(self.cand).to(torch.double)
        if config.noise is None:
            self.noise_sd = torch.zeros(n_rows, dtype=torch.double)
        elif config.noise == "measured":
            self.noise_sd = torch.nan_to_num(table.column("throughput_std"), nan=0.0)
        else:
            self.noise_sd = torch.full(
                (n_rows,), float(config.noise), dtype=torch.double
            )
        self.parts = table_parts(table)
        policy = get_policy(config.early_stop)
        # Early termination only when the policy can stop a run.
        self.early = (
            EarlyStopper(policy, self.parts.partial) if policy.name != "none" else None
        )
        self.init_gen = torch.Generator().manual_seed(seed)
        self.noise_gen = torch.Generator().manual_seed(seed + 7_919)
        self.method_gen = torch.Generator().manual_seed(_method_seed(method, seed))
        # Per evaluation, in the order the results came in.
        self.rows: list[int] = []
        self.ys: list[float] = []
        self.fit_s: list[float] = []
        self.acq_s: list[float] = []
        self.recommended: list[int] = []
        self.points: list[Tensor] = []
        self.repeats: list[bool] = []
        self.clock_rows: list[tuple[float, float, int, float, float]] = []
        self.steps_run: list[int] = []
        self.stopped: list[bool] = []
        self.first_obs: dict[int, float] = {}
        # Rows whose result came in, and rows proposed (in flight included).
        self.tried = torch.zeros(n_rows, dtype=torch.bool)
        self.proposed = torch.zeros(n_rows, dtype=torch.bool)
        self.queue: deque[_Queued] = deque()
        # The method's own store (Method.new_state), made when the run starts.
        self.state: Any = None

    def enqueue(
        self,
        new: list[int],
        fit: float,
        acq: float,
        points: Tensor | None = None,
        priors: Sequence[tuple[float, float] | None] = (),
    ) -> None:
        """Queue rows ``new`` (proposed as ``points``, default: the rows) for
        the next free workers; their observations are drawn now. ``priors``:
        the method's prediction at each (early termination's prior)."""
        z = torch.randn(len(new), generator=self.noise_gen, dtype=torch.double)
        if points is None:
            points = self.cand[torch.tensor(new, dtype=torch.long)]
        for k, r in enumerate(new):
            t = float(self.true_y[r])
            obs = t + float(self.noise_sd[r]) * float(z[k]) if not math.isnan(t) else t
            # A repeat returns the row's first observation (see the records' doc).
            obs = self.first_obs.setdefault(r, obs)
            repeat = bool(self.proposed[r])
            self.proposed[r] = True
            self.queue.append(
                _Queued(
                    r,
                    points[k],
                    obs,
                    repeat,
                    fit if k == 0 else 0.0,
                    acq if k == 0 else 0.0,
                    priors[k] if k < len(priors) else None,
                )
            )

    def complete(
        self, done: Completion[_Queued], method: Method, clock: SimulatedClock[_Queued]
    ) -> None:
        """Record the result of one evaluation that came in, and ``method``'s
        recommendation after it."""
        job, item = done.job, done.job.item
        if self.early is None:
            ended = StepResult(item.obs, self.parts.steps[item.row], False)
        else:
            ended = self.early.result(job, item.obs, float(self.true_y[item.row]))
        self.steps_run.append(ended.steps_run)
        self.stopped.append(ended.stopped)
        self.repeats.append(item.repeat)
        self.points.append(item.point)
        self.rows.append(item.row)
        self.ys.append(ended.obs)
        self.fit_s.append(item.fit)
        self.acq_s.append(item.acq)
        self.clock_rows.append(
            (done.consumed_gpu_hours, job.gpu_hours, job.worker, job.start, job.end)
        )
        self.tried[item.row] = True
        self.recommended.append(self.recommend(method, clock))
        if self.on_evaluation is not None:
            self.on_evaluation(1)

    def context(
        self, clock: SimulatedClock[_Queued], q: int, step_seed: int, cap: int
    ) -> RunContext:
        """The :class:`~bolt_pco64.bench.contract.RunContext` of the evaluations so
        far."""
        rows = torch.tensor(self.rows, dtype=torch.long)
        return RunContext(
            problem=self.problem,
            candidates=self.cand,
            rows=rows,
            y=torch.tensor(self.ys, dtype=torch.double),
            margin=self.margins[rows],
            untried=torch.nonzero(~self.tried).squeeze(-1),
            q=q,
            seed=self.seed,
            step_seed=step_seed,
            generator=self.method_gen,
            budget=cap,
            pending=torch.tensor([j.item.row for j in clock.running], dtype=torch.long),
            spent_fraction=clock.spent_fraction(),
            state=self.state,
        )

    def recommend(self, method: Method, clock: SimulatedClock[_Queued]) -> int:
        """``method``'s recommended row given the evaluations so far, -1
        before the first feasible one (see :mod:`bolt_pco64.bench.records`)."""
        if not any(not math.isnan(y) for y in self.ys):
            return -1
        ctx = self.context(clock, 0, 0, self.config.max_evaluations(len(self.tried)))
        row = method.recommend(ctx)
        if row is None:
            return -1
        if isinstance(row, bool) or not 0 <= int(row) < len(self.tried):
            raise ValueError(
                f"Expected method {self.method!r} to recommend an evaluated row, "
                f"got {row!r}."
            )
        return int(row)

    def propose(self, method: Method, clock: SimulatedClock[_Queued], cap: int) -> bool:
        """Ask ``method`` for the next evaluations and queue them.

        Returns:
            ``False`` when nothing is left to propose (the budget's
            evaluations are all started, or no row is left untried).
        """
        cfg = self.config
        left = cap - clock.started
        remaining = clock.remaining_starts()
        if remaining is not None:
            left = min(left, remaining)
        q = min(cfg.q, left, int((~self.proposed).sum()))
        if q < 1:
            return False
        step_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=self.method_gen))
        ctx = self.context(clock, q, step_seed, cap)
        t0 = time.perf_counter()
        proposed = method.propose(ctx)
        total = time.perf_counter() - t0
        # A seed of a lane reports its own share of the lane's time (bench.lanes).
        total = getattr(method, "propose_seconds", total)
        new = resolve_proposal(
            proposed, self.problem, self.cand, self.proposed, q, self.method
        )
        priors = (
            prediction_prior(
                method.predict(ctx, self.cand[torch.tensor(new.rows)]), len(new.rows)
            )
            if self.early is not None and self.early.needs_prior
            else ()
        )
        self.enqueue(
            new.rows,
            ctx.fit_seconds,
            max(total - ctx.fit_seconds, 0.0),
            new.points,
            priors,
        )
        return True

    def execute(self, method: Method, n_init: int) -> RunOutcome:
        """Evaluate the first ``n_init`` rows of the seed's shared design, then
        ``method``'s proposals, on the simulated clock, until the budget is spent."""
        cfg = self.config
        n_rows = self.cand.shape[0]
        cap = cfg.max_evaluations(n_rows)
        clock: SimulatedClock[_Queued] = SimulatedClock(cfg.workers, cfg.clock_budget())
        self.state = method.new_state()
        error = tb = None
        # The seed's shared design: a permutation of the rows drawn from the
        # seed alone; every method starts from a prefix of it.
        init = torch.randperm(n_rows, generator=self.init_gen)[:n_init].tolist()
        self.enqueue(init, 0.0, 0.0)
        try:
            while True:
                while clock.can_start() and clock.started < cap:
                    if not self.queue and not self.propose(method, clock, cap):
                        clock.close()
                        break
                    item = self.queue.popleft()
                    clock.start(
                        item,
                        self.parts.run_seconds[item.row],
                        self.parts.run_hours[item.row],
                    )
                if self.early is not None:
                    self.early.plan(clock, self.true_y)
                done = clock.advance()
                if not done:
                    break
                for c in done:
                    self.complete(c, method, clock)
        except Exception as err:  # a failing method ends only its own run
            error = error_line(err)
            tb = traceback.format_exc()
        records = build_records(
            self.method,
            self.seed,
            self.rows,
            self.ys,
            self.cand,
            self.margins,
            self.true_y,
            float(self.problem.optimal_value),
            instance_of(self.table),
            self.recommended,
            torch.stack(self.points) if self.points else None,
            self.repeats,
            self.clock_rows,
            self.steps_run,
            self.stopped,
        )
        records["fit_seconds"] = np.asarray(self.fit_s, dtype=np.float64)
        records["acq_seconds"] = np.asarray(self.acq_s, dtype=np.float64)
        return RunOutcome(self.method, self.seed, records, error, tb, n_init)
