"""The built-in methods, listed once (:data:`BUILTINS`).

A method follows the contract of :mod:`bolt_pco64.bench.contract`: a
:class:`~bolt_pco64.bench.contract.Method` (``propose``, and optionally
``n_init``, ``new_state``, ``recommend`` and ``predict``) or a plain
function of the step's :class:`~bolt_pco64.bench.contract.RunContext`.
:data:`BUILTINS` is the one list of the built-in methods: each one's name,
its method, its line in ``bench --help`` and whether the default and the
``--quick`` comparisons run it (:data:`~bolt_pco64.bench.config.DEFAULTS`
and the command line's help read it from here). Methods registered by the
user and those of other packages' entry points are looked up in
:mod:`bolt_pco64.bench.registry`.

Built-in methods:

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

Cost-aware methods (:mod:`bolt_pco64.bo.cost`; not in the default
comparison, run them on a GPU-hour budget, ``--budget-hours``): the
constrained GPs of ``qlognei`` and a GP of the log run cost:

- ``eipu``: constrained qLogNEI per unit of expected cost (the crash risk
  counted: P(feasible) x predicted run cost + P(crash) x crash cost);
- ``ei_cool``: the same with the cost's exponent cooling from 1 to 0 as
  the budget is spent (Lee et al. 2020).

Prior-informed methods (:mod:`bolt_pco64.bo.prior`; not in the default
comparison, see below for the command): the constrained qLogNEI of ``qlognei`` on GPs whose prior means are learnable
performance models, starting from a 3-row initial design (``n_init = 3``, a
prefix of the seed's shared design):

- ``prior_ei``: throughput prior on the objective GP, memory-margin prior on
  the constraint GP;
- ``prior_ei_tp``: the ablation, throughput prior only;
- ``prior_ei_bad``: ``prior_ei`` with a deliberately misspecified prior
  (every physical constant off by 2x, the memory prior of a GPU with twice
  the memory; :func:`~bolt_pco64.bo.prior.misspecified`): the robustness
  check of prior-guided benchmarks (mf-prior-bench's bad priors).

Their control, ``qlognei_init3``, is ``qlognei`` from the same 3 rows: it
separates the prior's effect from the shorter initial design (``qlognei``
starts from the comparison's ``n_init``, 10 by default, so at 10
evaluations it has made no model-guided choice yet). Run them all with
``--methods qlognei,qlognei_init3,prior_ei,prior_ei_tp,prior_ei_bad
--reference qlognei_init3``.

The prior methods recommend and predict through their own prior-mean
objective GP (re-conditioned on every feasible observation with its
hyperparameters and prior parameters kept, as the other model methods do
with theirs).

Point methods (not in the default comparison; run them with
``--methods qlognei,qlognei-box,qlognei-mixed``): the same models and
acquisition function as ``qlognei``, optimised over the box instead of
enumerating the untried rows (:mod:`bolt_pco64.bo.box`):

- ``qlognei-box``: ``optimize_acqf`` over the continuous bounds, snapped;
- ``qlognei-mixed``: ``optimize_acqf_mixed_alternating`` with every input an
  integer dimension, snapped.

Their models are fitted on the evaluated rows (the snapped configurations
that ran, repeats included), as ``qlognei``'s are.

Until a run has its first feasible observation the constrained model methods
(``qlognei``, ``qlogei``, ``ts``, ``qlognei-box``, ``qlognei-mixed``) choose
by ``qLogProbabilityOfFeasibility`` of the constraint GP (there is no
incumbent to improve on yet). ``naive`` has no constraint model and always
uses its imputed objective. Every built-in method leaves the pending rows
(``ctx.pending``) out of its choices, and the model methods condition on
them (``X_pending``, or a kriging believer for the crash-aware ones). Each
model method keeps its models in a state object of its own
(:meth:`~bolt_pco64.bench.contract.Method.new_state`: :class:`ModelState`,
:class:`NaiveState`, :class:`~bolt_pco64.bo.CrashAwareState`,
:class:`CostAwareState`, :class:`~bolt_pco64.bo.prior.PriorState`) and
recommends (``recommend``) and predicts (``predict``, the prior of
``--early-stop posterior``) with its objective GP. Torch and BoTorch are imported when a method first
runs, not when this module is imported (``bench --help`` lists the methods).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bolt_pco64.bench.contract import (
    ENTRY_POINT_GROUP,
    FunctionMethod,
    Method,
    MethodFn,
    ObjectiveModel,
    RunContext,
    recommend_by_posterior_mean,
)

if TYPE_CHECKING:
    from botorch.models import SingleTaskGP
    from torch import Tensor

    from bolt_pco64.bo import ConstrainedModels, CrashAwareState
    from bolt_pco64.bo.prior import PriorState
    from bolt_pco64.costs import TimeModel

__all__ = [
    "BUILTINS",
    "BUILTIN_METHODS",
    "ENTRY_POINT_GROUP",
    "PRIOR_N_INIT",
    "BoxMethod",
    "Builtin",
    "ConstrainedMethod",
    "CostAwareMethod",
    "CostAwareState",
    "CrashAwareMethod",
    "FunctionMethod",
    "Method",
    "MethodFn",
    "ModelState",
    "NaiveMethod",
    "NaiveState",
    "PriorMethod",
    "RandomMethod",
    "RunContext",
]

#: The initial-design size of the prior methods and of their control,
#: ``qlognei_init3`` (what the prior should save).
PRIOR_N_INIT = 3


# --------------------------------------------------------------------------
# Built-in methods
# --------------------------------------------------------------------------


class RandomMethod(Method):
    """Uniform over the untried, not pending configurations."""

    def propose(self, ctx: RunContext) -> Tensor:
        import torch

        available = ctx.available
        perm = torch.randperm(available.numel(), generator=ctx.generator)
        return available[perm[: ctx.q]]


@dataclass
class ModelState:
    """What a method on the constrained GPs keeps across one run's steps.

    Attributes:
        models: The last fitted :class:`~bolt_pco64.bo.ConstrainedModels`
            (``None`` before the first proposal).
    """

    models: ConstrainedModels | None = None


@dataclass
class NaiveState:
    """What ``naive`` keeps across one run's steps.

    Attributes:
        model: Its last GP (OOMs imputed), ``None`` before the first proposal.
    """

    model: SingleTaskGP | None = None


@dataclass
class CostAwareState(ModelState):
    """What the cost-aware methods keep across one run's steps.

    Attributes:
        models: The last constrained GPs.
        cost_model: The last GP of the log run cost (``None`` before the
            first feasible observation).
        time_model: The table's time model (the costs a scheduler reports).
        init_fraction: The budget share spent at the first proposal
            (``ei_cool``'s initial design), ``None`` before it.
    """

    cost_model: SingleTaskGP | None = None
    time_model: TimeModel | None = None
    init_fraction: float | None = None


_S = TypeVar("_S")


def _run_state(method: Method, ctx: RunContext, kind: type[_S]) -> _S:
    """``ctx.state`` as ``method``'s own state; the empty dict of a context
    built without one is replaced by a fresh :meth:`~Method.new_state`.

    Raises:
        TypeError: If ``ctx.state`` is another object.
    """
    state = ctx.state
    if isinstance(state, dict) and not state:
        state = ctx.state = method.new_state()
    if not isinstance(state, kind):
        raise TypeError(
            f"Expected ctx.state made by {type(method).__name__}.new_state(), "
            f"got {type(state).__name__}."
        )
    return state


def _fit_models(method: Method, ctx: RunContext) -> ConstrainedModels:
    """Fit the constrained models (warm-started from the previous step's)."""
    from bolt_pco64.bo import fit_constrained_models

    state = _run_state(method, ctx, ModelState)
    t0 = time.perf_counter()
    models = fit_constrained_models(
        ctx.X,
        ctx.y,
        ctx.margin,
        ctx.bounds,
        ctx.step_seed,
        warm_start=state.models,
    )
    state.models = models
    ctx.fit_seconds += time.perf_counter() - t0
    return models


def _crash_state() -> type[CrashAwareState]:
    from bolt_pco64.bo import CrashAwareState

    return CrashAwareState


def _prior_state() -> type[PriorState]:
    from bolt_pco64.bo.prior import PriorState

    return PriorState


class _ConstrainedModelsMethod(Method):
    """A method on :func:`~bolt_pco64.bo.fit_constrained_models`' GPs
    (recommends and predicts with their objective GP)."""

    def new_state(self) -> ModelState:
        return ModelState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        models = _run_state(self, ctx, ModelState).models
        return None if models is None else models.objective


class ConstrainedMethod(_ConstrainedModelsMethod):
    """Constrained qLogNEI / qLogEI or Thompson sampling over the untried rows.

    Args:
        kind: ``"qlognei"``, ``"qlogei"`` or ``"ts"``.
        n_init: Its own initial-design size (a prefix of the seed's shared
            design), ``None`` for the comparison's.
    """

    def __init__(
        self, kind: Literal["qlognei", "qlogei", "ts"], n_init: int | None = None
    ) -> None:
        self.kind = kind
        self.n_init = n_init

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo import propose_acquisition, propose_thompson

        models = _fit_models(self, ctx)
        available = ctx.available
        choices = ctx.candidates[available]
        if models.objective is None:
            # No feasible observation yet: probability of feasibility.
            idx = propose_acquisition(
                "pof",
                models,
                ctx.X,
                ctx.y,
                choices,
                ctx.q,
                ctx.step_seed,
                X_pending=ctx.X_pending,
            )
        elif self.kind == "ts":
            idx = propose_thompson(models, choices, ctx.q, ctx.generator)
        else:
            idx = propose_acquisition(
                self.kind,
                models,
                ctx.X,
                ctx.y,
                choices,
                ctx.q,
                ctx.step_seed,
                X_pending=ctx.X_pending,
            )
        return available[idx]


class BoxMethod(_ConstrainedModelsMethod):
    """Constrained qLogNEI optimised over the box (points, snapped by the harness).

    Args:
        search: ``"box"`` (:func:`~bolt_pco64.bo.box.propose_box`) or
            ``"mixed"`` (:func:`~bolt_pco64.bo.box.propose_mixed`).
    """

    def __init__(self, search: Literal["box", "mixed"]) -> None:
        self.search = search

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.box import propose_box, propose_mixed

        models = _fit_models(self, ctx)
        propose = propose_box if self.search == "box" else propose_mixed
        return propose(
            models,
            ctx.X,
            ctx.y,
            ctx.bounds,
            ctx.q,
            ctx.step_seed,
            X_pending=ctx.X_pending,
        )


class NaiveMethod(Method):
    """qLogNEI on one GP, an OOM recorded as the worst feasible value.

    It recommends and predicts with that GP (re-conditioned on the feasible
    observations only, for the recommendation).
    """

    def new_state(self) -> NaiveState:
        return NaiveState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        return _run_state(self, ctx, NaiveState).model

    def propose(self, ctx: RunContext) -> Tensor:
        import torch
        from botorch.acquisition import qLogNoisyExpectedImprovement
        from botorch.sampling import SobolQMCNormalSampler
        from botorch.utils.sampling import manual_seed

        from bolt_pco64.bo import MC_SAMPLES, fit_gp, select_discrete

        worst = float(ctx.problem.worst_feasible_value)
        y = torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, worst))
        state = _run_state(self, ctx, NaiveState)
        t0 = time.perf_counter()
        model = fit_gp(ctx.X, y, ctx.bounds, ctx.step_seed, state.model)
        state.model = model
        ctx.fit_seconds += time.perf_counter() - t0
        with manual_seed(ctx.step_seed):  # baseline pruning draws from the global RNG
            acqf = qLogNoisyExpectedImprovement(
                model=model,
                X_baseline=ctx.X,
                sampler=SobolQMCNormalSampler(
                    torch.Size([MC_SAMPLES]), seed=ctx.step_seed
                ),
                X_pending=ctx.X_pending,
                prune_baseline=True,
            )
        available = ctx.available
        return available[
            select_discrete(acqf, ctx.candidates[available], ctx.q, ctx.step_seed)
        ]


