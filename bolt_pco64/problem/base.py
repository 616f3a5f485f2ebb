"""The pco problem, :class:`~bolt_pco64.problem.PCO`: its constructor, its
evaluations on the rows of a table, its lookups and the grid in BoTorch's terms."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from botorch.test_functions.synthetic import ConstrainedSyntheticTestFunction
from torch import Tensor

from bolt_pco64.instances import Instance
from bolt_pco64.problem.arguments import (
    NoiseStd,
    TableLike,
    _check_bounds,
    _check_options,
    _resolve_instance,
)
from bolt_pco64.problem.buffers import _frozen, _gather, _result_dtype
from bolt_pco64.problem.constraint import PCOOutcomeConstraint
from bolt_pco64.problem.counts import SnapCounts
from bolt_pco64.problem.grid import discrete_levels, linear_constraints
from bolt_pco64.problem.oom import OOM_POLICIES, OOMPolicy
from bolt_pco64.problem.points import validate_points
from bolt_pco64.snap import RowSnapper, Snap
from bolt_pco64.tables.table import Table, load_table

__all__ = ["PCO"]


class PCO(ConstrainedSyntheticTestFunction):
    r"""A pco problem: training throughput by parallelism configuration.

    A ``d``-dimensional maximisation problem over the rows of a tabular
    benchmark of an :attr:`instance` (which names the inputs, in ``X`` order,
    and their encoding: log2 columns as stored, ``zero_stage`` as the ordinal
    0/1/2 of stage 0/2/3): ``PCO(instance="pco16")``, or
    ``PCO(instance=Instance(...), table=path)`` for a user's own cluster;
    :class:`PCO16`, :class:`PCO32` and :class:`PCO64` fix the instance. Every
    input is declared discrete (BoTorch's ``discrete_inds``: ordered integers
    between the bounds; none continuous or categorical).

    Every evaluation takes any real point inside ``bounds``: a point snaps to
    the nearest table row (Euclidean distance in the encoding; ties go to the
    earliest row in canonical order). As BoTorch's contract has it, ``f(X)`` is
    ``forward``, and ``f.forward(X, noise=False)`` equals
    ``f.evaluate_true(X)``: one validation pass (errors name the entry, its
    input and its exact value) and one row lookup per evaluation. Only 780 of
    the 29,160 integer points of pco64's bounds are configurations:
    :meth:`is_configuration` says which, :attr:`snap_counts` counts the points
    the objective evaluated that were not (and those that snapped far), and
    the grid is offered in BoTorch's terms (:attr:`discrete_dims`,
    :attr:`inequality_constraints`, :meth:`project`).

    The value is the row's ``throughput_mean``, **NaN where the configuration
    ran out of memory** -- a crash, not a bad value -- unless
    ``oom="impute"``. The memory constraint is :attr:`outcome_constraint`, a
    :class:`PCOOutcomeConstraint` (``c(X) <= 0`` iff feasible, noisy with
    ``constraint_noise_std``);
    :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.evaluate_slack`
    is ``-c(X)``, so
    :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.is_feasible`
    works as in BoTorch.

    Bounds, optimum and optimizer are the table's, whatever its size (the
    class attributes ``dim``, ``_bounds``, ``_optimal_value`` and
    ``_optimizers`` of :class:`PCO16`, :class:`PCO32` and :class:`PCO64` state
    their instance's published figures).

    Attributes:
        instance (~bolt_pco64.instances.Instance): The instance served (a
            class attribute of :class:`PCO16`, :class:`PCO32`, :class:`PCO64`).
        table (~bolt_pco64.tables.table.Table): The table served.
        outcome_constraint (PCOOutcomeConstraint): The memory constraint.
        measured_noise (bool): Whether evaluations get each row's measured
            ``throughput_std`` as noise.
        oom (OOMPolicy): The ``oom`` policy this problem was built with.
        snap_counts (SnapCounts): What the objective's evaluations snapped.
    """

    instance: Instance
    num_objectives = 1
    num_constraints = 1
    _is_minimization_by_default = False
    _check_grad_at_opt = False

    throughput_bits: Tensor
    std_bits: Tensor

    def __init__(
        self,
        noise_std: NoiseStd = None,
        constraint_noise_std: float | list[float] | None = None,
        negate: bool = False,
        bounds: list[tuple[float, float]] | None = None,
        dtype: torch.dtype = torch.double,
        *,
        instance: str | Instance | None = None,
        table: TableLike = None,
        oom: OOMPolicy = "nan",
    ) -> None:
        r"""Build the problem on a table of its instance.

        The arguments are BoTorch's constrained test problems', in their order,
        then this package's own (keyword-only).

        Args:
            noise_std: ``None`` (noiseless), a float (homoscedastic Gaussian
                noise, added as BoTorch's ``forward`` adds it), or
                ``"measured"``: Gaussian noise with each row's measured
                ``throughput_std``, the standard error of its estimate
                (:mod:`bolt_pco64.tables.estimators`; NaN stays NaN); then the
                attribute ``noise_std`` is ``None`` and ``measured_noise``
                True. Noise uses the global torch generator, as in BoTorch.
            constraint_noise_std: ``None`` or a float >= 0 (or a list of one):
                Gaussian noise on the constraint wherever it is served,
                :meth:`~botorch.test_functions.base.ConstrainedBaseTestProblem.evaluate_slack`
                and :attr:`outcome_constraint` alike (``noise=False`` gives
                the noiseless values).
            negate: If True, negate the objective (as in BoTorch).
            bounds: ``None``, or the table's own bounds (the bounding box of
                its configurations) as ``d`` (lower, upper) pairs.
            dtype: The dtype of ``bounds``, ``optimizers`` and ``candidates()``.
            instance: The instance to serve: a name (``"pco16"``) or any
                :class:`~bolt_pco64.instances.Instance`, e.g. a user's own
                cluster. ``None``: the class's (:class:`PCO64`'s pco64), else
                the instance of a loaded :class:`~bolt_pco64.tables.table.Table`.
            table: A path (parquet or raw CSV), a DataFrame, a loaded
                :class:`~bolt_pco64.tables.table.Table` of the instance, or ``None``
                for the default source order (see
                :func:`~bolt_pco64.tables.table.load_table`).
            oom: What a configuration that ran out of memory evaluates to:
                ``"nan"`` (the default and the contract: a crash) or
                ``"impute"`` (the mean of its equidistant nearest rows that
                ran, :data:`~bolt_pco64.problem.OOM_POLICIES`); the slack is
                unchanged, so ``is_feasible`` still tells the crash.

        Raises:
            TypeError: If no instance is named (``PCO`` with neither
                ``instance`` nor a loaded table).
            ValueError: If ``noise_std``, ``constraint_noise_std``, ``bounds``,
                ``oom`` or ``instance`` is invalid (another instance than the
                class's), or the table is another instance's.
            TableError: If the table breaks the instance's schema.
        """
        fixed = getattr(type(self), "instance", None)
        inst = _resolve_instance(fixed, type(self).__name__, instance, table)
        _check_options(noise_std, constraint_noise_std, oom)
        self.instance = inst
        self.table: Table = load_table(table, instance=inst)
        self._take_figures(bounds)
        measured = noise_std == "measured"
        super().__init__(
            noise_std=None if measured else noise_std,  # type: ignore[arg-type]
            constraint_noise_std=constraint_noise_std,
            negate=negate,
            dtype=dtype,
        )
        self.measured_noise: bool = measured
        self.oom: OOMPolicy = oom
        self.snap_counts = SnapCounts()
        self.outcome_constraint = PCOOutcomeConstraint(
            self.table, _single(self.constraint_noise_std)
        )
        mean = self.table.column("throughput_mean")
        ran, fill = ~mean.isnan(), OOM_POLICIES[oom]
        self.register_buffer("throughput_bits", _frozen(fill(mean, self.table.X, ran)))
        std = self.table.column("throughput_std")
        self.register_buffer("std_bits", _frozen(fill(std, self.table.X, ran)))

    def _take_figures(self, bounds: list[tuple[float, float]] | None) -> None:
        """BoTorch's class-level figures (dimension, input kinds, bounds,
        optimum, optimizer, worst feasible value) from the loaded table,
        after checking ``bounds`` against the table's own."""
        own_bounds = [
            tuple(float(v) for v in col) for col in self.table.bounds.T.tolist()
        ]
        _check_bounds(bounds, own_bounds)
        best = self.table.best_row
        throughput = self.table.frame["throughput_mean"]
        self.dim = self.instance.dim
        self.continuous_inds: list[int] = []
        self.discrete_inds: list[int] = list(range(self.dim))
        self.categorical_inds: list[int] = []
        self._bounds = own_bounds
        self._optimal_value = float(throughput.iloc[best])
        self._optimizers = [tuple(float(v) for v in self.table.X[best].tolist())]
        self._worst_feasible_value = float(
            throughput.iloc[self.table.worst_feasible_row]
        )

    @property
    def constraint_noise_std(self) -> float | list[float] | None:  # type: ignore[override]
        """The constraint's noise (BoTorch's attribute); setting it also sets
        :attr:`outcome_constraint`'s ``noise_std``."""
        return self.__dict__.get("_constraint_noise_std")

    @constraint_noise_std.setter
    def constraint_noise_std(self, value: float | list[float] | None) -> None:
        self.__dict__["_constraint_noise_std"] = value
        if "outcome_constraint" in self._modules:
            self.outcome_constraint.noise_std = _single(value)

    # -- evaluations: one validation pass and one lookup each -----------------

    @property
    def _snapper(self) -> RowSnapper:
        return self.outcome_constraint.snapper

    def _snap(self, X: Tensor) -> Snap:
        """Validate ``X`` (one pass) and snap it, counting what snapped."""
        validate_points(X, self.bounds, self.instance.input_columns)
        snap = self._snapper.nearest(X)
        self.snap_counts.add(snap)
        return snap

    def _throughput(self, rows: Tensor, X: Tensor) -> Tensor:
        return _gather(self.throughput_bits, rows, _result_dtype(X, self.bounds.dtype))

    def forward(self, X: Tensor, noise: bool = True) -> Tensor:
        """Evaluate the objective at any real points inside the bounds.

        Args:
            X: A ``batch_shape x d``-dim tensor; each point snaps to its
                nearest configuration.
            noise: If True, add the observation noise (``noise_std``, or each
                row's own with ``"measured"``), as BoTorch's ``forward`` does.

        Returns:
            A new ``batch_shape``-dim tensor (X's dtype and device; the
            problem's dtype for integer ``X``), negated if ``negate``;
            ``forward(X, noise=False)`` is :meth:`evaluate_true`.
        """
        rows = self._snap(X).rows
        f = self._throughput(rows, X)
        if noise and self.noise_std is not None:
            std = torch.tensor(self.noise_std, device=f.device, dtype=f.dtype)
            f += std * torch.randn_like(f)
        elif noise and self.measured_noise:
            f += _gather(self.std_bits, rows, f.dtype) * torch.randn_like(f)
        return -f if self.negate else f

    def evaluate_true(self, X: Tensor) -> Tensor:
        """The noiseless objective at any real points inside the bounds.

        BoTorch's own validates discrete inputs as integers; here any real
        point snaps (the snap is the problem's, on every path), validated
        once, with errors that name the entry and its exact value.

        Args:
            X: A ``batch_shape x d``-dim tensor.

        Returns:
            A new ``batch_shape``-dim tensor, ``throughput_mean`` of the rows
            ``X`` snaps to (not negated, as in BoTorch).
        """
        return self._evaluate_true(X)

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
        return self._throughput(self._snap(X).rows, X)

    def evaluate_slack_true(self, X: Tensor) -> Tensor:
        """The noiseless slack ``-c(X)`` at any real points inside the bounds
        (validated once, as :meth:`evaluate_true`)."""
        return self._evaluate_slack_true(X)

    def _evaluate_slack_true(self, X: Tensor) -> Tensor:
        """Constraint slack ``-c(X)`` of ``batch_shape x d``-dim points.

        Returns:
            A new ``batch_shape x 1``-dim tensor, ``>= 0`` iff the configuration
            fits in memory (BoTorch's slack convention).
        """
        return -self.outcome_constraint(X, noise=False).unsqueeze(-1)

    def evaluate_slack(self, X: Tensor, noise: bool = True) -> Tensor:
        """The slack ``-c(X)``, with ``constraint_noise_std`` noise unless
        ``noise=False``: BoTorch's, draw for draw.

        Returns:
            A new ``batch_shape x 1``-dim tensor.
        """
        return -self.outcome_constraint(X, noise=noise).unsqueeze(-1)

    # -- lookups -------------------------------------------------------------

    def candidates(self) -> Tensor:
        """All configurations, a ``N x d``-dim tensor in canonical order.

        On the problem's dtype and device: the choices for
        ``botorch.optim.optimize_acqf_discrete``. Row ``i`` is table row ``i``.
        """
        return self._snapper.rows.to(dtype=self.bounds.dtype, copy=True)

    def lookup(self, X: Tensor, count: bool = False) -> Tensor:
        """Indices of the rows that ``X`` snaps to.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.
            count: If True, count the points in :attr:`snap_counts`, as an
                evaluation does (a harness that reads its values from the rows
                counts its proposals so); not counted by default.

        Returns:
            A ``batch_shape``-dim long tensor of canonical row indices; read any
            column with ``f.table.frame[column].to_numpy()[rows]``.
        """
        if count:
            return self._snap(X).rows
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
        configs = self._configurations(self.lookup(X), torch.float64)
        return (X.detach().to(torch.float64) == configs).all(dim=-1)

    def _configurations(self, rows: Tensor, dtype: torch.dtype) -> Tensor:
        """The ``batch_shape x d``-dim configurations of rows, a new tensor."""
        table = self._snapper.rows
        flat = torch.index_select(table, 0, rows.reshape(-1).to(table.device))
        return flat.to(dtype).reshape(*rows.shape, table.shape[-1]).to(rows.device)

    # -- the grid in BoTorch's terms ------------------------------------------

    @property
    def discrete_dims(self) -> dict[int, list[float]]:
        """The levels of every dimension, ``{dimension: values}``, ascending.

        The values each input takes in the table (a table holding part of its
        grid has fewer), in the form of ``discrete_dims`` of BoTorch's
        ``optimize_acqf_mixed_alternating``: the first level is the lower
        bound, the last the upper. A new dict on each access.
        """
        return discrete_levels(self._snapper.rows)

    @property
    def inequality_constraints(self) -> list[tuple[Tensor, Tensor, float]]:
        """The grid's linear rules as BoTorch inequality constraints.

        A list of ``(indices, coefficients, rhs)``, meaning ``sum_i X[...,
        indices[i]] * coefficients[i] >= rhs`` (``coefficients`` on the
        problem's dtype and device), as ``inequality_constraints`` of
        ``optimize_acqf`` and ``optimize_acqf_mixed_alternating`` take them:
        the GPU product as a sum in log2 (an equality, given as two
        inequalities), ``sp <= tp``, the model chunks' rules; each holds for
        every row of the table. What they cannot say (ZeRO stage 2/3 only
        without pipelining, a table holding part of its grid) is
        :meth:`project`'s. Derived from :attr:`instance` and the table; a new
        list on each access.
        """
        rows = self._snapper.rows.to(self.bounds.device)
        return linear_constraints(self.instance, rows, self.bounds.dtype)

    def project(self, X: Tensor, exclude: Tensor | None = None) -> Tensor:
        """The configurations that points snap to: a projection onto the grid.

        Usable as the ``post_processing_func`` of BoTorch's optimizers, so that
        they propose configurations (``optimize_acqf`` then scores the
        projected points and keeps the best).

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.
            exclude: Points whose configurations are left out (e.g. those
                already evaluated, so that no proposal repeats one), a
                ``m x d``-dim tensor; ``None`` for none.

        Returns:
            A new ``batch_shape x d``-dim tensor of X's dtype and device: each
            point's nearest configuration (among those not excluded).
            Not counted in :attr:`snap_counts`.

        Raises:
            ValueError: If ``X`` (or ``exclude``) is invalid, or ``exclude``
                covers every configuration.
        """
        rows = self.lookup(X)
        dtype = _result_dtype(X, self.bounds.dtype)
        if exclude is None or exclude.numel() == 0:
            return self._configurations(rows, dtype).to(X.device)
        keep = torch.ones(self._snapper.num_rows, dtype=torch.bool)
        keep[self.lookup(exclude).reshape(-1).cpu()] = False
        if not bool(keep.any()):
            raise ValueError(
                "Expected `exclude` to leave a configuration to project onto, "
                f"got all {self._snapper.num_rows} of them."
            )
        allowed = keep.nonzero().squeeze(-1)
        subset = RowSnapper(self._snapper.rows[allowed.to(self._snapper.rows.device)])
        chosen = allowed.to(rows.device)[subset(X)]
        return self._configurations(chosen, dtype).to(X.device)

    @property
    def is_simulated(self) -> bool:
        """Whether the table served is the simulated stand-in."""
        return self.table.is_simulated


def _single(value: float | Sequence[float] | None) -> float | None:
    """A constraint noise as one float (BoTorch's list of one, unwrapped)."""
    if isinstance(value, Sequence):
        return float(value[0])
    return None if value is None else float(value)
