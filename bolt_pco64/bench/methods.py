"""The method registry and the built-in methods.

A method is ``fn(ctx: RunContext) ->`` either ``q`` distinct untried row
indices (a long tensor or a sequence of ints) or a ``q x d`` floating tensor
of points inside the problem's bounds, which the harness snaps to rows with
``problem.lookup`` as a user's continuous loop would (a point may snap to a
row tried before: a *repeat*, see :mod:`bolt_pco64.bench.proposals`). It
draws randomness only from
``ctx.generator`` / ``ctx.step_seed`` and may add the time it spends fitting
models to ``ctx.fit_seconds``.

Built-in methods (:data:`METHODS`, extend it with :func:`register_method`):

- ``random``: uniform over the untried configurations;
- ``qlognei`` / ``qlogei``: constrained qLogNEI / qLogEI (objective GP on
  feasible observations, constraint GP on every margin, see
  :mod:`bolt_pco64.bo`) over the untried candidates;
- ``ts``: constrained Thompson sampling over the untried candidates;
- ``naive``: qLogNEI on one GP that ignores the constraint: an OOM is recorded
  as the problem's ``worst_feasible_value`` and nothing models feasibility.

Crash-aware methods (:mod:`bolt_pco64.bo.crash`; analytic LogEI of an
objective GP on the feasible observations, hyperparameters refitted every
``CRASH_DEFAULTS.refit_every`` steps):

- ``gpc_ei``: LogEI x P(feasible) of a Dirichlet GP classifier of
  ``ran_successfully`` (Gelbart, Snoek & Adams 2014);
- ``tobit_ei``: LogEI x P(margin <= 0) of a GP of the memory margin with
  crashes as censored observations (Tobit likelihood);
- ``gpc_pof``: LogEI among the candidates whose classifier P(feasible)
  reaches ``CRASH_DEFAULTS.pof_threshold`` (Gelbart et al.'s probabilistic
  constraint), the most probably feasible candidate when none does.

Point methods (not in the default comparison; run them with
``--methods qlognei,qlognei-box,qlognei-mixed``): the same models and
acquisition function as ``qlognei``, optimised over the box instead of
enumerating the untried rows (:mod:`bolt_pco64.bo.box`):

- ``qlognei-box``: ``optimize_acqf`` over the continuous bounds, snapped;
- ``qlognei-mixed``: ``optimize_acqf_mixed_alternating`` with every input an
  integer dimension, snapped.

Their models are fitted on the evaluated rows (the snapped configurations
that ran, repeats included), as ``qlognei``'s are.

Until a run has its first feasible observation the model methods
(``qlognei``, ``qlogei``, ``ts``, ``qlognei-box``, ``qlognei-mixed``) choose by ``qLogProbabilityOfFeasibility``
of the constraint GP (there is no incumbent to improve on yet). ``naive`` has
no constraint model and always uses its imputed objective. BoTorch is imported
when a model method first runs, not when this module is imported.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

if TYPE_CHECKING:
    from bolt_pco64.bo import ConstrainedModels
    from bolt_pco64.problem import PCO

__all__ = [
    "METHODS",
    "MethodFn",
    "RunContext",
    "check_methods",
    "check_reference",
    "register_method",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class RunContext:
    """What a method sees when it proposes the next evaluations.

    Attributes:
        problem: The test problem (a :class:`~bolt_pco64.PCO16`, ``PCO32`` or
            ``PCO64``).
        candidates: ``N x d``-dim tensor of all configurations (canonical order).
        rows: ``n``-dim long tensor of the rows evaluated so far, in order
            (a row repeated by a point method appears again).
        y: ``n``-dim tensor of observed throughput, NaN where the run OOMed.
        margin: ``n``-dim tensor of the observed memory margins.
        untried: ``m``-dim long tensor of the rows not evaluated yet (ascending).
        q: How many evaluations to propose (rows or points).
        seed: The run's seed.
        step_seed: A fresh integer seed for this step (from ``generator``).
        generator: The method's random number generator for this run.
        fit_seconds: Time spent fitting models; a method adds to it.
        state: A dict that persists across the steps of one run (the
            built-in model methods keep their last GPs there to warm-start
            the next fit). A method that models the objective keeps its GP
            under ``"objective"`` (a BoTorch model of the throughput); the
            harness recommends from it (the evaluated feasible configuration
            of highest posterior mean, for the inference regret) and
            otherwise recommends the best observed one.
    """

    problem: PCO
    candidates: Tensor
    rows: Tensor
    y: Tensor
    margin: Tensor
    untried: Tensor
    q: int
    seed: int
    step_seed: int
    generator: torch.Generator
    fit_seconds: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def X(self) -> Tensor:
        """``n x d``-dim tensor of the evaluated configurations."""
        return self.candidates[self.rows]

    @property
    def feasible(self) -> Tensor:
        """``n``-dim bool tensor: which evaluations ran."""
        return ~torch.isnan(self.y)

    @property
    def bounds(self) -> Tensor:
        """``2 x d``-dim tensor of the problem's bounds."""
        return self.problem.bounds.to(self.candidates)


