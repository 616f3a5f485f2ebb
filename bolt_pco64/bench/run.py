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

Every evaluation is one row of a long table (:func:`record_columns`), **in
the order the results came in**:

- ``method``, ``seed``, ``iteration`` (1-based count of results in), ``row``
  (canonical table index), the instance's inputs by their card names
  (encoded: log2 values, ZeRO as the ordinal 0/1/2);
- ``proposed_<input>`` for each input: what the method proposed. A method
  may return rows or ``q x d`` points of the box, which the harness snaps
  with ``problem.lookup`` (:mod:`bolt_pco64.bench.proposals`); for rows (and
  the initial design) these are the row's own encoded inputs. ``row`` is
  always ``problem.lookup`` of the proposed point;
- ``repeat``: the row was proposed before in this run (only a point method
  can repeat). **A repeat is charged** like any evaluation (budget and
  GPU-hours) and returns the same observation as the row's first evaluation
  (noise is not redrawn);
- ``throughput``: the observed throughput (the table's ``throughput_mean``,
  plus Gaussian noise when ``noise`` is set), NaN when the run OOMed;
  ``margin``: the row's ``peak_mem_normalised`` (``<= 0`` iff feasible);
  ``feasible``;
- ``best_feasible``: the best *true* (noise-free) feasible throughput
  evaluated so far, NaN before the first feasible evaluation; ``regret``:
  ``optimal_value - best_feasible`` (never negative, with or without noise);
  this is the *simple* regret;
- ``recommended_row``: the configuration the method would recommend after
  this evaluation, among the feasible ones evaluated so far: for a method
  that exposes an objective GP (``Method.objective_model``,
  :mod:`bolt_pco64.bench.contract`), the one of highest posterior mean under
  that GP (its hyperparameters, conditioned on every feasible observation up
  to this one); before its first model, and for model-free methods, the best
  *observed* throughput; -1 before the first
  feasible evaluation. ``inference_regret``: ``optimal_value`` minus the
  recommended row's true throughput (NaN before the first feasible
  evaluation). Noise-free, it differs from ``regret`` only where the model's
  posterior mean ranks the evaluated configurations differently from their
  observations; with noise the two part (Ax's benchmarks call them
  "inference" and "oracle" traces);
- ``gpu_hours``: the GPU-hours consumed when this result came in, over all
  the run's evaluations (those still running in proportion to the part that
  has run; with one worker, the cumulative cost of the evaluations so far);
  ``run_gpu_hours``: this evaluation's own cost. Both come from the time
  model (:class:`~bolt_pco64.costs.TimeModel`: start-up plus
  ``overall_time`` for a run, start-up plus the step in which memory ran
  out for a crash, times ``num_gpus / 3600``). On the simulated stand-in
  these are simulated hours;
- ``worker`` (0-based), ``sim_start_s`` and ``sim_end_s``: the worker that
  ran the evaluation and its simulated start and end, in seconds since the
  run's start (``sim_end_s`` is the simulated wall clock at which the result
  came in);
- ``steps_run`` and ``stopped``: the recorded steps the run ran (0 for a
  crash) and whether early termination (``config.early_stop``,
  :mod:`bolt_pco64.bench.early`) stopped it; a stopped run's ``throughput``
  is its partial estimate, its ``run_gpu_hours`` the steps it ran, and it
  does not count as found in ``best_feasible`` and ``regret``;
- ``fit_seconds`` and ``acq_seconds``: the wall time of the proposal step that
  chose this evaluation (model fitting, and the rest of the proposal). A batch
  of ``q`` evaluations carries the time on its first row and 0 on the others;
  the initial design costs 0.

Fairness: for a given seed every method starts from the same initial design
(the first ``n_init`` rows of a permutation drawn by a generator seeded by
the seed alone; a method that declares its own ``n_init`` takes that prefix
of the same permutation, and the run records the size it used) and, with
noise, sees the same noise on it.

Determinism: a run depends only on (method, seed, configuration, table). It
executes with one torch thread (restored afterwards), and the clock breaks
ties by worker index, so every backend gives bit-identical records
(``fit_seconds``/``acq_seconds`` aside).
"""

from __future__ import annotations

import contextlib
import math
import time
import traceback
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.bench.clock import Completion, SimulatedClock
from bolt_pco64.bench.config import BenchConfig
from bolt_pco64.bench.contract import Method, ObjectiveModel, RunContext, as_method
from bolt_pco64.bench.early import EarlyStopper, model_prior
from bolt_pco64.bench.methods import get_method
from bolt_pco64.bench.proposals import resolve_proposal
from bolt_pco64.costs import TimeModel
from bolt_pco64.instances import PCO64_INSTANCE, Instance

if TYPE_CHECKING:
    from bolt_pco64.problem import PCO
    from bolt_pco64.table import Table

__all__ = [
    "PROPOSED_PREFIX",
    "RunOutcome",
    "Task",
    "cost_per_row",
    "empty_records",
    "initial_design_size",
    "instance_of",
    "make_problem",
    "record_columns",
    "run_one",
    "run_task",
]

_LEADING = ("method", "seed", "iteration", "row")
#: Prefix of the columns that hold the proposed point.
PROPOSED_PREFIX = "proposed_"
_TRAILING = (
    "throughput",
    "margin",
    "feasible",
    "best_feasible",
    "regret",
    "recommended_row",
    "inference_regret",
    "gpu_hours",
    "run_gpu_hours",
    "worker",
    "sim_start_s",
    "sim_end_s",
    "steps_run",
    "stopped",
    "fit_seconds",
    "acq_seconds",
)


def record_columns(instance: Instance) -> tuple[str, ...]:
    """Columns of a run's records on ``instance``, in order."""
    inputs = instance.input_columns
    proposed = tuple(PROPOSED_PREFIX + name for name in inputs)
    return (*_LEADING, *inputs, *proposed, "repeat", *_TRAILING)


