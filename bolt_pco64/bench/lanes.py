"""Lanes: one method's seeds run in lock-step as one batched computation.

A *lane* is ``K`` seeds of one method (``bolt-pco64 bench --lane-width K``).
Each seed keeps its own :class:`~bolt_pco64.bench.loop.RunLoop` (its clock,
generators, initial design, evaluations and records, exactly as
:func:`~bolt_pco64.bench.run.run_one` makes them); the lane only changes
*how the proposals are computed*: every seed's loop runs until it asks its
method for the next evaluations, and when every seed still running has
asked, the lane's :class:`LaneAdapter` answers all of them at once:

- the GPs of every seed are fitted together
  (:func:`~bolt_pco64.bo.batched.fit_gps`: batched, per-seed stopping, a
  failed seed refits alone);
- each seed's GPs are served from their training Cholesky, factored once
  (:class:`~bolt_pco64.bo.factors.FactorModel`): BoTorch's acquisition
  functions (qLogNEI, qLogEI, probability of feasibility) run on it
  unchanged; ``qlognei`` and ``naive`` evaluate qLogNEI at every candidate
  at once (:func:`~bolt_pco64.bo.factors.q1_values`, BoTorch's values for
  ``q = 1`` without pending points; otherwise BoTorch's own
  ``optimize_acqf_discrete``); its quasi-MC samples are the ones BoTorch
  draws from the step's seed, which the seed's own generator draws (keyed by
  seed and step); the default recommendation (highest posterior mean) comes
  from the same factors (:func:`~bolt_pco64.bo.factors.best_by_posterior_mean`);
- the methods keep their definitions: the same models (each seed's
  hyperparameters are the maximum of its own marginal likelihood, from its
  own warm start) and the same acquisition functions.

A method no adapter knows (``random``, which has nothing to batch; Optuna,
Ax, ``tobit_ei``'s variational model, a user's method) runs seed by seed as
today (:func:`~bolt_pco64.bench.run.run_one`), and :func:`lane_support`
says why; :func:`split_lanes` gives such a method one task per seed.

The seeds' loops are threads that run **one at a time** (a baton passes
between them and the lane), so nothing runs concurrently and a seed's
records depend only on the seed: the lane answers its seeds in seed order,
and every batched computation treats each seed's slice alike.
Every thread pool (torch's, and the BLAS and OpenMP pools of NumPy, SciPy
and torch, through ``threadpoolctl``) is pinned to one thread while a
lane runs (:func:`~bolt_pco64.bench.run.one_thread_everywhere`).

Records: each seed's :class:`~bolt_pco64.bench.records.RunOutcome` is
today's (same columns); ``fit_seconds`` is the seed's share of the lane's
batched fit (the lane's fit time over the seeds fitted), ``acq_seconds``
the seed's own acquisition time.

Work splits by method x lane (:func:`split_lanes`): a :class:`LaneTask` is
self-contained (picklable for ``--jobs`` processes and Dask), and
:func:`run_lane_task` returns one outcome per seed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from bolt_pco64.bench.contract import Method, Prediction, Proposed, RunContext
from bolt_pco64.bench.loop import RunLoop
from bolt_pco64.bench.records import RunOutcome
from bolt_pco64.bench.run import (
    Task,
    initial_design_size,
    one_thread_everywhere,
    run_one,
)
from bolt_pco64.bench.spec import BenchConfig

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.tables.table import Table

__all__ = [
    "DEFAULT_LANE_WIDTH",
    "LaneAdapter",
    "LaneTask",
    "lane_adapter",
    "lane_recommend",
    "lane_support",
    "lane_tasks",
    "run_lane",
    "run_lane_task",
    "split_lanes",
]

logger = logging.getLogger(__name__)

#: Seeds per lane of :func:`run_lane_task` and :func:`lane_tasks` by default.
DEFAULT_LANE_WIDTH = 32

#: With 1, every objective GP of a step is padded to the step's number of
#: observations (one batch with the constraint GPs); with 0, to its own size (a
#: batch per size).
PAD_OBJECTIVE = 0


# --------------------------------------------------------------------------
# Adapters: a method's proposals for every seed of a lane at once
# --------------------------------------------------------------------------


class LaneAdapter:
    """Answers the proposals of every seed of a lane of one method.

    Args:
        method: The method (its definition is kept: the adapter computes
            what its :meth:`~bolt_pco64.bench.contract.Method.propose` would,
            batched over the seeds).
    """

    def __init__(self, method: Method) -> None:
        self.method = method
        #: Each seed's own acquisition seconds in the last :meth:`propose_lane`.
        self.acq_seconds: list[float] = []

    def per_seed(
        self, ctxs: Sequence[RunContext], fn: Callable[[int, RunContext], Proposed]
    ) -> list[Proposed | Exception]:
        """``fn(i, ctx)`` for each seed, timed (:attr:`acq_seconds`); an
        exception is that seed's answer (it ends that seed's run only)."""
        out: list[Proposed | Exception] = []
        self.acq_seconds = []
        for i, ctx in enumerate(ctxs):
            t0 = time.perf_counter()
            try:
                out.append(fn(i, ctx))
            except Exception as err:
                out.append(err)
            self.acq_seconds.append(time.perf_counter() - t0)
        return out

    def propose_lane(self, ctxs: Sequence[RunContext]) -> list[Proposed | Exception]:
        """One proposal (or the exception that ends that seed's run) per context."""
        raise NotImplementedError


def _share(ctxs: Sequence[RunContext], seconds: float) -> None:
    for ctx in ctxs:
        ctx.fit_seconds += seconds / max(len(ctxs), 1)


def _q1(ctx: RunContext) -> bool:
    return ctx.q == 1 and ctx.X_pending is None


def _argmax_row(values: Tensor) -> Tensor:
    """The first index of the largest value (``optimize_acqf_discrete``'s pick)."""
    return torch.argmax(values).reshape(1)


class ConstrainedLane(LaneAdapter):
    """``qlognei``, ``qlogei``, ``ts``
    (:class:`~bolt_pco64.bench.methods.constrained.ConstrainedMethod`): both
    GPs of every seed fitted in one :func:`~bolt_pco64.bo.batched.fit_gps`
    call; qLogNEI from cached factors."""

    def propose_lane(self, ctxs: Sequence[RunContext]) -> list[Proposed | Exception]:
        from bolt_pco64.bench.methods.state import ModelState, _run_state
        from bolt_pco64.bo import ConstrainedModels
        from bolt_pco64.bo.batched import GPFit, fit_gps

        method: Any = self.method
        states = [_run_state(method, ctx, ModelState) for ctx in ctxs]
        fits: list[GPFit] = []
        where: list[tuple[int | None, int]] = []
        for ctx, state in zip(ctxs, states, strict=True):
            prev = state.models
            feasible = ctx.feasible
            obj = None
            if bool(feasible.any()):
                obj = len(fits)
                fits.append(
                    GPFit(
                        ctx.X[feasible],
                        ctx.y[feasible],
                        ctx.step_seed,
                        None if prev is None else prev.objective,
                        pad_to=PAD_OBJECTIVE * len(feasible),
                    )
                )
            con = len(fits)
            fits.append(
                GPFit(
                    ctx.X,
                    ctx.margin,
                    ctx.step_seed + 1,
                    None if prev is None else prev.constraint,
                    pad_to=len(feasible),
                )
            )
            where.append((obj, con))
        t0 = time.perf_counter()
        models, _ = fit_gps(fits, ctxs[0].bounds)
        _share(ctxs, time.perf_counter() - t0)
        for state, (obj, con) in zip(states, where, strict=True):
            state.models = ConstrainedModels(
                objective=None if obj is None else models[obj],
                constraint=models[con],
            )

        def propose(i: int, ctx: RunContext) -> Proposed:
            from bolt_pco64.bo import (
                ProposalContext,
                acquisition_function,
                propose_acquisition,
                propose_thompson,
            )
            from bolt_pco64.bo.factors import FactorModel, factor_model, q1_values

            models = states[i].models
            available = ctx.available
            choices = ctx.candidates[available]
            fm = None if models.objective is None else factor_model(models.model_list())
            if fm is not None and method.kind == "ts":
                served = ConstrainedModels(
                    objective=FactorModel(fm.gps[:1]),  # type: ignore[arg-type]
                    constraint=FactorModel(fm.gps[1:]),  # type: ignore[arg-type]
                )
                idx = propose_thompson(served, choices, ctx.q, ctx.generator)
                return available[idx]
            if fm is not None and method.kind == "qlognei" and _q1(ctx):
                acqf = acquisition_function(
                    "qlognei", models, ctx.X, ctx.y, ctx.step_seed, model=fm
                )
                return available[_argmax_row(q1_values(acqf, choices))]
            kind = method.kind if fm is not None else "pof"
            step = ProposalContext(
                ctx.X, ctx.y, ctx.bounds, ctx.q, ctx.step_seed, choices, ctx.X_pending
            )
            return available[propose_acquisition(kind, models, step, model=fm)]

        return self.per_seed(ctxs, propose)


class NaiveLane(LaneAdapter):
    """``naive`` (:class:`~bolt_pco64.bench.methods.baselines.NaiveMethod`):
    its GPs fitted together, qLogNEI from cached factors."""

    def propose_lane(self, ctxs: Sequence[RunContext]) -> list[Proposed | Exception]:
        from botorch.acquisition import qLogNoisyExpectedImprovement
        from botorch.sampling import SobolQMCNormalSampler
        from botorch.utils.sampling import manual_seed

        from bolt_pco64.bench.methods.state import NaiveState, _run_state
        from bolt_pco64.bo import MC_SAMPLES, select_discrete
        from bolt_pco64.bo.batched import GPFit, fit_gps
        from bolt_pco64.bo.factors import factor_model, q1_values

        method = self.method
        states = [_run_state(method, ctx, NaiveState) for ctx in ctxs]
        fits = []
        for ctx, state in zip(ctxs, states, strict=True):
            worst = float(ctx.problem.worst_feasible_value)
            y = torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, worst))
            fits.append(GPFit(ctx.X, y, ctx.step_seed, state.model))
        t0 = time.perf_counter()
        models, _ = fit_gps(fits, ctxs[0].bounds)
        _share(ctxs, time.perf_counter() - t0)
        for state, model in zip(states, models, strict=True):
            state.model = model

        def propose(i: int, ctx: RunContext) -> Proposed:
            with manual_seed(ctx.step_seed):
                acqf = qLogNoisyExpectedImprovement(
                    model=factor_model(models[i]),
                    X_baseline=ctx.X,
                    sampler=SobolQMCNormalSampler(
                        torch.Size([MC_SAMPLES]), seed=ctx.step_seed
                    ),
                    X_pending=ctx.X_pending,
                    prune_baseline=True,
                )
            available = ctx.available
            choices = ctx.candidates[available]
            if _q1(ctx):
                return available[_argmax_row(q1_values(acqf, choices))]
            return available[select_discrete(acqf, choices, ctx.q, ctx.step_seed)]

        return self.per_seed(ctxs, propose)


