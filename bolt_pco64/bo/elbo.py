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
  variational Cholesky parameter), each term as
  :class:`~gpytorch.variational.VariationalStrategy` forms it;
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
    model = mll.model
    if not strategy.variational_params_initialized.item():
        prior = strategy.prior_distribution
        strategy._variational_distribution.initialize_variational_distribution(prior)
        strategy.variational_params_initialized.fill_(1)
    (x,) = model.train_inputs
    n = x.shape[-2]
    jitter = strategy.jitter_val
    prior_f = model.forward(x)
    mean = prior_f.mean
    K = prior_f.lazy_covariance_matrix.to_dense()
    eye = torch.eye(n, dtype=K.dtype, device=K.device)
    L = psd_safe_cholesky(K + jitter * eye)
    A = torch.linalg.solve_triangular(L, K, upper=False)
    dist = strategy._variational_distribution
    m = dist.variational_mean
    L_s = dist.chol_variational_covar.tril()
    S = L_s @ L_s.mT
    f_mean = mean + (A.mT @ m.unsqueeze(-1)).squeeze(-1)
    f_var = K.diagonal() + jitter + (A * ((S - eye) @ A)).sum(-2)
    q_f = MultivariateNormal(f_mean, DiagLinearOperator(f_var))
    ell = mll.likelihood.expected_log_prob(model.train_targets, q_f).sum(-1)
    log_det_s = 2.0 * L_s.diagonal().abs().log().sum()
    kl = 0.5 * ((L_s**2).sum() + (m**2).sum() - log_det_s - n)
    log_prior = torch.zeros_like(ell)
    for _, module, prior, closure, _ in mll.named_priors():
        log_prior = log_prior + prior.log_prob(closure(module)).sum()
    return ell / n - kl / mll.num_data + log_prior / mll.num_data


def elbo_closure(
    mll: VariationalELBO, parameters: dict[str, Tensor]
) -> ForwardBackwardClosure:
    """A forward-backward closure of the negative :func:`whitened_elbo`.

    Args:
        mll: As in :func:`whitened_elbo`.
        parameters: The parameters whose gradients the closure returns (those
            the optimiser moves, e.g. BoTorch's ``get_parameters(mll,
            requires_grad=True)``).

    Returns:
        A closure for :func:`botorch.fit.fit_gpytorch_mll` (``closure=``).
    """
    _check(mll)
    return ForwardBackwardClosure(lambda: -whitened_elbo(mll), parameters)

