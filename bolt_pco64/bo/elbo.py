"""The variational ELBO of a whitened GP with its inducing points at the data, in plain torch.

:func:`~bolt_pco64.bo.feasibility.fit_censored_margin` fits a
:class:`~botorch.models.SingleTaskVariationalGP` whose inducing points are its
training inputs by maximising GPyTorch's
:class:`~gpytorch.mlls.VariationalELBO` with BoTorch's SciPy L-BFGS-B
(:func:`botorch.fit.fit_gpytorch_mll`). GPyTorch evaluates that ELBO through
its lazy linear operators and variational strategy, whose bookkeeping (shape
checks, lazily evaluated kernels, operator trees and their custom backward
passes) costs far more than the arithmetic at ``n <= 100``.
:func:`elbo_closure` computes the same objective with dense tensors:

- ``K = k(Z, Z)`` from the model's own ``forward`` (mean and kernel modules,
  evaluated once: the data are the inducing points, so ``K_ZZ = K_ZX =
  K_XX``), ``L = chol(K + jitter I)`` by the same ``psd_safe_cholesky``;
- ``A = L^-1 K``, the marginals of ``q(f)``: mean ``mu + A^T m``, variance
  ``diag(K) + jitter + diag(A^T (S - I) A)`` with ``S = L_s L_s^T``
  (whitened ``q(u) = N(m, S)``, ``L_s`` the lower triangle of the
  variational Cholesky parameter), the jitters where
  :class:`~gpytorch.variational.VariationalStrategy` adds them; the last
  term as the column sums of ``(L_s^T A)^2 - A^2`` (one product, not three);
- the expected log likelihood from the model's likelihood
  (``expected_log_prob`` on a diagonal
  :class:`~gpytorch.distributions.MultivariateNormal`, so its quadrature and
  variance floor are the same code);
- ``KL(N(m, S) || N(0, I)) = (tr S + m^T m - log det S - n) / 2``;
- the log prior densities of the registered priors, as the ELBO adds them.

The closure is a :class:`~botorch.optim.closures.ForwardBackwardClosure` over
the parameters BoTorch's fit would optimise, so it is a drop-in ``closure``
for :func:`~botorch.fit.fit_gpytorch_mll` with the SciPy optimiser: same
parameters, bounds, options and warnings handling. The variational
distribution is initialised, if it was not, in the first call, as GPyTorch
does in its first forward pass (same random draw).
"""

from __future__ import annotations

import torch
from botorch.optim.closures import ForwardBackwardClosure
from gpytorch.distributions import MultivariateNormal
from gpytorch.mlls import VariationalELBO
from gpytorch.variational import CholeskyVariationalDistribution, VariationalStrategy
from linear_operator.operators import DiagLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

__all__ = ["elbo_closure", "whitened_elbo"]


def _check(mll: VariationalELBO) -> VariationalStrategy:
    model = mll.model
    strategy = getattr(model, "variational_strategy", None)
    if type(strategy) is not VariationalStrategy or not isinstance(
        strategy._variational_distribution, CholeskyVariationalDistribution
    ):
        raise ValueError(
            "Expected a model with a whitened VariationalStrategy over a "
            f"CholeskyVariationalDistribution, got {type(strategy).__name__}."
        )
    if mll.beta != 1.0 or mll.combine_terms is not True:
        raise ValueError(
            f"Expected beta 1 and combined terms, got {mll.beta}, {mll.combine_terms}."
        )
    (x,) = model.train_inputs
    z = strategy.inducing_points
    if x.dim() != 2 or not torch.equal(x, z):
        raise ValueError(
            "Expected the inducing points to be the (unbatched) training inputs, "
            f"got shapes {tuple(z.shape)} and {tuple(x.shape)}."
        )
    return strategy


def _initialise(strategy: VariationalStrategy) -> None:
    """Initialise ``q(u)`` as GPyTorch's first forward pass does (same draw)."""
    if not strategy.variational_params_initialized.item():
        prior = strategy.prior_distribution
        strategy._variational_distribution.initialize_variational_distribution(prior)
        strategy.variational_params_initialized.fill_(1)


