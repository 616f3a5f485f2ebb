"""Memory per GPU: what the allocator reports, and what it does not.

Reported peak (``torch.cuda.max_memory_allocated``) of a GPU on pipeline
stage ``i`` (:func:`stage_memory`, bytes; GB are 2**30 bytes):

* **Model state** of the parameters the GPU holds: ``1 / tp`` of the layers of
  its stage (Shoeybi et al. 2019) plus the input embedding (first stage) or
  the output layer (last stage). DeepSpeed's bf16 semantics: bf16 weights,
  bf16 gradients (``grad_accum_dtype`` defaults to the model's dtype), fp32
  master weights and Adam moments. Bytes per parameter, ``N = dp * cp`` the
  ranks that reduce gradients (:attr:`.Config.reduce_ranks`):

  - ZeRO-0 with a pipeline (DeepSpeed's ``BF16_Optimizer``, which shards the
    fp32 master weights and optimizer state over the data-parallel group):
    ``2 + 2 + 12 / N``;
  - ZeRO-0 without a pipeline: nothing sharded, ``2 + 2 + 12 = 16``
    (DeepSpeed's ZeRO-0), or, where the reading shards it
    (:attr:`.Assumptions.zero0`
    ``"zero1"`` or ``"distributed"``: ColossalAI's low-level ZeRO-1,
    Megatron's distributed optimizer), ``2 + 2 + 12 / N`` as with a pipeline;
  - ZeRO-2 (DeepSpeed stage 2): bf16 weights replicated, gradient partition
    and optimizer state sharded: ``2 + (2 + 12) / N`` (Rajbhandari et al.
    2020, section 5.2);
  - ZeRO-3: everything sharded, ``16 / N``, plus the bf16 weights of the
    layer being computed and the one prefetched, gathered in every
    micro-batch, and that layer's gradient before its reduce-scatter.

* **Activations** per layer and micro-batch of ``t = s b / cp`` tokens on one
  GPU (:func:`layer_activation_bytes`). With full recomputation (the mode the
  stand-ins assume, :mod:`bolt_pco64.tables.simulate.spec`) each layer keeps only its
  input, ``2 t h`` bytes split over the sequence-parallel ranks (Megatron
  keeps the sequence-parallel shard; :meth:`.Assumptions.sp_divisor`), or over
  ``tp`` without sequence parallelism where the reading distributes saved
  activations, plus, during the backward, one layer's full
  activations being recomputed. Those full activations, as selective
  recomputation would store them (Korthikanti et al. 2022, section 4; flash
  attention, Dao et al. 2022, never stores the ``s x s`` scores): the inputs
  of the two norms and of the QKV and MLP input projections (``8 t h`` bytes,
  split over the sequence-parallel ranks), Q, K, V and their pre-rotary
  copies and the attention output, and the MLP's stored tensors (``4 t f`` bytes for GeLU, ``6 t f``
  for SwiGLU), split over ``tp``.
* **In flight**: the 1F1B schedule's stage ``i`` holds ``min(pp - i, m)``
  micro-batches of its ``L / pp`` layers; interleaved with ``v`` chunks it
  holds ``2 (pp - i - 1) + (v - 1) pp + 1`` chunk-micro-batches of
  ``L / (pp v)`` layers (Narayanan et al. 2021; Megatron's warm-up count).
* the logits of the last stage (:attr:`.ModelConstants.logits_bytes` per
  logit; with a pipeline, :attr:`.ModelConstants.retained_logits_bytes` per
  logit of the whole per-rank batch, 0 unless fitted), the backward working set of one layer, gradient buffers: ZeRO-2's
  ``overlap_comm`` footprint, which DeepSpeed documents as 4.5 times the
  reduce and all-gather bucket sizes (the reduce bucket is the swept
  ``bucket_mb``; the all-gather bucket
  :attr:`.ModelConstants.allgather_bucket_elements`), ZeRO-3's two reduce
  buckets; and the calibrated overhead (:attr:`.Calibration.overhead_gb`).

Memory the allocator does not report (:func:`fixed_hidden_gb` and the
calibration): the CUDA context and NCCL's buffers for each communicator of
the GPU -- the *fixed* per-GPU memory, counted here once and nowhere else --
and the caching allocator's fragmentation, a calibrated fraction of the
memory allocated and freed every step (:attr:`.Calibration.fragmentation`;
Guo et al. 2024, "GMLake", measure 10-30 %). A run OOMs where some GPU's
reported peak plus hidden memory exceeds the calibrated usable capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bolt_pco64.instances import Instance
from bolt_pco64.tables.simulate.spec import GIB, Assumptions, Config, ModelConstants

__all__ = [
    "StageMemory",
    "communicators",
    "fixed_hidden_gb",
    "layer_activation_bytes",
    "layer_params",
    "rank_stage",
    "stage_memory",
    "stage_params",
]

#: Replicated bytes per parameter of a sharded ZeRO-0 optimizer (the fp32
#: master weights and Adam moments, 12 bytes, are sharded): bf16 weights and
#: bf16 gradients (DeepSpeed's ``BF16_Optimizer``, ColossalAI's low-level
#: ZeRO-1), plus a 4-byte fp32 gradient buffer for Megatron's distributed
#: optimizer.
ZERO0_REPLICATED_BYTES: dict[str, float] = {
    "deepspeed": 4.0,
    "zero1": 4.0,
    "distributed": 6.0,
}

#: Seed of the deterministic per-GPU spread of the reported peak (not the noise).
MEMORY_SPREAD_SEED = 96


@dataclass(frozen=True)
class StageMemory:
    """Reported memory of one GPU of a stage before the runtime overhead (bytes).

    Attributes:
        static: Allocated once: model state.
        dynamic: Allocated and freed every step: activations, logits, the
            backward working set, gathered ZeRO-3 layers, gradient buckets.
    """

    static: float
    dynamic: float


def layer_params(instance: Instance, a: Assumptions, tp: int) -> float:
    """Parameters of one transformer layer held by one TP rank."""
    h, f = instance.model.hidden_size, instance.model.ffn_hidden_size
    q = instance.model.num_attention_heads * a.head_dim
    kv = a.num_kv_heads * a.head_dim
    mats = h * (q + 2 * kv) + q * h + (3 if a.gated_mlp else 2) * h * f
    # Two RMSNorm weights, replicated on every TP rank.
    return mats / tp + 2 * h


def stage_params(instance: Instance, a: Assumptions, cfg: Config, stage: int) -> float:
    """Parameters held by one GPU of pipeline stage ``stage``."""
    p = instance.model.num_layers / cfg.pp * layer_params(instance, a, cfg.tp)
    emb = a.vocab_size * instance.model.hidden_size / cfg.tp
    if stage == 0:
        p += emb
    if stage == cfg.pp - 1:
        p += emb + instance.model.hidden_size  # output layer + final norm
    return p


def layer_activation_bytes(
    instance: Instance, a: Assumptions, cfg: Config, micro_batch_size: int
) -> float:
    """Stored activations of one layer and micro-batch on one GPU (bytes)."""
    m = instance.model
    t = m.seq_length * micro_batch_size / cfg.cp
    q = m.num_attention_heads * a.head_dim
    kv = a.num_kv_heads * a.head_dim
    split = a.sp_divisor(cfg)
    if a.recompute == "full":
        kept = cfg.tp if a.distribute_saved_activations and split == 1 else split
        return 2 * t * m.hidden_size / kept
    replicated = 8 * t * m.hidden_size  # norm inputs, QKV and MLP inputs
    # Q, K, V; their pre-norm / pre-rotary copies; the attention output.
    attention = 2 * t * (q + 2 * kv) * 2 + 2 * t * q
    mlp = (6 if a.gated_mlp else 4) * t * m.ffn_hidden_size
    return replicated / split + (attention + mlp) / cfg.tp


def _full_layer_bytes(
    instance: Instance, a: Assumptions, cfg: Config, micro_batch_size: int
) -> float:
    """One layer's activations as selective recomputation stores them."""
    selective = replace(a, recompute="selective")
    return layer_activation_bytes(instance, selective, cfg, micro_batch_size)