class CrashLane(LaneAdapter):
    """``gpc_ei`` and ``gpc_pof``
    (:class:`~bolt_pco64.bench.methods.crash.CrashAwareMethod` with the GP
    classifier): at a hyperparameter refit step the classifiers and the
    objective GPs of every seed are fitted together, then each seed's own
    proposal runs on them (conditioning only); between refits each seed
    proposes as today (its models are only conditioned on the new data)."""

    def propose_lane(self, ctxs: Sequence[RunContext]) -> list[Proposed | Exception]:
        from bolt_pco64.bo import CrashAwareState
        from bolt_pco64.bo.batched import GPFit, fit_gps
        from bolt_pco64.bo.feasibility import (
            CRASH_DEFAULTS,
            FeasibilityClassifier,
            dirichlet_targets,
        )

        method = self.method
        states: list[CrashAwareState] = []
        for ctx in ctxs:
            if isinstance(ctx.state, dict) and not ctx.state:
                ctx.state = method.new_state()
            states.append(ctx.state)
        refit = [s.steps % CRASH_DEFAULTS.refit_every == 0 for s in states]
        fits: list[GPFit] = []
        where: dict[int, tuple[int, int | None]] = {}
        for i, (ctx, state) in enumerate(zip(ctxs, states, strict=True)):
            if not refit[i]:
                continue
            feasible = ctx.feasible
            Y, Yvar = dirichlet_targets(feasible, CRASH_DEFAULTS.alpha_epsilon)
            crash = len(fits)
            fits.append(
                GPFit(
                    ctx.X,
                    Y.to(ctx.X),
                    ctx.step_seed,
                    state.crash_model,  # type: ignore[arg-type]
                    Yvar=Yvar.to(ctx.X),
                    model_class=FeasibilityClassifier,
                )
            )
            obj = None
            if bool(feasible.any()):
                obj = len(fits)
                fits.append(
                    GPFit(
                        ctx.X[feasible],
                        ctx.y[feasible],
                        ctx.step_seed,
                        state.objective,
                        pad_to=PAD_OBJECTIVE * len(feasible),
                    )
                )
            where[i] = (crash, obj)
        models: list[Any] = []
        if fits:
            t0 = time.perf_counter()
            models, _ = fit_gps(fits, ctxs[0].bounds)
            _share([ctxs[i] for i in where], time.perf_counter() - t0)

        def propose(i: int, ctx: RunContext) -> Proposed:
            if i not in where:
                return method.propose(ctx)
            crash, obj = where[i]
            real = states[i]
            # The fitted models, as a state between refits: the proposal
            # only conditions them on the (same) data.
            proxy = CrashAwareState(
                objective=None if obj is None else models[obj],
                crash_model=models[crash],
                steps=1,
            )
            ctx.state = proxy
            try:
                out = method.propose(ctx)
            finally:
                ctx.state = real
            real.objective, real.crash_model = proxy.objective, proxy.crash_model
            real.fit_seconds = proxy.fit_seconds
            real.steps += 1
            return out

        return self.per_seed(ctxs, propose)


