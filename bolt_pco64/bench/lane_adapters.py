"""How a lane answers its seeds: one adapter per family of methods.

A lane (:mod:`bolt_pco64.bench.lanes`) asks a :class:`LaneAdapter` for the
next proposal of every seed still running; the adapter fits the seeds' GPs
together (:func:`~bolt_pco64.bo.batched.fit_gps`) and computes each seed's
proposal from them, keeping the method's definition:

- :class:`ConstrainedLane`: ``qlognei``, ``qlogei``, ``ts`` (both GPs of
  every seed in one batched fit; the acquisition on the factor model,
  :mod:`bolt_pco64.bo.factors`);
- :class:`NaiveLane`: ``naive`` (its one GP per seed, qLogNEI at every
  candidate at once);
- :class:`CrashLane`: ``gpc_ei``, ``gpc_pof`` (classifier and objective GPs
  batched at refit steps).

:func:`lane_adapter` finds a method's adapter, :func:`lane_support` says why
a method has none (it then runs seed by seed), and :func:`lane_recommend`
computes the default recommendation from the objective GP's factors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from bolt_pco64.bench.contract import Method, Proposed, RunContext

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.bo.batched import GPFit

__all__ = [
    "ConstrainedLane",
    "CrashLane",
    "LaneAdapter",
    "NaiveLane",
    "lane_adapter",
    "lane_recommend",
    "lane_support",
]


#: With 1, every objective GP of a step is padded to the step's number of
#: observations (one batch with the constraint GPs); with 0, to its own size (a
#: batch per size).
PAD_OBJECTIVE = 0


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


def _objective_fit(ctx: RunContext, warm_start: Any) -> GPFit:
    """The objective GP's fit: the feasible observations, the step's seed."""
    from bolt_pco64.bo.batched import GPFit

    feasible = ctx.feasible
    return GPFit(
        ctx.X[feasible],
        ctx.y[feasible],
        ctx.step_seed,
        warm_start,
        pad_to=PAD_OBJECTIVE * len(feasible),
    )


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
                    _objective_fit(ctx, None if prev is None else prev.objective)
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
        from bolt_pco64.bench.methods.baselines import naive_acquisition, naive_targets
        from bolt_pco64.bench.methods.state import NaiveState, _run_state
        from bolt_pco64.bo import select_discrete
        from bolt_pco64.bo.batched import GPFit, fit_gps
        from bolt_pco64.bo.factors import factor_model, q1_values

        method = self.method
        states = [_run_state(method, ctx, NaiveState) for ctx in ctxs]
        fits = []
        for ctx, state in zip(ctxs, states, strict=True):
            fits.append(GPFit(ctx.X, naive_targets(ctx), ctx.step_seed, state.model))
        t0 = time.perf_counter()
        models, _ = fit_gps(fits, ctxs[0].bounds)
        _share(ctxs, time.perf_counter() - t0)
        for state, model in zip(states, models, strict=True):
            state.model = model

        def propose(i: int, ctx: RunContext) -> Proposed:
            acqf = naive_acquisition(factor_model(models[i]), ctx)
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
                fits.append(_objective_fit(ctx, state.objective))
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