def _layers_in_flight(cfg: Config, layers: int, micro: int, stage: int) -> float:
    """Layers' worth of micro-batch activations stage ``stage`` holds at peak."""
    per_stage = layers / cfg.pp
    if cfg.chunks == 1:
        return min(cfg.pp - stage, micro) * per_stage
    chunk_mbs = 2 * (cfg.pp - stage - 1) + (cfg.chunks - 1) * cfg.pp + 1
    return min(chunk_mbs, micro * cfg.chunks) * per_stage / cfg.chunks


def stage_memory(
    instance: Instance,
    a: Assumptions,
    k: ModelConstants,
    cfg: Config,
    stage: int,
) -> StageMemory:
    """Reported memory of one GPU on ``stage``, without the runtime overhead."""
    p = stage_params(instance, a, cfg, stage)
    n = cfg.reduce_ranks
    if cfg.zero_stage == 0 and cfg.pp == 1 and a.zero0 == "deepspeed":
        static = 16 * p
    elif cfg.zero_stage == 0:
        static = ZERO0_REPLICATED_BYTES[a.zero0] * p + 12 * p / n
    elif cfg.zero_stage == 2:
        static = 2 * p + 14 * p / n
    else:
        static = 16 * p / n
    micro, b = a.micro_batches(cfg, instance)
    act = layer_activation_bytes(instance, a, cfg, b)
    full = _full_layer_bytes(instance, a, cfg, b)
    dynamic = _layers_in_flight(cfg, instance.model.num_layers, micro, stage) * act
    dynamic += k.working_set_layers * full
    if a.recompute == "full":
        dynamic += full  # the layer being recomputed
    tokens = instance.model.seq_length * b / cfg.cp
    if cfg.cp > 1:
        # Ring attention's K/V double buffer: the next block's K and V arrive
        # while the current one is used (bf16; Liu et al. 2023).
        kv = a.num_kv_heads * a.head_dim
        dynamic += 2 * 2 * 2 * tokens * kv / min(cfg.tp, a.num_kv_heads)
    if stage == cfg.pp - 1:
        dynamic += k.logits_bytes * tokens * a.vocab_size / cfg.tp
        if cfg.pp > 1 and k.retained_logits_bytes:
            # Every micro-batch's outputs, kept for the step's end.
            kept = instance.model.seq_length * micro * b / cfg.cp
            dynamic += k.retained_logits_bytes * kept * a.vocab_size / cfg.tp
    if cfg.zero_stage == 3:
        lp = layer_params(instance, a, cfg.tp)
        dynamic += 2 * 2 * lp + 4 * lp  # two gathered bf16 layers, one fp32 grad
    if cfg.zero_stage == 2:
        # DeepSpeed's overlap_comm footprint: 4.5 x (reduce + all-gather
        # bucket) x 2 bytes; the reduce bucket is the swept size, the
        # all-gather bucket DeepSpeed's default of 5e8 elements.
        dynamic += k.overlap_comm_factor * (
            cfg.bucket_mb * 2**20 + 2 * k.allgather_bucket_elements
        )
    elif cfg.zero_stage == 3:
        dynamic += 2 * cfg.bucket_mb * 2**20  # two reduce buckets in flight
    return StageMemory(static=static, dynamic=dynamic)


