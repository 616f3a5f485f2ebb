"""A learnable performance model of one training step: the throughput prior.

The step time of a configuration is a sum of compute and communication
terms; the prior mean is its reciprocal, the throughput. The functional form
follows the public sources, not any table generator:

- **Compute** (Narayanan et al. 2021, "Efficient large-scale language model
  training on GPU clusters using Megatron-LM", SC'21): a rank's share of the
  step's FLOPs, ``6 s P + 12 L s^2 h`` per sequence (dense matrix products
  forward and backward plus attention scores), split over ``tp * cp * pp``
  ranks, stretched by the pipeline bubble ``(pp - 1) / (m v)`` of ``m``
  micro-batches and ``v`` interleaved model chunks: the step's compute is
  ``(m + (pp - 1) / v)`` micro-batch slots, as in the ``comp`` term of the
  public parallelism prior of ``apivich-h/oppa``.
- **Collectives** (that prior's form, Thakur et al. 2005 for the ring):
  ``alpha log2 p + gamma (p - 1) / p n`` for a collective over ``p`` ranks
  moving ``n`` bytes, with a start-up time ``alpha`` and a time per byte
  ``gamma`` of the slowest link the group uses: inside one host or across
  hosts (:meth:`~bolt_pco64.bo.prior.layout.Layout.spans_hosts`).

  - data parallelism: the bf16 gradients (``2 P / (tp pp)`` bytes) reduced
    over the ``dp * cp`` ranks that hold the same parameters, once per step,
    in ``n / bucket`` buckets; ZeRO-3 moves 1.5 times as much (Rajbhandari
    et al. 2020, section 7: stages 1-2 cost what data parallelism costs,
    stage 3 adds a parameter all-gather);
  - tensor parallelism: four all-reduces (or all-gather/reduce-scatter pairs
    with sequence parallelism, the same volume) of a micro-batch's
    activations per layer, forward and backward (Shoeybi et al. 2019);
  - context parallelism: the keys and values of the whole sequence gathered
    around the ``cp`` ring, forward and twice backward (ring attention);
  - pipeline parallelism: one point-to-point send of activations forward and
    one of gradients backward per micro-batch and model chunk,
    ``alpha + gamma n``.
- A constant per step (optimizer step, launch overheads).

Assumptions the sources leave open (stated, not fitted): a dense transformer
with multi-head attention of width ``h`` and a gated MLP (``4 h^2 + 3 h f``
parameters a layer; embeddings ignored); a rank's batch is the global batch
over ``dp`` and ``grad_accum_steps`` steps; with a pipeline each micro-batch is one
sequence, without one the rank's batch of an accumulation step is one
micro-batch.

Units. The table's throughput unit is not published, so the times are
fitted in units of ``1 / throughput``: the initial values (a reference
cluster, :class:`~bolt_pco64.bo.prior.base.PriorDefaults`) are rescaled by
one factor that matches the observed throughput
(:meth:`ThroughputPriorMean.from_observations`). Ratios such as bandwidth
per FLOP rate (bytes per FLOP) are unit-free and can be checked against
hardware (:func:`physical_summary`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bolt_pco64.bo.prior.base import PRIOR_DEFAULTS, PhysicalMean, PriorDefaults
from bolt_pco64.bo.prior.layout import Layout, LayoutDecoder
from bolt_pco64.instances import Instance, ModelShape

__all__ = [
    "THROUGHPUT_PARAMETERS",
    "ThroughputPriorMean",
    "model_parameters",
    "physical_summary",
    "sequence_flops",
]

#: The throughput prior's parameters (times in units of ``1 / throughput``).
THROUGHPUT_PARAMETERS: tuple[str, ...] = (
    "flop_time",
    "latency_intra",
    "latency_inter",
    "byte_time_intra",
    "byte_time_inter",
    "overhead",
)
_BF16 = 2.0


def model_parameters(model: ModelShape) -> float:
    """Parameters of the transformer's layers: ``L (4 h^2 + 3 h f)``."""
    h, f = model.hidden_size, model.ffn_hidden_size
    return float(model.num_layers * (4 * h * h + 3 * h * f))


def sequence_flops(model: ModelShape) -> float:
    """Training FLOPs of one sequence, forward and backward: ``6 s P + 12 L s^2 h``."""
    s, h, L = model.seq_length, model.hidden_size, model.num_layers
    return 6.0 * s * model_parameters(model) + 12.0 * L * s * s * h


