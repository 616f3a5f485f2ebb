"""Time of one training step, by term, and throughput (the one function).

Per GPU, with ``m`` micro-batches of ``b`` sequences, ``t = s b / cp`` tokens
per micro-batch and ``N = dp * cp`` gradient-reduction ranks
(:func:`step_breakdown`):

* **compute**: GEMM FLOPs ``2 t (h (q + 2 kv) + q h + k h f) / tp`` per layer
  forward (``k = 2`` MLP matrices for GeLU, 3 for SwiGLU) in three passes
  (forward, two backward), plus causal attention ``2 s t q / tp`` forward in
  four passes (flash attention's backward recomputes the scores; Dao et al.
  2022). Full recomputation runs the forward once more: four GEMM passes and
  five attention passes, the 33 % extra compute Korthikanti et al. 2022
  report. At the calibrated fraction :attr:`.Calibration.compute_efficiency`
  of the bf16 peak, lowered for narrow GEMMs (``1 / (1 + d0 tp / h + d0 /
  t)``) and for ring attention (``1 + c_cp (cp - 1)``); memory-bound kernels
  move :attr:`.ModelConstants.elementwise_passes` times the layer's full
  activation bytes at HBM bandwidth (the work sequence parallelism divides).
* **tensor parallel**: per layer and micro-batch two all-gathers and two
  reduce-scatters forward and as many backward (or their all-reduce
  equivalent without sequence parallelism) of ``t h`` bf16 values, ring
  alpha-beta model (Thakur et al. 2005), a fraction ``rho_tp`` exposed
  (Transformer Engine overlaps most of it with the GEMMs).
* **context parallel**: ring attention passes K and V ``cp - 1`` times
  forward, K, V and their gradients backward, hidden behind the attention
  kernels up to ``rho_cp`` (Liu et al. 2023).
* **pipeline**: per micro-batch and model chunk one activation send forward
  and one gradient send backward of ``t h / tp`` bf16 values (Megatron's
  scatter/gather optimisation), on the critical path of the 1F1B schedule;
  interleaving with ``v`` chunks sends ``v`` times as much. The bubble is
  ``(pp - 1) / v`` micro-batch times of the slowest stage (Narayanan et al.
  2021, section 2.2.2): interleaving helps where micro-batches are few
  relative to ``pp`` and its extra point-to-point traffic weighs where they
  are many, as the paper's section 5.4 reports. No other per-micro-batch
  overhead is modelled (version 1's unsourced 8 ms per micro-batch is gone).
* **gradient reduction**, over ``N`` ranks in bf16 (the gradients' own
  precision, DeepSpeed's default ``communication_data_type``), in buckets of
  ``bucket_mb``:

  - ZeRO-0: one bucketed all-reduce per step after the last backward (the
    engine reduces at the gradient-accumulation boundary; nothing hides it),
    and where the optimizer state is sharded (with a pipeline,
    ``BF16_Optimizer``; without one where the reading shards it,
    :attr:`.Assumptions.zero0`) the all-gather of the updated weights;
  - ZeRO-2 (``overlap_comm``): the gradients are reduce-scattered in *every*
    micro-step (DeepSpeed ``engine.allreduce_gradients``: "ZeRO stage >= 2
    communicates during non gradient accumulation boundaries as well"),
    hidden behind that micro-batch's backward except the last bucket, then
    the updated bf16 weights are all-gathered once per step;
  - ZeRO-3: as ZeRO-2, and each layer's bf16 weights are all-gathered in the
    forward and the backward of every micro-batch, prefetched: exposed where
    a gather outlasts the layer's compute, plus a fraction ``rho_z3``.

  Every bucket pays a launch cost and the ring's latency ``(N - 1) alpha``
  per phase, so small buckets cost more with more ranks, large ones leave
  more exposed at the end of the backward.
* **optimizer**: the fused Adam update of the local parameters at HBM
  bandwidth: the ``1 / N`` shard wherever the optimizer state is sharded.

Throughput (:func:`throughput`) is in the instance's *inferred* unit
(:attr:`.Assumptions.throughput_unit`): samples per second per GPU,
``global_batch / (num_gpus * step_s)`` (pco64, pco32), or optimizer steps
per second, ``1 / step_s`` (pco16).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from bolt_pco64.instances import Instance
from bolt_pco64.tables import estimators
from bolt_pco64.tables.simulate.memory import (
    communicators,
    layer_activation_bytes,
    layer_params,
    stage_params,
)
from bolt_pco64.tables.simulate.spec import (
    Assumptions,
    Config,
    Hardware,
    ModelConstants,
)

__all__ = ["StepBreakdown", "step_breakdown", "throughput", "work_per_step"]


@dataclass(frozen=True)
class StepBreakdown:
    """Time of one training step of one configuration, by term (seconds).

    ``step_s`` is the pipeline's time (the slowest stage's micro-batches and
    the bubble) plus the exposed gradient reduction and the optimizer update;
    ``comm_fraction`` is the exposed communication's share of it.
    """

    compute_s: float
    tp_comm_s: float
    cp_comm_s: float
    pp_p2p_s: float
    bubble_s: float
    dp_comm_s: float
    optimizer_s: float
    step_s: float
    comm_fraction: float


def work_per_step(instance: Instance, a: Assumptions) -> float:
    """What one step counts for in the throughput unit ``a.throughput_unit``.

    ``global_batch / num_gpus`` samples per GPU for ``"samples/s/gpu"``, one
    step for ``"steps/s"`` (:func:`bolt_pco64.tables.estimators.work_per_step`); a
    step of ``step_s`` seconds measures ``work_per_step / step_s`` and a
    measured rate ``r`` took ``work_per_step / r`` seconds.
    """
    return estimators.work_per_step(instance, a.throughput_unit)


def throughput(step_s: float, instance: Instance, a: Assumptions) -> float:
    """Throughput of a step of ``step_s`` seconds, in ``a.throughput_unit``."""
    return work_per_step(instance, a) / step_s


def _link(inter: bool, hw: Hardware) -> tuple[float, float]:
    """``(bus bandwidth in bytes/s, latency in s)`` inside or across hosts."""
    if inter:
        return hw.inter_bus_gbs * 1e9, hw.inter_latency_s
    return hw.intra_bus_gbs * 1e9, hw.intra_latency_s


def _ring(n: int, nbytes: float, inter: bool, hw: Hardware) -> float:
    """One ring all-gather or reduce-scatter of ``nbytes`` over ``n`` ranks (s)."""
    if n <= 1:
        return 0.0
    bw, alpha = _link(inter, hw)
    return (n - 1) * (alpha + nbytes / (n * bw))


def _bucketed(
    n: int,
    nbytes: float,
    bucket_bytes: float,
    inter: bool,
    window: float,
    phases: int,
    hw: Hardware,
    k: ModelConstants,
) -> float:
    """Exposed time of a bucketed gradient collective hidden behind ``window``.

    ``phases`` is 1 for a reduce-scatter, 2 for an all-reduce.
    """
    if n <= 1:
        return 0.0
    n_buckets = max(1, math.ceil(nbytes / bucket_bytes))
    per_bucket = phases * _ring(n, nbytes / n_buckets, inter, hw)
    total = n_buckets * per_bucket
    return (
        per_bucket
        + max(0.0, total - per_bucket - window)
        + n_buckets * k.bucket_launch_s
    )


@dataclass(frozen=True)
class _Step:
    """What every term of one configuration's step reads (derived once)."""

    instance: Instance
    a: Assumptions
    k: ModelConstants
    cfg: Config
    micro: int  # micro-batches per step
    b: int  # samples per micro-batch
    t: float  # tokens per micro-batch and context-parallel rank
    peak: float  # achieved FLOP/s
    narrow: float  # the narrow-GEMM penalty
    comms: dict[str, bool]  # which groups cross hosts
    full: bool  # full recomputation

    @property
    def hw(self) -> Hardware:
        return self.a.hardware