class CrashAwareMethod(Method):
    """The crash-aware methods of :mod:`bolt_pco64.bo.crash`.

    Args:
        kind: ``"gpc_ei"``, ``"tobit_ei"`` or ``"gpc_pof"``.
    """

    def __init__(self, kind: Literal["gpc_ei", "tobit_ei", "gpc_pof"]) -> None:
        self.kind = kind

    def new_state(self) -> CrashAwareState:
        from bolt_pco64.bo import CrashAwareState

        return CrashAwareState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        return _run_state(self, ctx, _crash_state()).objective

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo import (
            propose_censored_logei,
            propose_classifier_logei,
            propose_pof_threshold,
        )

        state: CrashAwareState = _run_state(self, ctx, _crash_state())
        available = ctx.available
        choices = ctx.candidates[available]
        args = (ctx.bounds, choices, ctx.q, ctx.step_seed, state)
        pending = {"X_pending": ctx.X_pending}
        if self.kind == "gpc_ei":
            idx = propose_classifier_logei(ctx.X, ctx.y, *args, **pending)
        elif self.kind == "tobit_ei":
            idx = propose_censored_logei(ctx.X, ctx.y, ctx.margin, *args, **pending)
        else:
            idx = propose_pof_threshold(ctx.X, ctx.y, *args, **pending)
        ctx.fit_seconds += state.fit_seconds
        return available[idx]