def lane_adapter(method: Method) -> LaneAdapter | None:
    """The :class:`LaneAdapter` that batches ``method``'s seeds, ``None`` if
    it runs seed by seed (:func:`lane_support` says why)."""
    return _adapter_and_reason(method)[0]


def lane_support(method: Method) -> str | None:
    """Why ``method`` runs seed by seed in a lane, ``None`` if it batches."""
    return _adapter_and_reason(method)[1]


def _adapter_and_reason(method: Method) -> tuple[LaneAdapter | None, str | None]:
    from bolt_pco64.bench.methods.baselines import NaiveMethod, RandomMethod
    from bolt_pco64.bench.methods.constrained import ConstrainedMethod
    from bolt_pco64.bench.methods.crash import CrashAwareMethod

    kind = type(method)
    if kind is ConstrainedMethod:
        return ConstrainedLane(method), None
    if kind is NaiveMethod:
        return NaiveLane(method), None
    if kind is CrashAwareMethod:
        if getattr(method, "kind", None) in ("gpc_ei", "gpc_pof"):
            return CrashLane(method), None
        return None, "its censored margin model is a variational GP (not batched)"
    if kind is RandomMethod:
        return None, "it has no model to batch"
    return None, f"no lane adapter for {kind.__name__}"


# --------------------------------------------------------------------------
# The lane: the seeds' loops, one at a time, answered together
# --------------------------------------------------------------------------


