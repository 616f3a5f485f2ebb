"""Batched GP fits: the GPs of a lane of seeds by maximum likelihood, together.

A *lane* (:mod:`bolt_pco64.bench.lanes`) runs one method's seeds in lock-step,
so at every step it fits one GP per seed on training sets of the same kind.
This module does that work as batched computations while keeping each
seed's model what :func:`~bolt_pco64.bo.gp.fit_gp` defines:

- :func:`fit_gps`: the GPs of several seeds by maximum marginal likelihood,
  as one batched :class:`~botorch.models.SingleTaskGP` per group of training
  sets of equal shape (no padding: at a given step of a sequential run every
  seed of a lane has as many observations, and the objective GPs are grouped
  by their number of feasible ones). The loss of the batch is the sum of the
  seeds' losses (the batched model's exact marginal log likelihood, priors
  included, per batch element: block-separable), minimised by BoTorch's
  batched port of SciPy's L-BFGS-B (:func:`botorch.optim.batched_lbfgs_b.fmin_l_bfgs_b_batched`),
  which keeps one optimizer state per seed: each seed stops on its own
  criterion, with :data:`~bolt_pco64.bo.gp.FIT_OPTIONS`. A seed whose
  optimisation fails (non-finite loss, abnormal termination) refits alone
  with :func:`~bolt_pco64.bo.gp.fit_gp` (BoTorch's fitting with its
  fallbacks), never its lane-mates. Each seed then gets its own model, built
  by :func:`~bolt_pco64.bo.gp.fit_gp` with the fitted hyperparameters and
  ``optimize=False``.

The acquisition values of a lane's seeds come from each GP's training
Cholesky (:mod:`bolt_pco64.bo.factors`).

Determinism: no function draws from a random generator. Per-seed results
do not depend on the other seeds of a batch as long as the batched linear
algebra treats each batch element alike (measured by
``benchmarks/lanes.py``; see ``docs/results/lanes/README.md``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.models import SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim.batched_lbfgs_b import fmin_l_bfgs_b_batched
from botorch.optim.utils import get_parameters_and_bounds
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from bolt_pco64.bo.gp import FIT_OPTIONS, fit_gp, safe_bounds

__all__ = ["FitReport", "GPFit", "fit_gps"]


@dataclass
class GPFit:
    """One seed's GP to fit (the arguments of :func:`~bolt_pco64.bo.gp.fit_gp`).

    Attributes:
        X: ``n x d``-dim tensor of training inputs.
        Y: ``n``-dim (or ``n x m``-dim) tensor of finite outcomes.
        seed: The seed of :func:`~bolt_pco64.bo.gp.fit_gp` (its fallback).
        warm_start: The seed's previous model, or ``None``.
        optimize: ``False`` only conditions ``warm_start`` on the data.
        Yvar: Known noise variances (shape of ``Y``), or ``None``.
        model_class: A subclass of ``SingleTaskGP`` naming the model, or
            ``None`` for ``SingleTaskGP`` itself.
        pad_to: Pad its matrices to at least this size in a batch
            (:attr:`padded`).
    """

    X: Tensor
    Y: Tensor
    seed: int
    warm_start: SingleTaskGP | None = None
    optimize: bool = True
    Yvar: Tensor | None = None
    model_class: type[SingleTaskGP] | None = None
    pad_to: int = 0

    @property
    def padded(self) -> int:
        """The size its matrices are padded to in a batch, ``max(n, pad_to)``
        rounded up to a multiple of 8. Fits of equal padded size share a
        batch; a lane pads every GP of a step to the step's number of
        observations, which its seeds share."""
        return -(-max(self.X.shape[0], self.pad_to) // 8) * 8


@dataclass
class FitReport:
    """What one :func:`fit_gps` call did.

    Attributes:
        batched: Indices of the fits optimised in a batch.
        fallback: Indices of the fits that failed in their batch and were
            refitted alone (:func:`~bolt_pco64.bo.gp.fit_gp`).
        alone: Indices fitted alone from the start (a group of one, or
            ``optimize=False``).
        groups: Sizes of the batches.
        evaluations: Batched loss evaluations, all groups together.
    """

    batched: list[int] = field(default_factory=list)
    fallback: list[int] = field(default_factory=list)
    alone: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    evaluations: int = 0


class _Hyperparameters:
    """Named parameters a :func:`~bolt_pco64.bo.gp.fit_gp` warm start reads."""

    def __init__(self, params: dict[str, Tensor]) -> None:
        self.params = params

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]:
        return iter(self.params.items())


def _as_2d(Y: Tensor) -> Tensor:
    return Y.unsqueeze(-1) if Y.dim() == 1 else Y


def _group_key(f: GPFit) -> tuple[Any, ...]:
    return (
        f.padded,
        f.X.shape[-1],
        _as_2d(f.Y).shape[-1],
        f.Yvar is None,
        f.X.dtype,
    )


def fit_gps(
    fits: Sequence[GPFit], bounds: Tensor, min_batch: int = 1
) -> tuple[list[SingleTaskGP], FitReport]:
    """Fit each of ``fits`` as :func:`~bolt_pco64.bo.gp.fit_gp` would, batched.

    Fits with ``optimize=True`` and training sets of the same shape are
    optimised together (see the module docstring); a group smaller than
    ``min_batch``, a fit with ``optimize=False`` and a fit that fails in its
    batch go through :func:`~bolt_pco64.bo.gp.fit_gp` alone.

    Args:
        fits: The seeds' fits.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        min_batch: The smallest group fitted as a batch.

    Returns:
        The models (in the order of ``fits``, eval mode) and a :class:`FitReport`.
    """
    report = FitReport()
    models: list[SingleTaskGP | None] = [None] * len(fits)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, f in enumerate(fits):
        if f.optimize or f.warm_start is None:
            groups.setdefault(_group_key(f), []).append(i)
        else:
            models[i] = _alone(f, bounds)
            report.alone.append(i)
    for idx in groups.values():
        if len(idx) < min_batch:
            for i in idx:
                models[i] = _alone(fits[i], bounds)
                report.alone.append(i)
            continue
        fitted, failed, n_eval = _fit_group([fits[i] for i in idx], bounds)
        report.groups.append(len(idx))
        report.evaluations += n_eval
        for k, i in enumerate(idx):
            if k in failed:
                models[i] = _alone(fits[i], bounds)
                report.fallback.append(i)
            else:
                models[i] = fitted[k]
                report.batched.append(i)
    return [m for m in models if m is not None], report


def _alone(f: GPFit, bounds: Tensor) -> SingleTaskGP:
    return fit_gp(
        f.X,
        f.Y,
        bounds,
        f.seed,
        f.warm_start,
        optimize=f.optimize or f.warm_start is None,
        Yvar=f.Yvar,
        model_class=f.model_class or SingleTaskGP,
    )


def _batched_model(fits: Sequence[GPFit], bounds: Tensor) -> SingleTaskGP:
    """One ``SingleTaskGP`` of batch shape ``B`` whose element ``b`` is the
    model :func:`~bolt_pco64.bo.gp.fit_gp` builds for ``fits[b]`` (its warm
    start's hyperparameters copied in)."""
    B = len(fits)
    X = torch.stack([f.X for f in fits])
    Y = torch.stack([_as_2d(f.Y) for f in fits])
    Yvar = None if fits[0].Yvar is None else torch.stack([_as_2d(f.Yvar) for f in fits])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(
            X,
            Y,
            train_Yvar=Yvar,
            input_transform=Normalize(d=X.shape[-1], bounds=safe_bounds(bounds)),
            outcome_transform=Standardize(m=Y.shape[-1], batch_shape=torch.Size([B])),
        )
    with torch.no_grad():
        for b, f in enumerate(fits):
            if f.warm_start is None:
                continue
            previous = dict(f.warm_start.named_parameters())
            for name, param in model.named_parameters():
                if name in previous and previous[name].shape == param.shape[1:]:
                    param[b].copy_(previous[name])
    return model


#: More than the elements ATen's vectorised loops can leave to their scalar tail.
_VECTOR_TAIL = 64
_NOISE = "likelihood.noise_covar.raw_noise"
_MEAN = "mean_module.raw_constant"
_LENGTHSCALE = "covar_module.raw_lengthscale"


class _BatchedLoss:
    """The negative exact marginal log likelihood (priors included, divided by
    ``n``, summed over outputs) of each element of a batched ``SingleTaskGP``,
    written out in torch so that a call evaluates only the seeds still being
    optimised and every seed's value and gradient use its own slice alone.

    It is the loss BoTorch's ``fit_gpytorch_mll`` minimises for each seed's
    model (``tests/test_lanes.py`` compares the two); the parameters are
    the model's raw ones (constraints without a transform: bounds), columns
    ``[constant, lengthscales, noise]`` per seed.

    Raises:
        ValueError: If the model has parameters other than a constant mean,
            ARD lengthscales and (optionally) a homoskedastic noise.
    """

    def __init__(self, models: Sequence[SingleTaskGP], n_pad: int) -> None:
        model = models[0]
        params, pbounds = get_parameters_and_bounds(model, requires_grad=True)
        if set(params) - {_NOISE, _MEAN, _LENGTHSCALE} or _LENGTHSCALE not in params:
            raise ValueError(
                "Expected a SingleTaskGP with a constant mean, an RBF kernel and "
                f"an optional homoskedastic noise, got parameters {sorted(params)}."
            )
        self.names = [n for n in (_MEAN, _LENGTHSCALE, _NOISE) if n in params]
        self.shapes = [params[n].shape[1:] for n in self.names]
        self.sizes = [int(params[n][0].numel()) for n in self.names]
        self.bounds = [
            (lo, hi)
            for n, s in zip(self.names, self.sizes, strict=True)
            for lo, hi in [pbounds.get(n, (None, None))] * s
        ]
        self.n_pad = n_pad
        x0, Xs, Ys, noises, ns = [], [], [], [], []
        with torch.no_grad():
            for mod in models:
                ps = dict(mod.named_parameters())
                B, n = mod.train_inputs[0].shape[:2]
                x0.append(
                    np.concatenate(
                        [ps[k].detach().reshape(B, -1).numpy() for k in self.names],
                        axis=1,
                    )
                )
                p = n_pad - n
                X = mod.transform_inputs(mod.train_inputs[0]).detach()
                Xs.append(torch.nn.functional.pad(X, (0, 0, 0, p)))
                Ys.append(torch.nn.functional.pad(mod.train_targets.detach(), (0, p)))
                if _NOISE not in params:
                    noise = mod.likelihood.noise.detach()
                    noises.append(torch.nn.functional.pad(noise, (0, p), value=1.0))
                ns.append(torch.full((B,), n, dtype=torch.long))
        self.x0 = np.concatenate(x0)
        self.X = torch.cat(Xs)  # B x n_pad x d
        self.Y = torch.cat(Ys)  # B x [m] x n_pad
        self.fixed_noise = torch.cat(noises) if noises else None
        self.n = torch.cat(ns)  # B: each seed's own n
        # Masked squared differences, fixed during a fit: B x N x N x d.
        real = (torch.arange(n_pad) < self.n.unsqueeze(-1)).to(self.X.dtype)
        self.real = real
        self.pair = real.unsqueeze(-1) * real.unsqueeze(-2)
        D = (self.X.unsqueeze(-2) - self.X.unsqueeze(-3)).pow(2)
        # B x d x N x N: one contiguous matrix per input dimension.
        self.D = (D * self.pair.unsqueeze(-1)).permute(0, 3, 1, 2).contiguous()
        self.ls_prior = model.covar_module.lengthscale_prior
        self.noise_prior = (
            model.likelihood.noise_covar.noise_prior if _NOISE in params else None
        )
        #: The seeds' rows of the last call (:meth:`_rows`).
        self._picked: tuple[tuple[int, ...], dict[str, Tensor]] | None = None
        smallest = min(int(self.n.min()) ** 2, *(s for s in self.sizes))
        #: Padding seeds per evaluation (see __call__).
        self.pad = max(2, -(-_VECTOR_TAIL // max(smallest, 1)))
        self.evaluations = 0

    def reorder(self, order: np.ndarray) -> None:
        """Put the seeds in ``order`` (an index array)."""
        idx = torch.as_tensor(order, dtype=torch.long)
        self.x0 = self.x0[order]
        self.X, self.Y, self.n = self.X[idx], self.Y[idx], self.n[idx]
        self.real, self.pair, self.D = self.real[idx], self.pair[idx], self.D[idx]
        if self.fixed_noise is not None:
            self.fixed_noise = self.fixed_noise[idx]
        self._picked = None

    def _rows(self, rows: Tensor | None) -> dict[str, Tensor]:
        """The data of the seeds ``rows`` (all of them if ``None``), kept
        while the same seeds are being optimised: L-BFGS-B evaluates the same
        set many times between two seeds' convergence, and the copy of their
        ``A x d x N x N`` distances was most of a call's memory traffic."""
        key = () if rows is None else tuple(rows.tolist())
        if self._picked is not None and self._picked[0] == key:
            return self._picked[1]

        def pick(t: Tensor) -> Tensor:
            return t if rows is None else t[rows]

        data = {
            "X": pick(self.X),
            "Y": pick(self.Y),
            "n": pick(self.n),
            "real": pick(self.real),
            "pair": pick(self.pair),
            "D": pick(self.D),
        }
        if self.fixed_noise is not None:
            data["fixed_noise"] = self.fixed_noise[rows]
        self._picked = (key, data)
        return data

    def __call__(self, x: np.ndarray, batch_indices: list[int]) -> tuple[Any, Any]:
        """Losses (``A``) and gradients (``A x P``) of the seeds ``batch_indices``
        at their parameters ``x`` (``A x P``), the signature of
        :func:`~botorch.optim.batched_lbfgs_b.fmin_l_bfgs_b_batched`."""
        self.evaluations += 1
        A = len(batch_indices)
        rows = (
            None
            if self.X.shape[0] == A
            else torch.as_tensor(batch_indices, dtype=torch.long)
        )
        theta = torch.as_tensor(x, dtype=self.X.dtype)
        parts = self.split(theta)
        loss, grads = self.loss_and_grad(parts, rows)
        grad = torch.cat([grads[n].reshape(A, -1) for n in self.names], dim=1)
        return loss.numpy(), grad.numpy()

    def split(self, theta: Tensor) -> dict[str, Tensor]:
        """The parameters of ``theta`` (``A x P``) by name, each ``A x shape``."""
        A = theta.shape[0]
        return {
            n: t.reshape(A, *shape)
            for n, t, shape in zip(
                self.names, theta.split(self.sizes, dim=1), self.shapes, strict=True
            )
        }

    def loss_and_grad(
        self, parts: dict[str, Tensor], rows: Tensor | None
    ) -> tuple[Tensor, dict[str, Tensor]]:
        """``A``-dim losses of the seeds ``rows`` at ``parts`` and their
        gradients by parameter name.

        The gradient is written out (``dl/dK = (alpha alpha^T - K^-1) / 2``
        and the chain rule through the RBF kernel and the log-normal priors)
        rather than taken by autograd, whose Cholesky backward runs batched
        matrix products whose last bits depend on the batch size.
        """
        ls = parts[_LENGTHSCALE]  # A x [m] x 1 x d
        data = self._rows(rows)
        X = data["X"]  # A x N x d (N = n_pad)
        Y = data["Y"]  # A x [m] x N
        n = data["n"]  # A
        N = self.n_pad
        real = data["real"]  # A x N
        pair = data["pair"]  # A x N x N
        D = data["D"]  # A x d x N x N
        d = D.shape[1]
        if ls.dim() == 4:
            X = X.unsqueeze(1)
            real, pair = real.unsqueeze(1), pair.unsqueeze(1)
            D = D.unsqueeze(2)  # A x d x 1 x N x N
        # Each seed's matrices are padded to N with an identity block (exact
        # algebra), so that every seed's matrix has the same size and
        # alignment in any batch: the LAPACK/BLAS kernels' last bits depend
        # on both.
        w = ls.squeeze(-2).pow(2).reciprocal().mul(-0.5)  # A x [m] x d
        arg = D[:, 0] * w[..., 0, None, None]
        for k in range(1, d):
            arg = arg + D[:, k] * w[..., k, None, None]
        Kf = _tail_safe(torch.exp, arg) * pair
        if _NOISE in parts:
            noise = parts[_NOISE]  # A x [m] x 1
            diag = noise * real + (1.0 - real)
        else:
            diag = data["fixed_noise"]
        K = Kf + torch.diag_embed(diag)
        L = _cholesky_rows(K)
        r = (Y - parts[_MEAN].unsqueeze(-1)) * real
        alpha = torch.cholesky_solve(r.unsqueeze(-1), L).squeeze(-1)
        nf = n.to(X.dtype).reshape(-1, *([1] * (r.dim() - 2)))
        ll = -0.5 * (
            (r * alpha).sum(-1)
            + 2.0 * _tail_safe(torch.log, L.diagonal(dim1=-2, dim2=-1)).sum(-1)
            + nf * math.log(2 * math.pi)
        )
        eye = torch.eye(N, dtype=K.dtype).expand(K.shape).contiguous()
        Kinv = torch.cholesky_solve(eye, L)
        nd = ll.dim()
        # dll/dK
        G = 0.5 * (alpha.unsqueeze(-1) * alpha.unsqueeze(-2) - Kinv) * pair
        W = G * Kf
        g_ls = torch.stack(
            [(W * D[:, k]).flatten(start_dim=-2).sum(-1) for k in range(d)], dim=-1
        ) / ls.squeeze(-2).pow(3)
        grads = {_MEAN: alpha.sum(-1), _LENGTHSCALE: g_ls.unsqueeze(-2)}
        lp, g_lp = _lognormal(self.ls_prior, ls)
        ll = ll + lp.flatten(start_dim=nd).sum(-1)
        grads[_LENGTHSCALE] = grads[_LENGTHSCALE] + g_lp
        if self.noise_prior is not None:
            noise = parts[_NOISE]
            lp, g_lp = _lognormal(self.noise_prior, noise)
            ll = ll + lp.flatten(start_dim=nd).sum(-1)
            grads[_NOISE] = G.diagonal(dim1=-2, dim2=-1).sum(-1, keepdim=True) + g_lp
        loss = (-ll / nf).reshape(ll.shape[0], -1).sum(-1)

        def per_n(v: Tensor) -> Tensor:
            return -v / nf.reshape(-1, *([1] * (v.dim() - 1)))

        return loss, {k: per_n(v) for k, v in grads.items()}

    def loss(self, parts: dict[str, Tensor], rows: Tensor) -> Tensor:
        """``A``-dim tensor: the loss of the seeds ``rows`` at ``parts``."""
        return self.loss_and_grad(parts, rows)[0]


def _lognormal(prior: Any, x: Tensor) -> tuple[Tensor, Tensor]:
    """A ``LogNormalPrior``'s log density at ``x`` and its derivative."""
    mu, sigma = float(prior.loc), float(prior.scale)
    log_x = _tail_safe(torch.log, x)
    z = (log_x - mu) / sigma
    logp = -0.5 * z.pow(2) - math.log(sigma) - 0.5 * math.log(2 * math.pi) - log_x
    return logp, -(z / sigma + 1.0) / x


def _tail_safe(fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """``fn(x)`` elementwise, computed with :data:`_VECTOR_TAIL` extra trailing
    elements: ATen's vectorised loops leave a tensor's last elements to a
    scalar loop whose transcendental functions can differ in the last bit,
    so that a seed's values would depend on its place in the batch."""
    flat = torch.cat([x.reshape(-1), x.new_ones(_VECTOR_TAIL)])
    return fn(flat)[: x.numel()].reshape(x.shape)


def _cholesky_rows(K: Tensor) -> Tensor:
    """Cholesky factors of a batch, each matrix that is not positive definite
    factored alone with :func:`~linear_operator.utils.cholesky.psd_safe_cholesky`'s
    jitter (so a seed's jitter never depends on its lane-mates)."""
    L, info = torch.linalg.cholesky_ex(K)
    bad = torch.nonzero(info.reshape(-1)).reshape(-1)
    if bad.numel() == 0:
        return L
    flat_K = K.reshape(-1, *K.shape[-2:])
    flat = list(L.reshape(-1, *K.shape[-2:]).unbind(0))
    for i in bad.tolist():
        flat[i] = psd_safe_cholesky(flat_K[i])
    return torch.stack(flat).reshape(K.shape)


def _fit_group(
    fits: Sequence[GPFit], bounds: Tensor
) -> tuple[list[SingleTaskGP | None], set[int], int]:
    """Optimise one group as a batch; returns per-fit models, the indices
    that failed (to refit alone) and the number of batched evaluations."""
    B = len(fits)
    try:
        by_n: dict[int, list[int]] = {}
        for i, f in enumerate(fits):
            by_n.setdefault(f.X.shape[0], []).append(i)
        order = [i for idx in by_n.values() for i in idx]
        loss = _BatchedLoss(
            [_batched_model([fits[i] for i in idx], bounds) for idx in by_n.values()],
            fits[0].padded,
        )
        # Back to the order of fits.
        back = np.argsort(np.asarray(order))
        loss.reorder(back)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InputDataWarning)
            xs, fs, results = fmin_l_bfgs_b_batched(
                loss,
                loss.x0,
                bounds=loss.bounds,
                factr=None,
                ftol=FIT_OPTIONS["ftol"],
                maxiter=int(FIT_OPTIONS["maxiter"]),
                pass_batch_indices=True,
            )
    except Exception:  # the batch as a whole failed: every fit refits alone
        return [None] * B, set(range(B)), 0
    failed: set[int] = set()
    out: list[SingleTaskGP | None] = []
    for b, f in enumerate(fits):
        if not math.isfinite(float(fs[b])) or results[b]["status"] == 2:
            failed.add(b)
            out.append(None)
            continue
        hyper: dict[str, Tensor] = {}
        start = 0
        for n, s, shape in zip(loss.names, loss.sizes, loss.shapes, strict=True):
            hyper[n] = torch.as_tensor(xs[b, start : start + s], dtype=f.X.dtype)
            hyper[n] = hyper[n].reshape(shape)
            start += s
        try:
            out.append(
                fit_gp(
                    f.X,
                    f.Y,
                    bounds,
                    f.seed,
                    _Hyperparameters(hyper),  # type: ignore[arg-type]
                    optimize=False,
                    Yvar=f.Yvar,
                    model_class=f.model_class or SingleTaskGP,
                )
            )
        except Exception:
            failed.add(b)
            out.append(None)
    return out, failed, loss.evaluations