MethodFn = Callable[[RunContext], "Tensor | Sequence[int]"]
#: The registry of methods by name.
METHODS: dict[str, MethodFn] = {}


def register_method(
    name: str, fn: MethodFn | None = None
) -> MethodFn | Callable[[MethodFn], MethodFn]:
    """Register a method under ``name``; usable as a decorator or a function.

    ``register_method("mine", fn)`` or ``@register_method("mine")``. A method
    is ``fn(ctx: RunContext) ->`` ``q`` distinct untried row indices (a long
    tensor or a sequence of ints) or a ``q x d`` floating tensor of points in
    the box (snapped by the harness). Re-registering a name replaces it.

    Raises:
        ValueError: If ``name`` is not a simple file-safe name.
        TypeError: If ``fn`` is not callable.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"Expected a method name of letters, digits, '_', '.', '-', got {name!r}."
        )

    def add(f: MethodFn) -> MethodFn:
        if not callable(f):
            raise TypeError(f"Expected a callable method, got {type(f).__name__}.")
        METHODS[name] = f
        return f

    return add(fn) if fn is not None else add


def _random(ctx: RunContext) -> Tensor:
    perm = torch.randperm(ctx.untried.numel(), generator=ctx.generator)
    return ctx.untried[perm[: ctx.q]]


def _fit_models(ctx: RunContext) -> ConstrainedModels:
    """Fit the constrained models (warm-started from the previous step's)."""
    from bolt_pco64.bo import fit_constrained_models

    t0 = time.perf_counter()
    models = fit_constrained_models(
        ctx.X,
        ctx.y,
        ctx.margin,
        ctx.bounds,
        ctx.step_seed,
        warm_start=ctx.state.get("models"),
    )
    ctx.state["models"] = models
    ctx.state["objective"] = models.objective
    ctx.fit_seconds += time.perf_counter() - t0
    return models


def _propose_model(ctx: RunContext, kind: str) -> Tensor:
    """The constrained model methods; ``kind`` is qlognei, qlogei or ts."""
    from bolt_pco64.bo import propose_acquisition, propose_thompson

    models = _fit_models(ctx)
    choices = ctx.candidates[ctx.untried]
    if models.objective is None:
        # No feasible observation yet: probability of feasibility.
        idx = propose_acquisition(
            "pof", models, ctx.X, ctx.y, choices, ctx.q, ctx.step_seed
        )
    elif kind == "ts":
        idx = propose_thompson(models, choices, ctx.q, ctx.generator)
    else:
        idx = propose_acquisition(
            kind, models, ctx.X, ctx.y, choices, ctx.q, ctx.step_seed
        )
    return ctx.untried[idx]


def _qlognei(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "qlognei")


def _qlogei(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "qlogei")


def _ts(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "ts")


def _qlognei_box(ctx: RunContext) -> Tensor:
    from bolt_pco64.bo.box import propose_box

    models = _fit_models(ctx)
    return propose_box(models, ctx.X, ctx.y, ctx.bounds, ctx.q, ctx.step_seed)


def _qlognei_mixed(ctx: RunContext) -> Tensor:
    from bolt_pco64.bo.box import propose_mixed

    models = _fit_models(ctx)
    return propose_mixed(models, ctx.X, ctx.y, ctx.bounds, ctx.q, ctx.step_seed)


def _naive(ctx: RunContext) -> Tensor:
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler
    from botorch.utils.sampling import manual_seed

    from bolt_pco64.bo import MC_SAMPLES, fit_gp, select_discrete

    worst = float(ctx.problem.worst_feasible_value)
    y = torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, worst))
    t0 = time.perf_counter()
    model = fit_gp(ctx.X, y, ctx.bounds, ctx.step_seed, ctx.state.get("model"))
    ctx.state["model"] = model
    ctx.state["objective"] = model
    ctx.fit_seconds += time.perf_counter() - t0
    with manual_seed(ctx.step_seed):  # baseline pruning draws from the global RNG
        acqf = qLogNoisyExpectedImprovement(
            model=model,
            X_baseline=ctx.X,
            sampler=SobolQMCNormalSampler(torch.Size([MC_SAMPLES]), seed=ctx.step_seed),
            prune_baseline=True,
        )
    return ctx.untried[
        select_discrete(acqf, ctx.candidates[ctx.untried], ctx.q, ctx.step_seed)
    ]


