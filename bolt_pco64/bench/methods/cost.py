"""The cost-aware methods: EI per unit of expected cost (:mod:`bolt_pco64.bo.cost`).

Not in the default comparison; run them on a GPU-hour budget
(``--budget-hours``). They use the constrained GPs of ``qlognei`` and a GP
of the log run cost (:class:`CostAwareMethod`):

- ``eipu``: constrained qLogNEI per unit of expected cost (the crash risk
  counted: P(feasible) x predicted run cost + P(crash) x crash cost);
- ``ei_cool``: the same with the cost's exponent cooling from 1 to 0 as
  the budget is spent (Lee et al. 2020).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from bolt_pco64.bench.contract import RunContext
from bolt_pco64.bench.methods.constrained import (
    _ConstrainedModelsMethod,
    _fit_models,
)
from bolt_pco64.bench.methods.state import CostAwareState, _run_state, _step

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["CostAwareMethod"]


class CostAwareMethod(_ConstrainedModelsMethod):
    """The cost-aware methods of :mod:`bolt_pco64.bo.cost` over the untried rows.

    The constrained GPs of ``qlognei`` plus a GP of the log run cost, fitted
    on the results in that ran; their costs are the run times a scheduler
    reports (:class:`~bolt_pco64.tables.time_model.TimeModel`'s seconds of the evaluated
    rows), and a crash is expected to cost what the crashes seen so far
    cost (:func:`~bolt_pco64.bo.cost.crash_cost_estimate`). A run stopped
    early (``--early-stop``) is labelled with its full run's seconds, not the
    seconds it was charged: the cost model predicts what running a
    configuration to the end costs, which the steps it ran tell (their time
    per step) and which is what an unstopped run of it would be charged; so
    early stopping lowers what the runs cost, not what the model expects them
    to cost. ``ei_cool``
    takes the budget share spent at its first proposal as the initial
    design's (``ctx.spent_fraction``).

    Args:
        kind: ``"eipu"`` or ``"ei_cool"``.
    """

    def __init__(self, kind: Literal["eipu", "ei_cool"]) -> None:
        self.kind = kind

    def new_state(self) -> CostAwareState:
        return CostAwareState()

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.cost import (
            cooling_exponent,
            crash_cost_estimate,
            fit_cost_model,
            propose_cost_aware,
        )
        from bolt_pco64.tables.time_model import TimeModel

        state = _run_state(self, ctx, CostAwareState)
        models = _fit_models(self, ctx)
        if state.time_model is None:
            state.time_model = TimeModel(ctx.problem.table)
        cost = state.time_model.run_seconds[ctx.rows]
        ok = ctx.feasible
        cost_model = None
        if ok.any():
            t0 = time.perf_counter()
            cost_model = fit_cost_model(
                ctx.X[ok],
                cost[ok],
                ctx.bounds,
                ctx.step_seed + 2,
                warm_start=state.cost_model,
            )
            state.cost_model = cost_model
            ctx.fit_seconds += time.perf_counter() - t0
        crash = crash_cost_estimate(cost, ok)
        available = ctx.available
        choices = ctx.candidates[available]
        step = _step(ctx, choices)
        exponent = 1.0
        if self.kind != "eipu":
            if state.init_fraction is None:
                state.init_fraction = ctx.spent_fraction
            exponent = cooling_exponent(ctx.spent_fraction, state.init_fraction)
        idx = propose_cost_aware(models, cost_model, step, crash, exponent)
        return available[idx]
