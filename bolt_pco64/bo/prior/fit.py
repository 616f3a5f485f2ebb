"""GPs on the prior means, and the prior-informed constrained qLogNEI.

:func:`fit_prior_models` fits the two GPs of the constrained BO step of
:mod:`bolt_pco64.bo.gp` (objective on the feasible observations, constraint
on every memory margin), each with a prior mean of this package instead of a
constant: the throughput prior for the objective, the memory-margin prior for
the constraint (or, for the ablation, the constant mean of
:func:`~bolt_pco64.bo.gp.fit_gp`). The prior's parameters are fitted jointly
with the GP's hyperparameters by ``fit_gpytorch_mll`` (L-BFGS-B on the
marginal likelihood plus the log-normal priors of the parameters).
:func:`propose_prior_ei` then chooses among the untried candidates with the
same acquisition function as the harness's ``qlognei`` method
(:func:`~bolt_pco64.bo.gp.acquisition_function`): constrained qLogNEI, or
``qLogProbabilityOfFeasibility`` of the constraint GP while nothing feasible
has been observed (the cold start of a three-row initial design).

Everything else follows :func:`~bolt_pco64.bo.gp.fit_gp`: inputs normalised
with the problem's bounds, outcomes standardised (the prior mean is evaluated
on the standardised scale, see :mod:`bolt_pco64.bo.prior.base`), fits seeded
with ``manual_seed`` (global state restored), warm starts from the previous
step's hyperparameters and prior parameters.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Literal

import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
from botorch.utils.sampling import manual_seed
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior
from torch import Tensor

from bolt_pco64.bo.gp import (
    FIT_OPTIONS,
    MC_SAMPLES,
    ConstrainedModels,
    ProposalContext,
    acquisition_function,
    copy_parameters,
    fit_gp,
    safe_bounds,
    select_discrete,
)
from bolt_pco64.bo.prior.base import PRIOR_DEFAULTS, PhysicalMean, PriorDefaults
from bolt_pco64.bo.prior.memory import MemoryPriorMean
from bolt_pco64.bo.prior.throughput import ThroughputPriorMean
from bolt_pco64.instances import Instance

__all__ = [
    "PriorKind",
    "PriorState",
    "condition_prior_gp",
    "fit_prior_gp",
    "fit_prior_models",
    "propose_prior_ei",
]

#: Which GPs get a prior mean, ``"both"`` (throughput and memory margin) or
#: ``"throughput"`` (the ablation: the constraint GP keeps a constant mean).
PriorKind = Literal["both", "throughput"]


@dataclass
class PriorState:
    """Models kept between the steps of one BO loop (pass the same object).

    Attributes:
        models: The last fitted GPs (``None`` before the first step).
        steps: Proposals made with this state so far.
        fit_seconds: Wall time the last proposal spent fitting (a measurement
            only; nothing depends on it).
    """

    models: ConstrainedModels | None = None
    steps: int = 0
    fit_seconds: float = 0.0


def _scaled_kernel(d: int, min_outputscale: float) -> ScaleKernel:
    """BoTorch's default RBF kernel (dimension-scaled lengthscale prior) with
    a learnable output scale of at least ``min_outputscale``: the residuals
    from a prior mean, on the standardised scale, need not have unit variance
    (:attr:`~bolt_pco64.bo.prior.base.PriorDefaults.min_outputscale`)."""
    return ScaleKernel(
        get_covar_module_with_dim_scaled_prior(ard_num_dims=d),
        outputscale_prior=LogNormalPrior(0.0, 1.5),
        outputscale_constraint=GreaterThan(min_outputscale),
    )


def fit_prior_gp(
    X: Tensor,
    Y: Tensor,
    bounds: Tensor,
    mean: PhysicalMean,
    seed: int,
    warm_start: SingleTaskGP | None = None,
    min_outputscale: float = PRIOR_DEFAULTS.min_outputscale,
    optimize: bool = True,
) -> SingleTaskGP:
    """Fit a :class:`~botorch.models.SingleTaskGP` with a prior mean.

    Args:
        X: ``n x d``-dim tensor of encoded training inputs.
        Y: ``n``-dim tensor of finite training outcomes.
        bounds: ``2 x d``-dim tensor of the problem's bounds (the mean's
            decoder must use :func:`~bolt_pco64.bo.gp.safe_bounds` of them).
        mean: The prior mean (its parameters are fitted with the GP's).
        seed: Seed of the fit (see :func:`~bolt_pco64.bo.gp.fit_gp`).
        warm_start: A previous model of the same kind whose hyperparameters
            and prior parameters start the optimisation.
        min_outputscale: Lower bound of the kernel's output scale.
        optimize: ``False`` keeps ``warm_start``'s hyperparameters and prior
            parameters and only conditions on the data (as
            :func:`~bolt_pco64.bo.gp.fit_gp` does).

    Returns:
        The fitted model, in eval mode.

    Raises:
        ValueError: On mismatched shapes or non-finite outcomes, or
            ``optimize=False`` without ``warm_start``.
        botorch.exceptions.ModelFittingError: If every fitting attempt fails.
    """
    if X.dim() != 2 or Y.shape != X.shape[:1] or X.shape[0] == 0:
        raise ValueError(
            f"Expected X of shape n x d and Y of shape (n,) with n >= 1, got "
            f"{tuple(X.shape)} and {tuple(Y.shape)}."
        )
    if not torch.isfinite(Y).all():
        raise ValueError(f"Expected finite Y values, got {Y.tolist()}.")
    if not optimize and warm_start is None:
        raise ValueError("Expected a warm_start model with optimize=False, got None.")
    with manual_seed(int(seed)), warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(
            X,
            Y.unsqueeze(-1),
            mean_module=mean,
            covar_module=_scaled_kernel(X.shape[-1], min_outputscale),
            input_transform=Normalize(d=X.shape[-1], bounds=safe_bounds(bounds)),
            outcome_transform=Standardize(m=1),
        )
        transform = model.outcome_transform
        mean.standardize(transform.means, transform.stdvs)
        if warm_start is not None:
            copy_parameters(model, warm_start)
            # the prior's parameters by value: its initial values (the
            # raw parameters' reference) may differ from the previous step's
            before = warm_start.mean_module
            if isinstance(before, type(mean)) and before.names == mean.names:
                mean.set_theta(before.theta.detach())
        if optimize:
            mll = ExactMarginalLogLikelihood(model.likelihood, model)
            fit_gpytorch_mll(mll, optimizer_kwargs={"options": dict(FIT_OPTIONS)})
    model.eval()
    return model


def condition_prior_gp(
    model: SingleTaskGP,
    X: Tensor,
    y: Tensor,
    bounds: Tensor,
    instance: Instance,
    defaults: PriorDefaults = PRIOR_DEFAULTS,
) -> SingleTaskGP:
    """A throughput prior-mean GP (the objective of :func:`fit_prior_models`)
    conditioned on new data, its hyperparameters and prior parameters kept.

    What a BO loop recommends from after an evaluation its GP has not seen
    (:func:`~bolt_pco64.bo.crash.recommend`).

    Args:
        model: The fitted objective GP (``fit_prior_models(...).objective``).
        X: ``n x d``-dim tensor of the feasible evaluated configurations.
        y: ``n``-dim tensor of their finite throughput.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        instance: The instance the prior reads.
        defaults: The prior's initial values and widths (those of the fit).

    Returns:
        The conditioned model, in eval mode.
    """
    mean = ThroughputPriorMean.from_observations(
        instance, safe_bounds(bounds), X, y, defaults
    )
    return fit_prior_gp(
        X, y, bounds, mean, 0, model, defaults.min_outputscale, optimize=False
    )


def fit_prior_models(
    ctx: ProposalContext,
    instance: Instance,
    kind: PriorKind = "both",
    warm_start: ConstrainedModels | None = None,
    defaults: PriorDefaults = PRIOR_DEFAULTS,
) -> ConstrainedModels:
    """Fit the objective and constraint GPs on the prior means.

    Args:
        ctx: The step's observations (:class:`~bolt_pco64.bo.gp.ProposalContext`):
            ``X`` (encoded), ``y`` (NaN where the run OOMed), ``margin``
            (``<= 0`` iff feasible), ``bounds``, and the ``seed`` of the fits
            (the constraint GP's is ``seed + 1``).
        instance: The instance (cluster, model, input encoding) the priors read.
        kind: ``"both"`` or ``"throughput"`` (constant-mean constraint GP).
        warm_start: The previous step's models.
        defaults: The priors' initial values and widths.

    Returns:
        The :class:`~bolt_pco64.bo.gp.ConstrainedModels`; ``objective`` is
        ``None`` while no observation is feasible.

    Raises:
        ValueError: On an unknown ``kind`` or mismatched shapes.
    """
    X, y, bounds, seed = ctx.X, ctx.y, ctx.bounds, ctx.seed
    if ctx.margin is None:
        raise ValueError("Expected the observed `margin`, got None.")
    margin = ctx.margin
    if kind not in ("both", "throughput"):
        raise ValueError(f"Expected kind 'both' or 'throughput', got {kind!r}.")
    if X.dim() != 2 or y.shape != X.shape[:1] or margin.shape != y.shape:
        raise ValueError(
            f"Expected X of shape n x d with y and margin of shape (n,), got "
            f"{tuple(X.shape)}, {tuple(y.shape)} and {tuple(margin.shape)}."
        )
    norm = safe_bounds(bounds)
    feasible = ~torch.isnan(y)
    objective = None
    if feasible.any():
        mean = ThroughputPriorMean.from_observations(
            instance, norm, X[feasible], y[feasible], defaults
        )
        previous = warm_start.objective if warm_start is not None else None
        objective = fit_prior_gp(
            X[feasible],
            y[feasible],
            bounds,
            mean,
            seed,
            previous,
            defaults.min_outputscale,
        )
    previous_c = warm_start.constraint if warm_start is not None else None
    if kind == "both":
        pads = margin[~feasible]
        pad = float(pads.max()) if pads.numel() else None
        memory = MemoryPriorMean(instance, norm, pad, defaults)
        constraint = fit_prior_gp(
            X, margin, bounds, memory, seed + 1, previous_c, defaults.min_outputscale
        )
    else:
        constraint = fit_gp(X, margin, bounds, seed + 1, previous_c)
    return ConstrainedModels(objective=objective, constraint=constraint)


def propose_prior_ei(
    ctx: ProposalContext,
    instance: Instance,
    kind: PriorKind = "both",
    state: PriorState | None = None,
    mc_samples: int = MC_SAMPLES,
    defaults: PriorDefaults = PRIOR_DEFAULTS,
) -> Tensor:
    """Choose ``ctx.q`` of ``ctx.choices`` by constrained qLogNEI on prior-mean GPs.

    Usable in a user's own loop: pass the evaluations so far, the untried
    configurations and a :class:`PriorState` kept across the loop's steps
    (warm starts; ``state.models.objective`` is the GP to recommend from).
    Before the first feasible observation the choice maximises
    ``qLogProbabilityOfFeasibility`` of the constraint GP.

    Args:
        ctx: The step (:class:`~bolt_pco64.bo.gp.ProposalContext`): ``X``
            (encoded), ``y`` (NaN where the run OOMed), ``margin``, ``bounds``,
            the untried ``choices``, ``q``, the ``seed`` of the fits, the
            quasi-MC sampler and the baseline pruning, and ``X_pending``
            (configurations in flight; the batch is valued jointly with them).
        instance: The instance the priors read (``problem.instance``).
        kind: ``"both"`` (``prior_ei``) or ``"throughput"`` (``prior_ei_tp``).
        state: Models kept between the steps (updated in place).
        mc_samples: Quasi-MC samples of the acquisition function.
        defaults: The priors' initial values and widths.

    Returns:
        ``q``-dim long tensor of distinct indices into ``ctx.choices`` (ties go
        to the earliest choice).
    """
    t0 = time.perf_counter()
    previous = state.models if state is not None else None
    models = fit_prior_models(ctx, instance, kind, previous, defaults)
    if state is not None:
        state.models = models
        state.steps += 1
        state.fit_seconds = time.perf_counter() - t0
    acqf = acquisition_function(
        "qlognei", models, ctx.X, ctx.y, ctx.seed, mc_samples, X_pending=ctx.X_pending
    )
    return select_discrete(acqf, ctx.need_choices(), ctx.q, seed=ctx.seed)
