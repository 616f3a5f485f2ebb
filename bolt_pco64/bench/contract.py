"""The contract between a method and the harness: :class:`Method` and :class:`RunContext`.

A method is an object with a :meth:`Method.propose` that, given the
:class:`RunContext` of one step, returns either ``q`` distinct untried row
indices (a long tensor or a sequence of ints) or a ``q x d`` floating tensor
of points inside the problem's bounds, which the harness snaps to rows
(:mod:`bolt_pco64.bench.proposals`). Optionally it declares

- :attr:`Method.n_init`: its own initial-design size (default: the
  comparison's ``n_init``); the harness evaluates that prefix of the seed's
  shared design (a permutation of the rows drawn from the seed alone), so
  methods with different sizes still start from the same rows;
- :meth:`Method.objective_model`: the GP of the objective it last fitted
  (:data:`ObjectiveModel`). The harness re-conditions it on every feasible
  observation (hyperparameters kept) after each evaluation and recommends the
  evaluated feasible configuration of highest posterior mean (the inference
  regret); without one it recommends the best observed configuration.

A plain function ``fn(ctx) -> rows or points`` is a method too
(:class:`FunctionMethod` wraps it; :func:`~bolt_pco64.bench.register_method`
does so). See ``docs/architecture.md`` for where the contract sits. The
module imports torch only when a context is used, so that the command line
can list methods without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    import torch
    from botorch.models import SingleTaskGP
    from torch import Tensor

    from bolt_pco64.problem import PCO

__all__ = [
    "ENTRY_POINT_GROUP",
    "FunctionMethod",
    "Method",
    "MethodFn",
    "ObjectiveModel",
    "Proposed",
    "RunContext",
    "as_method",
    "method_entry_points",
]

#: The entry-point group through which other packages add methods.
ENTRY_POINT_GROUP = "bolt_pco64.methods"

#: What :meth:`Method.propose` returns: rows (a long tensor or ints) or points.
Proposed: TypeAlias = "Tensor | Sequence[int]"
#: The re-conditionable model of the objective: a BoTorch ``SingleTaskGP`` of
#: the throughput on the feasible observations, whose hyperparameters
#: :func:`~bolt_pco64.bo.fit_gp` can take as ``warm_start`` (the harness
#: conditions it on new data with ``optimize=False``).
ObjectiveModel: TypeAlias = "SingleTaskGP"


def _no_rows() -> Tensor:
    import torch

    return torch.zeros(0, dtype=torch.long)


@dataclass
class RunContext:
    """What a method sees when it proposes the next evaluations.

    Attributes:
        problem: The test problem (a :class:`~bolt_pco64.PCO16`, ``PCO32`` or
            ``PCO64``).
        candidates: ``N x d``-dim tensor of all configurations (canonical order).
        rows: ``n``-dim long tensor of the rows evaluated so far, in order
            (a row repeated by a point method appears again).
        y: ``n``-dim tensor of observed throughput, NaN where the run OOMed.
        margin: ``n``-dim tensor of the observed memory margins.
        untried: ``m``-dim long tensor of the rows not evaluated yet
            (ascending); pending rows are among them.
        q: How many evaluations to propose (rows or points).
        seed: The run's seed.
        step_seed: A fresh integer seed for this step (from ``generator``).
        generator: The method's random number generator for this run.
        budget: Evaluations of the run, initial design included.
        pending: ``p``-dim long tensor of rows in flight (proposed, not yet
            observed; empty while the harness evaluates synchronously). A
            method should not propose them again and may pass their
            configurations as ``X_pending`` to its acquisition function; the
            built-in model methods do both (:attr:`available`).
        spent_fraction: The fraction of the run's budget spent before this
            step, in ``[0, 1)``: evaluations so far over ``budget``.
        fit_seconds: Time spent fitting models; a method adds to it.
        state: The method's own store, a dict that persists across the steps
            of one run (the built-in model methods keep their last models
            there to warm-start the next fit). The harness never reads it.
    """

    problem: PCO
    candidates: Tensor
    rows: Tensor
    y: Tensor
    margin: Tensor
    untried: Tensor
    q: int
    seed: int
    step_seed: int
    generator: torch.Generator
    budget: int = 0
    pending: Tensor = field(default_factory=_no_rows)
    spent_fraction: float = 0.0
    fit_seconds: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def X(self) -> Tensor:
        """``n x d``-dim tensor of the evaluated configurations."""
        return self.candidates[self.rows]

    @property
    def feasible(self) -> Tensor:
        """``n``-dim bool tensor: which evaluations ran."""
        return ~self.y.isnan()

    @property
    def bounds(self) -> Tensor:
        """``2 x d``-dim tensor of the problem's bounds."""
        return self.problem.bounds.to(self.candidates)

    @property
    def available(self) -> Tensor:
        """``k``-dim long tensor: the untried rows that are not pending (ascending)."""
        if self.pending.numel() == 0:
            return self.untried
        import torch

        return self.untried[~torch.isin(self.untried, self.pending)]

    @property
    def X_pending(self) -> Tensor | None:
        """``p x d``-dim tensor of the pending configurations, ``None`` if none."""
        if self.pending.numel() == 0:
            return None
        return self.candidates[self.pending]


