"""The baselines: random search, and qLogNEI blind to the constraint.

- ``random`` (:class:`RandomMethod`): uniform over the untried
  configurations;
- ``naive`` (:class:`NaiveMethod`): qLogNEI on one GP that ignores the
  constraint: an OOM is recorded as the problem's ``worst_feasible_value``
  and nothing models feasibility. It has no constraint model and always uses
  its imputed objective.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from bolt_pco64.bench.contract import Method, ObjectiveModel, RunContext
from bolt_pco64.bench.methods.state import NaiveState, _run_state

if TYPE_CHECKING:
    from botorch.acquisition import AcquisitionFunction
    from botorch.models.model import Model
    from torch import Tensor

__all__ = ["NaiveMethod", "RandomMethod", "naive_acquisition", "naive_targets"]


class RandomMethod(Method):
    """Uniform over the untried, not pending configurations."""

    def propose(self, ctx: RunContext) -> Tensor:
        import torch

        available = ctx.available
        perm = torch.randperm(available.numel(), generator=ctx.generator)
        return available[perm[: ctx.q]]


class NaiveMethod(Method):
    """qLogNEI on one GP, an OOM recorded as the worst feasible value.

    It recommends and predicts with that GP (re-conditioned on the feasible
    observations only, for the recommendation).
    """

    def new_state(self) -> NaiveState:
        return NaiveState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        return _run_state(self, ctx, NaiveState).model

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo import fit_gp, select_discrete

        state = _run_state(self, ctx, NaiveState)
        t0 = time.perf_counter()
        model = fit_gp(
            ctx.X, naive_targets(ctx), ctx.bounds, ctx.step_seed, state.model
        )
        state.model = model
        ctx.fit_seconds += time.perf_counter() - t0
        acqf = naive_acquisition(model, ctx)
        available = ctx.available
        return available[
            select_discrete(acqf, ctx.candidates[available], ctx.q, ctx.step_seed)
        ]


def naive_targets(ctx: RunContext) -> Tensor:
    """``naive``'s training targets: the throughput, a crash as the problem's
    worst feasible value."""
    import torch

    worst = float(ctx.problem.worst_feasible_value)
    return torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, worst))


def naive_acquisition(model: Model, ctx: RunContext) -> AcquisitionFunction:
    """``naive``'s acquisition on ``model`` (its GP, or the same GP served
    otherwise): unconstrained qLogNEI, baseline every evaluation, pruned
    with draws from the step's seed."""
    import torch
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler
    from botorch.utils.sampling import manual_seed

    from bolt_pco64.bo import MC_SAMPLES

    with manual_seed(ctx.step_seed):  # baseline pruning draws from the global RNG
        return qLogNoisyExpectedImprovement(
            model=model,
            X_baseline=ctx.X,
            sampler=SobolQMCNormalSampler(torch.Size([MC_SAMPLES]), seed=ctx.step_seed),
            X_pending=ctx.X_pending,
            prune_baseline=True,
        )
