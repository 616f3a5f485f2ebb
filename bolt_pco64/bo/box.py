"""Constrained qLogNEI optimised over the box, for the snapping BO loop.

pco64 snaps any point of its bounds to the nearest table row, so a BoTorch
user can run the ordinary loop: fit the models, optimise the acquisition
function over the continuous ``bounds``, evaluate ``problem(X)``. The
functions here propose such points, with the *same* acquisition function as
the harness's enumerating ``qlognei`` method
(:func:`~bolt_pco64.bo.gp.acquisition_function` on
:func:`~bolt_pco64.bo.gp.fit_constrained_models`' GPs: constrained qLogNEI,
or ``qLogProbabilityOfFeasibility`` of the constraint GP before the first
feasible observation); only how it is optimised differs:

- :func:`propose_box`: ``botorch.optim.optimize_acqf`` over the continuous
  box (multi-start L-BFGS-B from the best of ``raw_samples`` scrambled Sobol
  points), the loop BoTorch's tutorials teach;
- :func:`propose_mixed`: ``botorch.optim.optimize_acqf_mixed_alternating``
  with every input declared an integer dimension (values
  ``lower, lower + 1, ..., upper`` of each bound): BoTorch's mixed/discrete
  optimiser, a local search over integer neighbours (one step along one
  input) from ``num_restarts`` of ``raw_samples`` Sobol points rounded to
  integers (no continuous dimension is left, so its continuous steps do
  nothing).

Both return ``q x d`` points of the box, not rows; ``problem.lookup`` (or
evaluating ``problem``) snaps them. Nothing keeps a proposal away from the
configurations already evaluated: a point may snap to a row tried before,
which is what a user of this loop meets (the harness counts such repeats).
:func:`propose_mixed`'s points are integer vectors but need not be table
rows: the integer lattice of the bounds is larger than the table (pco64:
29160 lattice points, 780 rows).

Settings (:data:`BOX_DEFAULTS`): both optimisers get the same modest budget,
``raw_samples = 256`` starting candidates, ``num_restarts = 4`` starts and
(box) 50 L-BFGS-B iterations; the mixed optimiser starts from Sobol points
rounded to integers (``initialization_strategy="random"``), not from a
continuous relaxation, so it is not box search plus local search. Why these
values, what they cost, and why probabilistic reparameterization is not
offered: ``docs/architecture.md`` §8.

Randomness. Each proposal takes a ``seed``: it seeds the quasi-MC sampler and
qLogNEI's baseline pruning (as in :func:`~bolt_pco64.bo.gp.acquisition_function`)
and runs the optimiser inside :func:`botorch.utils.sampling.manual_seed`
(BoTorch draws the scrambled Sobol raw samples and the choice of starting
points among them from torch's global generator; its previous state is restored on
exit). With the same models, data and seed the points are bit-identical (on
one torch thread, as the harness runs; more threads may change the last bits
of the parallel reductions).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from botorch.exceptions.warnings import OptimizationWarning
from botorch.optim import optimize_acqf, optimize_acqf_mixed_alternating
from botorch.utils.sampling import manual_seed
from torch import Tensor

from bolt_pco64.bo.gp import (
    MC_SAMPLES,
    ConstrainedModels,
    ProposalContext,
    acquisition_function,
)
from bolt_pco64.params import POSITIVE_INT, check_param, check_shape

__all__ = [
    "BOX_DEFAULTS",
    "BoxDefaults",
    "integer_values",
    "propose_box",
    "propose_mixed",
]


@dataclass(frozen=True)
class BoxDefaults:
    """The optimiser settings of :func:`propose_box` and :func:`propose_mixed`.

    Attributes:
        num_restarts: Starting points of the optimisation (``num_restarts`` of
            ``optimize_acqf`` and ``optimize_acqf_mixed_alternating``).
        raw_samples: Candidates scored to choose those starting points (Sobol
            points of the box; random integer points for :func:`propose_mixed`).
        maxiter: L-BFGS-B iterations of :func:`propose_box`.
        mixed_initialization: ``options["initialization_strategy"]`` of
            :func:`propose_mixed` (see the module docstring).
        mc_samples: Quasi-MC samples of the acquisition function
            (:data:`~bolt_pco64.bo.gp.MC_SAMPLES`, as the harness's ``qlognei``).
    """

    num_restarts: int = 4
    raw_samples: int = 256
    maxiter: int = 50
    mixed_initialization: str = "random"
    mc_samples: int = MC_SAMPLES


#: The defaults used when no other value is passed.
BOX_DEFAULTS = BoxDefaults()


def _check(ctx: ProposalContext) -> Tensor:
    """``ctx.bounds`` in X's dtype, once the shapes, the bounds and ``q`` are checked."""
    bounds = ctx.bounds
    check_shape("bounds", bounds, (2, "d"))
    check_shape("X_observed", ctx.X, ("n", bounds.shape[-1]))
    check_shape("y", ctx.y, (ctx.X.shape[0],))
    if not bool((bounds[1] >= bounds[0]).all()):
        raise ValueError(f"Expected lower <= upper bounds, got {bounds.tolist()}.")
    check_param("q", ctx.q, POSITIVE_INT)
    return bounds.to(ctx.X)


def _clamp(points: Tensor, bounds: Tensor) -> Tensor:
    """``points`` inside ``bounds`` (L-BFGS-B can overshoot by rounding)."""
    return points.detach().clamp(bounds[0], bounds[1])


def _optimise(
    optimiser: Callable[..., tuple[Tensor, Tensor]],
    models: ConstrainedModels,
    ctx: ProposalContext,
    bounds: Tensor,
    defaults: BoxDefaults,
    **kwargs: Any,
) -> Tensor:
    """``optimiser`` (``optimize_acqf`` or ``optimize_acqf_mixed_alternating``)
    on constrained qLogNEI over ``bounds`` (checked, in X's dtype), seeded and
    with ``kwargs`` passed on.

    Returns:
        ``q x d``-dim tensor of points inside ``bounds``.
    """
    acqf = acquisition_function(
        "qlognei", models, ctx.X, ctx.y, ctx.seed, defaults.mc_samples, ctx.X_pending
    )
    with manual_seed(int(ctx.seed)), warnings.catch_warnings():
        # A restart that stops at maxiter is still a usable point.
        warnings.simplefilter("ignore", OptimizationWarning)
        points, _ = optimiser(
            acq_function=acqf,
            bounds=bounds,
            q=ctx.q,
            num_restarts=defaults.num_restarts,
            raw_samples=defaults.raw_samples,
            **kwargs,
        )
    return _clamp(points, bounds)


def propose_box(
    models: ConstrainedModels,
    ctx: ProposalContext,
    defaults: BoxDefaults = BOX_DEFAULTS,
) -> Tensor:
    """Constrained qLogNEI maximised over the continuous box by ``optimize_acqf``.

    Args:
        models: The fitted :class:`~bolt_pco64.bo.gp.ConstrainedModels`
            (:func:`~bolt_pco64.bo.gp.fit_constrained_models`).
        ctx: The step (:class:`~bolt_pco64.bo.gp.ProposalContext`; its
            ``choices`` are not read): the evaluated configurations ``X``,
            their throughput ``y`` (NaN where the run OOMed), the ``bounds``,
            ``q`` points (jointly optimised, ``optimize_acqf``'s default), the
            seed of the sampler, the baseline pruning and the raw samples, and
            ``X_pending`` (see :func:`~bolt_pco64.bo.gp.acquisition_function`).
        defaults: Restarts, raw samples, iterations and MC samples.

    Returns:
        ``q x d``-dim tensor of points inside ``bounds`` (X's dtype); snap them
        with ``problem.lookup``.

    Raises:
        ValueError: On mismatched shapes, inverted bounds or ``q < 1``.
    """
    return _optimise(
        optimize_acqf,
        models,
        ctx,
        _check(ctx),
        defaults,
        options={"maxiter": defaults.maxiter},
        retry_on_optimization_warning=False,
    )


def integer_values(bounds: Tensor) -> dict[int, list[float]]:
    """Every input as an integer dimension: ``{i: [lower_i, ..., upper_i]}``.

    Args:
        bounds: ``2 x d``-dim tensor of integer-valued bounds.

    Returns:
        The ``discrete_dims`` argument of ``optimize_acqf_mixed_alternating``.

    Raises:
        ValueError: If a bound is not an integer.
    """
    if not bool((bounds == bounds.round()).all()):
        raise ValueError(f"Expected integer-valued bounds, got {bounds.tolist()}.")
    lo, hi = bounds.to(torch.int64).tolist()
    return {
        i: [float(v) for v in range(a, b + 1)]
        for i, (a, b) in enumerate(zip(lo, hi, strict=True))
    }


def propose_mixed(
    models: ConstrainedModels,
    ctx: ProposalContext,
    defaults: BoxDefaults = BOX_DEFAULTS,
) -> Tensor:
    """Constrained qLogNEI maximised over the integer lattice of the box.

    ``optimize_acqf_mixed_alternating`` with ``discrete_dims`` =
    :func:`integer_values` of ``ctx.bounds`` (all eight inputs integer);
    ``q > 1`` points are chosen sequentially (the only mode it supports), each
    new one with the previous ones pending.

    Args:
        models, ctx, defaults: As in :func:`propose_box` (``ctx.bounds`` must
            be integer-valued).

    Returns:
        ``q x d``-dim tensor of integer-valued points inside ``bounds`` (X's
        dtype); snap them with ``problem.lookup``.

    Raises:
        ValueError: On mismatched shapes, inverted or non-integer bounds or
            ``q < 1``.
    """
    bounds = _check(ctx)
    return _optimise(
        optimize_acqf_mixed_alternating,
        models,
        ctx,
        bounds,
        defaults,
        discrete_dims=integer_values(bounds),
        options={"initialization_strategy": defaults.mixed_initialization},
    )