class Method:
    """Base class of a benchmark method (subclass it, or register a function).

    Attributes:
        n_init: The initial-design size this method starts from, ``None`` for
            the comparison's ``n_init``. The harness evaluates that prefix of
            the seed's shared design and records the size in the run's file
            and ``meta.json``.
    """

    n_init: int | None = None

    def propose(self, ctx: RunContext) -> Proposed:
        """The next evaluations: ``q`` distinct untried rows or ``q x d`` points.

        Draw randomness only from ``ctx.generator`` / ``ctx.step_seed``; add
        the time spent fitting models to ``ctx.fit_seconds``.
        """
        raise NotImplementedError

    def __call__(self, ctx: RunContext) -> Proposed:
        """:meth:`propose` (a method is also callable, as a function method is)."""
        return self.propose(ctx)

    def objective_model(self, ctx: RunContext) -> ObjectiveModel | None:
        """The objective GP fitted by the last :meth:`propose`, or ``None``.

        Called by the harness right after :meth:`propose` with the same
        ``ctx``. The default, ``None``, recommends the best observed
        configuration.
        """
        return None


#: A method written as a function of the step's context.
MethodFn = Callable[[RunContext], Proposed]


class FunctionMethod(Method):
    """A function ``fn(ctx) -> rows or points`` as a :class:`Method`.

    Args:
        fn: The function (it recommends the best observed configuration).
        n_init: Its initial-design size, ``None`` for the comparison's.
    """

    def __init__(self, fn: MethodFn, n_init: int | None = None) -> None:
        self.fn = fn
        self.n_init = n_init

    def propose(self, ctx: RunContext) -> Proposed:
        return self.fn(ctx)

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        return f"FunctionMethod({name}, n_init={self.n_init})"


def as_method(obj: object, n_init: int | None = None) -> Method:
    """``obj`` as a :class:`Method`: an instance as it is, a subclass
    instantiated without arguments, a plain callable wrapped.

    Raises:
        TypeError: If ``obj`` is none of these, or ``n_init`` is given with
            a :class:`Method` (which states its own).
    """
    if isinstance(obj, type) and issubclass(obj, Method):
        obj = obj()
    if isinstance(obj, Method):
        if n_init is not None:
            raise TypeError(
                f"Expected n_init only with a function, got a Method ({obj!r}); "
                "set its n_init attribute instead."
            )
        return obj
    if callable(obj):
        return FunctionMethod(obj, n_init)
    raise TypeError(
        f"Expected a Method, a Method subclass or a callable, got {type(obj).__name__}."
    )


def method_entry_points() -> dict[str, EntryPoint]:
    """The :data:`ENTRY_POINT_GROUP` entry points by name (the first of a
    repeated name), none of them loaded."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep)
    return found
