"""What the stand-in models: configurations, the job's assumptions, the cluster.

The published facts of an instance (GPUs, hosts, GPU memory, model shape,
inputs, figures) come from :mod:`bolt_pco64.instances`. What is *not*
published -- the architecture details behind the shape, the micro-batch rule,
the activation-recomputation mode and the hardware -- is assumed here, per
instance name, each assumption marked and justified in its docstring.

Units: memory in GB of 2**30 bytes (what ``torch.cuda.max_memory_allocated()
/ 2**30`` reports, the usual unit of a sweep's ``peak_mem``), time in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bolt_pco64 import instances
from bolt_pco64.instances import (
    ABSENT_KNOBS,
    KNOBS,
    PCO16_INSTANCE,
    PCO32_INSTANCE,
    PCO64_INSTANCE,
    Instance,
)

__all__ = [
    "ASSUMPTIONS",
    "GIB",
    "Assumptions",
    "Config",
    "Hardware",
    "MicroRule",
    "Microbatching",
    "ModelConstants",
    "Recompute",
    "SequenceParallelGroup",
    "Zero0",
    "assumptions_for",
]

#: Bytes per GB of the table, 2**30 (torch's allocator statistics are in GiB).
GIB = float(2**30)

#: Activation recomputation, ``"selective"`` (Korthikanti et al. 2022; only
#: the attention core is recomputed, which flash attention does inside its
#: backward kernel anyway) or ``"full"`` (only each layer's input is kept;
#: the whole layer's forward runs again in backward).
Recompute = Literal["selective", "full"]


@dataclass(frozen=True, order=True)
class Config:
    """One parallelism configuration, in raw sizes (not log2).

    The fields are the knobs' spellings (:data:`bolt_pco64.instances.KNOBS`).

    Attributes:
        dp: Data-parallel size.
        tp: Tensor-parallel size.
        pp: Pipeline-parallel size.
        cp: Context-parallel size (1 where the instance fixes it).
        sp: Sequence-parallel size: the regions tensor parallelism leaves
            replicated (norms, residual adds) are split over ``sp`` of the
            ``tp`` ranks (Korthikanti et al. 2022); ``sp = tp`` is Megatron's
            full sequence parallelism.
        bucket_mb: Gradient-reduction bucket size in MB (2**20 bytes).
        zero_stage: ZeRO stage, 0, 2 or 3.
        chunks: Model chunks per pipeline stage (interleaved schedule).
        grad_accum_steps: Gradient-accumulation steps (1 where the instance
            fixes it).
    """

    dp: int
    tp: int
    pp: int
    cp: int
    sp: int
    bucket_mb: int
    zero_stage: int
    chunks: int
    grad_accum_steps: int = 1

    @classmethod
    def from_encoded(cls, instance: Instance, encoded: Sequence[int]) -> Config:
        """The configuration of one encoded input vector of ``instance`` (its
        context columns, and :data:`~bolt_pco64.instances.ABSENT_KNOBS` for
        knobs it does not hold, fill the rest)."""
        return cls(**(ABSENT_KNOBS | instance.raw_sizes(encoded)))

    @property
    def reduce_ranks(self) -> int:
        """Ranks that reduce gradients and shard ZeRO state, ``dp * cp``.

        Megatron-LM builds the gradient-reduction ("data-parallel with context
        parallel") group from the data- and context-parallel ranks together:
        context-parallel ranks hold the same weights and see different tokens
        (``parallel_state.get_data_parallel_group(with_context_parallel=True)``).
        """
        return self.dp * self.cp

    def raw_cells(self) -> dict[str, int]:
        """The table's raw cells (log2 sizes, raw ZeRO stage), by column name."""

        return {
            column: (
                getattr(self, knob)
                if column == "zero_stage"
                else int(math.log2(getattr(self, knob)))
            )
            for column, knob in KNOBS.items()
        }

    def encoded(self, instance: Instance) -> tuple[int, ...]:
        """The encoded inputs of ``instance``, in ``X`` order."""
        cells = self.raw_cells()
        return tuple(spec.encode(cells[spec.name]) for spec in instance.inputs)


@dataclass(frozen=True)
class Hardware:
    """The GPUs and the network (*assumed*: the cards publish only GPU counts).

    Attributes:
        description: What the cluster is modelled on.
        peak_tflops: Dense bf16 peak per GPU (H100 SXM / GH200 datasheet: 989).
        hbm_gbs: Achievable HBM bandwidth, GB/s (1e9 bytes).
        intra_bus_gbs: NCCL bus bandwidth inside a host, GB/s.
        inter_bus_gbs: NCCL bus bandwidth across hosts per GPU, GB/s (each GPU
            has its own NIC, so a ring across hosts runs at one NIC's rate).
        intra_latency_s: Per ring step latency inside a host.
        inter_latency_s: Per ring step latency across hosts.
    """

    description: str
    peak_tflops: float
    hbm_gbs: float
    intra_bus_gbs: float
    inter_bus_gbs: float
    intra_latency_s: float
    inter_latency_s: float


#: A 4 x GH200 (96 GB HBM3) node with NVLink 4 between the four superchips and
#: one 200 Gb/s NIC per superchip (as on CSCS Alps): 3 peers x 150 GB/s at about
#: 75 % for NVLink, 25 GB/s at 80 % for the NIC.
GH200_QUAD = Hardware(
    description="4 x GH200 96 GB per host, NVLink 4, one 200 Gb/s NIC per GPU",
    peak_tflops=989.0,
    hbm_gbs=3000.0,
    intra_bus_gbs=340.0,
    inter_bus_gbs=20.0,
    intra_latency_s=5e-6,
    inter_latency_s=20e-6,
)

#: A DGX H100 node, 8 x H100 SXM 80 GB on NVSwitch (NCCL all-reduce bus
#: bandwidth about 450 GB/s, 80 % used here), eight 400 Gb/s NICs.
DGX_H100 = Hardware(
    description="8 x H100 SXM 80 GB per host, NVSwitch, one 400 Gb/s NIC per GPU",
    peak_tflops=989.0,
    hbm_gbs=2700.0,
    intra_bus_gbs=360.0,
    inter_bus_gbs=40.0,
    intra_latency_s=5e-6,
    inter_latency_s=15e-6,
)


#: How ZeRO stage 0 holds the optimizer. ``"deepspeed"``: DeepSpeed's ZeRO-0
#: replicates everything without a pipeline (16 bytes per parameter) and
#: shards the fp32 master weights and Adam state with one
#: (``BF16_Optimizer``: ``4 + 12 / N``); ``"zero1"``: that state sharded with
#: or without a pipeline (ColossalAI's low-level ZeRO-1: ``4 + 12 / N``);
#: ``"distributed"``: Megatron's distributed optimizer, which also keeps an
#: fp32 gradient buffer (``6 + 12 / N``). ``N = dp * cp``.
Zero0 = Literal["deepspeed", "zero1", "distributed"]

#: Over which ranks sequence parallelism splits (see
#: :attr:`Assumptions.sequence_parallel_group`).
SequenceParallelGroup = Literal["sp", "tp"]

#: How a micro-batch rule splits a data-parallel rank's share of the global
#: batch (see :class:`Microbatching`).
MicroRule = Literal["size", "count", "per_stage", "accumulation"]


@dataclass(frozen=True)
class Microbatching:
    """How one data-parallel rank runs its ``global_batch / dp`` sequences.

    Attributes:
        rule: ``"size"``: micro-batches of ``value`` sequences (Megatron's and
            DeepSpeed's fixed micro-batch size); ``"count"``: ``value``
            micro-batches; ``"per_stage"``: ``value * pp`` micro-batches;
            ``"accumulation"``: the configuration's ``grad_accum_steps``
            micro-batches (DeepSpeed's ``train_batch = micro_batch x
            grad_accum x dp``, where accumulation is an input). A count is
            capped at the rank's sequences (micro-batches hold >= 1).
        value: The rule's number (unused by ``"accumulation"``).
    """

    rule: MicroRule
    value: int = 1

    def split(self, per_rank: int, cfg: Config) -> tuple[int, int]:
        """``(micro-batches, sequences per micro-batch)`` of ``per_rank`` sequences."""
        if self.rule == "size":
            return max(1, per_rank // self.value), self.value
        count = {
            "count": self.value,
            "per_stage": self.value * cfg.pp,
            "accumulation": cfg.grad_accum_steps,
        }[self.rule]
        count = max(1, min(count, per_rank))
        return count, max(1, per_rank // count)

    def describe(self) -> str:
        """The rule in words, e.g. ``"micro-batches of 1 sequence"``."""
        return {
            "size": f"micro-batches of {self.value} sequence"
            + ("s" if self.value != 1 else ""),
            "count": f"{self.value} micro-batch" + ("es" if self.value != 1 else ""),
            "per_stage": f"{self.value} x pp micro-batches",
            "accumulation": "grad_accum micro-batches",
        }[self.rule]


@dataclass(frozen=True)
class Assumptions:
    """What the stand-in assumes about one instance's job beyond its card.

    Attributes:
        architecture: The public model whose shape the card's matches.
        num_kv_heads: Key/value heads (grouped-query attention).
        head_dim: Width of one attention head.
        gated_mlp: SwiGLU MLP (three ``h x f`` matrices) rather than GeLU (two).
        vocab_size: Vocabulary (untied input and output embeddings).
        micro_unpipelined: How a rank without a pipeline (``pp = 1``) splits
            its ``global_batch / dp`` sequences into micro-batches.
        micro_pipelined: The same with a pipeline (``pp > 1``).
        zero0: How ZeRO stage 0 holds the optimizer (:data:`Zero0`).
        recompute: The activation-recomputation mode (see :data:`Recompute`).
        hardware: The cluster.
        throughput_unit: What ``throughput_mean`` counts (an inference, see
            :data:`~bolt_pco64.instances.ThroughputUnit`: the one that puts
            each instance's published best at a plausible model FLOPs
            utilisation on its GPUs, see :data:`ASSUMPTIONS`).
        usable_fraction: Usable share of a GPU's memory where the instance
            publishes no peak (so the calibration cannot fit it); ``None``
            where it is fitted (pco64).
        sequence_parallel_group: Over how many ranks sequence parallelism
            splits the regions tensor parallelism leaves replicated:
            ``"sp"``, the ``sp`` knob's size; ``"tp"``, the whole
            tensor-parallel group whenever ``sp > 1`` (ColossalAI's
            ``split_gather`` mode and Megatron's ``--sequence-parallel`` treat
            the knob as a switch).
        distribute_saved_activations: Full recomputation keeps each layer's
            input split over the tensor-parallel ranks even without sequence
            parallelism (Megatron's ``--distribute-saved-activations``).
    """

    architecture: str
    num_kv_heads: int
    head_dim: int
    gated_mlp: bool
    vocab_size: int
    micro_unpipelined: Microbatching
    micro_pipelined: Microbatching
    zero0: Zero0
    recompute: Recompute
    hardware: Hardware
    throughput_unit: instances.ThroughputUnit
    usable_fraction: float | None = None
    sequence_parallel_group: SequenceParallelGroup = "sp"
    distribute_saved_activations: bool = False

    def sp_divisor(self, cfg: Config) -> int:
        """Ranks that split ``cfg``'s sequence-parallel regions (1: none)."""
        if cfg.sp == 1:
            return 1
        return cfg.tp if self.sequence_parallel_group == "tp" else cfg.sp

    def micro_batches(self, cfg: Config, instance: Instance) -> tuple[int, int]:
        """``(micro-batches per step, sequences per micro-batch)`` of ``cfg``."""
        rule = self.micro_pipelined if cfg.pp > 1 else self.micro_unpipelined
        return rule.split(instance.model.batch_size // cfg.dp, cfg)


_PCO64_ASSUMPTIONS = Assumptions(
    architecture="GPT-style dense transformer (GeLU MLP, multi-head attention)",
    num_kv_heads=64,
    head_dim=80,
    gated_mlp=False,
    vocab_size=32000,
    micro_unpipelined=Microbatching("size", 1),
    micro_pipelined=Microbatching("size", 1),
    zero0="deepspeed",
    recompute="full",
    hardware=GH200_QUAD,
    throughput_unit=PCO64_INSTANCE.throughput_unit,
)

#: Per-instance assumptions (see the module docstring of
#: :mod:`bolt_pco64.tables.simulate` for the reasoning). The cards give the shape
#: only. pco64 and pco32: a GeLU MLP (two ``h x f`` matrices; FFN 25600 is
#: exactly ``5 h``), multi-head attention and a 32000-token vocabulary, which
#: gives pco64 23.8 B parameters. The SwiGLU reading of the same shape
#: (Qwen3-32B: 32.8 B parameters, grouped-query attention, 151936 tokens)
#: admits no calibration: its model state leaves fewer than 560
#: configurations within 5.1 GB of the best one's peak (74.2 vs 79.3 GB).
#: pco16's shape is Llama-2-7B's (SwiGLU, 32000 tokens).
#: Full activation recomputation everywhere: it is the only mode under which
#: about 560 of pco64's 780 configurations fit (with selective recomputation
#: a tensor-parallel size of 1 holds about 100 GB of activations and fewer
#: than 450 configurations fit in 96 GB; the calibration finds no fit).
#: Micro-batch size 1 where accumulation is fixed (8192-token sequences). Usable memory where no peak
#: is published: pco32 shares pco64's cluster and harness, so pco64's fitted
#: share (0.855, rounded); pco16's DGX H100 *assumed* 0.95.
#: Throughput unit (*inferred*; the cards name none): read as samples per
#: second per GPU, pco64's best (0.2707) is 35.7 % and pco32's (0.4696)
#: 31.1 % model FLOPs utilisation of a 989 TFLOP/s GPU (6 N plus causal
#: attention FLOPs per token), plausible, while as optimizer steps per second
#: they would be 8 and 16 times that (285 % and 498 %), impossible. pco16's
#: best (0.1489 at dp 16, a 6.7 B model, 2048-token sequences) is 1.3 % as
#: samples/s/GPU but 41.5 % as optimizer steps per second (512 x 2048 tokens a
#: step): pco16's table is read as steps/s. This is an inference; the
#: published numbers alone cannot prove either reading.
#: Keyed by instance name: these are the stand-in generator's hypotheses about
#: the three published jobs, not facts of the instances; an instance without
#: an entry has no stand-in (:func:`assumptions_for`).
ASSUMPTIONS: dict[str, Assumptions] = {
    PCO64_INSTANCE.name: _PCO64_ASSUMPTIONS,
    # pco32: pco64's model family, cluster and harness; its own attention shape.
    PCO32_INSTANCE.name: replace(
        _PCO64_ASSUMPTIONS,
        num_kv_heads=40,
        head_dim=128,
        usable_fraction=0.855,
        throughput_unit=PCO32_INSTANCE.throughput_unit,
    ),
    PCO16_INSTANCE.name: Assumptions(
        architecture="Llama-2-7B (SwiGLU MLP, multi-head attention)",
        num_kv_heads=32,
        head_dim=128,
        gated_mlp=True,
        vocab_size=32000,
        micro_unpipelined=Microbatching("accumulation"),
        micro_pipelined=Microbatching("accumulation"),
        zero0="deepspeed",
        recompute="full",
        hardware=DGX_H100,
        throughput_unit=PCO16_INSTANCE.throughput_unit,
        usable_fraction=0.95,
    ),
}


def assumptions_for(instance: Instance) -> Assumptions:
    """The stand-in's assumptions about ``instance``.

    Raises:
        ValueError: If the stand-in has no assumptions for that instance.
    """
    try:
        return ASSUMPTIONS[instance.name]
    except KeyError:
        raise ValueError(
            f"Expected an instance the stand-in models ({sorted(ASSUMPTIONS)}), "
            f"got {instance.name!r}."
        ) from None


@dataclass(frozen=True)
class ModelConstants:
    """Fixed (not calibrated) constants of the model; each is an assumption.

    Attributes:
        cuda_context_gb: CUDA context and loaded kernels per GPU, unseen by the
            allocator (0.5-1 GB on Hopper with lazy module loading).
        nccl_intra_gb: NCCL buffers per communicator inside a host.
        nccl_inter_gb: NCCL buffers per communicator that spans hosts (more
            channels and proxy buffers; NCCL_BUFFSIZE is 4 MiB per channel and
            peer).
        gemm_half_dim: ``d0`` of the narrow-GEMM penalty
            ``1 / (1 + d0 tp / h + d0 / tokens)``.
        ring_attention_cost: Per extra CP rank, relative slow-down of the
            attention kernels (block-wise rescaling, more launches).
        elementwise_passes: HBM traffic of the memory-bound kernels (norms,
            activations, residual adds, rotary embeddings) in units of the
            layer's full activation bytes, forward and backward.
        rho_tp: Exposed fraction of tensor-parallel collectives (Transformer
            Engine's communication/GEMM overlap hides most of them; with 0.5
            or more the pipelined configurations outrun the card's best).
        rho_cp: Fraction of the attention time that hides the CP exchange.
        rho_z3: Exposed fraction of ZeRO-3 parameter gathers beyond what
            exceeds the layer's compute (imperfect prefetch).
        bucket_launch_s: Per-bucket launch and synchronisation cost.
        adam_bytes_per_param: HBM bytes moved per parameter by the fused Adam
            update (read and write fp32 master, momentum, variance, gradient;
            write bf16 weights).
        working_set_layers: Backward working set (gradients and temporaries of
            the layer being back-propagated), in layers' worth of activations.
        logits_bytes: Bytes per logit held on the last stage: the bf16 logits
            and one fp32 buffer that Megatron's vocab-parallel cross entropy
            turns into the softmax and then, in place, into the gradient.
        first_step_factor: The recorded warm-up (first) step's time relative
            to a timed step (allocator growth, NCCL connection set-up,
            kernel autotuning).
        step_gap_s: Wall time between two recorded steps outside them (the
            runner's bookkeeping: a barrier, a flag scattered to every rank,
            a results file written every 5 steps); in ``overall_time``, not
            in ``all_time_steps``.
        noise_cv: Base coefficient of variation of a step's throughput.
        noise_cv_comm: Extra CV per unit fraction of exposed communication.
        noise_cv_inter: Extra CV when gradient reduction crosses hosts.
        slow_step_prob: Probability that a step is slowed (GC, network jitter).
        slow_step_max: Largest relative slow-down of such a step.
        peak_jitter: Largest relative per-GPU spread of the reported peak.
        fragmentation_prior: Allocator fragmentation the calibration prefers.
        allgather_bucket_elements: ZeRO-2's all-gather bucket (elements), which
            with the swept reduce bucket sets the ``overlap_comm`` footprint.
            *Assumed* 6.5e8, 1.3 times DeepSpeed's default of 5e8: with the
            default the card's best configuration is too light relative to
            the others for 560 runs to stay under the 79.3 GB largest
            feasible peak.
        overlap_comm_factor: ZeRO-2's ``overlap_comm`` footprint in units of
            the reduce plus all-gather bucket bytes (DeepSpeed documents 4.5).
        retained_logits_bytes: Bytes per logit of the *whole* per-rank batch
            that a pipeline's last stage keeps until the step ends (a
            schedule that returns every micro-batch's outputs, as
            ColossalAI's ``return_outputs`` does); 0: only the micro-batch in
            flight (:attr:`logits_bytes`). Fitted to the traces (stand-in
            3.0).
    """

    cuda_context_gb: float = 0.6
    nccl_intra_gb: float = 0.25
    nccl_inter_gb: float = 1.0
    gemm_half_dim: float = 64.0
    ring_attention_cost: float = 0.1
    elementwise_passes: float = 6.0
    rho_tp: float = 0.3
    rho_cp: float = 0.8
    rho_z3: float = 0.1
    bucket_launch_s: float = 20e-6
    adam_bytes_per_param: float = 34.0
    working_set_layers: float = 1.0
    logits_bytes: float = 6.0
    first_step_factor: float = 1.6
    step_gap_s: float = 0.05
    noise_cv: float = 0.004
    noise_cv_comm: float = 0.03
    noise_cv_inter: float = 0.003
    slow_step_prob: float = 0.05
    slow_step_max: float = 0.04
    peak_jitter: float = 0.003
    fragmentation_prior: float = 0.1
    allgather_bucket_elements: float = 6.5e8
    overlap_comm_factor: float = 4.5
    retained_logits_bytes: float = 0.0
