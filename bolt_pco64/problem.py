"""The pco BoTorch test problems and their outcome constraint.

One implementation, :class:`PCO`, parametrised by an
:class:`~bolt_pco64.instances.Instance`; :class:`PCO16`, :class:`PCO32` and
:class:`PCO64` bind one instance each. :data:`PROBLEMS` maps instance names to
these classes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import pandas as pd
import torch
from botorch.test_functions.base import ConstrainedBaseTestProblem
from botorch.test_functions.synthetic import SyntheticTestFunction
from torch import Tensor

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.instances import (
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
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
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


class PCO(SyntheticTestFunction, ConstrainedBaseTestProblem):
    r"""A pco problem: training throughput by parallelism configuration.

    A ``d``-dimensional maximisation problem over the rows of a tabular
    benchmark; :class:`PCO16`, :class:`PCO32` and :class:`PCO64` bind it to one
    instance each (:attr:`instance`, which names the inputs, in ``X`` order,
    and their encoding: log2 columns as stored, ``zero_stage`` as the ordinal
    0/1/2 of stage 0/2/3). Every input is declared continuous: any real point
    inside ``bounds`` is accepted and snaps to the nearest table row (Euclidean
    distance in the encoding; ties go to the earliest row in canonical order).
    The value is that row's ``throughput_mean``, **NaN where the configuration
    ran out of memory** -- a crash, not a bad value. The memory constraint is
    :attr:`outcome_constraint` (``c(X) <= 0`` iff feasible);
    :meth:`evaluate_slack_true` is ``-c(X)``, so :meth:`is_feasible` works as
    in BoTorch.

    The class attributes (``dim``, ``_bounds``, ``_optimal_value``,
    ``_optimizers``) state the instance's published figures; a problem
    recomputes bounds, optimum and optimizer from the table it serves, whatever
    its size.

    Args:
        noise_std: ``None`` (noiseless), a float (homoscedastic Gaussian noise
            with that standard deviation, as in BoTorch), or ``"measured"``:
            each evaluation gets Gaussian noise with its own row's measured
            ``throughput_std`` (heteroscedastic; NaN stays NaN) -- the standard
            error of the row's estimate (the runner's delta-method
            ``std / sqrt(n) / mean**2``, :mod:`bolt_pco64.estimators`), so the
            noise of repeating that measurement, not the spread of single
            steps. Noise uses the
            global torch generator, as in BoTorch; seed it with
            ``torch.manual_seed`` for repeatable noisy runs.
        negate: If True, negate the objective (as in BoTorch).
        dtype: The dtype of ``bounds``, ``optimizers`` and ``candidates()``.
        table: A path (parquet or raw CSV), a DataFrame, a loaded
            :class:`~bolt_pco64.table.Table` of the instance, or ``None`` for
            the default source order (the instance's ``BOLT_PCO64_TABLE``, its
            measured table, then its simulated stand-in with a warning); see
            :func:`~bolt_pco64.table.load_table`.

    Raises:
        TypeError: If the class binds no instance (use a subclass).
        ValueError: If ``noise_std`` is invalid or the table is another
            instance's.
        TableError: If the table breaks the instance's schema.
    """

    #: The instance this class serves (set by each subclass).
    instance: ClassVar[Instance]
    num_objectives = 1
    num_constraints = 1
    _is_minimization_by_default = False
    _check_grad_at_opt = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """State a subclass's ``instance``'s published figures as BoTorch's
        class attributes."""
        super().__init_subclass__(**kwargs)
        inst = cls.__dict__.get("instance")
        if inst is None:
            return
        cls.dim = inst.dim
        cls.continuous_inds = list(range(inst.dim))
        cls._bounds = [(float(lo), float(hi)) for lo, hi in inst.bounds]
        cls._optimal_value = inst.published.best_value
        cls._optimizers = [tuple(float(v) for v in inst.published.best_config)]

    throughput_bits: Tensor
    std_bits: Tensor

    def __init__(
        self,
        noise_std: NoiseStd = None,
        negate: bool = False,
        dtype: torch.dtype = torch.double,
        table: TableLike = None,
    ) -> None:
        if not hasattr(type(self), "instance"):
            raise TypeError(
                "Expected a problem class bound to an instance (PCO16, PCO32, "
                f"PCO64 or problem_class(name)), got {type(self).__name__}."
            )
        if not is_noise_std(noise_std):
            raise ValueError(
                f"Expected `noise_std` to be None, a float >= 0 or 'measured', got {noise_std!r}."
            )
        self.table: Table = load_table(table, instance=self.instance)
        best = self.table.best_row
        self._bounds = [
            tuple(float(v) for v in col) for col in self.table.bounds.T.tolist()
        ]
        self._optimal_value = float(self.table.frame["throughput_mean"].iloc[best])
        self._optimizers = [tuple(float(v) for v in self.table.X[best].tolist())]
        self._worst_feasible_value = float(
            self.table.frame["throughput_mean"].iloc[self.table.worst_feasible_row]
        )
        super().__init__(noise_std=noise_std, negate=negate, dtype=dtype)  # type: ignore[arg-type]
        self.outcome_constraint = PCOOutcomeConstraint(self.table)
        self.register_buffer(
            "throughput_bits", _frozen(self.table.column("throughput_mean"))
        )
        self.register_buffer("std_bits", _frozen(self.table.column("throughput_std")))

    # -- lookups -------------------------------------------------------------

    def candidates(self) -> Tensor:
        """All configurations, a ``N x d``-dim tensor in canonical order.

        On the problem's dtype and device: the choices for
        ``botorch.optim.optimize_acqf_discrete``. Row ``i`` is table row ``i``.
        """
        rows = self.outcome_constraint.snapper.rows
        return rows.to(dtype=self.bounds.dtype, copy=True)

    def lookup(self, X: Tensor) -> Tensor:
        """Indices of the rows that ``X`` snaps to.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim long tensor of canonical row indices; read any
            column with ``f.table.frame[column].to_numpy()[rows]``.
        """
        return self.outcome_constraint.lookup(X)

    def _values(self, bits: Tensor, X: Tensor, rows: Tensor | None = None) -> Tensor:
        """Values of a float64 column stored as ``bits`` at the rows ``X`` snaps to.

        ``X`` must already be validated; ``rows`` skips the snapping if known.
        """
        if rows is None:
            rows = self.outcome_constraint.snapper(X)
        return _gather(bits, rows, _result_dtype(X, self.bounds.dtype))

    # -- BoTorch interface ----------------------------------------------------

    def evaluate_true(self, X: Tensor) -> Tensor:
        """Noiseless throughput of the snapped rows.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim tensor (X's dtype and device; the problem's
            dtype for integer ``X``): ``throughput_mean``, NaN where the row ran
            out of memory. Always a new tensor, never a view of the table.
        """
        validate_points(X, self.bounds, self.instance.input_columns)
        return self._evaluate_true(X)

    def _evaluate_true(self, X: Tensor) -> Tensor:
        return self._values(self.throughput_bits, X)

    def forward(self, X: Tensor, noise: bool = True) -> Tensor:
        """Throughput with observation noise (see ``noise_std``), negated if asked.

        As BoTorch's ``BaseTestProblem.forward`` (noise ``noise_std *
        randn_like(f)`` from the global generator, then negation), except that
        the noise is drawn in the result's dtype (also for integer ``X``) and
        ``"measured"`` scales it by each row's ``throughput_std``.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.
            noise: If True, add observation noise as set by ``noise_std``.

        Returns:
            A new ``batch_shape``-dim tensor; NaN where the row ran out of memory.
        """
        validate_points(X, self.bounds, self.instance.input_columns)
        rows = self.outcome_constraint.snapper(X)
        f = self._values(self.throughput_bits, X, rows)
        if noise and self.noise_std is not None:
            if self.noise_std == "measured":
                scale = self._values(self.std_bits, X, rows)
            else:
                scale = torch.tensor(self.noise_std, dtype=f.dtype, device=f.device)
            f = f + scale * torch.randn_like(f)
        return -f if self.negate else f

    def evaluate_slack_true(self, X: Tensor) -> Tensor:
        """Constraint slack ``-c(X)`` of ``batch_shape x d``-dim points.

        Returns:
            A ``batch_shape x 1``-dim tensor, ``>= 0`` iff the configuration fits
            in memory (BoTorch's slack convention).
        """
        validate_points(X, self.bounds, self.instance.input_columns)
        return self._evaluate_slack_true(X)

    def _evaluate_slack_true(self, X: Tensor) -> Tensor:
        return -self._values(self.outcome_constraint.margin_bits, X).unsqueeze(-1)

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


#: The problem class of every instance, by name.
PROBLEMS: dict[str, type[PCO]] = {
    cls.instance.name: cls for cls in (PCO16, PCO32, PCO64)
}


def problem_class(instance: str | Instance) -> type[PCO]:
    """The problem class of an instance (``"pco16"`` -> :class:`PCO16`).

    Raises:
        ValueError: If no instance has that name.
    """
    return PROBLEMS[get_instance(instance).name]


__getattr__ = deprecated_names(
    __name__,
    {"PCO64OutcomeConstraint": (lambda: PCOOutcomeConstraint, "PCOOutcomeConstraint")},
)
