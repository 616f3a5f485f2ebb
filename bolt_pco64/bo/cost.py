"""Cost-aware proposals: expected improvement per unit of expected cost.

Evaluations of the pco problems differ in cost: on a table of the card's
schema the slowest feasible run can take several times as long as the
fastest, and a crash costs a fraction of a run (:mod:`bolt_pco64.tables.time_model`).
When the budget is GPU-hours rather than evaluations, an acquisition
function can trade improvement against cost:

- **EIpu** (expected improvement per unit cost; Snoek, Larochelle & Adams
  2012, "Practical Bayesian optimization of machine learning algorithms",
  NeurIPS, "EI per second"): ``log a(x) - log c(x)``, where ``a`` is the
  constrained qLogNEI of :func:`~bolt_pco64.bo.gp.acquisition_function`
  (objective GP on the feasible observations, constraint GP on every
  margin; it already weighs the improvement by the probability of
  feasibility) and ``c`` the *expected* cost (:func:`expected_cost`);
- **EI-cool** (Lee, Eriksson, Bindel & Wilson 2020, "Cost-aware Bayesian
  optimization", arXiv:2003.10870, their "EI-cool"): ``log a(x) - alpha log
  c(x)`` with the cost exponent ``alpha = (1 - spent) / (1 - spent_init)``
  cooling from 1 (EIpu) once the initial design is paid to 0 (plain
  qLogNEI) when the budget is spent (``spent``: the share of the budget
  spent, ``spent_init``: the share the initial design took).

**The expected cost** of a configuration counts its crash risk:

    c(x) = P(feasible | x) * exp(m(x)) + (1 - P(feasible | x)) * crash_cost,

- ``P(feasible | x) = Phi(-mu(x) / sigma(x))`` under the constraint GP of
  the memory margin (feasible iff the margin is ``<= 0``);
- ``m(x)`` the posterior mean of a GP of the **log** run cost
  (:func:`fit_cost_model`) fitted on the feasible observations (a crash's
  cost is another quantity); ``exp(m(x))`` is that model's posterior median
  of the run cost (the mean ``exp(m + s^2 / 2)`` would charge unexplored
  configurations for the model's ignorance, which is the exploration the
  acquisition wants);
- ``crash_cost`` what a crash costs, given by the caller (in a harness run,
  the mean observed crash cost; see :func:`crash_cost_estimate`).

Pending evaluations (``X_pending``: configurations still running on other
workers) are passed to qLogNEI, which integrates over their outcomes, so a
proposal does not duplicate them. ``q > 1`` picks greedily: each pick joins
the pending set of the next. Ties go to the earliest choice. While there is
no feasible observation (no incumbent, no run cost) the proposals fall back
to ``qLogProbabilityOfFeasibility`` of the constraint GP, as the harness's
model methods do.

The units of the cost do not matter (seconds or GPU-hours): scaling ``c``
adds a constant to every score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from botorch.models import SingleTaskGP
from botorch.utils.sampling import manual_seed
from torch import Tensor
from torch.special import ndtr

from bolt_pco64.bo.gp import (
    MC_SAMPLES,
    ConstrainedModels,
    ProposalContext,
    acquisition_function,
    fit_gp,
    propose_acquisition,
)

__all__ = [
    "COST_AWARE_DEFAULTS",
    "CostAwareDefaults",
    "cooling_exponent",
    "cost_aware_scores",
    "crash_cost_estimate",
    "expected_cost",
    "fit_cost_model",
    "prob_feasible",
    "propose_cost_aware",
]


@dataclass(frozen=True)
class CostAwareDefaults:
    """The defaults of the cost-aware proposals (one place).

    Attributes:
        chunk: Choices scored per acquisition call (memory bound).
    """

    chunk: int = 256


#: The defaults used when no other value is passed.
COST_AWARE_DEFAULTS = CostAwareDefaults()


def fit_cost_model(
    X: Tensor,
    cost: Tensor,
    bounds: Tensor,
    seed: int,
    warm_start: SingleTaskGP | None = None,
) -> SingleTaskGP:
    """A GP of the log run cost (:func:`~bolt_pco64.bo.gp.fit_gp` on ``log cost``).

    Args:
        X: ``n x d``-dim tensor of configurations that ran.
        cost: ``n``-dim tensor of their costs, each ``> 0``.
        bounds: ``2 x d``-dim tensor of the problem's bounds.
        seed: Seed of the fit.
        warm_start: The previous cost model, to start from its hyperparameters.

    Raises:
        ValueError: If a cost is not finite and ``> 0``, or the shapes differ.
    """
    if cost.shape != X.shape[:1] or not (torch.isfinite(cost) & (cost > 0)).all():
        raise ValueError(
            f"Expected {X.shape[0]} finite costs > 0, got {cost.tolist()}."
        )
    return fit_gp(X, cost.log(), bounds, seed, warm_start)


def prob_feasible(constraint: SingleTaskGP, X: Tensor) -> Tensor:
    """``m``-dim tensor: ``P(margin <= 0)`` at ``X`` (``m x d``) under the margin GP."""
    with torch.no_grad():
        post = constraint.posterior(X)
        mean = post.mean.reshape(-1)
        sd = post.variance.reshape(-1).clamp_min(1e-12).sqrt()
    return ndtr(-mean / sd)


def expected_cost(
    models: ConstrainedModels,
    cost_model: SingleTaskGP,
    X: Tensor,
    crash_cost: float,
) -> Tensor:
    """``m``-dim tensor: the expected cost at ``X`` (``m x d``; module docstring).

    Raises:
        ValueError: If ``crash_cost`` is not a finite number ``> 0``.
    """
    if not (isinstance(crash_cost, (int, float)) and math.isfinite(crash_cost)):
        raise ValueError(f"Expected a finite crash_cost > 0, got {crash_cost!r}.")
    if crash_cost <= 0:
        raise ValueError(f"Expected a finite crash_cost > 0, got {crash_cost!r}.")
    p = prob_feasible(models.constraint, X)
    with torch.no_grad():
        run = cost_model.posterior(X).mean.reshape(-1).exp()
    return p * run + (1.0 - p) * float(crash_cost)


def crash_cost_estimate(cost: Tensor, feasible: Tensor) -> float:
    """What a crash is expected to cost, from the costs observed so far.

    The mean observed cost of a crash; before the first crash, the cheapest
    observed run (a crash never gets further than a run that fits).

    Args:
        cost: ``n``-dim tensor of the observed costs (crashes included).
        feasible: ``n``-dim bool tensor, which of them ran.

    Raises:
        ValueError: If nothing was observed.
    """
    if cost.numel() == 0:
        raise ValueError("Expected at least one observed cost, got none.")
    if (~feasible).any():
        return float(cost[~feasible].mean())
    return float(cost[feasible].min())


def cooling_exponent(spent_fraction: float, init_fraction: float = 0.0) -> float:
    """EI-cool's cost exponent ``(1 - spent) / (1 - spent_init)``, clipped to [0, 1].

    Args:
        spent_fraction: The share of the budget spent, in ``[0, 1]``.
        init_fraction: The share the initial design took, in ``[0, 1)``.
    """
    for name, v in (
        ("spent_fraction", spent_fraction),
        ("init_fraction", init_fraction),
    ):
        if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
            raise ValueError(f"Expected {name} in [0, 1], got {v!r}.")
    if init_fraction >= 1.0:
        raise ValueError(f"Expected init_fraction < 1, got {init_fraction!r}.")
    return min(1.0, max(0.0, (1.0 - spent_fraction) / (1.0 - init_fraction)))


def cost_aware_scores(
    models: ConstrainedModels,
    cost_model: SingleTaskGP,
    ctx: ProposalContext,
    crash_cost: float,
    exponent: float = 1.0,
    mc_samples: int = MC_SAMPLES,
) -> Tensor:
    """``m``-dim tensor: ``log qLogNEI(x) - exponent * log c(x)`` at ``ctx.choices``.

    Args:
        models: The fitted constrained GPs (with an objective model).
        cost_model: :func:`fit_cost_model`'s GP.
        ctx: The step: observations, choices to score, seed of the quasi-MC
            sampler (and baseline pruning), configurations in flight.
        crash_cost: What a crash costs (the unit of the run cost).
        exponent: The cost exponent (1 = EIpu, 0 = qLogNEI).
        mc_samples: Quasi-MC samples of qLogNEI.
    """
    if models.objective is None:
        raise ValueError("Expected an objective model, got None (no feasible run).")
    choices = ctx.need_choices()
    acqf = acquisition_function("qlognei", models, ctx.X, ctx.y, ctx.seed, mc_samples)
    with torch.no_grad(), manual_seed(int(ctx.seed)):
        if ctx.pending is not None:
            acqf.set_X_pending(ctx.pending)
        parts = [
            acqf(chunk.unsqueeze(-2))
            for chunk in choices.split(COST_AWARE_DEFAULTS.chunk)
        ]
    log_a = torch.cat(parts) if parts else choices.new_zeros(0)
    log_c = expected_cost(models, cost_model, choices, crash_cost).log()
    return log_a - float(exponent) * log_c


def propose_cost_aware(
    models: ConstrainedModels,
    cost_model: SingleTaskGP | None,
    ctx: ProposalContext,
    crash_cost: float,
    exponent: float = 1.0,
    mc_samples: int = MC_SAMPLES,
) -> Tensor:
    """Choose ``ctx.q`` of ``ctx.choices`` by constrained qLogNEI per unit
    expected cost to the power ``exponent`` (module docstring).

    EIpu is ``exponent=1``; EI-cool (Lee et al. 2020) is
    ``exponent=cooling_exponent(spent_fraction, init_fraction)``: 1 right
    after the initial design, 0 when the budget is spent.

    Args:
        models: The fitted :class:`~bolt_pco64.bo.gp.ConstrainedModels`.
        cost_model: :func:`fit_cost_model`'s GP, or ``None`` before the first
            feasible run (then: probability of feasibility).
        ctx: The step (:class:`~bolt_pco64.bo.gp.ProposalContext`): the
            observations, the untried and not pending ``choices``, ``q``, the
            seed of the quasi-MC sampler, the configurations in flight.
        crash_cost: What a crash costs, in the run cost's unit
            (:func:`crash_cost_estimate`).
        exponent: The cost exponent, in ``[0, 1]``.
        mc_samples: Quasi-MC samples of qLogNEI.

    Returns:
        ``q``-dim long tensor of indices into ``ctx.choices``.
    """
    choices = ctx.need_choices()
    if models.objective is None or cost_model is None:
        # As before: the fallback does not see the configurations in flight.
        return propose_acquisition(
            "pof", models, replace(ctx, X_pending=None), mc_samples
        )
    pending = ctx.pending if ctx.pending is not None else choices[:0]
    taken = torch.zeros(choices.shape[0], dtype=torch.bool, device=choices.device)
    picks: list[int] = []
    for _ in range(ctx.q):
        step = replace(ctx, X_pending=pending)
        scores = cost_aware_scores(
            models, cost_model, step, crash_cost, exponent, mc_samples
        )
        scores = torch.where(taken, torch.full_like(scores, -math.inf), scores)
        j = int(torch.argmax(scores))  # the first maximum: the earliest choice
        picks.append(j)
        taken[j] = True
        pending = torch.cat([pending, choices[j : j + 1]])
    return torch.tensor(picks, dtype=torch.long, device=choices.device)