def _layer_terms(s: _Step) -> tuple[float, float, float]:
    """One layer's compute, tensor-parallel and context-parallel time (s)."""
    a, k, cfg, hw, m = s.a, s.k, s.cfg, s.hw, s.instance.model
    h, f, seq = m.hidden_size, m.ffn_hidden_size, m.seq_length
    q = m.num_attention_heads * a.head_dim
    kv = a.num_kv_heads * a.head_dim
    t, peak, narrow, full = s.t, s.peak, s.narrow, s.full
    mats = h * (q + 2 * kv) + q * h + (3 if a.gated_mlp else 2) * h * f
    gemm = (4 if full else 3) * 2 * t * mats / cfg.tp / peak * narrow
    attn_fwd = 2 * seq * t * q / cfg.tp / peak * narrow
    attn = (5 if full else 4) * attn_fwd * (1 + k.ring_attention_cost * (cfg.cp - 1))
    # Memory-bound kernels touch the layer's full activations (recomputed or
    # not); sequence parallelism divides the replicated part.
    selective = replace(a, recompute="selective")
    act = layer_activation_bytes(s.instance, selective, cfg, s.b)
    elem = (5 if full else 4) / 4 * k.elementwise_passes * act / (hw.hbm_gbs * 1e9)
    compute_layer = gemm + attn + elem

    tp_layer = k.rho_tp * 8 * _ring(cfg.tp, t * h * 2, s.comms.get("tp", False), hw)
    cp_layer = 0.0
    if cfg.cp > 1:
        bw, alpha = _link(s.comms["cp"], hw)
        kv_bytes = 2 * t * 2 * kv / min(cfg.tp, a.num_kv_heads)
        exchange = 3 * (cfg.cp - 1) * (alpha + kv_bytes / bw)
        cp_layer = max(0.0, exchange - k.rho_cp * attn) + 3 * (cfg.cp - 1) * alpha
    return compute_layer, tp_layer, cp_layer