class _Fiber:
    """A function run in a thread that runs only while the lane waits for it
    (a coroutine on a thread): :meth:`resume` runs it until it calls
    :meth:`ask` or returns."""

    def __init__(self, fn: Callable[[], RunOutcome], name: str) -> None:
        self._fn = fn
        self._go = threading.Semaphore(0)
        self._back = threading.Semaphore(0)
        self.request: RunContext | None = None
        self.reply: Proposed | Exception | None = None
        self.result: RunOutcome | None = None
        self.error: BaseException | None = None
        self.done = False
        #: The seed's own seconds of the last answer (its share of the fit
        #: and its acquisition), what its records' timing columns hold.
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._started = False

    def _main(self) -> None:
        self._go.acquire()
        try:
            self.result = self._fn()
        except BaseException as err:  # pragma: no cover - RunLoop catches method errors
            self.error = err
        finally:
            self.done = True
            self._back.release()

    def resume(self, reply: Proposed | Exception | None = None) -> None:
        """Run the fiber until its next :meth:`ask` or its end."""
        self.reply = reply
        self.request = None
        if not self._started:
            self._started = True
            self._thread.start()
        self._go.release()
        self._back.acquire()

    def ask(self, ctx: RunContext) -> Proposed:
        """Called in the fiber: hand ``ctx`` to the lane, wait for the answer."""
        self.request = ctx
        self._back.release()
        self._go.acquire()
        reply = self.reply
        if isinstance(reply, Exception):
            raise reply
        assert reply is not None
        return reply


