"""The crash-aware methods: EI times a model of the crashes (:mod:`bolt_pco64.bo.crash`).

Analytic LogEI of an objective GP on the feasible observations,
hyperparameters refitted every ``CRASH_DEFAULTS.refit_every`` steps, times a
model of feasibility (:class:`CrashAwareMethod`):

- ``gpc_ei``: LogEI x P(feasible) of a Dirichlet GP classifier of
  ``ran_successfully`` (Gelbart, Snoek & Adams 2014);
- ``tobit_ei``: LogEI x P(margin <= 0) of a GP of the memory margin with
  crashes as censored observations (Tobit likelihood);
- ``gpc_pof``: LogEI among the candidates whose classifier P(feasible)
  reaches ``CRASH_DEFAULTS.pof_threshold`` (Gelbart et al.'s probabilistic
  constraint), the most probably feasible candidate when none does.

They condition on the pending rows with a kriging believer, and keep their
models in a :class:`~bolt_pco64.bo.crash.CrashAwareState`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bolt_pco64.bench.contract import Method, ObjectiveModel, RunContext
from bolt_pco64.bench.methods.state import _run_state, _step

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.bo import CrashAwareState

__all__ = ["CrashAwareMethod"]


def _crash_state() -> type[CrashAwareState]:
    from bolt_pco64.bo import CrashAwareState

    return CrashAwareState


class CrashAwareMethod(Method):
    """The crash-aware methods of :mod:`bolt_pco64.bo.crash`.

    Args:
        kind: ``"gpc_ei"``, ``"tobit_ei"`` or ``"gpc_pof"``.
    """

    def __init__(self, kind: Literal["gpc_ei", "tobit_ei", "gpc_pof"]) -> None:
        self.kind = kind

    def new_state(self) -> CrashAwareState:
        from bolt_pco64.bo import CrashAwareState

        return CrashAwareState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        return _run_state(self, ctx, _crash_state()).objective

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo import (
            propose_censored_logei,
            propose_classifier_logei,
            propose_pof_threshold,
        )

        state: CrashAwareState = _run_state(self, ctx, _crash_state())
        available = ctx.available
        choices = ctx.candidates[available]
        step = _step(ctx, choices)
        if self.kind == "gpc_ei":
            idx = propose_classifier_logei(step, state)
        elif self.kind == "tobit_ei":
            idx = propose_censored_logei(step, state)
        else:
            idx = propose_pof_threshold(step, state)
        ctx.fit_seconds += state.fit_seconds
        return available[idx]