def _gradient_reduction(
    s: _Step, slowest: float, compute_layer: float, layers: float
) -> tuple[float, float]:
    """The exposed gradient reduction over ``dp * cp`` ranks (in bf16, like
    the gradients) and the optimizer update, in seconds."""
    a, k, cfg, hw, instance = s.a, s.k, s.cfg, s.hw, s.instance
    n = cfg.reduce_ranks
    sharded = cfg.zero_stage > 0 or cfg.pp > 1 or a.zero0 != "deepspeed"
    p = max(stage_params(instance, a, cfg, st) for st in range(cfg.pp))
    grads = 2 * p
    bucket = cfg.bucket_mb * 2**20
    inter = s.comms.get("dp", False)
    if cfg.zero_stage == 0:
        # Once per step, after the last backward: nothing to hide behind.
        dp = _bucketed(n, grads, bucket, inter, 0.0, 2, hw, k)
        if sharded:
            # The sharded optimizer's all-gather of the updated weights.
            dp += _ring(n, 2 * p, inter, hw)
    else:
        # The backward (with full recomputation also the recomputed forward:
        # 3 of 4 passes, else 2 of 3) produces the gradients it hides.
        window = (0.75 if s.full else 2.0 / 3.0) * slowest
        dp = s.micro * _bucketed(n, grads, bucket, inter, window, 1, hw, k)
        dp += _ring(n, 2 * p, inter, hw)  # all-gather of the updated bf16 weights
        if cfg.zero_stage == 3:
            gather = _ring(n, 2 * layer_params(instance, a, cfg.tp), inter, hw)
            fwd = compute_layer / (5 if s.full else 4)
            exposed = max(0.0, gather - fwd) + max(0.0, gather - 2 * fwd)
            exposed += 2 * k.rho_z3 * gather
            dp += s.micro * layers * exposed
    shard = p / n if sharded else p
    optimizer = k.adam_bytes_per_param * shard / (hw.hbm_gbs * 1e9)
    return dp, optimizer


def step_breakdown(
    instance: Instance,
    a: Assumptions,
    k: ModelConstants,
    cfg: Config,
    efficiency: float,
) -> StepBreakdown:
    """The time of one training step of ``cfg``, by term (module docstring)."""
    hw = a.hardware
    m = instance.model
    micro, b = a.micro_batches(cfg, instance)
    t = m.seq_length * b / cfg.cp
    s = _Step(
        instance=instance,
        a=a,
        k=k,
        cfg=cfg,
        micro=micro,
        b=b,
        t=t,
        peak=hw.peak_tflops * 1e12 * efficiency,
        narrow=1.0 + k.gemm_half_dim * cfg.tp / m.hidden_size + k.gemm_half_dim / t,
        comms=dict(communicators(cfg, instance.gpus_per_host)),
        full=a.recompute == "full",
    )
    compute_layer, tp_layer, cp_layer = _layer_terms(s)

    layers = m.num_layers / cfg.pp
    logits = 3 * 2 * t * m.hidden_size * a.vocab_size / cfg.tp / s.peak * s.narrow
    p2p = 0.0
    if cfg.pp > 1:
        bw, alpha = _link(s.comms["pp"], hw)
        p2p = 2 * cfg.chunks * (alpha + t * m.hidden_size * 2 / cfg.tp / bw)
    per_micro = [
        layers * (compute_layer + tp_layer + cp_layer)
        + p2p
        + (logits if stage == cfg.pp - 1 else 0.0)
        for stage in range(cfg.pp)
    ]
    slowest = max(per_micro)
    bubble = slowest * (cfg.pp - 1) / cfg.chunks
    dp, optimizer = _gradient_reduction(s, slowest, compute_layer, layers)

    step = micro * slowest + bubble + dp + optimizer
    tp_total = micro * layers * tp_layer
    cp_total = micro * layers * cp_layer
    pp_total = micro * p2p
    comm = tp_total + cp_total + pp_total + dp
    return StepBreakdown(
        compute_s=micro * layers * compute_layer,
        tp_comm_s=tp_total,
        cp_comm_s=cp_total,
        pp_p2p_s=pp_total,
        bubble_s=bubble,
        dp_comm_s=dp,
        optimizer_s=optimizer,
        step_s=step,
        comm_fraction=comm / step,
    )
