"""The prior-informed methods: performance models as GP means (:mod:`bolt_pco64.bo.prior`).

Not in the default comparison. The constrained qLogNEI of ``qlognei`` on GPs
whose prior means are learnable performance models, starting from a 3-row
initial design (``n_init = 3``, :data:`PRIOR_N_INIT`, a prefix of the seed's
shared design; :class:`PriorMethod`):

- ``prior_ei``: throughput prior on the objective GP, memory-margin prior on
  the constraint GP;
- ``prior_ei_tp``: the ablation, throughput prior only;
- ``prior_ei_bad``: ``prior_ei`` with a deliberately misspecified prior
  (every physical constant off by 2x, the memory prior of a GPU with twice
  the memory; :func:`~bolt_pco64.bo.prior.base.misspecified`): the robustness
  check of prior-guided benchmarks (mf-prior-bench's bad priors).

Their control, ``qlognei_init3``, is ``qlognei`` from the same 3 rows: it
separates the prior's effect from the shorter initial design (``qlognei``
starts from the comparison's ``n_init``, 10 by default, so at 10
evaluations it has made no model-guided choice yet). Run them all with
``--methods qlognei,qlognei_init3,prior_ei,prior_ei_tp,prior_ei_bad
--reference qlognei_init3``.

The prior methods recommend and predict through their own prior-mean
objective GP (re-conditioned on every feasible observation with its
hyperparameters and prior parameters kept, as the other model methods do
with theirs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bolt_pco64.bench.contract import (
    Method,
    ObjectiveModel,
    RunContext,
    recommend_by_posterior_mean,
)
from bolt_pco64.bench.methods.state import _run_state, _step

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.bo.prior import PriorState

__all__ = ["PRIOR_N_INIT", "PriorMethod"]

#: The initial-design size of the prior methods and of their control,
#: ``qlognei_init3`` (what the prior should save).
PRIOR_N_INIT = 3


def _prior_state() -> type[PriorState]:
    from bolt_pco64.bo.prior import PriorState

    return PriorState


class PriorMethod(Method):
    """Constrained qLogNEI on prior-mean GPs
    (:func:`~bolt_pco64.bo.prior.fit.propose_prior_ei`).

    Args:
        kind: ``"both"`` (``prior_ei``) or ``"throughput"`` (``prior_ei_tp``).
        n_init: The initial-design size (3: what the prior should save).
        quality: ``"good"`` (the prior's defaults) or ``"bad"`` (every
            constant deliberately off, :func:`~bolt_pco64.bo.prior.base.misspecified`;
            ``prior_ei_bad``).
    """

    def __init__(
        self,
        kind: Literal["both", "throughput"],
        n_init: int = PRIOR_N_INIT,
        quality: Literal["good", "bad"] = "good",
    ) -> None:
        if quality not in ("good", "bad"):
            raise ValueError(f"Expected quality 'good' or 'bad', got {quality!r}.")
        self.kind = kind
        self.n_init = n_init
        self.quality = quality

    def new_state(self) -> PriorState:
        from bolt_pco64.bo.prior import PriorState

        return PriorState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        """The prior-mean objective GP of the last proposal (``None`` before)."""
        models = _run_state(self, ctx, _prior_state()).models
        return None if models is None else models.objective

    def recommend(self, ctx: RunContext) -> int | None:
        """The evaluated feasible row of highest posterior mean under the
        prior-mean objective GP conditioned on every feasible observation,
        its hyperparameters and prior parameters kept
        (:func:`~bolt_pco64.bo.prior.fit.condition_prior_gp`); the best observed
        one before the first GP."""
        from bolt_pco64.bo.prior import PRIORS, condition_prior_gp

        model = self.objective_model(ctx)
        defaults = PRIORS[self.quality]
        return recommend_by_posterior_mean(
            ctx,
            model,
            lambda X, y: condition_prior_gp(
                model, X, y, ctx.bounds, ctx.problem.instance, defaults
            ),
        )

    @property
    def standin_caveat(self) -> str:
        """The sentence a summary of this method on a stand-in table carries
        (:data:`~bolt_pco64.bo.prior.base.STANDIN_CAVEAT`)."""
        from bolt_pco64.bo.prior import STANDIN_CAVEAT

        return STANDIN_CAVEAT

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.prior import PRIORS, propose_prior_ei

        state: PriorState = _run_state(self, ctx, _prior_state())
        available = ctx.available
        step = _step(ctx, ctx.candidates[available])
        idx = propose_prior_ei(
            step,
            ctx.problem.instance,
            kind=self.kind,
            state=state,
            defaults=PRIORS[self.quality],
        )
        ctx.fit_seconds += state.fit_seconds
        return available[idx]
