"""The pco BoTorch test problems and their outcome constraint.

One implementation, :class:`PCO`, parametrised by an
:class:`~bolt_pco64.instances.Instance`; :class:`PCO16`, :class:`PCO32` and
:class:`PCO64` bind one instance each. :data:`PROBLEMS` maps the name of
every instance of :data:`~bolt_pco64.instances.INSTANCES` to its class. Any
other :class:`~bolt_pco64.instances.Instance` (a user's own cluster) is
served by :func:`problem_class` or ``PCO(instance=..., table=...)``.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import pandas as pd
import torch
from botorch.test_functions.synthetic import ConstrainedSyntheticTestFunction
from torch import Tensor

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64._stack import external_stacklevel
from bolt_pco64.instances import (
    INSTANCES,
    PCO16_INSTANCE,
    PCO32_INSTANCE,
    PCO64_INSTANCE,
    Instance,
    get_instance,
)
from bolt_pco64.params import is_noise_std
from bolt_pco64.snap import RowSnapper
from bolt_pco64.table import Table, load_table

__all__ = [
    "FAR_SNAP_DISTANCE",
    "OOM_POLICIES",
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
    "FarSnapWarning",
    "OOMPolicy",
    "PCOOutcomeConstraint",
    "is_noise_std",
    "problem_class",
    "validate_points",
]

TableLike = str | os.PathLike[str] | pd.DataFrame | Table | None
NoiseStd = float | Literal["measured"] | None


def _frozen(values: Tensor) -> Tensor:
    """Float64 values stored as their int64 bit pattern.

    ``Module.to(dtype)`` converts floating buffers; the table's values must stay
    exact whatever dtype the problem is moved to, so they are kept as integers
    and viewed back as float64 when read.
    """
    return values.to(torch.float64).contiguous().view(torch.int64)


def validate_points(
    X: object, bounds: Tensor, columns: Sequence[str] | None = None
) -> Tensor:
    """Check candidate points and return them (as a tensor).

    Args:
        X: A ``batch_shape x d``-dim tensor, real or integer dtype.
        bounds: The ``2 x d``-dim bounds of the problem.
        columns: The ``d`` input names, used in error messages (a problem
            passes its instance's ``input_columns``); ``None`` names them
            ``input 0``, ``input 1``, ...

    Returns:
        ``X`` itself.

    Raises:
        TypeError: If ``X`` is not a tensor, or is boolean or complex.
        ValueError: If the last dimension is not ``d``, an entry is NaN/inf, or a
            point lies outside the bounds; the message names the first offending
            entry.
    """
    if not isinstance(X, Tensor):
        raise TypeError(f"Expected `X` to be a torch.Tensor, got {type(X).__name__}.")
    if X.dtype == torch.bool or X.is_complex():
        raise TypeError(f"Expected `X` with a real or integer dtype, got {X.dtype}.")
    d = bounds.shape[-1]
    names = list(columns) if columns is not None else [f"input {k}" for k in range(d)]
    if X.ndim == 0 or X.shape[-1] != d:
        raise ValueError(
            f"Expected `X` to have shape `batch_shape x {d}`, got {tuple(X.shape)}."
        )
    if X.numel() == 0:
        return X
    # Fast path, one pass: per-column min and max inside the bounds means every
    # entry is finite and inside them (a NaN makes both NaN and fails the test).
    low, high = torch.aminmax(X.detach().reshape(-1, d), dim=0)
    lo = bounds[0].to(device=X.device, dtype=torch.float64)
    hi = bounds[1].to(device=X.device, dtype=torch.float64)
    if bool(((low.to(torch.float64) >= lo) & (high.to(torch.float64) <= hi)).all()):
        return X
    if X.is_floating_point():
        finite = torch.isfinite(X)
        if not bool(finite.all()):
            where = tuple(int(i) for i in (~finite).nonzero()[0])
            raise ValueError(
                f"Expected finite values in `X`, got {X[where].item()} at X{list(where)} "
                f"({names[where[-1]]})."
            )
    x = X.detach().to(torch.float64)
    outside = (x < lo) | (x > hi)
    if bool(outside.any()):
        where = tuple(int(i) for i in outside.nonzero()[0])
        k = where[-1]
        raise ValueError(
            "Expected `X` to be within the bounds of the test problem, got "
            f"X{list(where)} = {x[where].item():g} outside [{lo[k].item():g}, "
            f"{hi[k].item():g}] ({names[k]})."
        )
    return X


def _result_dtype(X: Tensor, default: torch.dtype) -> torch.dtype:
    return X.dtype if X.is_floating_point() else default


def _gather(bits: Tensor, rows: Tensor, dtype: torch.dtype) -> Tensor:
    """Values of a float64 column stored as ``bits`` at ``rows``: a new tensor.

    The one place a table value becomes an output. ``index_select`` always
    allocates, whatever ``rows``' shape (a 0-dim index would make ``bits[rows]``
    a *view* of the buffer), and the result is converted afterwards, so no
    output ever shares storage with a buffer: BoTorch's ``forward`` adds noise
    and negates in place, and a view would corrupt the table.

    Args:
        bits: An ``N``-dim int64 buffer holding float64 bit patterns.
        rows: A ``batch_shape``-dim long tensor of row indices.
        dtype: The floating dtype of the result.

    Returns:
        A ``batch_shape``-dim tensor of ``dtype`` on ``rows``' device.
    """
    flat = torch.index_select(bits.view(torch.float64), 0, rows.reshape(-1))
    return flat.to(dtype).reshape(rows.shape)


class PCOOutcomeConstraint(torch.nn.Module):
    r"""The memory constraint as a callable module: ``c(X) <= 0`` iff feasible.

    ``c(X)`` is the ``peak_mem_normalised`` of the table row each point snaps to:
    negative for a run that fit in memory, the table's fixed positive pad for one
    that ran out of memory. This is BoTorch's outcome-constraint convention
    (feasible iff ``c <= 0``). The table is held as buffers, so ``.to(device)``
    moves the lookup with the module.

    Args:
        table: A validated :class:`~bolt_pco64.table.Table`.
    """

    bounds: Tensor
    margin_bits: Tensor

    def __init__(self, table: Table) -> None:
        super().__init__()
        self.columns: tuple[str, ...] = table.instance.input_columns
        self.snapper = RowSnapper(table.X)
        self.register_buffer("bounds", table.bounds.clone())
        self.register_buffer(
            "margin_bits", _frozen(table.column("peak_mem_normalised"))
        )

    def lookup(self, X: Tensor) -> Tensor:
        """Row indices (``batch_shape``-dim long tensor) of ``batch_shape x d`` points."""
        validate_points(X, self.bounds, self.columns)
        return self.snapper(X)

    def forward(self, X: Tensor) -> Tensor:
        """Memory margin of the snapped rows.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim tensor (X's dtype and device; the bounds' dtype
            for integer ``X``): ``<= 0`` iff the configuration fits in memory.
        """
        rows = self.lookup(X)
        return _gather(self.margin_bits, rows, _result_dtype(X, self.bounds.dtype))


#: What an out-of-memory configuration evaluates to (``oom=`` of :class:`PCO`).
OOMPolicy = Literal["nan", "impute"]

#: Euclidean distance (in the encoded space) from a point's nearest integer point
#: to the configuration it snaps to beyond which the problem warns: one lattice
#: step (a real point rounding to a configuration, or next to one, stays silent).
FAR_SNAP_DISTANCE = 1.0
#: Out-of-memory rows imputed per step (bounds the ``chunk x N`` distance block).
_IMPUTE_CHUNK = 1024


class FarSnapWarning(UserWarning):
    """A point snapped to a configuration more than one lattice step away.

    The distance is from the point's nearest integer point to the configuration
    (Euclidean, encoded space; :data:`FAR_SNAP_DISTANCE`). Issued once per
    problem by the evaluations (``f(X)``, ``evaluate_true``,
    ``evaluate_slack_true``), not by ``lookup``; see
    :meth:`PCO.is_configuration`.
    """


def _keep_nan(values: Tensor, X: Tensor, ran: Tensor) -> Tensor:
    """The ``"nan"`` policy: the column as measured (NaN where the row OOMed)."""
    return values


def _impute_nearest_feasible(values: Tensor, X: Tensor, ran: Tensor) -> Tensor:
    """The ``"impute"`` policy (the anchor bolt-bench's rule).

    Each row that did not run gets the mean of ``values`` over the rows that
    ran and lie nearest to it (Euclidean distance in the encoded space; all
    the equidistant nearest ones). Squared distances of integer rows are
    integers, exact in float64, so ties are found exactly.

    Args:
        values: An ``N``-dim float64 column.
        X: The ``N x d``-dim encoded rows.
        ran: An ``N``-dim bool tensor, True where the row ran (did not OOM).

    Returns:
        A new ``N``-dim float64 tensor, ``values`` where the row ran.
    """
    out = values.clone()
    oom = (~ran).nonzero().squeeze(-1)
    if oom.numel() == 0 or not bool(ran.any()):
        return out
    x = X.to(torch.float64)
    done, done_values = x[ran], values[ran]
    for start in range(0, oom.numel(), _IMPUTE_CHUNK):
        idx = oom[start : start + _IMPUTE_CHUNK]
        d2 = (x[idx].unsqueeze(-2) - done).square().sum(dim=-1)
        nearest = d2 == d2.amin(dim=-1, keepdim=True)
        total = torch.where(nearest, done_values, 0.0).sum(dim=-1)
        out[idx] = total / nearest.sum(dim=-1)
    return out


#: How each ``oom`` policy fills the rows that ran out of memory.
OOM_POLICIES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "nan": _keep_nan,
    "impute": _impute_nearest_feasible,
}


def _is_constraint_noise(value: object) -> bool:
    """None, a float >= 0, or a list of one (BoTorch's per-constraint form)."""
    if isinstance(value, list):
        return len(value) == 1 and _is_constraint_noise(value[0])
    return value != "measured" and is_noise_std(value)


def _point_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return kwargs["X"] if "X" in kwargs else args[0]


def _snap_inputs(
    problem: PCO, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Forward pre-hook of every :class:`PCO`: ``f(X)`` evaluates configurations.

    Validates ``X`` (errors that name the input column) and replaces each point
    by the configuration it snaps to, in the result's dtype, before BoTorch's
    ``forward`` runs; BoTorch's own validation then sees integer points of the
    bounds, as it requires of discrete inputs.
    """
    X = _point_argument(args, kwargs)
    rows = problem._snap(X)
    configs = problem._configurations(rows, _result_dtype(X, problem.bounds.dtype))
    if "X" in kwargs:
        return args, {**kwargs, "X": configs}
    return (configs, *args[1:]), kwargs


def _add_measured_noise(
    problem: PCO, args: tuple[Any, ...], kwargs: dict[str, Any], output: Tensor
) -> Tensor | None:
    """Forward hook of every :class:`PCO`: the ``noise_std="measured"`` noise.

    BoTorch's ``forward`` scales one standard deviation per objective; this adds
    Gaussian noise scaled by each row's ``throughput_std`` after it, with the
    sign of the objective (so a negated problem gets ``-(f + std * z)``).
    """
    noise = kwargs.get("noise", args[1] if len(args) > 1 else True)
    if not (problem.measured_noise and noise):
        return None
    rows = problem.outcome_constraint.snapper(_point_argument(args, kwargs))
    z = _gather(problem.std_bits, rows, output.dtype) * torch.randn_like(output)
    return output - z if problem.negate else output + z


class PCO(ConstrainedSyntheticTestFunction):
    r"""A pco problem: training throughput by parallelism configuration.

    A ``d``-dimensional maximisation problem over the rows of a tabular
    benchmark; :class:`PCO16`, :class:`PCO32` and :class:`PCO64` bind it to one
    instance each (:attr:`instance`, which names the inputs, in ``X`` order,
    and their encoding: log2 columns as stored, ``zero_stage`` as the ordinal
    0/1/2 of stage 0/2/3). Every input is declared discrete (BoTorch's
    ``discrete_inds``: ordered integers between the bounds; none continuous or
    categorical), so BoTorch's mixed optimizers know the structure.

    A point snaps to the nearest table row (Euclidean distance in the encoding;
    ties go to the earliest row in canonical order). ``f(X)`` accepts any real
    point inside ``bounds``: it validates ``X`` (errors name the offending entry
    and input column) and snaps it before BoTorch's ``forward`` runs.
    :meth:`evaluate_true`, :meth:`evaluate_slack_true` and :meth:`is_feasible`
    are BoTorch's own: integer points inside the bounds, snapped likewise.
    Only 780 of the 29,160 integer points of pco64's bounds are configurations:
    :meth:`is_configuration` says which, and a snap farther than one lattice
    step (:data:`FAR_SNAP_DISTANCE`) warns once per problem
    (:class:`FarSnapWarning`).

    The value is the row's ``throughput_mean``, **NaN where the configuration
    ran out of memory** -- a crash, not a bad value -- unless ``oom="impute"``.
    The memory constraint is :attr:`outcome_constraint` (``c(X) <= 0`` iff
    feasible); :meth:`evaluate_slack_true` is ``-c(X)``, so :meth:`is_feasible`
    works as in BoTorch.

    The class attributes (``dim``, ``_bounds``, ``_optimal_value``,
    ``_optimizers``) state the instance's published figures; a problem
    recomputes bounds, optimum and optimizer from the table it serves, whatever
    its size.
    """

    #: The instance this class serves (set by each subclass).
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
                :meth:`is_feasible` still tells the crash. Computed once here.
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
        if not hasattr(type(self), "instance"):
            raise TypeError(
                "Expected a problem class bound to an instance (PCO16, PCO32, "
                f"PCO64, problem_class(instance) or PCO(instance=...)), got "
                f"{type(self).__name__}."
            )
        if instance is not None and get_instance(instance) != self.instance:
            raise ValueError(
                f"Expected `instance` to be None or {self.instance.name}, the "
                f"instance {type(self).__name__} serves, got "
                f"{get_instance(instance).name!r}."
            )
        if not is_noise_std(noise_std):
            raise ValueError(
                "Expected `noise_std` to be None, a float >= 0 or 'measured', "
                f"got {noise_std!r}."
            )
        if not _is_constraint_noise(constraint_noise_std):
            raise ValueError(
                "Expected `constraint_noise_std` to be None, a float >= 0 or a "
                f"list of one, got {constraint_noise_std!r}."
            )
        if oom not in OOM_POLICIES:
            raise ValueError(
                f"Expected `oom` to be one of {tuple(OOM_POLICIES)}, got {oom!r}."
            )
        self.table: Table = load_table(table, instance=self.instance)
        own_bounds = [
            tuple(float(v) for v in col) for col in self.table.bounds.T.tolist()
        ]
        if bounds is not None and [tuple(map(float, b)) for b in bounds] != own_bounds:
            raise ValueError(
                "Expected `bounds` to be None or the table's bounds "
                f"{own_bounds}, got {bounds!r}: the bounds are the bounding box "
                "of the configurations; restrict the search in the optimizer."
            )
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
        #: Whether evaluations get each row's measured ``throughput_std`` as noise.
        self.measured_noise: bool = measured
        #: The ``oom`` policy this problem was built with.
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
            nearest_lattice = X.detach().to(torch.float64).round()
            dist = (nearest_lattice - configs).square().sum(dim=-1).sqrt()
            if bool((dist > FAR_SNAP_DISTANCE).any()):
                self._far_snap_warned = True
                far = int(dist.reshape(-1).argmax())
                point = X.detach().reshape(-1, X.shape[-1])[far].tolist()
                config = configs.reshape(-1, X.shape[-1])[far].tolist()
                warnings.warn(
                    f"A point snapped to a configuration {dist.reshape(-1)[far]:.3g} "
                    f"lattice steps away ({point} -> {config}); only "
                    f"{self.outcome_constraint.snapper.num_rows} of the "
                    f"{self._lattice_size()} integer points of the bounds are "
                    "configurations. Check with "
                    "`problem.is_configuration(X)`, or choose among "
                    "`problem.candidates()`. (Warned once per problem.)",
                    FarSnapWarning,
                    stacklevel=external_stacklevel(),
                )
        return rows

    def _lattice_size(self) -> int:
        """Number of integer points of the bounds."""
        span = (self.bounds[1] - self.bounds[0]).to(torch.float64) + 1
        return int(span.prod())

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


class PCO64(PCO):
    r"""pco64: throughput of LLM training on 64 GPUs (16 hosts) by parallelism configuration.

    A 64-layer model (hidden 5120, FFN 25600, 64 heads, sequence 8192, batch
    512) on 96 GB GPUs. 8 inputs, in this order: ``log2_dp_size``,
    ``log2_tp_size``, ``log2_pp_size``, ``log2_cp_size``, ``log2_sp_size``,
    ``log2_dp_bucket_size_mb``, ``zero_stage`` (ordinal) and
    ``log2_num_model_chunks``. Published table (card): 780 rows, 560 feasible,
    best 0.270684453437186 at dp 16, tp 4, pp 1, cp 1, sp 4, bucket 64 MB,
    ZeRO 2, 1 chunk. See :class:`PCO` for the arguments.
    """

    instance = PCO64_INSTANCE


class PCO32(PCO):
    r"""pco32: throughput of LLM training on 32 GPUs (8 hosts) by parallelism configuration.

    A 40-layer model (hidden 5120, FFN 17408, 40 heads, sequence 8192, batch
    512) on 96 GB GPUs; the 8 inputs of :class:`PCO64`, in the same order.
    Published (bolt-bench 0.2.0): 379 rows, 339 feasible, best
    0.469575911560675 at dp 32, tp 1, pp 1, cp 1, sp 1, bucket 256 MB, ZeRO 2,
    1 chunk. See :class:`PCO` for the arguments.
    """

    instance = PCO32_INSTANCE


class PCO16(PCO):
    r"""pco16: throughput of LLM training on 16 GPUs (2 hosts) by parallelism configuration.

    A 32-layer model (hidden 4096, FFN 11008, 32 heads, sequence 2048, batch
    512) on 80 GB GPUs. Context parallelism is fixed at 1 (``log2_cp_size`` is
    context) and gradient accumulation varies instead: 8 inputs, in this order,
    ``log2_dp_size``, ``log2_tp_size``, ``log2_pp_size``, ``log2_sp_size``,
    ``log2_dp_bucket_size_mb``, ``zero_stage`` (ordinal),
    ``log2_num_model_chunks`` and ``log2_grad_accum_steps``. Published
    (bolt-bench 0.2.0): 919 rows, 632 feasible, best 0.1489374720046964 at
    dp 16, tp 1, pp 1, sp 1, bucket 256 MB, ZeRO 2, 1 chunk, 4 accumulation
    steps. See :class:`PCO` for the arguments.
    """

    instance = PCO16_INSTANCE


#: The classes written out for the shipped instances (with their docstrings).
_NAMED_CLASSES: dict[Instance, type[PCO]] = {
    cls.instance: cls for cls in (PCO16, PCO32, PCO64)
}


@functools.cache
def _built_class(inst: Instance) -> type[PCO]:
    """A :class:`PCO` subclass bound to ``inst`` (one per instance and process)."""
    return type(
        f"PCO_{inst.name}",
        (PCO,),
        {
            "instance": inst,
            "__module__": __name__,
            "__doc__": f"The pco problem of the instance {inst.name!r} "
            f"({inst.num_gpus} GPUs). See :class:`PCO` for the arguments.",
        },
    )


def _bare_problem(instance: Instance) -> PCO:
    """An uninitialised problem of ``instance``'s built class (unpickling)."""
    cls = problem_class(instance)
    return cls.__new__(cls)


def problem_class(instance: str | Instance) -> type[PCO]:
    """The problem class of an instance (``"pco16"`` -> :class:`PCO16`).

    Any :class:`~bolt_pco64.instances.Instance` has one: a shipped instance
    its named class, another (a user's own cluster) a :class:`PCO` subclass
    bound to it, built once per instance and process (named after it, e.g.
    ``PCO_my8``).

    Raises:
        ValueError: If no instance has that name.
    """
    inst = get_instance(instance)
    return _NAMED_CLASSES.get(inst) or _built_class(inst)


#: The problem class of every instance of
#: :data:`~bolt_pco64.instances.INSTANCES`, by name.
PROBLEMS: Mapping[str, type[PCO]] = MappingProxyType(
    {name: problem_class(inst) for name, inst in INSTANCES.items()}
)


__getattr__ = deprecated_names(
    __name__,
    {"PCO64OutcomeConstraint": (lambda: PCOOutcomeConstraint, "PCOOutcomeConstraint")},
)