class _SeedMethod(Method):
    """What a seed's :class:`~bolt_pco64.bench.loop.RunLoop` sees: the
    method, whose proposals come from the lane."""

    def __init__(self, method: Method, fiber: _Fiber) -> None:
        self.method = method
        self.fiber = fiber
        self.n_init = method.n_init

    def new_state(self) -> Any:
        return self.method.new_state()

    def propose(self, ctx: RunContext) -> Proposed:
        out = self.fiber.ask(ctx)
        #: Read by RunLoop.propose instead of the wall time of the call,
        #: which includes the lane-mates' work.
        self.propose_seconds = self.fiber.seconds
        return out

    def recommend(self, ctx: RunContext) -> int | None:
        return lane_recommend(self.method, ctx)

    def predict(self, ctx: RunContext, X: Tensor) -> Prediction | None:
        return self.method.predict(ctx, X)

    def objective_model(self, ctx: RunContext) -> Any:
        return self.method.objective_model(ctx)


def lane_recommend(method: Method, ctx: RunContext) -> int | None:
    """``method.recommend(ctx)`` as a lane computes it: the default
    recommendation (the highest posterior mean of the objective GP
    re-conditioned on the feasible evaluations) from that GP's factors
    (:func:`~bolt_pco64.bo.factors.best_by_posterior_mean`) instead of a new
    ``SingleTaskGP`` per call; any other by the method itself."""
    from botorch.models import SingleTaskGP

    from bolt_pco64.bo.factors import best_by_posterior_mean

    model = method.objective_model(ctx)
    default = type(method).recommend is Method.recommend
    if not default or type(model) is not SingleTaskGP:
        return method.recommend(ctx)
    i = best_by_posterior_mean(model, ctx.X, ctx.y)
    return None if i is None else int(ctx.rows[i])


def run_lane(
    method: str,
    seeds: Sequence[int],
    table: Table,
    config: BenchConfig,
    fn: Method,
    on_evaluation: Callable[[int], None] | None = None,
) -> list[RunOutcome]:
    """Run ``method`` from each of ``seeds`` as one lane; never raises for a
    failing method.

    Args:
        method: The method's name (recorded).
        seeds: The lane's seeds (distinct).
        table: The problem's table.
        config: The comparison's settings (as for
            :func:`~bolt_pco64.bench.run.run_one`).
        fn: The method.
        on_evaluation: Called with 1 after each evaluation of any seed.

    Returns:
        One :class:`~bolt_pco64.bench.records.RunOutcome` per seed, in the
        order of ``seeds``, each what :func:`~bolt_pco64.bench.run.run_one`
        records (same columns).

    Raises:
        ValueError: If ``seeds`` repeats a seed, or as
            :func:`~bolt_pco64.bench.run.run_one`.
    """
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"Expected distinct seeds in a lane, got {seeds}.")
    config.check_rows(len(table))
    adapter = lane_adapter(fn)
    if adapter is None:
        logger.info(
            "%s runs seed by seed in its lane: %s.", method, lane_support(fn) or "-"
        )
        with one_thread_everywhere():
            return [
                run_one(method, s, table, config, fn=fn, on_evaluation=on_evaluation)
                for s in seeds
            ]
    n_init = initial_design_size(fn, config.n_init, config.budget, method)
    with one_thread_everywhere():
        fibers: list[_Fiber] = []
        for s in seeds:
            loop = RunLoop(method, s, table, config, on_evaluation)
            fiber = _Fiber(lambda: None, f"lane-{method}-{s}")  # type: ignore[arg-type,return-value]
            seed_method = _SeedMethod(fn, fiber)
            fiber._fn = _bind(loop, seed_method, n_init)
            fibers.append(fiber)
        for f in fibers:
            f.resume()
        while True:
            waiting = [f for f in fibers if not f.done]
            if not waiting:
                break
            ctxs = [f.request for f in waiting]
            assert all(c is not None for c in ctxs)
            try:
                replies = adapter.propose_lane(ctxs)  # type: ignore[arg-type]
            except Exception as err:  # the lane's computation failed: each seed alone
                logger.warning(
                    "lane of %s failed (%s); its seeds propose alone", method, err
                )
                replies = adapter.per_seed(ctxs, lambda i, c: fn.propose(c))  # type: ignore[arg-type]
            for k, (f, reply) in enumerate(zip(waiting, replies, strict=True)):
                ctx = ctxs[k]
                assert ctx is not None
                f.seconds = ctx.fit_seconds + adapter.acq_seconds[k]
                f.resume(reply)
    out = []
    for f in fibers:
        if f.error is not None:  # pragma: no cover - RunLoop catches method errors
            raise f.error
        assert f.result is not None
        out.append(f.result)
    return out