class CostAwareMethod(_ConstrainedModelsMethod):
    """The cost-aware methods of :mod:`bolt_pco64.bo.cost` over the untried rows.

    The constrained GPs of ``qlognei`` plus a GP of the log run cost, fitted
    on the results in that ran; their costs are the run times a scheduler
    reports (:class:`~bolt_pco64.costs.TimeModel`'s seconds of the evaluated
    rows), and a crash is expected to cost what the crashes seen so far
    cost (:func:`~bolt_pco64.bo.cost.crash_cost_estimate`). A run stopped
    early (``--early-stop``) is labelled with its full run's seconds, not the
    seconds it was charged: the cost model predicts what running a
    configuration to the end costs, which the steps it ran tell (their time
    per step) and which is what an unstopped run of it would be charged; so
    early stopping lowers what the runs cost, not what the model expects them
    to cost. ``ei_cool``
    takes the budget share spent at its first proposal as the initial
    design's (``ctx.spent_fraction``).

    Args:
        kind: ``"eipu"`` or ``"ei_cool"``.
    """

    def __init__(self, kind: Literal["eipu", "ei_cool"]) -> None:
        self.kind = kind

    def new_state(self) -> CostAwareState:
        return CostAwareState()

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.cost import (
            crash_cost_estimate,
            fit_cost_model,
            propose_ei_cool,
            propose_eipu,
        )
        from bolt_pco64.costs import TimeModel

        state = _run_state(self, ctx, CostAwareState)
        models = _fit_models(self, ctx)
        if state.time_model is None:
            state.time_model = TimeModel(ctx.problem.table)
        cost = state.time_model.run_seconds[ctx.rows]
        ok = ctx.feasible
        cost_model = None
        if ok.any():
            t0 = time.perf_counter()
            cost_model = fit_cost_model(
                ctx.X[ok],
                cost[ok],
                ctx.bounds,
                ctx.step_seed + 2,
                warm_start=state.cost_model,
            )
            state.cost_model = cost_model
            ctx.fit_seconds += time.perf_counter() - t0
        crash = crash_cost_estimate(cost, ok)
        available = ctx.available
        choices = ctx.candidates[available]
        args = (models, cost_model, ctx.X, ctx.y, choices, ctx.q, ctx.step_seed, crash)
        if self.kind == "eipu":
            idx = propose_eipu(*args, X_pending=ctx.X_pending)
        else:
            if state.init_fraction is None:
                state.init_fraction = ctx.spent_fraction
            init = state.init_fraction
            idx = propose_ei_cool(
                *args,
                spent_fraction=ctx.spent_fraction,
                init_fraction=init,
                X_pending=ctx.X_pending,
            )
        return available[idx]


