"""A learnable model of a GPU's peak memory: the memory-margin prior.

The constraint GP of the constrained BO models the memory margin
``peak_mem / gpu_memory_gb - 1`` (``<= 0`` iff the run fits; an OOM run
records the table's fixed positive pad). The prior mean is that margin for a
modelled peak memory, in GiB, of the rank with the most to hold:

- **Model states** (Rajbhandari et al. 2020, "ZeRO: memory optimizations
  toward training trillion parameter models", SC'20): with mixed-precision
  Adam every parameter costs 2 bytes of weights, 2 of gradients and 12 of
  optimizer state (fp32 master copy, momentum, variance). A rank holds
  ``P / (tp pp)`` parameters; ZeRO stage 1 shards the optimizer state, stage
  2 also the gradients, stage 3 also the weights, over the ``dp * cp`` ranks
  that hold the same parameters (the frameworks shard over the
  context-parallel ranks too). The weights' bytes and the gradients' plus
  optimizer state's bytes are the prior's parameters (the tables have stages
  0, 2 and 3, which shard gradients and optimizer state together, so only
  their sum is identifiable; stage 1 splits it in the paper's 2 : 12 ratio).
- **Activations** (Korthikanti et al. 2022, "Reducing activation
  recomputation in large transformer models"): with full recomputation a
  layer keeps its input, ``c`` bytes per token and hidden unit (``c = 2``,
  bf16), sharded by sequence parallelism; the layer being recomputed holds
  its full activations, ``(10 / sp + 24 / tp)`` bytes per token and hidden
  unit (their formula with flash attention; ``sp = tp`` is their sequence
  parallelism, ``sp = 1`` its absence), times a learnable scale. Context
  parallelism splits the tokens over ``cp`` ranks. Resident micro-batches:
  the first stage of a 1F1B pipeline holds ``pp`` micro-batches of its
  ``L / pp`` layers, ``(1 + (pp - 1) / (pp v))`` times as many with ``v``
  interleaved chunks (Korthikanti et al., section 4.2.3); without a pipeline
  the rank's batch of an accumulation step is one micro-batch.
- A constant (allocator and framework buffers).

The micro-batch and model assumptions are those of
:mod:`bolt_pco64.bo.prior.throughput`. Where the table's OOM pad is known
(an OOM has been observed), the margin is softly capped at it, as the
observations are: ``pad - softplus(pad - margin)`` (the public parallelism
prior of ``apivich-h/oppa`` caps its memory mean the same way).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bolt_pco64.bo.prior.base import PRIOR_DEFAULTS, PhysicalMean, PriorDefaults
from bolt_pco64.bo.prior.layout import Layout, LayoutDecoder
from bolt_pco64.bo.prior.throughput import model_parameters
from bolt_pco64.instances import Instance

__all__ = ["MEMORY_PARAMETERS", "MemoryPriorMean"]

#: The memory prior's parameters.
MEMORY_PARAMETERS: tuple[str, ...] = (
    "bytes_weights",
    "bytes_grads_optimizer",
    "checkpoint_bytes",
    "layer_activation_scale",
    "overhead_gib",
)
_GIB = 2.0**30


class MemoryPriorMean(PhysicalMean):
    """The memory margin ``peak(x) / gpu_memory_gb - 1`` of a learnable memory model.

    ``gpu_memory_gb`` is the instance's times ``defaults.gpu_memory_factor``
    (1 unless the prior is deliberately misspecified).

    Args:
        instance: The instance (GPU memory, model shape, input encoding).
        bounds: ``2 x d``-dim tensor of the GP's normalisation bounds.
        pad: The table's margin of an OOM run, to cap the margin at; ``None``
            (no OOM observed yet) leaves it uncapped.
        defaults: Initial values and prior widths.

    Raises:
        ValueError: If ``pad`` is given and not positive and finite, or
            ``defaults.gpu_memory_factor`` is not positive and finite.
    """

    names = MEMORY_PARAMETERS

    def __init__(
        self,
        instance: Instance,
        bounds: Tensor,
        pad: float | None = None,
        defaults: PriorDefaults = PRIOR_DEFAULTS,
    ) -> None:
        if pad is not None and not (math.isfinite(pad) and pad > 0):
            raise ValueError(f"Expected a positive finite pad or None, got {pad!r}.")
        d = defaults
        if not (math.isfinite(d.gpu_memory_factor) and d.gpu_memory_factor > 0):
            raise ValueError(
                "Expected a positive finite gpu_memory_factor, got "
                f"{d.gpu_memory_factor!r}."
            )
        grads_share = d.bytes_grads / (d.bytes_grads + d.bytes_optimizer)
        initial = [
            d.bytes_weights,
            d.bytes_grads + d.bytes_optimizer,
            d.checkpoint_bytes,
            d.layer_activation_scale,
            d.memory_overhead_gib,
        ]
        sd = [d.state_log_sd] * 2 + [d.activation_log_sd] * 2 + [d.overhead_log_sd]
        super().__init__(LayoutDecoder(instance, bounds), initial, sd, d.log_range)
        self.pad = pad
        self.grads_share = grads_share
        self.sharpness = d.pad_sharpness
        self._params = model_parameters(instance.model)
        self._model = instance.model
        self._capacity = float(instance.gpu_memory_gb) * d.gpu_memory_factor

    def parts(self, layout: Layout) -> dict[str, Tensor]:
        """The peak memory's parts in GiB (``batch_shape``-dim each), by name."""
        w, go, ckpt, layer, overhead = self.theta.unbind(-1)
        g, o = go * self.grads_share, go * (1.0 - self.grads_share)
        m = self._model
        L, h, s = float(m.num_layers), float(m.hidden_size), float(m.seq_length)
        dp, tp, pp, cp, sp = layout.dp, layout.tp, layout.pp, layout.cp, layout.sp
        z = layout.zero_stage
        shard = dp * cp
        local = self._params / (tp * pp)

        def sharded(from_stage: float) -> Tensor:
            # 1 below the stage, 1 / shard from it on (z is 0, 2 or 3)
            on = (z - (from_stage - 1.0)).clamp(0.0, 1.0)
            return 1.0 + on * (1.0 / shard - 1.0)

        states = local * (w * sharded(3.0) + g * sharded(2.0) + o * sharded(1.0))
        piped = layout.pipelined
        batch = m.batch_size / (dp * layout.grad_accum_steps)
        seqs_per_mb = torch.where(piped, torch.ones_like(batch), batch)
        in_flight = torch.where(
            piped,
            torch.minimum(pp, batch) * (1.0 + (pp - 1.0) / (pp * layout.chunks)),
            torch.ones_like(batch),
        )
        tokens_h = seqs_per_mb * s / cp * h
        kept = ckpt * tokens_h * (L / pp) * in_flight / sp
        working = layer * tokens_h * (10.0 / sp + 24.0 / tp)
        return {
            "states": states / _GIB,
            "checkpoints": kept / _GIB,
            "working_layer": working / _GIB,
            "overhead": overhead.expand_as(states),
        }

    def peak_gib(self, layout: Layout) -> Tensor:
        """The modelled peak memory in GiB (``batch_shape``-dim)."""
        return torch.stack(list(self.parts(layout).values())).sum(0)

    def _physical(self, layout: Layout) -> Tensor:
        margin = self.peak_gib(layout) / self._capacity - 1.0
        if self.pad is None:
            return margin
        gap = torch.nn.functional.softplus(self.pad - margin, beta=self.sharpness)
        return self.pad - gap
