"""Crash models: the probability that a configuration runs (does not run out of memory).

On pco64 an out-of-memory run returns no throughput, and its memory margin
(``peak_mem_normalised``) is only a fixed positive pad: the run tells us that
the configuration does not fit, not by how much. The exact constraint GP of
:mod:`bolt_pco64.bo.gp` regresses that pad as if it were a measurement, which
makes it a weak classifier (see ``docs/results/README.md``). The models here
treat the crash as what it is:

- :func:`fit_feasibility_classifier`: a GP *classifier* of ``ran_successfully``
  (Dirichlet-based GP classification, an exact-GP classifier);
- :func:`fit_censored_margin`: a GP of the memory margin with a *censored*
  (Tobit) likelihood (:class:`CensoredGaussianLikelihood`): feasible runs are
  observed margins, a crash is only the event "margin > 0" (Tobin 1958; for
  GPs, Groot & Lucas 2012, "Gaussian process regression with censored data
  using expectation propagation"). It uses how close each feasible run came
  to the memory limit, which the classifier ignores, without inventing a value
  for the crashes.

:func:`log_prob_feasible` turns either model into ``log P(feasible)``. The
proposals built on them, and the loop state that keeps them between steps, are
in :mod:`bolt_pco64.bo.crash`; :data:`CRASH_DEFAULTS` holds the settings of
both modules (one place).

Warm starts: between hyperparameter refits the classifier (an exact GP) keeps
its hyperparameters and is only conditioned on the new data, and the censored
margin model (a variational GP) re-optimises only its variational parameters,
from the previous step's values.

Randomness: fitting runs inside :func:`botorch.utils.sampling.manual_seed`
(global state restored; see :mod:`bolt_pco64.bo.gp`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import torch
from botorch.exceptions.warnings import (
    InputDataWarning,
    OptimizationWarning,
    UserInputWarning,
)
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP, SingleTaskVariationalGP
from botorch.models.transforms.input import Normalize
from botorch.optim.fit import fit_gpytorch_mll_scipy
from botorch.optim.utils import get_parameters
from botorch.utils.probability.utils import log_ndtr
from botorch.utils.sampling import manual_seed
from gpytorch.constraints import GreaterThan
from gpytorch.distributions import MultivariateNormal
from gpytorch.likelihoods.likelihood import _OneDimensionalLikelihood
from gpytorch.likelihoods.noise_models import HomoskedasticNoise
from gpytorch.mlls import VariationalELBO
from gpytorch.priors import LogNormalPrior
from torch import Tensor

from bolt_pco64.bo.elbo import elbo_closure
from bolt_pco64.bo.gp import FIT_OPTIONS, fit_gp, safe_bounds
from bolt_pco64.params import OPEN_UNIT, check_param, check_shape

__all__ = [
    "CRASH_DEFAULTS",
    "CensoredGaussianLikelihood",
    "CensoredMarginGP",
    "CrashDefaults",
    "CrashModel",
    "FeasibilityClassifier",
    "dirichlet_targets",
    "fit_censored_margin",
    "fit_feasibility_classifier",
    "log_prob_feasible",
]


@dataclass(frozen=True)
class CrashDefaults:
    """The defaults of the crash-aware methods (one place).

    Attributes:
        refit_every: Re-optimise the hyperparameters at every ``refit_every``-th
            step of a loop (the first step always); in between only condition
            on the new data (see :mod:`bolt_pco64.bo.crash`).
        fit_maxiter: L-BFGS-B iterations of a full (hyperparameter) fit of a
            variational model; ``ftol`` is :data:`~bolt_pco64.bo.gp.FIT_OPTIONS`'s.
        update_maxiter: L-BFGS-B iterations of a variational-parameters-only
            update between refits.
        pof_threshold: ``1 - delta`` of
            :func:`~bolt_pco64.bo.crash.propose_pof_threshold`.
        alpha_epsilon: Pseudo-count of the Dirichlet classifier
            (:func:`dirichlet_targets`; GPyTorch's default).
        noise_prior: ``(loc, scale)`` of the log-normal prior on the censored
            likelihood's noise variance (BoTorch's default for exact GPs).
        noise_floor: Lower bound of that noise variance.
    """

    refit_every: int = 5
    fit_maxiter: int = 50
    update_maxiter: int = 10
    pof_threshold: float = 0.8
    alpha_epsilon: float = 0.01
    noise_prior: tuple[float, float] = (-4.0, 1.0)
    noise_floor: float = 1e-4


#: The defaults used when no other value is passed.
CRASH_DEFAULTS = CrashDefaults()


class FeasibilityClassifier(SingleTaskGP):
    """The Dirichlet GP classifier of ``ran_successfully``
    (:func:`fit_feasibility_classifier`): an exact two-output GP whose outputs
    are the latent functions of the classes crashed and ran."""


class CensoredMarginGP(SingleTaskVariationalGP):
    """The GP of the memory margin with crashes as censored observations
    (:func:`fit_censored_margin`; likelihood :class:`CensoredGaussianLikelihood`)."""


#: A crash model, the classifier (exact) or the censored margin GP (variational).
CrashModel = FeasibilityClassifier | CensoredMarginGP


# --------------------------------------------------------------------------
# The censored margin likelihood
# --------------------------------------------------------------------------


class CensoredGaussianLikelihood(_OneDimensionalLikelihood):
    """Gaussian likelihood with right-censoring at ``threshold`` (Tobit).

    An observation ``y`` is either a measured margin, ``y ~ N(f, noise)``, or,
    where it is ``+inf``, censored: only ``y > threshold`` is known, with
    likelihood ``Phi((f - threshold) / sqrt(noise))``. The expected log
    likelihood under a Gaussian ``q(f)`` is closed-form for measured values
    and a Gauss-Hermite quadrature for censored ones.

    Args:
        threshold: The censoring point (0 for the memory margin).
        noise_prior: ``(loc, scale)`` of a log-normal prior on the noise variance.
        noise_floor: Lower bound of the noise variance.
    """

    def __init__(
        self,
        threshold: float = 0.0,
        noise_prior: tuple[float, float] = CRASH_DEFAULTS.noise_prior,
        noise_floor: float = CRASH_DEFAULTS.noise_floor,
    ) -> None:
        super().__init__()
        self.threshold = float(threshold)
        self.noise_covar = HomoskedasticNoise(
            noise_prior=LogNormalPrior(*noise_prior),
            noise_constraint=GreaterThan(noise_floor),
        )

    @property
    def noise(self) -> Tensor:
        """``1``-dim tensor: the noise variance."""
        return self.noise_covar.noise

    def forward(self, function_samples: Tensor, *args: Any, **kwargs: Any) -> Any:
        """The distribution of an *uncensored* observation given ``f``."""
        return torch.distributions.Normal(function_samples, self.noise.sqrt())

    def expected_log_prob(
        self,
        observations: Tensor,
        function_dist: MultivariateNormal,
        *args: Any,
        **kwargs: Any,
    ) -> Tensor:
        """``E_q[log p(y | f)]`` per observation (``+inf`` = censored)."""
        noise = self.noise
        censored = torch.isposinf(observations)
        y = torch.where(censored, torch.zeros_like(observations), observations)
        mean, var = function_dist.mean, function_dist.variance
        measured = -0.5 * (
            math.log(2 * math.pi) + noise.log() + ((y - mean) ** 2 + var) / noise
        )
        sd = noise.sqrt()
        tail = self.quadrature(
            lambda f: log_ndtr((f - self.threshold) / sd), function_dist
        )
        return torch.where(censored, tail, measured)


# --------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------


def _check_data(X: Tensor, y: Tensor, bounds: Tensor) -> None:
    check_shape("X", X, ("n", "d"))
    if X.shape[0] == 0:
        raise ValueError(
            f"Expected at least one observation in X, got {tuple(X.shape)}."
        )
    check_shape("y", y, (X.shape[0],))
    check_shape("bounds", bounds, (2, X.shape[-1]))
    if torch.isinf(y).any():
        raise ValueError(f"Expected finite or NaN (crash) y values, got {y.tolist()}.")


@contextmanager
def _quiet(seed: int) -> Iterator[None]:
    with manual_seed(int(seed)), warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        warnings.simplefilter("ignore", OptimizationWarning)
        # An input transform with fixed bounds is safe with full-batch fits.
        warnings.simplefilter("ignore", UserInputWarning)
        yield


def _fit_variational(
    X: Tensor,
    targets: Tensor,
    bounds: Tensor,
    likelihood: Any,
    seed: int,
    warm_start: SingleTaskVariationalGP | None,
    optimize_hyperparameters: bool,
    defaults: CrashDefaults,
) -> CensoredMarginGP:
    """A variational GP (a :class:`CensoredMarginGP`) with the training points as (fixed) inducing points.

    With ``n <= 100`` or so observations the inducing points can be the
    observations themselves, so the only approximation is the Gaussian
    ``q(u)``. Warm start: hyperparameters are copied; the (whitened)
    variational parameters are copied for the previous observations and set to
    the prior (mean 0, unit covariance) for the new ones, which is exact under
    whitening because appending points does not change the leading block of
    the Cholesky factor of the kernel matrix.
    """
    if not optimize_hyperparameters and warm_start is None:
        raise ValueError(
            "Expected a warm_start model when not optimising hyperparameters, got None."
        )
    if warm_start is not None and not isinstance(warm_start, SingleTaskVariationalGP):
        raise ValueError(
            "Expected a SingleTaskVariationalGP warm_start, "
            f"got {type(warm_start).__name__}."
        )
    transform = Normalize(d=X.shape[-1], bounds=safe_bounds(bounds))
    with _quiet(seed):
        inducing = transform(X).detach().clone()
        model = CensoredMarginGP(
            X,
            targets.unsqueeze(-1),
            likelihood=likelihood,
            learn_inducing_points=False,
            inducing_points=inducing,
            input_transform=transform,
        )
        if warm_start is not None:
            _warm(model, warm_start, inducing)
        frozen = []
        if not optimize_hyperparameters:
            for name, p in model.named_parameters():
                if "variational_strategy" not in name and p.requires_grad:
                    p.requires_grad_(False)
                    frozen.append(p)
        maxiter = (
            defaults.fit_maxiter
            if optimize_hyperparameters
            else defaults.update_maxiter
        )
        options = {"ftol": FIT_OPTIONS["ftol"], "maxiter": maxiter}
        mll = VariationalELBO(model.likelihood, model.model, num_data=X.shape[0])
        closure = elbo_closure(mll, get_parameters(mll, requires_grad=True))
        try:
            fit_gpytorch_mll(
                mll,
                closure=closure,
                optimizer=fit_gpytorch_mll_scipy,
                optimizer_kwargs={"options": options},
            )
        finally:
            for p in frozen:
                p.requires_grad_(True)
    model.eval()
    return model


_VARIATIONAL = "model.variational_strategy._variational_distribution."


def _warm(
    model: SingleTaskVariationalGP, previous: SingleTaskVariationalGP, inducing: Tensor
) -> None:
    old = dict(previous.named_parameters())
    old_z = previous.model.variational_strategy.inducing_points
    k = old_z.shape[0]
    prefix = k <= inducing.shape[0] and torch.equal(old_z, inducing[:k])
    strategy = model.model.variational_strategy
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name not in old:
                continue
            if name == _VARIATIONAL + "variational_mean":
                if prefix:
                    p.zero_()
                    p[:k] = old[name]
            elif name == _VARIATIONAL + "chol_variational_covar":
                if prefix:
                    p.copy_(torch.eye(p.shape[-1], dtype=p.dtype))
                    p[:k, :k] = old[name]
            elif old[name].shape == p.shape:
                p.copy_(old[name])
        if prefix:
            strategy.variational_params_initialized.fill_(1)


def dirichlet_targets(
    feasible: Tensor, alpha_epsilon: float = CRASH_DEFAULTS.alpha_epsilon
) -> tuple[Tensor, Tensor]:
    """Regression targets and noise variances of Dirichlet GP classification.

    Milios et al. (2018), section 4: class ``c`` of a point gets the
    pseudo-count ``alpha_c = alpha_epsilon + [label == c]``; its log-normal
    approximation gives the noise variance ``s2_c = log(1 / alpha_c + 1)`` and
    the target ``log(alpha_c) - s2_c / 2`` (the same transform as GPyTorch's
    ``DirichletClassificationLikelihood``, written out because that class
    infers the number of classes from the labels and so breaks while every
    run so far crashed, or every run succeeded).

    Args:
        feasible: ``n``-dim bool tensor (class 1 = ran, class 0 = crashed).
        alpha_epsilon: The pseudo-count of the other class, in ``(0, 1)``.

    Returns:
        ``(Y, Yvar)``: two ``n x 2``-dim tensors (columns: crashed, ran).
    """
    check_param("alpha_epsilon", alpha_epsilon, OPEN_UNIT)
    onehot = torch.stack([~feasible, feasible], dim=-1).to(torch.double)
    alpha = onehot + alpha_epsilon
    s2 = torch.log1p(alpha.reciprocal())
    return alpha.log() - 0.5 * s2, s2


def fit_feasibility_classifier(
    X: Tensor,
    feasible: Tensor,
    bounds: Tensor,
    seed: int,
    warm_start: SingleTaskGP | None = None,
    optimize_hyperparameters: bool = True,
    defaults: CrashDefaults = CRASH_DEFAULTS,
) -> FeasibilityClassifier:
    """Fit a Dirichlet-based GP classifier of ``ran_successfully``.

    Dirichlet GP classification (Milios, Camoriano, Michiardi, Rosasco &
    Filippone 2018, "Dirichlet-based Gaussian processes for large-scale
    calibrated classification", NeurIPS) turns the labels into a
    heteroskedastic regression (:func:`dirichlet_targets`) of one latent GP per
    class, so the classifier is an exact GP: a :class:`FeasibilityClassifier`
    (a :class:`~botorch.models.SingleTaskGP`) with two outputs and fixed noise
    (:func:`~bolt_pco64.bo.gp.fit_gp`). Between hyperparameter refits the new
    label is absorbed exactly by conditioning; a variational GP with a
    Bernoulli likelihood would re-optimise its variational parameters at
    every step (measured costs: ``docs/architecture.md`` §8).
    :func:`log_prob_feasible` turns the two latent GPs into ``P(feasible)``.

    Args:
        X: ``n x d``-dim tensor of the evaluated configurations.
        feasible: ``n``-dim bool tensor, ``True`` where the run succeeded.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        seed: Seed of the fit (see :func:`~bolt_pco64.bo.gp.fit_gp`).
        warm_start: The previous step's classifier.
        optimize_hyperparameters: ``False`` keeps ``warm_start``'s
            hyperparameters and only conditions on the data.
        defaults: ``alpha_epsilon`` of the label transform.

    Returns:
        The fitted two-output model (outputs: crashed, ran), in eval mode.
    """
    if feasible.dtype != torch.bool or feasible.shape != X.shape[:1]:
        raise ValueError(
            f"Expected a bool feasible tensor of shape ({X.shape[0]},), "
            f"got {feasible.dtype} {tuple(feasible.shape)}."
        )
    Y, Yvar = dirichlet_targets(feasible, defaults.alpha_epsilon)
    model = fit_gp(
        X,
        Y.to(X),
        bounds,
        seed,
        warm_start,
        optimize=optimize_hyperparameters,
        Yvar=Yvar.to(X),
        model_class=FeasibilityClassifier,
    )
    return cast(FeasibilityClassifier, model)


def fit_censored_margin(
    X: Tensor,
    margin: Tensor,
    feasible: Tensor,
    bounds: Tensor,
    seed: int,
    warm_start: SingleTaskVariationalGP | None = None,
    optimize_hyperparameters: bool = True,
    defaults: CrashDefaults = CRASH_DEFAULTS,
) -> CensoredMarginGP:
    """Fit a GP of the memory margin with crashes as censored observations.

    Feasible runs contribute their margin (``< 0``); a crashed run contributes
    only ``margin > 0`` (:class:`CensoredGaussianLikelihood` at threshold 0),
    whatever value its margin column holds (on pco64 a fixed pad). Margins
    are divided by the root mean square of the feasible margins (a positive
    scale keeps the threshold at 0), so the model sees values of order one.

    Why censoring, not a classifier or a regression of the pad: a crash is a
    right-censored memory measurement (the job stopped when memory ran out),
    so the Tobit likelihood is the model of how the data arose; regressing the
    pad invents a value, and a classifier discards how far below the limit
    each feasible run stayed.

    Args:
        X: ``n x d``-dim tensor of the evaluated configurations.
        margin: ``n``-dim tensor of memory margins (only feasible ones are read).
        feasible: ``n``-dim bool tensor, ``True`` where the run succeeded.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        seed, warm_start, optimize_hyperparameters, defaults: As in
            :func:`fit_feasibility_classifier`.

    Returns:
        The fitted :class:`CensoredMarginGP` (in eval mode) of the scaled margin.
    """
    _check_data(X, margin, bounds)
    if feasible.dtype != torch.bool or feasible.shape != margin.shape:
        raise ValueError(
            f"Expected a bool feasible tensor of shape {tuple(margin.shape)}, "
            f"got {feasible.dtype} {tuple(feasible.shape)}."
        )
    observed = margin[feasible]
    if not torch.isfinite(observed).all():
        raise ValueError(
            f"Expected finite margins where feasible, got {observed.tolist()}."
        )
    scale = observed.pow(2).mean().sqrt() if observed.numel() else margin.new_ones(())
    if not scale > 0:
        scale = margin.new_ones(())
    targets = torch.where(feasible, margin / scale, torch.full_like(margin, math.inf))
    likelihood = CensoredGaussianLikelihood(
        threshold=0.0,
        noise_prior=defaults.noise_prior,
        noise_floor=defaults.noise_floor,
    )
    return _fit_variational(
        X,
        targets,
        bounds,
        likelihood,
        seed,
        warm_start,
        optimize_hyperparameters,
        defaults,
    )


def log_prob_feasible(model: CrashModel, X: Tensor) -> Tensor:
    """Log probability of feasibility at ``X`` under a crash model.

    - Classifier (:func:`fit_feasibility_classifier`): with ``d = f_ran -
      f_crashed`` of mean ``mu`` and variance ``v`` (the two latent GPs are
      independent), ``P = E[sigmoid(d)]``, approximated by
      ``sigmoid(mu / sqrt(1 + pi v / 8))`` (MacKay 1992, "The evidence
      framework applied to classification networks").
    - Censored margin model (:func:`fit_censored_margin`):
      ``Phi(-mean / sqrt(var + noise))``, the predictive probability that the
      margin is ``<= 0``.

    Args:
        model: A model from either function.
        X: ``m x d``-dim tensor of configurations.

    Returns:
        ``m``-dim tensor of log probabilities.
    """
    if not isinstance(model, FeasibilityClassifier | CensoredMarginGP):
        raise ValueError(
            "Expected a model from fit_feasibility_classifier or fit_censored_margin, "
            f"got {type(model).__name__}."
        )
    with torch.no_grad():
        post = model.posterior(X)
        mean, var = post.mean, post.variance.clamp_min(0.0)
        if isinstance(model, CensoredMarginGP):
            mean, var = mean.reshape(-1), var.reshape(-1)
            return log_ndtr(-mean / (var + model.likelihood.noise).sqrt())
        d = mean[..., 1] - mean[..., 0]
        v = var[..., 1] + var[..., 0]
        return torch.nn.functional.logsigmoid(d / (1.0 + math.pi * v / 8.0).sqrt())
