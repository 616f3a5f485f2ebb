"""Decode encoded configurations into the sizes a performance model reads.

The prior means of :mod:`bolt_pco64.bo.prior` take ``X`` in the problem's
*encoded* input space (log2 columns as stored, ``zero_stage``
as its ordinal), normalised to the unit cube by the GP's input transform. A
:class:`LayoutDecoder` undoes both with the instance's own
:class:`~bolt_pco64.instances.InputSpec` list and context columns, so nothing
here names an instance: pco64 searches context parallelism, pco16 fixes it in
a context column and searches gradient accumulation instead, and both decode
the same way.

Where GPU ranks sit. A parallel group of ``p`` ranks whose members are
``stride`` ranks apart spans more than one host when ``stride * p`` exceeds
the GPUs per host (ranks are numbered host by host). The strides follow
Megatron-LM's default rank order ``tp-cp-ep-dp-pp`` (tensor-parallel ranks
adjacent, then context, then data, pipeline stages outermost), the order
ColossalAI's ``HybridParallelPlugin`` also uses for its tensor, data and
pipeline axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from bolt_pco64.instances import KNOBS, Instance

__all__ = ["Layout", "LayoutDecoder"]

#: The value of a quantity that neither an input nor a context column holds:
#: a parallel size of 1, no ZeRO, PyTorch DDP's default 25 MB gradient bucket.
_ABSENT: dict[str, float] = {
    "dp": 1.0,
    "tp": 1.0,
    "pp": 1.0,
    "cp": 1.0,
    "sp": 1.0,
    "bucket_mb": 25.0,
    "zero_stage": 0.0,
    "chunks": 1.0,
    "grad_accum_steps": 1.0,
}


@dataclass(frozen=True)
class Layout:
    """Raw sizes of a batch of configurations (each a ``batch_shape``-dim tensor).

    Attributes:
        dp, tp, pp, cp, sp: Data-, tensor-, pipeline-, context- and
            sequence-parallel sizes.
        bucket_mb: DDP gradient bucket size in MB.
        zero_stage: Raw ZeRO stage (0, 2 or 3; between levels for a point
            between ordinal levels).
        chunks: Model chunks per pipeline stage (interleaving).
        grad_accum_steps: Gradient-accumulation steps.
        gpus_per_host: GPUs per host of the instance (a float).
    """

    dp: Tensor
    tp: Tensor
    pp: Tensor
    cp: Tensor
    sp: Tensor
    bucket_mb: Tensor
    zero_stage: Tensor
    chunks: Tensor
    grad_accum_steps: Tensor
    gpus_per_host: float

    def spans_hosts(self, stride: Tensor, size: Tensor) -> Tensor:
        """Whether a group of ``size`` ranks ``stride`` apart spans hosts (bool)."""
        return (stride * size > self.gpus_per_host + 0.5) & (size > 1.5)

    @property
    def pipelined(self) -> Tensor:
        """Whether there is more than one pipeline stage (bool)."""
        return self.pp > 1.5


class LayoutDecoder(torch.nn.Module):
    """Turn unit-cube inputs of the GP into a :class:`Layout`.

    Args:
        instance: The instance whose input columns (order, encoding, levels)
            and context columns are decoded.
        bounds: ``2 x d``-dim tensor of the bounds the GP's ``Normalize``
            input transform uses (:func:`~bolt_pco64.bo.gp.safe_bounds` of the
            problem's bounds).

    Raises:
        ValueError: If ``bounds`` is not ``2 x d`` for the instance's ``d``
            inputs, or an input column has no known meaning.
    """

    def __init__(self, instance: Instance, bounds: Tensor) -> None:
        super().__init__()
        d = instance.dim
        if bounds.dim() != 2 or tuple(bounds.shape) != (2, d):
            raise ValueError(
                f"Expected bounds of shape (2, {d}) for {instance.name}, "
                f"got {tuple(bounds.shape)}."
            )
        unknown = [c for c in instance.input_columns if c not in KNOBS]
        if unknown:
            raise ValueError(
                f"Expected input columns from {sorted(KNOBS)}, got {unknown}."
            )
        self.instance = instance
        self.register_buffer("lower", bounds[0].detach().clone())
        self.register_buffer("width", (bounds[1] - bounds[0]).detach().clone())
        levels = {
            spec.name: torch.tensor(spec.levels, dtype=bounds.dtype)
            for spec in instance.inputs
            if spec.encoding == "ordinal"
        }
        for name, values in levels.items():
            self.register_buffer(f"levels_{name}", values)
        context = dict(instance.context)
        self._constants: dict[str, float] = {}
        for column, quantity in KNOBS.items():
            if column in instance.input_columns:
                continue
            if column in context:
                value = float(context[column])
                self._constants[quantity] = (
                    value if column == "zero_stage" else 2.0**value
                )
            else:
                self._constants[quantity] = _ABSENT[quantity]

    def encoded(self, X: Tensor) -> Tensor:
        """``batch_shape x d``-dim encoded inputs of unit-cube inputs ``X``."""
        return self.lower + X * self.width

    def forward(self, X: Tensor) -> Layout:
        """The :class:`Layout` of ``batch_shape x d``-dim unit-cube inputs ``X``."""
        return self.decode(self.encoded(X))

    def decode(self, X_encoded: Tensor) -> Layout:
        """The :class:`Layout` of ``batch_shape x d``-dim *encoded* inputs."""
        values: dict[str, Tensor] = {}
        for j, spec in enumerate(self.instance.inputs):
            x = X_encoded[..., j]
            if spec.encoding == "ordinal":
                values[KNOBS[spec.name]] = _interpolate(
                    getattr(self, f"levels_{spec.name}"), x
                )
            else:
                values[KNOBS[spec.name]] = torch.exp2(x)
        ref = X_encoded[..., 0]
        for quantity, value in self._constants.items():
            values[quantity] = torch.full_like(ref, value)
        return Layout(**values, gpus_per_host=float(self.instance.gpus_per_host))


def _interpolate(levels: Tensor, x: Tensor) -> Tensor:
    """Piecewise-linear value of ordinal position ``x`` among ``levels``."""
    top = levels.numel() - 1
    x = x.clamp(0, top)
    lo = x.detach().floor().clamp(max=max(top - 1, 0)).long()
    hi = (lo + 1).clamp(max=top)
    frac = x - lo.to(x)
    return levels[lo] + frac * (levels[hi] - levels[lo])