class PriorMethod(Method):
    """Constrained qLogNEI on prior-mean GPs (:func:`~bolt_pco64.bo.prior.propose_prior_ei`).

    Args:
        kind: ``"both"`` (``prior_ei``) or ``"throughput"`` (``prior_ei_tp``).
        n_init: The initial-design size (3: what the prior should save).
        quality: ``"good"`` (the prior's defaults) or ``"bad"`` (every
            constant deliberately off, :func:`~bolt_pco64.bo.prior.misspecified`;
            ``prior_ei_bad``).
    """

    def __init__(
        self,
        kind: Literal["both", "throughput"],
        n_init: int = PRIOR_N_INIT,
        quality: Literal["good", "bad"] = "good",
    ) -> None:
        if quality not in ("good", "bad"):
            raise ValueError(f"Expected quality 'good' or 'bad', got {quality!r}.")
        self.kind = kind
        self.n_init = n_init
        self.quality = quality

    def new_state(self) -> PriorState:
        from bolt_pco64.bo.prior import PriorState

        return PriorState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        """The prior-mean objective GP of the last proposal (``None`` before)."""
        models = _run_state(self, ctx, _prior_state()).models
        return None if models is None else models.objective

    def recommend(self, ctx: RunContext) -> int | None:
        """The evaluated feasible row of highest posterior mean under the
        prior-mean objective GP conditioned on every feasible observation,
        its hyperparameters and prior parameters kept
        (:func:`~bolt_pco64.bo.prior.condition_prior_gp`); the best observed
        one before the first GP."""
        from bolt_pco64.bo.prior import PRIORS, condition_prior_gp

        model = self.objective_model(ctx)
        defaults = PRIORS[self.quality]
        return recommend_by_posterior_mean(
            ctx,
            model,
            lambda X, y: condition_prior_gp(
                model, X, y, ctx.bounds, ctx.problem.instance, defaults
            ),
        )

    @property
    def standin_caveat(self) -> str:
        """The sentence a summary of this method on a stand-in table carries
        (:data:`~bolt_pco64.bo.prior.STANDIN_CAVEAT`)."""
        from bolt_pco64.bo.prior import STANDIN_CAVEAT

        return STANDIN_CAVEAT

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.prior import PRIORS, propose_prior_ei

        state: PriorState = _run_state(self, ctx, _prior_state())
        available = ctx.available
        idx = propose_prior_ei(
            ctx.X,
            ctx.y,
            ctx.margin,
            ctx.bounds,
            ctx.problem.instance,
            ctx.candidates[available],
            ctx.q,
            ctx.step_seed,
            kind=self.kind,
            state=state,
            defaults=PRIORS[self.quality],
            X_pending=ctx.X_pending,
        )
        ctx.fit_seconds += state.fit_seconds
        return available[idx]


