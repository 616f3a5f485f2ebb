"""Fitted GPs served from their training Cholesky, factored once (a lane's fast path).

A lane (:mod:`bolt_pco64.bench.lanes`) proposes for many seeds a step, each
from its own fitted ``SingleTaskGP`` s. BoTorch's qLogNEI asks its model
for posteriors several times a step (pruning the baseline, caching its
root, one joint posterior per candidate), and each GPyTorch posterior
rebuilds the model's caches and lazy operators. Here each GP is factored
once (:class:`CachedGP`) and:

- :class:`FactorModel` is a BoTorch model whose ``posterior`` is the GPs'
  exact posterior (dense, from the cached factors): BoTorch's own
  acquisition code (pruning, base samples, objective, constraints,
  reductions) runs on it unchanged;
- :func:`q1_values` evaluates a qLogNEI built on it at every candidate
  (``q = 1``, no pending points) from the cross-covariances of all
  candidates with the pruned baseline at once, with BoTorch's low-rank
  sampling formula (``sample_cached_cholesky``) and base samples;
- :func:`best_by_posterior_mean` is :func:`~bolt_pco64.bo.crash.recommend`
  for a GP re-conditioned on new data with its hyperparameters kept.

The values are BoTorch's up to rounding (``tests/test_lanes.py`` compares
them with BoTorch's qLogNEI on the fitted ``SingleTaskGP`` s). Nothing here
draws from a random generator except through BoTorch's samplers, whose seeds
the caller fixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.gpytorch import GPyTorchModel
from botorch.models.transforms.input import Normalize
from botorch.posteriors.gpytorch import GPyTorchPosterior
from botorch.utils.low_rank import _reshape_base_samples
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.kernels import RBFKernel
from linear_operator.operators import DenseLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

__all__ = ["CachedGP", "FactorModel", "best_by_posterior_mean", "q1_values"]

#: Standardize's floor on an outcome's standard deviation (BoTorch's ``min_stdv``).
_MIN_STDV = 1e-8


class CachedGP:
    """A fitted single-output ``SingleTaskGP`` (eval mode) from its training
    Cholesky, factored once.

    Args:
        model: The GP (inputs normalised by its input transform, outcome
            standardised by its ``Standardize``).
        X: ``n x d``-dim tensor of (raw) inputs to condition on instead of
            the model's own, with its hyperparameters kept (as
            :func:`~bolt_pco64.bo.gp.fit_gp` with ``optimize=False`` does),
            or ``None``.
        Y: ``n``-dim tensor of outcomes at ``X`` (standardised anew, as
            ``Standardize`` does on new training data).
    """

    def __init__(
        self, model: SingleTaskGP, X: Tensor | None = None, Y: Tensor | None = None
    ) -> None:
        with torch.no_grad():
            self.model = model
            tf_in = getattr(model, "input_transform", None)
            self._affine = (
                (tf_in.offset, tf_in.coefficient)
                if type(tf_in) is Normalize and getattr(tf_in, "indices", None) is None
                else None
            )
            if X is None or Y is None:
                self.Xt = model.train_inputs[0]
                r = model.train_targets
                tf = model.outcome_transform
                self.mu = tf.means.reshape(())
                self.sd = tf.stdvs.reshape(())
            else:
                self.Xt = self.transform(X)
                self.mu = Y.mean()
                sd = Y.std() if Y.numel() > 1 else torch.ones_like(self.mu)
                self.sd = torch.where(sd >= _MIN_STDV, sd, torch.ones_like(sd))
                r = (Y - self.mu) / self.sd
            cm = model.covar_module
            plain = type(cm) is RBFKernel and cm.active_dims is None
            self._rbf = cm.lengthscale.detach() if plain else None
            noise = model.likelihood.noise.reshape(-1)[:1]
            #: The noiseless kernel matrix of the training inputs.
            self.Kxx = self.kernel(self.Xt, self.Xt)
            K = self.Kxx + torch.diag_embed(noise.expand(self.Xt.shape[:-1]))
            self.L = psd_safe_cholesky(K)
            self.constant = model.mean_module.constant.reshape(())
            self.alpha = torch.cholesky_solve(
                (r - self.constant).unsqueeze(-1), self.L
            ).squeeze(-1)

    def transform(self, X: Tensor) -> Tensor:
        """``... x k x d``-dim raw inputs, normalised as the model's inputs
        (``Normalize``'s affine map, without its per-call shape checks)."""
        if self._affine is None:
            return self.model.transform_inputs(X)
        offset, coefficient = self._affine
        return (X - offset) / coefficient

    def kernel(self, A: Tensor, B: Tensor) -> Tensor:
        """The dense kernel matrix of normalised ``... x a x d``-dim ``A`` and
        ``... x b x d``-dim ``B``: an RBF kernel's in torch (GPyTorch's lazy
        kernel evaluation costs about 1 ms a call at these sizes), any
        other kernel by the model's own ``covar_module``."""
        if self._rbf is None:
            return self.model.covar_module(A, B).to_dense()
        a, b = A / self._rbf, B / self._rbf
        return _squared_distances(a, b).mul(-0.5).exp()

    def kernel_diag(self, Z: Tensor) -> Tensor:
        """``... x k``-dim prior variances at normalised ``Z``."""
        if self._rbf is None:
            return self.model.covar_module(Z, Z, diag=True)
        return torch.ones(Z.shape[:-1], dtype=Z.dtype)

    def cross(self, Z: Tensor) -> tuple[Tensor, Tensor]:
        """``k(X, Z)`` and ``L^-1 k(X, Z)`` (``... x n x k``-dim) for
        ``... x k x d``-dim normalised ``Z``."""
        Kxz = self.kernel(self.Xt, Z)
        return Kxz, torch.linalg.solve_triangular(self.L, Kxz, upper=False)

    def mean(self, Kxz: Tensor) -> Tensor:
        """``... x k``-dim posterior mean (outcome scale) from ``k(X, Z)``."""
        m = self.constant + (Kxz * self.alpha.unsqueeze(-1)).sum(-2)
        return m * self.sd + self.mu

    def mvn(self, X: Tensor) -> MultivariateNormal:
        """The posterior (outcome scale, no observation noise) at raw
        ``... x k x d``-dim ``X``."""
        Z = self.transform(X)
        Kxz, V = self.cross(Z)
        cov = (self.kernel(Z, Z) - V.transpose(-1, -2) @ V) * self.sd**2
        # A linear operator, as GPyTorch's own posteriors give: a dense
        # tensor would be Cholesky-factored at once, without jitter.
        return MultivariateNormal(self.mean(Kxz), DenseLinearOperator(cov))


#: Elements of the ``rows x b x d`` differences :func:`_squared_distances`
#: holds at once (2 MiB of doubles): small enough to stay in cache and off
#: ``mmap`` (a 780 x 780 x 8 tensor, 39 MB, was paged in afresh per call).
_DISTANCE_BLOCK = 1 << 18


def _squared_distances(a: Tensor, b: Tensor) -> Tensor:
    """``((a_i - b_j) ** 2).sum(-1)`` for ``... x a x d``-dim ``a`` and
    ``... x b x d``-dim ``b``, in blocks of ``a``'s rows when both are
    matrices: each block runs the same elementwise ops and the same
    reduction of each row's ``d`` contiguous elements as the whole, so its
    values are the whole's, bit for bit (``tests/test_lanes.py``)."""
    rows = max(1, _DISTANCE_BLOCK // max(1, b.shape[-2] * b.shape[-1]))
    if a.dim() != 2 or b.dim() != 2 or a.shape[0] <= rows:
        return (a.unsqueeze(-2) - b.unsqueeze(-3)).pow(2).sum(-1)
    out = a.new_empty(a.shape[0], b.shape[0])
    bb = b.unsqueeze(-3)
    for start in range(0, a.shape[0], rows):
        block = a[start : start + rows].unsqueeze(-2)
        torch.sum((block - bb).pow(2), dim=-1, out=out[start : start + rows])
    return out


class FactorModel(GPyTorchModel):
    """The posterior of one GP or of independent GPs (a model list's outputs,
    in order) from :class:`CachedGP` s; a BoTorch model that acquisition
    functions take as they take the GPs themselves (a ``GPyTorchModel``:
    its posterior is a GPyTorch distribution, so qLogNEI caches its root).

    Args:
        gps: One :class:`CachedGP` per output.
    """

    def __init__(self, gps: Sequence[CachedGP]) -> None:
        super().__init__()
        if not gps:
            raise ValueError("Expected at least one CachedGP, got none.")
        self.gps = list(gps)

    @property
    def num_outputs(self) -> int:
        return len(self.gps)

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size()

    def posterior(  # type: ignore[override]
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: Any = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        """The exact joint posterior at ``batch_shape x q x d``-dim ``X``."""
        if output_indices is not None or observation_noise is not False:
            raise ValueError(
                "Expected no output_indices and no observation noise, got "
                f"output_indices={output_indices!r}, "
                f"observation_noise={observation_noise!r}."
            )
        if posterior_transform is not None:
            raise ValueError(
                f"Expected no posterior_transform, got {posterior_transform!r}."
            )
        mvns = [gp.mvn(X) for gp in self.gps]
        if len(mvns) == 1:
            return GPyTorchPosterior(mvns[0])
        return GPyTorchPosterior(
            MultitaskMultivariateNormal.from_independent_mvns(mvns)
        )


def factor_model(model: SingleTaskGP | ModelListGP) -> FactorModel:
    """The :class:`FactorModel` of a fitted ``SingleTaskGP`` or a
    ``ModelListGP`` of them."""
    gps = list(model.models) if isinstance(model, ModelListGP) else [model]
    return FactorModel([CachedGP(gp) for gp in gps])


def q1_values(acqf: qLogNoisyExpectedImprovement, choices: Tensor) -> Tensor:
    """``acqf`` at each of ``choices`` (``q = 1``) from cached factors.

    ``acqf`` is a BoTorch ``qLogNoisyExpectedImprovement`` with its cached
    root (its default) on a :class:`FactorModel`, without pending points.
    BoTorch computes the joint posterior of the baseline and each candidate;
    here the cross-covariances of all candidates with the baseline come from
    each GP's training Cholesky at once, and BoTorch's own code turns them
    into its samples (same base samples, same low-rank formula) and its value.

    Args:
        acqf: The acquisition function.
        choices: ``m x d``-dim tensor of candidates.

    Returns:
        ``m``-dim tensor of acquisition values (BoTorch's up to rounding).

    Raises:
        ValueError: If ``acqf`` is not such a qLogNEI, or the samples are not
            finite.
    """
    model = acqf.model
    if (
        not isinstance(acqf, qLogNoisyExpectedImprovement)
        or not acqf._cache_root
        or not isinstance(model, FactorModel)
    ):
        raise ValueError(
            "Expected a qLogNoisyExpectedImprovement with a cached root on a "
            f"FactorModel, got {type(acqf).__name__} on {type(model).__name__}."
        )
    if acqf.X_pending is not None:
        raise ValueError("Expected no pending points for q = 1 values, got some.")
    with torch.no_grad():
        # The base samples for (baseline, 1 point), as BoTorch's evaluation at
        # one point sets them (its first step, without the rest of it).
        Xb = acqf.X_baseline
        post1 = model.posterior(torch.cat([Xb, choices[:1]], dim=-2).unsqueeze(0))
        acqf._set_sampler(q_in=1, posterior=post1)
        base = _reshape_base_samples(
            acqf.sampler.base_samples, acqf.sampler.sample_shape, post1
        )
        res = _candidate_samples(
            model, acqf._baseline_L, Xb, choices, base, post1.distribution.loc.dim()
        )
        if not torch.isfinite(res).all():
            raise ValueError(
                "Expected finite samples from the cached factors, got NaN/inf."
            )
        X = choices.unsqueeze(-2)

        def samples_and_objectives(_: Tensor) -> tuple[Tensor, Tensor]:
            return res, acqf.objective(res, X=X)

        acqf._get_samples_and_objectives = samples_and_objectives  # type: ignore[method-assign]
        try:
            return acqf(X)
        finally:
            del acqf._get_samples_and_objectives


def _candidate_samples(
    model: FactorModel,
    baseline_L: Tensor,
    Xb: Tensor,
    choices: Tensor,
    base: Tensor,
    loc_dim: int,
) -> Tensor:
    """BoTorch's ``sample_cached_cholesky`` for every candidate at once: the
    ``sample_shape x m x 1 x o`` samples of each of the ``m x d``-dim
    ``choices`` jointly with the baseline ``Xb`` (its root ``baseline_L``),
    from the cross-covariances of all candidates with the baseline."""
    bl_rows, br_rows, means = [], [], []
    for gp in model.gps:
        zc, zb = gp.transform(choices), gp.transform(Xb)
        Kc, Vc = gp.cross(zc)  # n x m
        _, Vb = gp.cross(zb)  # n x nb
        scale = gp.sd**2
        bl_rows.append((gp.kernel(zc, zb) - Vc.transpose(-1, -2) @ Vb) * scale)
        br_rows.append((gp.kernel_diag(zc) - Vc.pow(2).sum(0)) * scale)
        means.append(gp.mean(Kc))
    bl = torch.stack(bl_rows, dim=-3).transpose(0, 1)  # m x o x nb
    br = torch.stack(br_rows, dim=-1)  # m x o
    mean = torch.stack(means, dim=-1)  # m x o
    mt = model.num_outputs > 1
    if not mt:
        baseline_L = baseline_L.unsqueeze(0)  # o x nb x nb
    sol = torch.linalg.solve_triangular(baseline_L, bl.permute(1, 2, 0), upper=False)
    bl_chol = sol.permute(2, 0, 1).unsqueeze(-2)  # m x o x 1 x nb
    br_to_chol = br[..., None, None] - bl_chol @ bl_chol.transpose(-1, -2)
    br_chol = psd_safe_cholesky(br_to_chol, max_tries=6)
    new_Lq = torch.cat([bl_chol, br_chol], dim=-1)  # m x o x 1 x (nb+1)
    if not mt:
        new_Lq = new_Lq.squeeze(1).unsqueeze(-3)
    return (
        new_Lq.matmul(base)
        .add(mean.unsqueeze(-2).transpose(-1, -2).unsqueeze(-1))
        .permute(-1, *range(loc_dim - 1), -2, -3)
        .contiguous()
    )


def best_by_posterior_mean(model: SingleTaskGP, X: Tensor, y: Tensor) -> int | None:
    """:func:`~bolt_pco64.bo.crash.recommend` of ``model`` re-conditioned on
    the feasible observations (hyperparameters kept): the index into ``X``
    of the feasible evaluation of highest posterior mean, ties to the
    earliest; ``None`` when none is feasible.

    Args:
        model: A fitted objective GP.
        X: ``n x d``-dim tensor of the evaluated configurations.
        y: ``n``-dim tensor of throughput, NaN where the run crashed.
    """
    feasible = ~torch.isnan(y)
    if not bool(feasible.any()):
        return None
    idx = torch.nonzero(feasible).squeeze(-1)
    with torch.no_grad():
        gp = CachedGP(model, X[idx], y[idx])
        values = gp.mean(gp.Kxx)
    return int(idx[int(torch.argmax(values))])
