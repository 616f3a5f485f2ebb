"""The contract between a method and the harness:
:class:`~bolt_pco64.bench.contract.Method` and
:class:`~bolt_pco64.bench.contract.RunContext`.

A method is an object with a :meth:`Method.propose` that, given the
:class:`RunContext` of one step, returns either ``q`` distinct untried row
indices (a long tensor or a sequence of ints) or a ``q x d`` floating tensor
of points inside the problem's bounds, which the harness snaps to rows
(:mod:`bolt_pco64.bench.proposals`). Optionally it declares

- :attr:`Method.n_init`: its own initial-design size (default: the
  comparison's ``n_init``); the harness evaluates that prefix of the seed's
  shared design (a permutation of the rows drawn from the seed alone), so
  methods with different sizes still start from the same rows;
- :meth:`Method.new_state`: the method's own store for one run
  (:attr:`RunContext.state`), e.g. a dataclass of its models; the harness
  creates it once per run and never reads it (default: an empty dict);
- :meth:`Method.recommend`: the row the method would return now, asked after
  every evaluation (the records' ``recommended_row`` and inference regret);
- :meth:`Method.predict`: the method's :class:`Prediction` of the objective
  at configurations, with the model of its last proposal (what
  ``--early-stop posterior`` takes as its prior), ``None`` without a model
  (a flat prior);
- :meth:`Method.objective_model`: the objective GP of its last proposal, the
  one thing a method on a constant-mean ``SingleTaskGP`` needs: the default
  :meth:`~Method.recommend` re-conditions it on every feasible observation
  (hyperparameters kept) and returns the evaluated feasible configuration of
  highest posterior mean (without one: the best observed configuration),
  the default :meth:`~Method.predict` reads its posterior. A method with
  another model (``prior_ei``'s prior-mean GPs) overrides those two instead.

The harness never reads a method's models or state itself.

Runs are named by a :class:`RunKey` (``method/seed``).

A plain function ``fn(ctx) -> rows or points`` is a method too
(:class:`FunctionMethod` wraps it; :func:`~bolt_pco64.bench.methods.registry.register_method`
does so). See ``docs/architecture.md`` for where the contract sits. The
module imports torch only when a context is used, so that the command line
can list methods without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from bolt_pco64.params import Interval, check_param

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
    "Prediction",
    "Proposed",
    "RunContext",
    "RunKey",
    "as_method",
    "initial_design_size",
    "method_entry_points",
    "posterior_prediction",
    "recommend_by_posterior_mean",
]

#: The entry-point group through which other packages add methods.
ENTRY_POINT_GROUP = "bolt_pco64.methods"

#: What :meth:`Method.propose` returns: rows (a long tensor or ints) or points.
Proposed: TypeAlias = "Tensor | Sequence[int]"
#: What :meth:`Method.objective_model` returns: a BoTorch ``SingleTaskGP``
#: of the throughput on the feasible observations, whose hyperparameters
#: :func:`~bolt_pco64.bo.gp.fit_gp` can take as ``warm_start`` (the default
#: :meth:`Method.recommend` conditions it on new data with ``optimize=False``).
ObjectiveModel: TypeAlias = "SingleTaskGP"


class Prediction(NamedTuple):
    """A method's prediction of the objective at ``q`` configurations.

    Attributes:
        mean: ``q``-dim tensor of the posterior means.
        variance: ``q``-dim tensor of the posterior variances of the latent
            function (no observation noise).
    """

    mean: Tensor
    variance: Tensor


class RunKey(NamedTuple):
    """The name of one run of a comparison: a method and a seed.

    ``str(key)`` is ``"method/seed"`` (the keys of ``errors`` and of
    ``meta.json``'s ``runs``), :meth:`parse` reads it back with an integer
    seed, :attr:`file_stem` names the run's file. A key is the tuple
    ``(method, seed)``, so it unpacks, sorts, and equals (and hashes as) that
    tuple, as the ``failed`` sets of :mod:`bolt_pco64.bench.stats` hold them.

    Attributes:
        method: The method's name.
        seed: The run's seed.
    """

    method: str
    seed: int

    def __str__(self) -> str:
        return f"{self.method}/{self.seed}"

    @classmethod
    def parse(cls, text: str) -> RunKey:
        """The key written as ``"method/seed"`` (``str`` of a key).

        Raises:
            ValueError: If ``text`` is not ``"method/seed"`` with a method
                name and an integer seed.
        """
        method, sep, seed = str(text).rpartition("/")
        if sep and method and seed.lstrip("-").isdigit():
            return cls(method, int(seed))
        raise ValueError(f"Expected a run key 'method/seed', got {text!r}.")

    @classmethod
    def parse_all(cls, texts: Iterable[str]) -> set[RunKey]:
        """:meth:`parse` of each of ``texts`` (e.g. ``meta.json``'s
        ``runs.failed`` or a result's ``errors``), as a set."""
        return {cls.parse(t) for t in texts}

    @property
    def file_stem(self) -> str:
        """The stem of the run's file, ``"<method>__seed<seed>"``."""
        return f"{self.method}__seed{self.seed}"


def _no_rows() -> Tensor:
    import torch

    return torch.zeros(0, dtype=torch.long)


@dataclass
class RunContext:
    """What a method sees when it proposes the next evaluations.

    Attributes:
        problem: The test problem (a :class:`~bolt_pco64.problem.PCO16`, ``PCO32`` or
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
        state: The method's own store, made by its :meth:`Method.new_state`
            at the start of a run and kept across the run's steps (the
            built-in model methods keep their last models there, in a
            dataclass of their own, to warm-start the next fit and to
            recommend and predict from). The harness never reads it. A
            context built without one holds an empty dict, which the
            built-in methods replace with their own on first use.
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
    state: Any = field(default_factory=dict)

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

    def new_state(self) -> Any:
        """A fresh :attr:`.RunContext.state` for one run (default: an empty dict).

        A method with models returns an object of its own (a dataclass) that
        its :meth:`propose` fills and its
        :meth:`~bolt_pco64.bench.contract.Method.recommend` and
        :meth:`~bolt_pco64.bench.contract.Method.predict` read.
        """
        return {}

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

        What the default :meth:`~bolt_pco64.bench.contract.Method.recommend`
        and :meth:`~bolt_pco64.bench.contract.Method.predict` read (the harness
        does not): a method whose model is a constant-mean ``SingleTaskGP`` of
        the feasible observations needs only this; one with another model
        overrides :meth:`~bolt_pco64.bench.contract.Method.recommend` and
        :meth:`~bolt_pco64.bench.contract.Method.predict`.
        The default, ``None``: no model.
        """
        return None

    def recommend(self, ctx: RunContext) -> int | None:
        """The row the method would return now, among the evaluated ones.

        Called by the harness after every evaluation (once one is feasible),
        with ``ctx`` holding every result in so far (``ctx.q`` is 0; draw
        nothing from ``ctx.generator``). The default: with an
        :meth:`objective_model`, the evaluated feasible configuration of
        highest posterior mean under it re-conditioned on every feasible
        observation, hyperparameters kept (:func:`recommend_by_posterior_mean`);
        without one, the best observed feasible configuration (ties to the
        earliest evaluation).

        Returns:
            A row index (one of ``ctx.rows``), or ``None`` when no evaluation
            is feasible.
        """
        return recommend_by_posterior_mean(ctx, self.objective_model(ctx))

    def predict(self, ctx: RunContext, X: Tensor) -> Prediction | None:
        """The method's prediction of the objective at ``X``, or ``None``.

        Called by the harness right after :meth:`propose` with the same
        ``ctx``, at the proposed configurations, when the early-stop policy
        reads a prior (``--early-stop posterior``). The default: the
        posterior of :meth:`objective_model` (:func:`posterior_prediction`);
        ``None`` without one (no model: a flat prior).

        Args:
            ctx: The context of the proposal just made.
            X: ``q x d``-dim tensor of configurations.

        Returns:
            The :class:`Prediction` of the model of the last proposal.
        """
        model = self.objective_model(ctx)
        return None if model is None else posterior_prediction(model, X)


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


def initial_design_size(
    method: Method, n_init: int, budget: int | None, name: str = ""
) -> int:
    """The initial-design size of ``method``: its own ``n_init``, else
    ``n_init`` (the comparison's).

    Raises:
        ValueError: If the method's ``n_init`` is not an integer in
            ``1..budget`` (``>= 1`` on a GPU-hour budget, ``budget=None``).
    """
    own = method.n_init
    if own is None:
        return n_init
    check_param(f"n_init of method {name!r}", own, Interval(Integral, 1, budget))
    return own


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


def posterior_prediction(model: Any, X: Tensor) -> Prediction:
    """The :class:`Prediction` of a BoTorch model of one output at ``X``
    (``q x d``-dim tensor): its posterior mean and latent variance."""
    import torch

    with torch.no_grad():
        post = model.posterior(X.to(torch.double))
        return Prediction(post.mean.reshape(-1), post.variance.reshape(-1))


def recommend_by_posterior_mean(
    ctx: RunContext,
    model: Any,
    recondition: Callable[[Tensor, Tensor], Any] | None = None,
) -> int | None:
    """The evaluated feasible row of highest posterior mean under ``model``
    re-conditioned on every feasible observation of ``ctx`` (its
    hyperparameters kept), ties to the earliest evaluation; without a model
    the best observed feasible row.

    Args:
        ctx: The context (every result in so far).
        model: The objective GP of the last proposal, or ``None``.
        recondition: ``(X, y) -> model`` conditioning ``model`` on the
            feasible ``n x d``-dim ``X`` and ``n``-dim ``y``; default:
            :func:`~bolt_pco64.bo.gp.fit_gp` with ``warm_start=model,
            optimize=False`` (a constant-mean ``SingleTaskGP``).

    Returns:
        A row index (one of ``ctx.rows``), ``None`` when no evaluation is
        feasible.
    """
    import torch

    feasible = ctx.feasible
    if not bool(feasible.any()):
        return None
    X, y = ctx.X, ctx.y
    if model is None:
        best = torch.where(feasible, y, torch.full_like(y, -torch.inf))
        return int(ctx.rows[int(torch.argmax(best))])
    from bolt_pco64.bo import fit_gp, recommend

    if recondition is None:
        model = fit_gp(
            X[feasible], y[feasible], ctx.bounds, 0, warm_start=model, optimize=False
        )
    else:
        model = recondition(X[feasible], y[feasible])
    i = recommend(model, X, y)
    return None if i is None else int(ctx.rows[i])