class ThroughputPriorMean(PhysicalMean):
    """The throughput ``1 / step_time(x)`` of a learnable performance model.

    Parameters (:data:`THROUGHPUT_PARAMETERS`): the time of one FLOP on one
    GPU, the start-up time and the time per byte of a collective step inside
    a host and across hosts, and a constant per step.

    Args:
        instance: The instance (cluster, model shape, input encoding).
        bounds: ``2 x d``-dim tensor of the GP's normalisation bounds.
        unit: Factor applied to every initial time (the throughput unit).
        defaults: Initial values and prior widths.
    """

    names = THROUGHPUT_PARAMETERS

    def __init__(
        self,
        instance: Instance,
        bounds: Tensor,
        unit: float = 1.0,
        defaults: PriorDefaults = PRIOR_DEFAULTS,
    ) -> None:
        if not (math.isfinite(unit) and unit > 0):
            raise ValueError(f"Expected a positive finite unit, got {unit!r}.")
        initial = [
            unit / defaults.flop_rate,
            unit * defaults.latency_intra,
            unit * defaults.latency_inter,
            unit / defaults.bandwidth_intra,
            unit / defaults.bandwidth_inter,
            unit * defaults.step_overhead,
        ]
        sd = [defaults.throughput_log_sd] * len(initial)
        super().__init__(
            LayoutDecoder(instance, bounds), initial, sd, defaults.log_range
        )
        model = instance.model
        self._params = model_parameters(model)
        self._flops = sequence_flops(model)
        self._model = model

    @classmethod
    def from_observations(
        cls,
        instance: Instance,
        bounds: Tensor,
        X: Tensor,
        y: Tensor,
        defaults: PriorDefaults = PRIOR_DEFAULTS,
    ) -> ThroughputPriorMean:
        """A mean whose unit matches the observed throughput.

        The unit is the geometric mean of ``1 / (y_i t(x_i))`` over the
        observations, ``t`` the reference cluster's step time.

        Args:
            X: ``n x d``-dim tensor of *encoded* configurations.
            y: ``n``-dim tensor of their positive, finite throughput.

        Raises:
            ValueError: If ``y`` is empty or has a value that is not positive
                and finite.
        """
        if y.numel() == 0 or not (torch.isfinite(y) & (y > 0)).all():
            raise ValueError(
                f"Expected positive finite throughput to set the unit, got {y.tolist()}."
            )
        reference = cls(instance, bounds, 1.0, defaults)
        with torch.no_grad():
            t = reference.terms(reference.decoder.decode(X))
            step = torch.stack(list(t.values())).sum(0)
            unit = float(torch.exp(-(y * step).log().mean()))
        return cls(instance, bounds, unit, defaults)

    def terms(self, layout: Layout) -> dict[str, Tensor]:
        """The step time's terms (``batch_shape``-dim each), by name."""
        (flop_t, lat_in, lat_out, byte_in, byte_out, overhead) = self.theta.unbind(-1)
        m = self._model
        L, h, s = float(m.num_layers), float(m.hidden_size), float(m.seq_length)
        dp, tp, pp, cp, sp = layout.dp, layout.tp, layout.pp, layout.cp, layout.sp
        v, g = layout.chunks, layout.grad_accum_steps
        piped = layout.pipelined
        batch = m.batch_size / (dp * g)  # sequences per rank per accumulation step
        seqs_per_mb = torch.where(piped, torch.ones_like(batch), batch)
        micro = batch / seqs_per_mb  # micro-batches per accumulation step
        bubble = (pp - 1.0) / (micro * v)

        def link(stride: Tensor, size: Tensor) -> tuple[Tensor, Tensor]:
            out = layout.spans_hosts(stride, size)
            return torch.where(out, lat_out, lat_in), torch.where(
                out, byte_out, byte_in
            )

        def collective(size: Tensor, nbytes: Tensor, stride: Tensor) -> Tensor:
            lat, byte = link(stride, size)
            return lat * torch.log2(size) + byte * (size - 1.0) / size * nbytes

        ones = torch.ones_like(dp)
        compute = flop_t * g * batch * self._flops / (tp * cp * pp) * (1.0 + bubble)
        # data parallelism: gradients over the dp*cp ranks holding the same shard
        grads = _BF16 * self._params / (tp * pp)
        buckets = (grads / (layout.bucket_mb * 2.0**20)).clamp(min=1.0)
        zero3 = 1.0 + 0.5 * (layout.zero_stage - 2.0).clamp(0.0, 1.0)
        lat, byte = link(tp, dp * cp)
        p = dp * cp
        data = zero3 * (buckets * lat * torch.log2(p) + byte * (p - 1.0) / p * grads)
        per_layer = g * micro * L / pp  # (micro-batch, layer) pairs per rank
        act = _BF16 * seqs_per_mb * s / cp * h
        tensor = 4.0 * per_layer * collective(tp, act, ones)
        kv = 2.0 * _BF16 * seqs_per_mb * s * h / tp
        context = 3.0 * per_layer * collective(cp, kv, tp)
        lat, byte = link(tp * cp * dp, pp)
        sends = 2.0 * g * micro * v * piped.to(dp)
        pipeline = sends * (lat + byte * act / sp)
        return {
            "compute": compute,
            "data": data,
            "tensor": tensor,
            "context": context,
            "pipeline": pipeline,
            "overhead": overhead.expand_as(compute),
        }

    def step_time(self, layout: Layout) -> Tensor:
        """The modelled time of one optimizer step (``batch_shape``-dim)."""
        return torch.stack(list(self.terms(layout).values())).sum(0)

    def _physical(self, layout: Layout) -> Tensor:
        return 1.0 / self.step_time(layout)


def physical_summary(mean: ThroughputPriorMean) -> dict[str, float]:
    """Unit-free readings of a fitted throughput prior.

    Returns:
        ``bytes_per_flop_intra`` / ``bytes_per_flop_inter``: bandwidth per
        FLOP rate (bytes moved in the time of one FLOP; a Hopper-class node
        at 40 % utilisation has about 1e-3 inside a host and 1e-4 across
        hosts); ``inter_over_intra_bandwidth``; ``latency_in_flops_intra`` /
        ``_inter``: a start-up time in FLOPs; ``overhead_in_flops``.
    """
    v = mean.values()
    f = v["flop_time"]
    return {
        "bytes_per_flop_intra": f / v["byte_time_intra"],
        "bytes_per_flop_inter": f / v["byte_time_inter"],
        "inter_over_intra_bandwidth": v["byte_time_intra"] / v["byte_time_inter"],
        "latency_in_flops_intra": v["latency_intra"] / f,
        "latency_in_flops_inter": v["latency_inter"] / f,
        "overhead_in_flops": v["overhead"] / f,
    }
