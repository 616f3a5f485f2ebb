"""BO methods built for a crash (hidden) constraint.

On pco64 an out-of-memory run returns no throughput and only a fixed positive
memory margin; the crash models of :mod:`bolt_pco64.bo.feasibility` give the
probability that a configuration runs. The methods here combine it with an
objective GP fitted on the feasible observations:

- :func:`propose_classifier_logei`: the probability of feasibility of a GP
  *classifier* of ``ran_successfully``
  (:func:`~bolt_pco64.bo.feasibility.fit_feasibility_classifier`),
  multiplied into analytic LogEI of the objective GP (Gelbart, Snoek & Adams
  2014, "Bayesian optimization with unknown constraints", UAI; the
  constraint-weighted EI of Schonlau, Welch & Jones 1998 with a classifier for
  the constraint);
- :func:`propose_censored_logei`: the same with the probability from a GP of
  the memory margin with a *censored* (Tobit) likelihood
  (:func:`~bolt_pco64.bo.feasibility.fit_censored_margin`);
- :func:`propose_pof_threshold`: LogEI restricted to the candidates whose
  classifier probability of feasibility is at least a threshold ``1 - delta``,
  maximising that probability when no candidate reaches it (the probabilistic
  constraint ``Pr(feasible) >= 1 - delta`` of Gelbart, Snoek & Adams 2014,
  section 3). It shows whether a calibrated crash model can *bound* the crash
  rate of a search, rather than only trade crashes against improvement.

Each proposal takes the evaluated configurations ``X``, the observed
throughput ``y`` (NaN where the run crashed: that is the feasibility flag),
the candidate rows and a seed, and returns ``q`` indices into the candidates;
pass a :class:`CrashAwareState` to keep models between the steps of one loop
(warm starts and the hyperparameter schedule of
:data:`~bolt_pco64.bo.feasibility.CRASH_DEFAULTS`). :func:`recommend` picks
the configuration to report.

Speed. Candidates are scored analytically (no Monte Carlo). Hyperparameters
(kernels, means, noise) are re-optimised every ``refit_every`` steps; in
between, the objective GP and the classifier (both exact GPs) keep their
hyperparameters and are only conditioned on the new data, and the censored
margin model (a variational GP) re-optimises only its variational
parameters, from the previous step's values. With ``q > 1`` the batch is
chosen greedily with the *kriging believer* heuristic (Ginsbourger, Le Riche &
Carraro 2010): after each pick the objective GP is conditioned on its own
posterior mean there; the crash model is not updated within a batch.

Randomness: fitting runs inside :func:`botorch.utils.sampling.manual_seed`
(global state restored; see :mod:`bolt_pco64.bo.gp`). Ties go to the earliest
candidate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.analytic import LogExpectedImprovement
from botorch.models import SingleTaskGP
from torch import Tensor

from bolt_pco64.bo.feasibility import (
    CRASH_DEFAULTS,
    CrashDefaults,
    CrashModel,
    _check_data,
    fit_censored_margin,
    fit_feasibility_classifier,
    log_prob_feasible,
)
from bolt_pco64.bo.gp import ProposalContext, fit_gp
from bolt_pco64.params import OPEN_UNIT, check_param

__all__ = [
    "CrashAwareState",
    "propose_censored_logei",
    "propose_classifier_logei",
    "propose_pof_threshold",
    "recommend",
]


@dataclass
class CrashAwareState:
    """Models kept between the steps of one BO loop (pass the same object).

    Attributes:
        objective: The last objective GP (``None`` before the first feasible
            observation).
        crash_model: The last classifier or censored margin model.
        steps: Proposals made with this state so far.
        fit_seconds: Wall time the last proposal spent fitting models (a
            measurement only; nothing depends on it).
    """

    objective: SingleTaskGP | None = None
    crash_model: CrashModel | None = None
    steps: int = 0
    fit_seconds: float = 0.0


# --------------------------------------------------------------------------
# Recommendation and proposals
# --------------------------------------------------------------------------


def recommend(objective: SingleTaskGP | None, X: Tensor, y: Tensor) -> int | None:
    """The recommended configuration: an index into ``X``.

    With a model: the evaluated *feasible* configuration with the highest
    posterior mean (what the model believes is best among the runs it has
    seen). Without one: the best observed feasible throughput. Ties go to the
    earliest evaluation.

    Args:
        objective: The objective GP, or ``None`` (model-free).
        X: ``n x d``-dim tensor of the evaluated configurations.
        y: ``n``-dim tensor of observed throughput, NaN where the run crashed.

    Returns:
        The index, or ``None`` when no evaluation is feasible.
    """
    feasible = ~torch.isnan(y)
    if not feasible.any():
        return None
    idx = torch.nonzero(feasible).squeeze(-1)
    if objective is None:
        values = y[idx]
    else:
        with torch.no_grad():
            values = objective.posterior(X[idx]).mean.reshape(-1)
    return int(idx[int(torch.argmax(values))])


def _log_ei(objective: SingleTaskGP, best_f: Tensor, choices: Tensor) -> Tensor:
    with torch.no_grad():
        return LogExpectedImprovement(objective, best_f=best_f)(choices.unsqueeze(-2))


def _propose(
    ctx: ProposalContext,
    state: CrashAwareState | None,
    fit_crash: Callable[[CrashModel | None, bool], CrashModel],
    combine: Callable[[Tensor | None, Tensor, Tensor], Tensor],
    defaults: CrashDefaults,
) -> Tensor:
    X, y, bounds = ctx.X, ctx.y, ctx.bounds
    _check_data(X, y, bounds)
    choices = ctx.need_choices()
    state = state if state is not None else CrashAwareState()
    refit = state.steps % defaults.refit_every == 0
    feasible = ~torch.isnan(y)
    t0 = time.perf_counter()
    crash = fit_crash(state.crash_model, refit or state.crash_model is None)
    objective = None
    if feasible.any():
        prev = state.objective
        objective = fit_gp(
            X[feasible],
            y[feasible],
            bounds,
            ctx.seed,
            prev,
            optimize=refit or prev is None,
        )
    state.objective, state.crash_model = objective, crash
    state.steps += 1
    state.fit_seconds = time.perf_counter() - t0
    return _pick(ctx, choices, objective, log_prob_feasible(crash, choices), combine)


def _pick(
    ctx: ProposalContext,
    choices: Tensor,
    objective: SingleTaskGP | None,
    log_pof: Tensor,
    combine: Callable[[Tensor | None, Tensor, Tensor], Tensor],
) -> Tensor:
    """``ctx.q`` greedy picks, each believed by the objective GP (kriging believer)."""
    taken = torch.zeros(choices.shape[0], dtype=torch.bool, device=choices.device)
    picks: list[int] = []
    model = objective
    best_f = None
    if model is not None:
        with torch.no_grad():
            best_f = model.posterior(ctx.X[~torch.isnan(ctx.y)]).mean.max()
    if model is not None and ctx.pending is not None:
        model = _believe(model, ctx.pending)
    for i in range(ctx.q):
        log_ei = _log_ei(model, best_f, choices) if model is not None else None
        score = combine(log_ei, log_pof, ~taken).masked_fill(taken, -math.inf)
        j = int(torch.argmax(score))
        taken[j] = True
        picks.append(j)
        if model is not None and i < ctx.q - 1:
            model = _believe(model, choices[j : j + 1])
    return torch.tensor(picks, dtype=torch.long, device=choices.device)


def _believe(model: SingleTaskGP, X: Tensor) -> SingleTaskGP:
    """``model`` conditioned on its own posterior mean at ``X`` (kriging believer)."""
    with torch.no_grad():
        fantasy = model.posterior(X).mean
        return model.condition_on_observations(X, fantasy)


def _ei_times_pof(log_ei: Tensor | None, log_pof: Tensor, available: Tensor) -> Tensor:
    return log_pof if log_ei is None else log_ei + log_pof


def _classifier_fit(
    ctx: ProposalContext, defaults: CrashDefaults
) -> Callable[[CrashModel | None, bool], CrashModel]:
    """The ``fit_crash`` of :func:`_propose` for the GP classifier of
    :func:`~bolt_pco64.bo.feasibility.fit_feasibility_classifier` (feasible:
    ``y`` is not NaN)."""
    feasible = ~torch.isnan(ctx.y)

    def fit(prev: CrashModel | None, hyper: bool) -> CrashModel:
        return fit_feasibility_classifier(
            ctx.X, feasible, ctx.bounds, ctx.seed, prev, hyper, defaults
        )

    return fit


def propose_classifier_logei(
    ctx: ProposalContext,
    state: CrashAwareState | None = None,
    defaults: CrashDefaults = CRASH_DEFAULTS,
) -> Tensor:
    """LogEI x probability of feasibility from a GP classifier (Gelbart et al. 2014).

    Score ``log EI(x) + log P(feasible | x)``: analytic LogEI of the objective
    GP (feasible observations only) with ``best_f`` the best posterior mean
    among the evaluated feasible configurations, and ``P(feasible)`` from
    :func:`~bolt_pco64.bo.feasibility.fit_feasibility_classifier`. Before the
    first feasible observation the score is ``log P(feasible)`` alone.

    Args:
        ctx: The step (:class:`~bolt_pco64.bo.gp.ProposalContext`): the
            evaluated configurations ``X``, their throughput ``y`` (NaN where
            the run crashed), the ``bounds``, the untried ``choices``, ``q``,
            the seed of the fits, and ``X_pending``: configurations in flight,
            where the objective GP believes its own posterior mean (kriging
            believer) before the picks.
        state: Models kept between the steps of one loop (updated in place).
        defaults: The schedule and iteration limits.

    Returns:
        ``q``-dim long tensor of distinct indices into ``ctx.choices``.
    """
    fit = _classifier_fit(ctx, defaults)
    return _propose(ctx, state, fit, _ei_times_pof, defaults)


def propose_censored_logei(
    ctx: ProposalContext,
    state: CrashAwareState | None = None,
    defaults: CrashDefaults = CRASH_DEFAULTS,
) -> Tensor:
    """LogEI x probability of feasibility from a censored margin GP.

    As :func:`propose_classifier_logei`, with ``P(feasible)`` the predictive
    ``P(margin <= 0)`` of :func:`~bolt_pco64.bo.feasibility.fit_censored_margin`
    on ``ctx.margin`` (the observed memory margins, read where ``y`` is not
    NaN).

    Returns:
        ``q``-dim long tensor of distinct indices into ``ctx.choices``.
    """
    feasible = ~torch.isnan(ctx.y)

    def fit(prev: Any, hyper: bool) -> CrashModel:
        return fit_censored_margin(
            ctx.X,
            ctx.need_margin(),
            feasible,
            ctx.bounds,
            ctx.seed,
            prev,
            hyper,
            defaults,
        )

    return _propose(ctx, state, fit, _ei_times_pof, defaults)


def propose_pof_threshold(
    ctx: ProposalContext,
    state: CrashAwareState | None = None,
    threshold: float | None = None,
    defaults: CrashDefaults = CRASH_DEFAULTS,
) -> Tensor:
    """LogEI among candidates with ``P(feasible) >= threshold`` (Gelbart et al. 2014).

    The classifier of
    :func:`~bolt_pco64.bo.feasibility.fit_feasibility_classifier` gives
    ``P(feasible)``; the pick maximises LogEI among the candidates that reach
    ``threshold`` (``1 - delta`` in the paper's probabilistic constraint), or,
    if none does (or before the first feasible observation), maximises
    ``P(feasible)``.

    Args:
        threshold: In ``(0, 1)``; ``None`` uses ``defaults.pof_threshold``.
        Others: As in :func:`propose_classifier_logei`.

    Returns:
        ``q``-dim long tensor of distinct indices into ``ctx.choices``.
    """
    thr = defaults.pof_threshold if threshold is None else threshold
    check_param("threshold", thr, OPEN_UNIT)
    log_thr = math.log(thr)
    fit = _classifier_fit(ctx, defaults)

    def combine(log_ei: Tensor | None, log_pof: Tensor, available: Tensor) -> Tensor:
        ok = (log_pof >= log_thr) & available
        if log_ei is None or not ok.any():
            return log_pof
        return torch.where(ok, log_ei, torch.full_like(log_ei, -math.inf))

    return _propose(ctx, state, fit, combine, defaults)