def _prior_terms(
    mll: VariationalELBO, strategy: VariationalStrategy
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The terms that depend on the hyperparameters alone: the prior mean,
    ``A = L^-1 K``, ``diag(K) + jitter`` and the summed log prior densities."""
    model = mll.model
    (x,) = model.train_inputs
    jitter = strategy.jitter_val
    prior_f = model.forward(x)
    K = prior_f.lazy_covariance_matrix.to_dense()
    eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
    L = psd_safe_cholesky(K + jitter * eye)
    A = torch.linalg.solve_triangular(L, K, upper=False)
    log_prior = torch.zeros((), dtype=K.dtype, device=K.device)
    for _, module, prior, closure, _ in mll.named_priors():
        log_prior = log_prior + prior.log_prob(closure(module)).sum()
    return prior_f.mean, A, K.diagonal() + jitter, log_prior


def _elbo(
    mll: VariationalELBO,
    strategy: VariationalStrategy,
    terms: tuple[Tensor, Tensor, Tensor, Tensor],
) -> Tensor:
    mean, A, base_var, log_prior = terms
    n = A.shape[-1]
    dist = strategy._variational_distribution
    m = dist.variational_mean
    L_s = dist.chol_variational_covar.tril()
    f_mean = mean + (A.mT @ m.unsqueeze(-1)).squeeze(-1)
    # diag(A^T (S - I) A) = colsum((L_s^T A)^2) - colsum(A^2)
    f_var = base_var + ((L_s.mT @ A) ** 2 - A**2).sum(-2)
    q_f = MultivariateNormal(f_mean, DiagLinearOperator(f_var))
    ell = mll.likelihood.expected_log_prob(mll.model.train_targets, q_f).sum(-1)
    log_det_s = 2.0 * L_s.diagonal().abs().log().sum()
    kl = 0.5 * ((L_s**2).sum() + (m**2).sum() - log_det_s - n)
    return ell / n - kl / mll.num_data + log_prior / mll.num_data


def whitened_elbo(mll: VariationalELBO) -> Tensor:
    """The value of ``mll`` (GPyTorch's ELBO, priors included) at the model's
    training data, computed with dense tensors (see the module docstring).

    Args:
        mll: A :class:`~gpytorch.mlls.VariationalELBO` of a model (in train
            mode) with a whitened :class:`~gpytorch.variational.VariationalStrategy`,
            a :class:`~gpytorch.variational.CholeskyVariationalDistribution`
            and the training inputs as its inducing points.

    Returns:
        The ELBO (a scalar tensor, differentiable in the model's parameters).
    """
    strategy = _check(mll)
    _initialise(strategy)
    return _elbo(mll, strategy, _prior_terms(mll, strategy))


class _NegativeELBO:
    """``-whitened_elbo(mll)``; while no hyperparameter requires a gradient,
    the hyperparameter terms are computed once per hyperparameter values."""

    def __init__(self, mll: VariationalELBO) -> None:
        self.mll = mll
        self.strategy = _check(mll)
        own = {id(p) for p in self.strategy._variational_distribution.parameters()}
        self.hypers = [p for p in mll.parameters() if id(p) not in own]
        self.values: list[Tensor] | None = None
        self.terms: tuple[Tensor, Tensor, Tensor, Tensor] | None = None

    def _cached_terms(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        values = self.values
        if (
            self.terms is None
            or values is None
            or not all(
                torch.equal(v, p) for v, p in zip(values, self.hypers, strict=True)
            )
        ):
            with torch.no_grad():
                self.terms = _prior_terms(self.mll, self.strategy)
            self.values = [p.detach().clone() for p in self.hypers]
        return self.terms

    def __call__(self) -> Tensor:
        _initialise(self.strategy)
        if any(p.requires_grad for p in self.hypers):
            terms = _prior_terms(self.mll, self.strategy)
        else:
            terms = self._cached_terms()
        return -_elbo(self.mll, self.strategy, terms)


def elbo_closure(
    mll: VariationalELBO, parameters: dict[str, Tensor]
) -> ForwardBackwardClosure:
    """A forward-backward closure of the negative :func:`whitened_elbo`.

    While no hyperparameter (kernel, mean, likelihood) requires a gradient,
    as in a variational-parameters-only update, the terms that depend on them
    alone (kernel matrix, its Cholesky factor, ``L^-1 K``, the log priors)
    are computed once and kept until a hyperparameter's value changes.

    Args:
        mll: As in :func:`whitened_elbo`.
        parameters: The parameters whose gradients the closure returns (those
            the optimiser moves, e.g. BoTorch's ``get_parameters(mll,
            requires_grad=True)``).

    Returns:
        A closure for :func:`botorch.fit.fit_gpytorch_mll` (``closure=``).
    """
    return ForwardBackwardClosure(_NegativeELBO(mll), parameters)
