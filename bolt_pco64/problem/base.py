"""The pco problem, :class:`~bolt_pco64.problem.PCO`: its constructor, lookups
and BoTorch's private hooks on the rows of a table."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from botorch.test_functions.synthetic import ConstrainedSyntheticTestFunction
from torch import Tensor

from bolt_pco64.instances import Instance
from bolt_pco64.problem.arguments import (
    NoiseStd,
    TableLike,
    _check_bounds,
    _check_instance,
    _check_options,
)
from bolt_pco64.problem.buffers import _frozen, _gather, _result_dtype
from bolt_pco64.problem.constraint import PCOOutcomeConstraint
from bolt_pco64.problem.far_snap import _warn_far_snap
from bolt_pco64.problem.hooks import _add_measured_noise, _snap_inputs
from bolt_pco64.problem.oom import OOM_POLICIES, OOMPolicy
from bolt_pco64.tables.table import Table, load_table

__all__ = ["PCO"]


class PCO(ConstrainedSyntheticTestFunction):
    r"""A pco problem: training throughput by parallelism configuration.

    A ``d``-dimensional maximisation problem over the rows of a tabular
    benchmark; :class:`PCO16`, :class:`PCO32` and :class:`PCO64` bind it to one
    instance each (:attr:`instance`, which names the inputs, in ``X`` order,
    and their encoding: log2 columns as stored, ``zero_stage`` as the ordinal
    0/1/2 of stage 0/2/3). Every input is declared discrete (BoTorch's
    ``discrete_inds``: ordered integers between the bounds; none continuous or
    categorical), so BoTorch's mixed optimizers know the structure.

    A point snaps to the nearest table row (Euclidean distance in the encoding; ties go
    to the earliest row in canonical order). ``f(X)`` accepts any real point inside
    ``bounds``: it validates ``X`` (errors name the offending entry and input column)
    and snaps it before BoTorch's ``forward`` runs.
    :meth:`~botorch.test_functions.base.BaseTestProblem.evaluate_true`,
    :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.evaluate_slack_true`
    and :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.is_feasible` are
    BoTorch's own: integer points inside the bounds, snapped likewise. Only 780 of the
    29,160 integer points of pco64's bounds are configurations: :meth:`is_configuration`
    says which, and a snap farther than one lattice step (:data:`FAR_SNAP_DISTANCE`)
    warns once per problem (:class:`FarSnapWarning`).

    The value is the row's ``throughput_mean``, **NaN where the configuration ran out of
    memory** -- a crash, not a bad value -- unless ``oom="impute"``. The memory
    constraint is ``outcome_constraint``, a :class:`PCOOutcomeConstraint` (``c(X) <= 0``
    iff feasible);
    :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.evaluate_slack_true`
    is ``-c(X)``, so
    :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.is_feasible` works as
    in BoTorch.

    The class attributes (``dim``, ``_bounds``, ``_optimal_value``,
    ``_optimizers``) state the instance's published figures; a problem
    recomputes bounds, optimum and optimizer from the table it serves, whatever
    its size.

    Attributes:
        instance (~bolt_pco64.instances.Instance): The instance this class
            serves (set by each subclass).
        measured_noise (bool): Whether evaluations get each row's measured
            ``throughput_std`` as noise.
        oom (OOMPolicy): The ``oom`` policy this problem was built with.
    """

    instance: ClassVar[Instance]
    num_objectives = 1
    num_constraints = 1
    _is_minimization_by_default = False
    _check_grad_at_opt = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """State a subclass's ``instance``'s published figures and input types
        as BoTorch's class attributes."""
        super().__init_subclass__(**kwargs)
        inst = cls.__dict__.get("instance")
        if inst is None:
            return
        cls.dim = inst.dim
        cls.continuous_inds = []
        cls.discrete_inds = list(range(inst.dim))
        cls.categorical_inds = []
        cls._bounds = [(float(lo), float(hi)) for lo, hi in inst.bounds]
        pub = inst.published
        cls._optimal_value = None if pub is None else pub.best_value
        cls._optimizers = (
            None if pub is None else [tuple(float(v) for v in pub.best_config)]
        )

    throughput_bits: Tensor
    std_bits: Tensor

    def __new__(
        cls, *args: Any, instance: str | Instance | None = None, **kwargs: Any
    ) -> PCO:
        """``PCO(instance=...)`` builds the problem class of that instance
        (:func:`problem_class`); a bound class is built as itself."""
        if instance is not None and "instance" not in cls.__dict__:
            # The bound classes subclass this one: imported when first needed.
            from bolt_pco64.problem.classes import problem_class

            bound = problem_class(instance)
            if issubclass(bound, cls):
                cls = bound
        return super().__new__(cls)

    def __init__(
        self,
        noise_std: NoiseStd = None,
        constraint_noise_std: float | list[float] | None = None,
        negate: bool = False,
        bounds: list[tuple[float, float]] | None = None,
        dtype: torch.dtype = torch.double,
        *,
        table: TableLike = None,
        oom: OOMPolicy = "nan",
        instance: str | Instance | None = None,
    ) -> None:
        r"""Build the problem on a table of the class's instance.

        The arguments are BoTorch's constrained test problems', in their order,
        then this package's own (keyword-only).

        Args:
            noise_std: ``None`` (noiseless), a float (homoscedastic Gaussian
                noise with that standard deviation, added by BoTorch's
                ``forward``), or ``"measured"``: each evaluation gets Gaussian
                noise with its own row's measured ``throughput_std``
                (heteroscedastic; NaN stays NaN) -- the standard error of the
                row's estimate (the runner's delta-method ``std / sqrt(n) /
                mean**2``, :mod:`bolt_pco64.estimators`). BoTorch's ``forward``
                takes one standard deviation per objective, so with
                ``"measured"`` the attribute ``noise_std`` is ``None``,
                ``measured_noise`` is True, and a forward hook adds the per-row
                noise. Noise uses the global torch generator, as in BoTorch;
                seed it with ``torch.manual_seed`` for repeatable noisy runs.
            constraint_noise_std: ``None`` or a float >= 0 (or a list of one):
                Gaussian noise BoTorch's ``evaluate_slack`` adds to the slack.
            negate: If True, negate the objective (as in BoTorch).
            bounds: ``None``, or the table's own bounds as ``d`` (lower, upper)
                pairs: the bounds are the bounding box of the table's
                configurations, and a point outside it has no row to snap to.
            dtype: The dtype of ``bounds``, ``optimizers`` and ``candidates()``.
            table: A path (parquet or raw CSV), a DataFrame, a loaded
                :class:`~bolt_pco64.table.Table` of the instance, or ``None``
                for the default source order (see
                :func:`~bolt_pco64.table.load_table`).
            oom: What a configuration that ran out of memory evaluates to:
                ``"nan"`` (the default and the contract: NaN, a crash) or
                ``"impute"`` (the anchor bolt-bench's rule: the mean
                ``throughput_mean`` of the equidistant nearest rows that ran,
                Euclidean in the encoded space; with ``"measured"`` noise, the
                mean of their ``throughput_std``). The slack is unchanged, so
                BoTorch's ``is_feasible`` still tells the crash. Computed once here.
            instance: With :class:`PCO` itself, the instance to serve (a name
                or any :class:`~bolt_pco64.instances.Instance`, e.g. a user's
                own cluster): ``PCO(instance=Instance(...), table=path)``
                builds its :func:`problem_class`. With a bound class,
                ``None`` or that class's instance.

        Raises:
            TypeError: If the class binds no instance and none is given.
            ValueError: If ``noise_std``, ``constraint_noise_std``, ``bounds``,
                ``oom`` or ``instance`` is invalid, or the table is another
                instance's.
            TableError: If the table breaks the instance's schema.
        """
        _check_instance(type(self), instance)
        _check_options(noise_std, constraint_noise_std, oom)
        self.table: Table = load_table(table, instance=self.instance)
        own_bounds = [
            tuple(float(v) for v in col) for col in self.table.bounds.T.tolist()
        ]
        _check_bounds(bounds, own_bounds)
        best = self.table.best_row
        self._bounds = own_bounds
        self._optimal_value = float(self.table.frame["throughput_mean"].iloc[best])
        self._optimizers = [tuple(float(v) for v in self.table.X[best].tolist())]
        self._worst_feasible_value = float(
            self.table.frame["throughput_mean"].iloc[self.table.worst_feasible_row]
        )
        measured = noise_std == "measured"
        super().__init__(
            noise_std=None if measured else noise_std,  # type: ignore[arg-type]
            constraint_noise_std=constraint_noise_std,
            negate=negate,
            dtype=dtype,
        )
        self.measured_noise: bool = measured
        self.oom: OOMPolicy = oom
        self._far_snap_warned = False
        self.outcome_constraint = PCOOutcomeConstraint(self.table)
        fill = OOM_POLICIES[oom]
        mean = self.table.column("throughput_mean")
        ran = ~mean.isnan()
        self.register_buffer("throughput_bits", _frozen(fill(mean, self.table.X, ran)))
        std = self.table.column("throughput_std")
        self.register_buffer("std_bits", _frozen(fill(std, self.table.X, ran)))
        self.register_forward_pre_hook(_snap_inputs, with_kwargs=True)
        self.register_forward_hook(_add_measured_noise, with_kwargs=True)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle a problem of a class built by :func:`problem_class` (which no
        module attribute names) through its instance; others as usual."""
        from bolt_pco64.problem.classes import _bare_problem, _built_class

        cls = type(self)
        if cls.__dict__.get("instance") is None or cls is not _built_class(
            cls.instance
        ):
            return super().__reduce_ex__(protocol)
        return (_bare_problem, (cls.instance,), self.__dict__.copy())

    # -- lookups -------------------------------------------------------------

    def candidates(self) -> Tensor:
        """All configurations, a ``N x d``-dim tensor in canonical order.

        On the problem's dtype and device: the choices for
        ``botorch.optim.optimize_acqf_discrete``. Row ``i`` is table row ``i``.
        """
        rows = self.outcome_constraint.snapper.rows
        return rows.to(dtype=self.bounds.dtype, copy=True)

    def lookup(self, X: Tensor) -> Tensor:
        """Indices of the rows that ``X`` snaps to (silently: no far-snap warning).

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim long tensor of canonical row indices; read any
            column with ``f.table.frame[column].to_numpy()[rows]``.
        """
        return self.outcome_constraint.lookup(X)

    def is_configuration(self, X: Tensor) -> Tensor:
        """Whether each point is a configuration (a row of the table) exactly.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim bool tensor on ``X``'s device: True where the
            point equals its snapped row in every input (it evaluates itself),
            False where evaluating it would evaluate another configuration.
        """
        rows = self.lookup(X)
        configs = self._configurations(rows, torch.float64)
        return (X.detach().to(torch.float64) == configs).all(dim=-1)

    def _configurations(self, rows: Tensor, dtype: torch.dtype) -> Tensor:
        """The ``batch_shape x d``-dim configurations of rows, a new tensor."""
        table = self.outcome_constraint.snapper.rows
        flat = torch.index_select(table, 0, rows.reshape(-1).to(table.device))
        return flat.to(dtype).reshape(*rows.shape, table.shape[-1]).to(rows.device)

    def _snap(self, X: Tensor) -> Tensor:
        """Validated row indices of ``X``, warning once about a far snap."""
        rows = self.lookup(X)
        if not self._far_snap_warned and X.numel():
            configs = self._configurations(rows, torch.float64)
            self._far_snap_warned = _warn_far_snap(
                X, configs, self.bounds, self.outcome_constraint.snapper.num_rows
            )
        return rows

    # -- BoTorch's hooks ------------------------------------------------------

    def _evaluate_true(self, X: Tensor) -> Tensor:
        """Noiseless throughput of the rows ``X`` snaps to.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A new ``batch_shape``-dim tensor (X's dtype and device; the
            problem's dtype for integer ``X``): ``throughput_mean``, NaN where
            the row ran out of memory (``oom="nan"``) or its nearest rows' mean
            (``oom="impute"``). Never a view of the table.
        """
        rows = self._snap(X)
        return _gather(self.throughput_bits, rows, _result_dtype(X, self.bounds.dtype))

    def _evaluate_slack_true(self, X: Tensor) -> Tensor:
        """Constraint slack ``-c(X)`` of ``batch_shape x d``-dim points.

        Returns:
            A new ``batch_shape x 1``-dim tensor, ``>= 0`` iff the configuration
            fits in memory (BoTorch's slack convention).
        """
        rows = self._snap(X)
        margin = _gather(
            self.outcome_constraint.margin_bits,
            rows,
            _result_dtype(X, self.bounds.dtype),
        )
        return -margin.unsqueeze(-1)

    @property
    def is_simulated(self) -> bool:
        """Whether the table served is the simulated stand-in."""
        return self.table.is_simulated