@dataclass(frozen=True)
class Builtin:
    """A built-in method and what the command line says of it.

    Attributes:
        method: The method.
        help: Its line in ``bench --help``.
        default: Whether the default comparison runs it
            (:data:`~bolt_pco64.bench.config.DEFAULTS`' ``methods``).
        quick: Whether ``--quick`` runs it
            (:data:`~bolt_pco64.bench.config.QUICK`'s ``methods``).
    """

    method: Method
    help: str
    default: bool = False
    quick: bool = False


#: The built-in methods by name, in report order: the one list of them.
BUILTINS: Mapping[str, Builtin] = MappingProxyType(
    {
        "random": Builtin(
            RandomMethod(),
            "uniform over the untried configurations",
            default=True,
            quick=True,
        ),
        "qlognei": Builtin(
            ConstrainedMethod("qlognei"),
            "constrained qLogNEI over the untried configurations",
            default=True,
            quick=True,
        ),
        "qlogei": Builtin(
            ConstrainedMethod("qlogei"),
            "constrained qLogEI over the untried configurations",
            default=True,
        ),
        "ts": Builtin(
            ConstrainedMethod("ts"),
            "constrained Thompson sampling over the untried configurations",
            default=True,
            quick=True,
        ),
        "naive": Builtin(
            NaiveMethod(),
            "qLogNEI that records an OOM as the worst feasible value",
            default=True,
        ),
        "qlognei-box": Builtin(
            BoxMethod("box"),
            "qlognei optimised over the continuous box, snapped to rows",
        ),
        "qlognei-mixed": Builtin(
            BoxMethod("mixed"),
            "qlognei optimised over the integer lattice, snapped to rows",
        ),
        "gpc_ei": Builtin(
            CrashAwareMethod("gpc_ei"),
            "LogEI x P(feasible) of a GP classifier of ran_successfully",
            default=True,
        ),
        "tobit_ei": Builtin(
            CrashAwareMethod("tobit_ei"),
            "LogEI x P(margin <= 0) of a GP of the memory margin, crashes as "
            "censored observations",
            default=True,
        ),
        "gpc_pof": Builtin(
            CrashAwareMethod("gpc_pof"),
            "LogEI where the classifier's P(feasible) reaches a threshold",
            default=True,
        ),
        "eipu": Builtin(
            CostAwareMethod("eipu"),
            "qlognei per unit of expected cost (crash risk counted); use with "
            "--budget-hours",
        ),
        "ei_cool": Builtin(
            CostAwareMethod("ei_cool"),
            "eipu with the cost's exponent cooling from 1 to 0 as the budget is "
            "spent (Lee et al. 2020)",
        ),
        "prior_ei": Builtin(
            PriorMethod("both"),
            "qlognei on GPs with performance-model prior means (throughput, "
            f"memory margin), from {PRIOR_N_INIT} initial rows",
        ),
        "prior_ei_tp": Builtin(
            PriorMethod("throughput"),
            "prior_ei with the throughput prior only (ablation)",
        ),
        "prior_ei_bad": Builtin(
            PriorMethod("both", quality="bad"),
            "prior_ei with a deliberately misspecified prior (constants off by "
            "2x, twice the GPU memory)",
        ),
        "qlognei_init3": Builtin(
            ConstrainedMethod("qlognei", n_init=PRIOR_N_INIT),
            f"qlognei from {PRIOR_N_INIT} initial rows (the prior methods' control)",
        ),
    }
)
#: The built-in methods themselves, by name (:data:`BUILTINS`' methods).
BUILTIN_METHODS: Mapping[str, Method] = MappingProxyType(
    {name: b.method for name, b in BUILTINS.items()}
)

#: What moved to :mod:`bolt_pco64.bench.registry` (still importable from here).
_MOVED = (
    "METHODS",
    "check_methods",
    "check_reference",
    "get_method",
    "method_names",
    "register_method",
)


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        from bolt_pco64.bench import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