def rank_stage(cfg: Config) -> np.ndarray:
    """Pipeline stage of each global rank (Megatron's tp-cp-dp-pp rank order)."""
    ranks = np.arange(cfg.dp * cfg.tp * cfg.pp * cfg.cp)
    return ranks // (cfg.tp * cfg.cp * cfg.dp)


def peak_spread(cfg: Config, k: ModelConstants) -> np.ndarray:
    """Deterministic relative spread of each GPU's peak, in ``[0, peak_jitter]``.

    Seeded by the configuration, not by the noise seed: the same run reports
    the same memory.
    """
    n = cfg.dp * cfg.tp * cfg.pp * cfg.cp
    rng = np.random.default_rng([MEMORY_SPREAD_SEED, *cfg.raw_cells().values()])
    return k.peak_jitter * rng.random(n)


def communicators(cfg: Config, gpus_per_host: int) -> list[tuple[str, bool]]:
    """``(name, crosses hosts)`` of each communicator a GPU belongs to.

    Ranks are laid out tp-cp-dp-pp (Megatron), so a group spans hosts once the
    ranks it strides over outnumber a host's GPUs. The gradient-reduction
    group is ``dp * cp`` (:attr:`.Config.reduce_ranks`).
    """
    g = gpus_per_host
    out = []
    if cfg.tp > 1:
        out.append(("tp", cfg.tp > g))
    if cfg.cp > 1:
        out.append(("cp", cfg.tp * cfg.cp > g))
    if cfg.reduce_ranks > 1:
        out.append(("dp", cfg.tp * cfg.cp * cfg.dp > g))
    if cfg.pp > 1:
        out.append(("pp", cfg.tp * cfg.cp * cfg.dp * cfg.pp > g))
    return out


def fixed_hidden_gb(cfg: Config, gpus_per_host: int, k: ModelConstants) -> float:
    """CUDA context plus NCCL buffers of one GPU (GB): the fixed hidden memory."""
    return k.cuda_context_gb + sum(
        k.nccl_inter_gb if inter else k.nccl_intra_gb
        for _, inter in communicators(cfg, gpus_per_host)
    )


def stage_arrays(
    instance: Instance, a: Assumptions, k: ModelConstants, cfg: Config
) -> tuple[np.ndarray, np.ndarray]:
    """``(static GB, dynamic GB)`` of each stage, shape ``pp`` each."""
    mems = [stage_memory(instance, a, k, cfg, s) for s in range(cfg.pp)]
    return (
        np.array([m.static for m in mems]) / GIB,
        np.array([m.dynamic for m in mems]) / GIB,
    )


__all__ += ["MEMORY_SPREAD_SEED", "peak_spread", "stage_arrays"]