def _propose_crash(ctx: RunContext, kind: str) -> Tensor:
    """The crash-aware methods of :mod:`bolt_pco64.bo.crash`."""
    from bolt_pco64.bo import (
        CrashAwareState,
        propose_censored_logei,
        propose_classifier_logei,
        propose_pof_threshold,
    )

    state = ctx.state.setdefault("crash", CrashAwareState())
    choices = ctx.candidates[ctx.untried]
    args = (ctx.bounds, choices, ctx.q, ctx.step_seed, state)
    if kind == "gpc_ei":
        idx = propose_classifier_logei(ctx.X, ctx.y, *args)
    elif kind == "tobit_ei":
        idx = propose_censored_logei(ctx.X, ctx.y, ctx.margin, *args)
    else:
        idx = propose_pof_threshold(ctx.X, ctx.y, *args)
    ctx.state["objective"] = state.objective
    ctx.fit_seconds += state.fit_seconds
    return ctx.untried[idx]


def _gpc_ei(ctx: RunContext) -> Tensor:
    return _propose_crash(ctx, "gpc_ei")


def _tobit_ei(ctx: RunContext) -> Tensor:
    return _propose_crash(ctx, "tobit_ei")


def _gpc_pof(ctx: RunContext) -> Tensor:
    return _propose_crash(ctx, "gpc_pof")


register_method("random", _random)
register_method("qlognei", _qlognei)
register_method("qlogei", _qlogei)
register_method("ts", _ts)
register_method("naive", _naive)
register_method("qlognei-box", _qlognei_box)
register_method("qlognei-mixed", _qlognei_mixed)
register_method("gpc_ei", _gpc_ei)
register_method("tobit_ei", _tobit_ei)
register_method("gpc_pof", _gpc_pof)


def check_methods(methods: Sequence[str]) -> list[str]:
    """``methods`` without duplicates, in order.

    Raises:
        ValueError: If it is empty or names a method not in :data:`METHODS`.
    """
    names = list(dict.fromkeys(methods))
    unknown = [m for m in names if m not in METHODS]
    if not names or unknown:
        raise ValueError(
            f"Expected methods from {sorted(METHODS)}, got {unknown or names!r}."
        )
    return names


def check_reference(reference: str, methods: Sequence[str]) -> str:
    """The reference method of the paired comparisons, checked.

    It must be a registered method; when it is not among ``methods`` the
    summary has no paired comparisons (there is nothing to pair with).

    Raises:
        ValueError: If ``reference`` is not a registered method.
    """
    if reference not in METHODS:
        raise ValueError(
            f"Expected a reference method from {sorted(METHODS)}, got {reference!r}."
        )
    return reference
