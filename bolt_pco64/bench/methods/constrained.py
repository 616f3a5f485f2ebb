"""Constrained BO on an objective GP and a constraint GP (:mod:`bolt_pco64.bo`).

The objective GP is fitted on the feasible observations, the constraint GP
on every margin (:func:`~bolt_pco64.bo.gp.fit_constrained_models`, warm-started
from the previous step's); their methods recommend and predict with the
objective GP.

Over the untried candidates (:class:`ConstrainedMethod`):

- ``qlognei`` / ``qlogei``: constrained qLogNEI / qLogEI;
- ``ts``: constrained Thompson sampling;
- ``qlognei_init3``: ``qlognei`` from the prior methods' 3-row initial
  design (their control, :mod:`~bolt_pco64.bench.methods.prior`).

Point methods (:class:`BoxMethod`; not in the default comparison; run them
with ``--methods qlognei,qlognei-box,qlognei-mixed``): the same models and
acquisition function as ``qlognei``, optimised over the box instead of
enumerating the untried rows (:mod:`bolt_pco64.bo.box`):

- ``qlognei-box``: ``optimize_acqf`` over the continuous bounds, snapped;
- ``qlognei-mixed``: ``optimize_acqf_mixed_alternating`` with every input an
  integer dimension, snapped.

Their models are fitted on the evaluated rows (the snapped configurations
that ran, repeats included), as ``qlognei``'s are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from bolt_pco64.bench.contract import Method, ObjectiveModel, RunContext
from bolt_pco64.bench.methods.state import ModelState, _run_state, _step

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.bo import ConstrainedModels

__all__ = ["BoxMethod", "ConstrainedMethod"]


def _fit_models(method: Method, ctx: RunContext) -> ConstrainedModels:
    """Fit the constrained models (warm-started from the previous step's)."""
    from bolt_pco64.bo import fit_constrained_models

    state = _run_state(method, ctx, ModelState)
    t0 = time.perf_counter()
    models = fit_constrained_models(
        ctx.X,
        ctx.y,
        ctx.margin,
        ctx.bounds,
        ctx.step_seed,
        warm_start=state.models,
    )
    state.models = models
    ctx.fit_seconds += time.perf_counter() - t0
    return models


class _ConstrainedModelsMethod(Method):
    """A method on :func:`~bolt_pco64.bo.gp.fit_constrained_models`' GPs
    (recommends and predicts with their objective GP)."""

    def new_state(self) -> ModelState:
        return ModelState()

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        models = _run_state(self, ctx, ModelState).models
        return None if models is None else models.objective


class ConstrainedMethod(_ConstrainedModelsMethod):
    """Constrained qLogNEI / qLogEI or Thompson sampling over the untried rows.

    Args:
        kind: ``"qlognei"``, ``"qlogei"`` or ``"ts"``.
        n_init: Its own initial-design size (a prefix of the seed's shared
            design), ``None`` for the comparison's.
    """

    def __init__(
        self, kind: Literal["qlognei", "qlogei", "ts"], n_init: int | None = None
    ) -> None:
        self.kind = kind
        self.n_init = n_init

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo import propose_acquisition, propose_thompson

        models = _fit_models(self, ctx)
        available = ctx.available
        choices = ctx.candidates[available]
        if models.objective is not None and self.kind == "ts":
            idx = propose_thompson(models, choices, ctx.q, ctx.generator)
        else:
            # No feasible observation yet: probability of feasibility.
            kind = self.kind if models.objective is not None else "pof"
            step = _step(ctx, choices)
            idx = propose_acquisition(kind, models, step)
        return available[idx]


class BoxMethod(_ConstrainedModelsMethod):
    """Constrained qLogNEI optimised over the box (points, snapped by the harness).

    Args:
        search: ``"box"`` (:func:`~bolt_pco64.bo.box.propose_box`) or
            ``"mixed"`` (:func:`~bolt_pco64.bo.box.propose_mixed`).
    """

    def __init__(self, search: Literal["box", "mixed"]) -> None:
        self.search = search

    def propose(self, ctx: RunContext) -> Tensor:
        from bolt_pco64.bo.box import propose_box, propose_mixed

        models = _fit_models(self, ctx)
        propose = propose_box if self.search == "box" else propose_mixed
        step = _step(ctx)
        return propose(models, step)