def _bind(loop: RunLoop, method: Method, n_init: int) -> Callable[[], RunOutcome]:
    return lambda: loop.execute(method, n_init)


# --------------------------------------------------------------------------
# Tasks: method x lane
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LaneTask:
    """One lane to execute, self-contained so that a worker can run it.

    Attributes:
        method: The method's name.
        seeds: The lane's seeds.
        table: The problem's table.
        config: The comparison's settings.
        fn: The method.
    """

    method: str
    seeds: tuple[int, ...]
    table: Table
    config: BenchConfig
    fn: Method = field(compare=False)

    @property
    def size(self) -> int:
        """Runs in this task."""
        return len(self.seeds)


def run_lane_task(task: LaneTask | Task) -> list[RunOutcome]:
    """Worker entry point: the outcomes of a :class:`LaneTask` (or of a plain
    :class:`~bolt_pco64.bench.run.Task`, as a list of one)."""
    if isinstance(task, Task):
        return [run_one(task.method, task.seed, task.table, task.config, fn=task.fn)]
    return run_lane(task.method, task.seeds, task.table, task.config, task.fn)


def lane_tasks(tasks: Sequence[Task], lane_width: int) -> list[LaneTask]:
    """:class:`~bolt_pco64.bench.run.Task` s (one run each, as a comparison
    plans them) as method x lane :class:`LaneTask` s (:func:`split_lanes`:
    each method's seeds, in order, cut into lanes of ``lane_width``; a method
    that cannot batch gets one per seed). Every task of one call shares its
    table and settings (a comparison's tasks on one table do)."""
    if not tasks:
        return []
    fns = {t.method: t.fn for t in tasks}
    first = tasks[0]
    return split_lanes(
        [(t.method, t.seed) for t in tasks],
        first.table,
        first.config,
        fns.__getitem__,
        lane_width,
    )


def split_lanes(
    todo: Sequence[tuple[str, int]],
    table: Table,
    config: BenchConfig,
    methods: Callable[[str], Method],
    lane_width: int = DEFAULT_LANE_WIDTH,
) -> list[LaneTask]:
    """The runs ``todo`` as method x lane tasks.

    Each method's seeds (in the order of ``todo``) are cut into lanes of
    ``lane_width``; a method that runs seed by seed (:func:`lane_support`)
    gets one task per seed, so that ``--jobs`` and Dask spread its runs.

    Args:
        todo: ``(method, seed)`` pairs to run.
        table: The table.
        config: The settings.
        methods: The method of a name (e.g.
            :func:`~bolt_pco64.bench.methods.registry.get_method`).
        lane_width: Seeds per lane, ``>= 1``.

    Raises:
        ValueError: If ``lane_width`` is not an integer >= 1.
    """
    if (
        isinstance(lane_width, bool)
        or not isinstance(lane_width, int)
        or lane_width < 1
    ):
        raise ValueError(f"Expected lane_width an integer >= 1, got {lane_width!r}.")
    by_method: dict[str, list[int]] = {}
    for m, s in todo:
        by_method.setdefault(m, []).append(int(s))
    tasks: list[LaneTask] = []
    for m, seeds in by_method.items():
        fn = methods(m)
        width = lane_width if lane_adapter(fn) is not None else 1
        for i in range(0, len(seeds), width):
            tasks.append(LaneTask(m, tuple(seeds[i : i + width]), table, config, fn))
    return tasks