__getattr__ = deprecated_names(
    __name__,
    {
        "RECORD_COLUMNS": (
            lambda: record_columns(PCO64_INSTANCE),
            "record_columns(instance)",
        ),
    },
)


def instance_of(table: Table) -> Instance:
    """The instance a table belongs to (``table.instance``)."""
    return table.instance


def make_problem(table: Table) -> PCO:
    """The test problem served by ``table``, of its instance's class."""
    from bolt_pco64.problem import problem_class

    return problem_class(table.instance)(table=table)


def cost_per_row(table: Table) -> Tensor:
    """``N``-dim tensor: GPU-hours of evaluating each row (a crash included).

    :attr:`bolt_pco64.costs.TimeModel.gpu_hours` with the time model's defaults.
    """
    return TimeModel(table).gpu_hours


def _method_seed(method: str, seed: int) -> int:
    """A seed for the method's generator, stable across processes and platforms."""
    return (int(seed) * 1_000_003 + zlib.crc32(method.encode("utf-8"))) % (2**62)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class RunOutcome:
    """The result of one run: its records and, if it failed, the error.

    ``n_init`` is the initial-design size the run used (the method's own, or
    the configuration's); ``None`` where unknown (a crashed worker).
    """

    method: str
    seed: int
    records: pd.DataFrame
    error: str | None = None
    traceback: str | None = None
    n_init: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the run completed its budget."""
        return self.error is None


def error_line(err: BaseException) -> str:
    """The first line of ``"Type: message"``, at most 500 characters."""
    return f"{type(err).__name__}: {err}".splitlines()[0][:500]


def run_one(
    method: str,
    seed: int,
    table: Table,
    config: BenchConfig,
    fn: Method | Callable[[RunContext], Any] | None = None,
    on_evaluation: Callable[[int], None] | None = None,
) -> RunOutcome:
    """Run one method from one seed; never raises for a failing method.

    Args:
        method: The method's name (recorded; looked up with
            :func:`~bolt_pco64.bench.methods.get_method` when ``fn`` is ``None``).
        seed: The run's seed.
        table: The problem's table.
        config: Budget, initial design, batch size and noise.
        fn: The method itself (a :class:`~bolt_pco64.bench.contract.Method` or
            a function; to run one that is not registered here).
        on_evaluation: Called with the number of new evaluations after each step.

    Returns:
        A :class:`RunOutcome`; when the method raises (or proposes invalid rows)
        the records hold every evaluation made before and ``error`` says why.

    Raises:
        ValueError: If ``method`` is not registered (and ``fn`` is ``None``),
            ``config`` does not fit the table, or the method's ``n_init`` does
            not fit the budget.
    """
    impl = get_method(method) if fn is None else as_method(fn)
    config.check(len(table))
    n_init = initial_design_size(impl, config, method)
    with _one_thread():
        run = _Run(method, int(seed), table, config, on_evaluation)
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
    top = config.budget if config.budget is not None else n
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= top:
        raise ValueError(
            f"Expected method {name!r} to have n_init in 1..{config.budget} "
            f"(the budget), got {n!r}."
        )
    return n


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


class _Run:
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
        times = TimeModel(table)
        self.run_seconds = times.run_seconds.tolist()
        self.run_hours = times.gpu_hours.tolist()
        self.early = EarlyStopper(config.early_stop, table, times)
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
        self.objective: ObjectiveModel | None = None
        self.state: dict[str, Any] = {}

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
            # A repeat returns the row's first observation (see the module doc).
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

    def complete(self, done: Completion[_Queued]) -> None:
        """Record the result of one evaluation that came in."""
        job, item = done.job, done.job.item
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
        self.recommended.append(self.recommend(self.objective))
        if self.on_evaluation is not None:
            self.on_evaluation(1)

    def recommend(self, objective: ObjectiveModel | None) -> int:
        """The recommended row given the evaluations so far (see the module doc)."""
        y = torch.tensor(self.ys, dtype=torch.double)
        feasible = ~torch.isnan(y)
        if not feasible.any():
            return -1
        if objective is None:
            best = torch.where(feasible, y, torch.full_like(y, -math.inf))
            return self.rows[int(torch.argmax(best))]
        from bolt_pco64.bo import fit_gp, recommend

        X = self.cand[torch.tensor(self.rows, dtype=torch.long)]
        model = fit_gp(
            X[feasible],
            y[feasible],
            self.problem.bounds.to(X),
            0,
            warm_start=objective,
            optimize=False,
        )
        i = recommend(model, X, y)
        return -1 if i is None else self.rows[i]

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
        rows = torch.tensor(self.rows, dtype=torch.long)
        ctx = RunContext(
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
        t0 = time.perf_counter()
        proposed = method.propose(ctx)
        total = time.perf_counter() - t0
        self.objective = method.objective_model(ctx)
        new = resolve_proposal(
            proposed, self.problem, self.cand, self.proposed, q, self.method
        )
        priors = (
            model_prior(self.objective, self.cand[torch.tensor(new.rows)])
            if self.early.active and self.early.needs_prior
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
                        item, self.run_seconds[item.row], self.run_hours[item.row]
                    )
                self.early.plan(clock, self.true_y)
                done = clock.advance()
                if not done:
                    break
                for c in done:
                    self.complete(c)
        except Exception as err:  # a failing method ends only its own run
            error = error_line(err)
            tb = traceback.format_exc()
        records = _records(
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


def _records(
    method: str,
    seed: int,
    rows: Sequence[int],
    ys: Sequence[float],
    cand: Tensor,
    margins: Tensor,
    true_y: Tensor,
    optimal: float,
    instance: Instance,
    recommended: Sequence[int] = (),
    points: Tensor | None = None,
    repeats: Sequence[bool] = (),
    clock_rows: Sequence[tuple[float, float, int, float, float]] = (),
    steps_run: Sequence[int] = (),
    stopped: Sequence[bool] = (),
) -> pd.DataFrame:
    idx = torch.tensor(list(rows), dtype=torch.long)
    n = len(rows)
    inputs = instance.input_columns
    true = true_y[idx].numpy() if n else np.zeros(0)
    feas = ~np.isnan(true)
    halted = _padded(stopped, n, False).astype(bool)
    best = np.full(n, np.nan)
    running = -np.inf
    for i in range(n):
        if feas[i] and not halted[i] and true[i] > running:
            running = float(true[i])
        best[i] = running if math.isfinite(running) else np.nan
    data: dict[str, Any] = {
        "method": pd.Series([method] * n, dtype=object),
        "seed": np.full(n, seed, dtype=np.int64),
        "iteration": np.arange(1, n + 1, dtype=np.int64),
        "row": idx.numpy().astype(np.int64),
    }
    X = cand[idx].numpy() if n else np.zeros((0, len(inputs)))
    for j, name in enumerate(inputs):
        data[name] = np.rint(X[:, j]).astype(np.int64)
    P = points.numpy() if points is not None else X
    for j, name in enumerate(inputs):
        data[PROPOSED_PREFIX + name] = P[:, j].astype(np.float64)
    data["repeat"] = _padded(repeats, n, False).astype(bool)
    data["throughput"] = np.asarray(ys, dtype=np.float64)
    data["margin"] = margins[idx].numpy().astype(np.float64) if n else np.zeros(0)
    data["feasible"] = feas
    data["best_feasible"] = best
    data["regret"] = optimal - best
    # A method whose model fails mid-batch leaves later rows unrecommended.
    rec = _padded(recommended, n, -1).astype(np.int64)
    rec_true = true_y.numpy()[np.clip(rec, 0, None)] if n else np.zeros(0)
    data["recommended_row"] = rec
    data["inference_regret"] = np.where(rec >= 0, optimal - rec_true, np.nan)
    clock = np.asarray(list(clock_rows), dtype=np.float64).reshape(-1, 5)
    data["gpu_hours"] = clock[:, 0]
    data["run_gpu_hours"] = clock[:, 1]
    data["worker"] = clock[:, 2].astype(np.int64)
    data["sim_start_s"] = clock[:, 3]
    data["sim_end_s"] = clock[:, 4]
    data["steps_run"] = _padded(steps_run, n, 0).astype(np.int64)
    data["stopped"] = halted
    data["fit_seconds"] = np.zeros(n)
    data["acq_seconds"] = np.zeros(n)
    return pd.DataFrame(data, columns=list(record_columns(instance)))


def _padded(values: Sequence[Any], n: int, fill: Any) -> np.ndarray:
    """The first ``n`` of ``values``, padded with ``fill`` to length ``n``."""
    out = list(values)[:n]
    return np.asarray(out + [fill] * (n - len(out)))


def empty_records(instance: Instance) -> pd.DataFrame:
    """Records with no rows (the columns and dtypes of :func:`run_one`'s)."""
    nothing = torch.zeros(0, dtype=torch.double)
    cand = torch.zeros((0, instance.dim), dtype=torch.double)
    return _records("", 0, [], [], cand, nothing, nothing, 0.0, instance)


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
