"""The exact GPs and constrained acquisition functions of the pco problems.

pco64 has a *crash* constraint: a configuration that runs out of memory
returns no throughput at all. The models here follow the usual BoTorch
treatment of such a problem:

- an **objective GP** (:class:`~botorch.models.SingleTaskGP`) fitted on the
  *feasible* observations only (an OOM run has no throughput to fit);
- a **constraint GP** fitted on the memory margin (``peak_mem_normalised``,
  ``<= 0`` iff feasible) of *every* observation, OOM runs included (their
  margin is the table's fixed positive pad);
- both with inputs normalised to the unit cube with the problem's bounds and
  standardised outcomes.

Candidates are chosen from a discrete set (the untried rows of
``PCO64.candidates()``) by

- constrained ``qLogNoisyExpectedImprovement`` / ``qLogExpectedImprovement``
  (:func:`propose_acquisition`) through ``optimize_acqf_discrete``;
- constrained Thompson sampling (:func:`propose_thompson`): one joint posterior
  sample of both GPs over all choices, the best objective sample among the
  choices whose margin sample is ``<= 0``;
- ``qLogProbabilityOfFeasibility`` of the constraint GP while there is no
  feasible observation yet (there is no incumbent then, and qLogNEI has nothing
  to improve on).

Randomness. Every function takes a ``seed`` or a :class:`torch.Generator`; no
function draws from torch's global random number generator, with one
documented exception: BoTorch's GP fitting falls back to re-sampling the
hyperparameters from their priors (global RNG) when an optimisation attempt
fails. :func:`fit_gp` therefore runs inside
:func:`botorch.utils.sampling.manual_seed`, which seeds the global generator
with the given seed and *restores its previous state* on exit. Callers that run
several fits at once in threads of one process share that global state; the
benchmark harness runs one fit per process (or per single-threaded Dask worker)
for that reason.

Ties (equal acquisition values) go to the earliest choice, i.e. the earliest
row in canonical table order.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Literal

import torch
from botorch.acquisition import (
    AcquisitionFunction,
    qLogExpectedImprovement,
    qLogNoisyExpectedImprovement,
)
from botorch.acquisition.logei import qLogProbabilityOfFeasibility
from botorch.acquisition.objective import GenericMCObjective
from botorch.exceptions.warnings import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.model import Model
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf_discrete
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.sampling import manual_seed
from gpytorch.mlls import ExactMarginalLogLikelihood
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from bolt_pco64.params import check_batch_size, check_shape

__all__ = [
    "FIT_OPTIONS",
    "MC_SAMPLES",
    "AcquisitionKind",
    "ConstrainedModels",
    "ProposalContext",
    "acquisition_function",
    "copy_parameters",
    "fit_constrained_models",
    "fit_gp",
    "propose_acquisition",
    "propose_thompson",
    "safe_bounds",
    "select_discrete",
]

#: An acquisition function of :func:`acquisition_function` and
#: :func:`propose_acquisition`, by name.
AcquisitionKind = Literal["qlognei", "qlogei", "pof"]

#: Default number of quasi-MC samples for the acquisition functions.
MC_SAMPLES = 128
#: L-BFGS-B options of the GP fits, ``ftol=1e-6`` instead of SciPy's 2.2e-9,
#: which walks irrelevant lengthscales towards infinity on this noise-free
#: table (``docs/architecture.md`` §8).
FIT_OPTIONS: dict[str, float] = {"ftol": 1e-6, "maxiter": 100}


@dataclass(frozen=True)
class ProposalContext:
    """What every proposal of one BO step reads: the data so far, what to choose
    among, how many, and the step's seed (one object passed along, not eight
    arguments).

    Attributes:
        X: ``n x d``-dim tensor of the evaluated configurations.
        y: ``n``-dim tensor of observed throughput, NaN where the run crashed.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        q: Number of picks (``1 <= q <= m`` for a discrete proposal).
        seed: Seed of the step: the fits, the quasi-MC sampler, the baseline
            pruning, the raw samples.
        choices: ``m x d``-dim tensor of the untried configurations (the
            discrete proposals), or ``None`` (the box proposals).
        X_pending: ``p x d``-dim tensor of configurations in flight (proposed,
            not observed yet), or ``None``.
        margin: ``n``-dim tensor of the observed memory margins, or ``None``
            (read by the proposals that model the margin).
    """

    X: Tensor
    y: Tensor
    bounds: Tensor
    q: int = 1
    seed: int = 0
    choices: Tensor | None = None
    X_pending: Tensor | None = None
    margin: Tensor | None = None

    @property
    def pending(self) -> Tensor | None:
        """:attr:`X_pending` where it holds a configuration, else ``None``."""
        if self.X_pending is None or self.X_pending.shape[0] == 0:
            return None
        return self.X_pending

    def need_choices(self) -> Tensor:
        """:attr:`choices`, checked: ``m x d`` with ``1 <= q <= m``.

        Raises:
            ValueError: If there are none, their shape is wrong, or ``q`` is
                not in ``[1, m]``.
        """
        if self.choices is None:
            raise ValueError("Expected `choices` for a discrete proposal, got None.")
        check_shape("choices", self.choices, ("m", self.X.shape[-1]))
        check_batch_size(self.q, self.choices.shape[0])
        return self.choices

    def need_margin(self) -> Tensor:
        """:attr:`margin`, checked: one per observation.

        Raises:
            ValueError: If there is none or its shape is not ``n``.
        """
        if self.margin is None:
            raise ValueError("Expected the observed `margin`, got None.")
        check_shape("margin", self.margin, (self.X.shape[0],))
        return self.margin


def safe_bounds(bounds: Tensor) -> Tensor:
    """Bounds for input normalisation, with zero-width dimensions widened by 1.

    Args:
        bounds: ``2 x d``-dim tensor of lower and upper bounds.

    Returns:
        A ``2 x d``-dim tensor; where ``upper == lower`` the upper bound is
        ``lower + 1`` (a constant column would otherwise divide by zero in
        :class:`~botorch.models.transforms.input.Normalize`).
    """
    check_shape("bounds", bounds, (2, "d"))
    out = bounds.clone()
    flat = out[1] <= out[0]
    out[1, flat] = out[0, flat] + 1
    return out


def _check_xy(X: Tensor, Y: Tensor, name: str, multi: bool = False) -> None:
    check_shape("X", X, ("n", "d"))
    if Y.shape[:1] != X.shape[:1] or Y.dim() not in ((1, 2) if multi else (1,)):
        shape = f"({X.shape[0]},)" + (f" or ({X.shape[0]}, k)" if multi else "")
        raise ValueError(
            f"Expected {name} of shape {shape} to match X, got {tuple(Y.shape)}."
        )
    if X.shape[0] == 0:
        raise ValueError(f"Expected at least one observation for {name}, got none.")
    if not torch.isfinite(Y).all():
        raise ValueError(f"Expected finite {name} values, got {Y.tolist()}.")


def copy_parameters(model: torch.nn.Module, warm_start: torch.nn.Module) -> None:
    """Copy ``warm_start``'s parameters of the same name and shape into ``model``
    (a warm start: the previous step's hyperparameters start the fit)."""
    previous = dict(warm_start.named_parameters())
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name in previous and previous[name].shape == param.shape:
                param.copy_(previous[name])


def fit_gp(
    X: Tensor,
    Y: Tensor,
    bounds: Tensor,
    seed: int,
    warm_start: SingleTaskGP | None = None,
    optimize: bool = True,
    Yvar: Tensor | None = None,
    model_class: type[SingleTaskGP] = SingleTaskGP,
) -> SingleTaskGP:
    """Fit a :class:`~botorch.models.SingleTaskGP` by maximum marginal likelihood.

    Inputs are normalised to the unit cube with ``bounds`` (not with the data's
    own range, so every model sees the same scale), the outcome is
    standardised. The fit runs inside ``botorch.utils.sampling.manual_seed(seed)``
    (see the module docstring): the result depends only on the data and the seed.

    Args:
        X: ``n x d``-dim tensor of training inputs.
        Y: ``n``-dim tensor of finite training outcomes, or ``n x k`` for
            ``k`` independent outputs (a batched model).
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        seed: Seed for BoTorch's fitting fallback (hyperparameter restarts).
        warm_start: A previously fitted model of the same kind whose
            hyperparameters (noise, constant mean, lengthscales) start the
            optimisation instead of BoTorch's defaults. In a BO loop the
            previous step's model makes each refit a few L-BFGS iterations
            instead of tens to hundreds; the result stays a deterministic
            function of the run's history.
        optimize: ``False`` keeps ``warm_start``'s hyperparameters and only
            conditions on the data.
        Yvar: Known observation noise variances (shape of ``Y``, positive),
            or ``None`` to infer a homoskedastic noise.
        model_class: The model's class: ``SingleTaskGP`` or a subclass that
            names what the model is (e.g.
            :class:`~bolt_pco64.bo.feasibility.FeasibilityClassifier`).

    Returns:
        The fitted model (in eval mode), one output per column of ``Y``.

    Raises:
        ValueError: On mismatched shapes or non-finite outcomes, or
            ``optimize=False`` without ``warm_start``.
        botorch.exceptions.ModelFittingError: If every fitting attempt fails.
    """
    _check_xy(X, Y, "Y", multi=True)
    if Yvar is not None and (Yvar.shape != Y.shape or not (Yvar > 0).all()):
        raise ValueError(
            f"Expected positive Yvar of shape {tuple(Y.shape)}, got {tuple(Yvar.shape)}."
        )
    if not optimize and warm_start is None:
        raise ValueError("Expected a warm_start model with optimize=False, got None.")
    # Building the model draws nothing: only a fit is seeded (and seeding costs
    # about a millisecond: torch records where it was called for CUDA's lazy init).
    seeded = manual_seed(int(seed)) if optimize else nullcontext()
    with seeded, warnings.catch_warnings():
        # A single observation or a constant outcome (all OOM) is legitimate.
        warnings.simplefilter("ignore", InputDataWarning)
        Y2 = Y.unsqueeze(-1) if Y.dim() == 1 else Y
        model = model_class(
            X,
            Y2,
            train_Yvar=None if Yvar is None else Yvar.reshape(Y2.shape),
            input_transform=Normalize(d=X.shape[-1], bounds=safe_bounds(bounds)),
            outcome_transform=Standardize(m=Y2.shape[-1]),
        )
        if warm_start is not None:
            copy_parameters(model, warm_start)
        if optimize:
            mll = ExactMarginalLogLikelihood(model.likelihood, model)
            options: dict[str, float | None] = dict(FIT_OPTIONS)
            if Y2.shape[-1] > 1:
                # BoTorch fits the outputs independently with a batched
                # L-BFGS-B that takes ``ftol`` only with ``factr=None``.
                options["factr"] = None
            fit_gpytorch_mll(mll, optimizer_kwargs={"options": options})
    model.eval()
    return model


@dataclass
class ConstrainedModels:
    """The two GPs of a constrained BO step.

    Attributes:
        objective: GP of the throughput, fitted on the feasible observations
            only; ``None`` while there is no feasible observation.
        constraint: GP of the memory margin (``<= 0`` iff feasible), fitted on
            every observation.
    """

    objective: SingleTaskGP | None
    constraint: SingleTaskGP

    def model_list(self) -> ModelListGP:
        """``ModelListGP(objective, constraint)``: output 0 throughput, 1 margin."""
        if self.objective is None:
            raise ValueError(
                "Expected an objective model, got None (no feasible observation yet)."
            )
        return ModelListGP(self.objective, self.constraint)


def fit_constrained_models(
    X: Tensor,
    y: Tensor,
    margin: Tensor,
    bounds: Tensor,
    seed: int,
    warm_start: ConstrainedModels | None = None,
    optimize: bool = True,
) -> ConstrainedModels:
    """Fit the objective GP (feasible observations) and the constraint GP (all).

    Args:
        X: ``n x d``-dim tensor of the evaluated configurations (encoded).
        y: ``n``-dim tensor of observed throughput, NaN where the run OOMed.
        margin: ``n``-dim tensor of the memory margins (``<= 0`` iff feasible).
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        seed: Seed for the fits (see :func:`fit_gp`).
        warm_start: The previous step's models, to start from their
            hyperparameters (see :func:`fit_gp`).
        optimize: ``False`` keeps ``warm_start``'s hyperparameters and only
            conditions on the data (see :func:`fit_gp`); a model that
            ``warm_start`` lacks (the first objective GP) is still fitted.

    Returns:
        The fitted :class:`ConstrainedModels`; ``objective`` is ``None`` when no
        observation is feasible.
    """
    _check_xy(X, margin, "margin")
    if y.shape != margin.shape:
        raise ValueError(
            f"Expected y of shape {tuple(margin.shape)} like margin, got {tuple(y.shape)}."
        )
    feasible = ~torch.isnan(y)
    objective = None
    if feasible.any():
        previous = warm_start.objective if warm_start is not None else None
        objective = fit_gp(
            X[feasible],
            y[feasible],
            bounds,
            seed,
            previous,
            optimize=optimize or previous is None,
        )
    previous_c = warm_start.constraint if warm_start is not None else None
    constraint = fit_gp(
        X, margin, bounds, seed + 1, previous_c, optimize=optimize or previous_c is None
    )
    return ConstrainedModels(objective=objective, constraint=constraint)


def _throughput(Z: Tensor, X: Tensor | None = None) -> Tensor:
    return Z[..., 0]


def _margin(Z: Tensor) -> Tensor:
    return Z[..., 1]


def _only_output(Z: Tensor) -> Tensor:
    return Z[..., 0]


def acquisition_function(
    kind: AcquisitionKind,
    models: ConstrainedModels,
    X_observed: Tensor,
    y: Tensor,
    seed: int,
    mc_samples: int = MC_SAMPLES,
    X_pending: Tensor | None = None,
    model: Model | None = None,
) -> AcquisitionFunction:
    """Build a constrained acquisition function.

    Args:
        kind: ``"qlognei"`` (constrained qLogNEI, ``X_baseline`` = every
            observation), ``"qlogei"`` (constrained qLogEI, ``best_f`` = the
            best feasible observation) or ``"pof"``
            (``qLogProbabilityOfFeasibility`` of the constraint GP alone).
            ``"qlognei"``/``"qlogei"`` fall back to ``"pof"`` while
            ``models.objective`` is ``None``.
        models: The fitted :class:`ConstrainedModels`.
        X_observed: ``n x d``-dim tensor of the evaluated configurations.
        y: ``n``-dim tensor of observed throughput, NaN on OOM.
        seed: Seed of the quasi-MC sampler.
        mc_samples: Number of quasi-MC samples.
        X_pending: ``p x d``-dim tensor of configurations in flight (proposed,
            not observed yet), or ``None``: the batch is valued jointly with them.
        model: The model of (throughput, margin) for ``"qlognei"`` and
            ``"qlogei"`` in place of ``models.model_list()`` (the same GPs
            served otherwise, e.g. a :class:`~bolt_pco64.bo.factors.FactorModel`),
            or ``None``.

    Returns:
        The acquisition function (maximise it). The constraint is passed as
        ``constraints=[margin]`` (BoTorch: satisfied where ``<= 0``).

    Notes:
        qLogNEI prunes its baseline (BoTorch's default, ``prune_baseline=True``)
        to the points with a chance of being the best feasible one; the
        pruning draws its samples from torch's global RNG, so it runs inside
        ``botorch.utils.sampling.manual_seed(seed)`` (global state restored).
    """
    if kind not in ("qlognei", "qlogei", "pof"):
        raise ValueError(f"Expected kind 'qlognei', 'qlogei' or 'pof', got {kind!r}.")
    sampler = SobolQMCNormalSampler(sample_shape=torch.Size([mc_samples]), seed=seed)
    if kind == "pof" or models.objective is None:
        return qLogProbabilityOfFeasibility(
            model=models.constraint,
            constraints=[_only_output],
            sampler=sampler,
            X_pending=X_pending,
        )
    model = models.model_list() if model is None else model
    objective = GenericMCObjective(_throughput)
    if kind == "qlognei":
        with manual_seed(int(seed)):
            return qLogNoisyExpectedImprovement(
                model=model,
                X_baseline=X_observed,
                sampler=sampler,
                objective=objective,
                constraints=[_margin],
                X_pending=X_pending,
                prune_baseline=True,
            )
    best_f = y[~torch.isnan(y)].max()
    return qLogExpectedImprovement(
        model=model,
        best_f=best_f,
        sampler=sampler,
        objective=objective,
        constraints=[_margin],
        X_pending=X_pending,
    )


def select_discrete(
    acqf: AcquisitionFunction, choices: Tensor, q: int, seed: int | None = None
) -> Tensor:
    """Pick ``q`` distinct choices by ``optimize_acqf_discrete`` (sequential greedy).

    Args:
        acqf: The acquisition function.
        choices: ``m x d``-dim tensor of the allowed configurations.
        q: Number of choices to pick, ``1 <= q <= m``.
        seed: For ``q > 1`` the greedy steps call ``acqf.set_X_pending``, and
            qLogNEI re-prunes its baseline there from torch's global RNG; with
            a seed this runs inside ``botorch.utils.sampling.manual_seed(seed)``
            (global state restored), so the picks depend only on the seed.

    Returns:
        ``q``-dim long tensor of indices into ``choices`` (ties go to the
        earliest choice).
    """
    check_batch_size(q, choices.shape[0])
    with torch.no_grad(), manual_seed(seed):
        picked, _ = optimize_acqf_discrete(
            acq_function=acqf, q=q, choices=choices, unique=True
        )
    match = (picked.unsqueeze(-2) == choices.unsqueeze(0)).all(dim=-1)
    return match.to(torch.uint8).argmax(dim=-1)


def propose_acquisition(
    kind: AcquisitionKind,
    models: ConstrainedModels,
    ctx: ProposalContext,
    mc_samples: int = MC_SAMPLES,
    model: Model | None = None,
) -> Tensor:
    """Choose ``ctx.q`` of ``ctx.choices`` by a constrained acquisition function.

    See :func:`acquisition_function` for ``kind`` and ``model``; ``ctx`` gives
    the observations, the choices, the seed and the configurations in flight.

    Returns:
        ``q``-dim long tensor of indices into ``ctx.choices``.
    """
    choices = ctx.need_choices()
    acqf = acquisition_function(
        kind, models, ctx.X, ctx.y, ctx.seed, mc_samples, ctx.X_pending, model
    )
    return select_discrete(acqf, choices, ctx.q, seed=ctx.seed)


def _joint_sample(model: SingleTaskGP, X: Tensor, z: Tensor) -> Tensor:
    """``n_samples x m`` joint posterior samples of ``model`` at ``X`` (``m x d``)."""
    with torch.no_grad():
        mvn = model.posterior(X).distribution
        mean = mvn.mean.reshape(-1)
        cov = mvn.covariance_matrix.reshape(mean.shape[0], mean.shape[0])
        L = psd_safe_cholesky(cov)
    return mean + z @ L.transpose(-1, -2)


def propose_thompson(
    models: ConstrainedModels,
    choices: Tensor,
    q: int,
    generator: torch.Generator,
) -> Tensor:
    """Constrained Thompson sampling over a discrete set.

    For each of the ``q`` picks, one joint posterior sample of the objective GP
    and one of the constraint GP are drawn over all ``choices``; the pick is
    the choice with the highest objective sample among those whose margin
    sample is ``<= 0`` (or, if none is, the one with the lowest margin sample).
    Choices already picked in this batch are excluded. Without an objective
    model (no feasible observation yet) the pick is the lowest margin sample.

    Args:
        models: The fitted :class:`ConstrainedModels`.
        choices: ``m x d``-dim tensor of the untried configurations.
        q: Number of picks, ``1 <= q <= m``.
        generator: Source of the standard normal draws (nothing else is random).

    Returns:
        ``q``-dim long tensor of indices into ``choices``.
    """
    m = choices.shape[0]
    check_batch_size(q, m)
    dev = choices.device
    z_con = torch.randn(q, m, generator=generator, dtype=choices.dtype).to(dev)
    z_obj = torch.randn(q, m, generator=generator, dtype=choices.dtype).to(dev)
    con = _joint_sample(models.constraint, choices, z_con)
    obj = (
        _joint_sample(models.objective, choices, z_obj)
        if models.objective is not None
        else None
    )
    taken = torch.zeros(m, dtype=torch.bool, device=dev)
    picks = []
    for i in range(q):
        ok = (con[i] <= 0) & ~taken
        if obj is not None and ok.any():
            score = torch.where(ok, obj[i], torch.full_like(obj[i], -torch.inf))
        else:
            score = torch.where(taken, torch.full_like(con[i], -torch.inf), -con[i])
        j = int(torch.argmax(score))
        taken[j] = True
        picks.append(j)
    return torch.tensor(picks, dtype=torch.long, device=dev)
