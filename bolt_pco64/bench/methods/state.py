"""What a built-in method keeps across one run's steps (``ctx.state``).

A :class:`~bolt_pco64.bench.contract.Method` makes its run's state with
:meth:`~bolt_pco64.bench.contract.Method.new_state`; each built-in model
method keeps its models in a dataclass of its own: :class:`ModelState`
(the constrained GPs of ``qlognei``, ``qlogei``, ``ts`` and the point
methods), :class:`NaiveState` (``naive``'s one GP), :class:`CostAwareState`
(the cost-aware methods), :class:`~bolt_pco64.bo.crash.CrashAwareState` and
:class:`~bolt_pco64.bo.prior.fit.PriorState` (defined beside the proposals that
fill them). The methods read it back with ``_run_state``, which refuses
another method's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from botorch.models import SingleTaskGP
    from torch import Tensor

    from bolt_pco64.bench.contract import Method, RunContext
    from bolt_pco64.bo import ConstrainedModels
    from bolt_pco64.bo.gp import ProposalContext
    from bolt_pco64.tables.time_model import TimeModel

__all__ = ["CostAwareState", "ModelState", "NaiveState"]


@dataclass
class ModelState:
    """What a method on the constrained GPs keeps across one run's steps.

    Attributes:
        models: The last fitted :class:`~bolt_pco64.bo.gp.ConstrainedModels`
            (``None`` before the first proposal).
    """

    models: ConstrainedModels | None = None


@dataclass
class NaiveState:
    """What ``naive`` keeps across one run's steps.

    Attributes:
        model: Its last GP (OOMs imputed), ``None`` before the first proposal.
    """

    model: SingleTaskGP | None = None


@dataclass
class CostAwareState(ModelState):
    """What the cost-aware methods keep across one run's steps.

    Attributes:
        models: The last constrained GPs.
        cost_model: The last GP of the log run cost (``None`` before the
            first feasible observation).
        time_model: The table's time model (the costs a scheduler reports).
        init_fraction: The budget share spent at the first proposal
            (``ei_cool``'s initial design), ``None`` before it.
    """

    cost_model: SingleTaskGP | None = None
    time_model: TimeModel | None = None
    init_fraction: float | None = None


_S = TypeVar("_S")


def _run_state(method: Method, ctx: RunContext, kind: type[_S]) -> _S:
    """``ctx.state`` as ``method``'s own state; the empty dict of a context
    built without one is replaced by a fresh :meth:`~Method.new_state`.

    Raises:
        TypeError: If ``ctx.state`` is another object.
    """
    state = ctx.state
    if isinstance(state, dict) and not state:
        state = ctx.state = method.new_state()
    if not isinstance(state, kind):
        raise TypeError(
            f"Expected ctx.state made by {type(method).__name__}.new_state(), "
            f"got {type(state).__name__}."
        )
    return state


def _step(ctx: RunContext, choices: Tensor | None = None) -> ProposalContext:
    """The harness step ``ctx`` as the :class:`~bolt_pco64.bo.gp.ProposalContext`
    the proposals of :mod:`bolt_pco64.bo` read (``choices``: the untried
    configurations of a discrete proposal, ``None`` for a box proposal)."""
    from bolt_pco64.bo.gp import ProposalContext

    return ProposalContext(
        ctx.X,
        ctx.y,
        ctx.bounds,
        ctx.q,
        ctx.step_seed,
        choices,
        ctx.X_pending,
        ctx.margin,
    )
