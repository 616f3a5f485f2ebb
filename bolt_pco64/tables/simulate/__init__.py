"""The simulated stand-in tables (docs/architecture.md §3).

The measured pco tables cannot be reached from the machines this package is built on, so
the package ships a **stand-in** per instance (``data/<instance>_simulated.parquet``),
written by :func:`~bolt_pco64.tables.simulate.generate.write_simulated_table` from the analytic
model of this package. It is for developing, testing and demonstrating against. It is
**not measured data**; its parquet metadata says ``source=simulated``.

Modules, in the order data flows:

* :mod:`~bolt_pco64.tables.simulate.spec` -- configurations and the assumptions
  about each instance that its card does not publish (architecture,
  recomputation, micro-batch, hardware);
* :mod:`~bolt_pco64.tables.simulate.grid` -- the candidate set (pco64: the full
  four-rule grid of 780 configurations);
* :mod:`~bolt_pco64.tables.simulate.memory` -- reported and hidden memory per GPU;
* :mod:`~bolt_pco64.tables.simulate.steptime` -- step time by term and throughput;
* :mod:`~bolt_pco64.tables.simulate.variants` -- the readings each shipped variant
  models (:data:`~bolt_pco64.tables.simulate.variants.VARIANTS`);
* :mod:`~bolt_pco64.tables.simulate.calibrate` -- the four fitted constants and the
  recorded step times;
* :mod:`~bolt_pco64.tables.simulate.generate` -- the table and its metadata;
* :mod:`~bolt_pco64.tables.simulate.registry` -- registering a regenerated file's
  content fingerprint.

The fit of the model's constants to measured rows (the published traces;
stand-in 3.0's step-time constants) is study code: ``benchmarks/_constants_fit.py``.

The recorded columns are the runner's (``docs/architecture.md`` §6): per-step times
with a warm-up step first, ``throughput_mean``/``throughput_std`` by
:mod:`bolt_pco64.tables.estimators`, ``overall_time`` without start-up.

The stack modelled (the default variant)
----------------------------------------
Rule 4 of the grid (ZeRO-2/3 only without pipeline parallelism) is
DeepSpeed's, so the memory and gradient-reduction semantics are DeepSpeed's
bf16 ones: gradients are bf16 and are reduced in bf16 (DeepSpeed's default
``communication_data_type`` is the model's dtype), ZeRO-0 runs with a
pipeline use DeepSpeed's ``BF16_Optimizer`` (fp32 master weights and Adam
state sharded over the gradient-reduction ranks), ZeRO-0 without a pipeline
keeps everything replicated, ZeRO-2 reduce-scatters in every micro-step and
ZeRO-3 also gathers weights per micro-batch. Gradient reduction and sharding
span ``dp * cp`` ranks. Interleaved pipelines and tensor/sequence/context
parallelism follow Megatron-LM.

What the calibration says about the card
----------------------------------------
The card's figures pull the model two ways. 560 of 780 configurations fit
only if activations are small everywhere (full recomputation: with selective
recomputation a configuration with tensor-parallel size 1 holds about 100 GB
of activations, and fewer than 450 fit in 96 GB). But then the card's best
configuration (ZeRO-2 over 16 ranks, tensor-parallel 4) itemises only about
25 GB, and to report the published 74.2 GB the fitted overhead
(:attr:`.Calibration.overhead_gb`) must be about 50 GB -- ten times what
workspaces and allocator rounding explain. A scan of 1,440 memory readings
with DeepSpeed's ZeRO-2 (micro-batch size 1-8, selective or full
recomputation, fp32 or bf16 accumulation in pipelines, vocabulary 32000 to
256000 with 6-16 bytes per logit, the all-gather bucket, an initialisation
transient in the whole-run peak) finds none that meets 560 runs, a 74.2 GB
best and a 79.3 GB largest feasible peak with an overhead under 25 GB; the
only near fit keeps an unsharded fp32 gradient buffer under ZeRO-2, which
DeepSpeed's bf16 ZeRO-2 does not. The default variant (``mbs1``) meets the
figures with the large overhead, and the README says so with the scan's
figures. Other readings meet them too (:mod:`~bolt_pco64.tables.simulate.variants`):
``perrank`` -- the runner's per-rank batches in few micro-batches, a ZeRO-1
optimizer for stage 0 -- with 2.7 GB of overhead, and a crash boundary
elsewhere (docs/standins.md).

The throughput unit of each table is inferred
(:data:`~bolt_pco64.instances.ThroughputUnit`): samples per second per
GPU for pco64 and pco32, optimizer steps per second for pco16.

References: Rajbhandari et al. 2020, "ZeRO" (SC20); Shoeybi et al. 2019,
"Megatron-LM"; Narayanan et al. 2021, "Efficient large-scale language model
training on GPU clusters using Megatron-LM" (SC21); Korthikanti et al. 2022,
"Reducing activation recomputation in large transformer models" (MLSys
2023); Dao et al. 2022, "FlashAttention"; Liu et al. 2023, "Ring attention";
Guo et al. 2024, "GMLake" (ASPLOS 24); Thakur et al. 2005, "Optimization of
collective communication operations in MPICH"; DeepSpeed's ZeRO
configuration documentation (``overlap_comm`` footprint) and source
(``runtime/engine.py``, ``runtime/pipe/engine.py``, ``runtime/bf16_optimizer.py``).
"""

from __future__ import annotations

from bolt_pco64.tables.simulate.calibrate import (
    FRAGMENTATION_GRID,
    N_RECORDED_STEPS,
    Calibration,
    CalibrationError,
    StandinModel,
    build_model,
    calibrate,
)
from bolt_pco64.tables.simulate.generate import (
    GENERATOR_VERSION,
    OOM_PAD,
    make_simulated_table,
    simulated_metadata,
    write_simulated_table,
)
from bolt_pco64.tables.simulate.grid import (
    candidate_configurations,
    grid_configurations,
)
from bolt_pco64.tables.simulate.memory import stage_memory
from bolt_pco64.tables.simulate.spec import (
    ASSUMPTIONS,
    Assumptions,
    Config,
    Hardware,
    ModelConstants,
    assumptions_for,
)
from bolt_pco64.tables.simulate.steptime import (
    StepBreakdown,
    step_breakdown,
    throughput,
)
from bolt_pco64.tables.simulate.variants import VARIANTS, Variant, variant_for

__all__ = [
    "ASSUMPTIONS",
    "FRAGMENTATION_GRID",
    "GENERATOR_VERSION",
    "N_RECORDED_STEPS",
    "OOM_PAD",
    "VARIANTS",
    "Assumptions",
    "Calibration",
    "CalibrationError",
    "Config",
    "Hardware",
    "ModelConstants",
    "StandinModel",
    "StepBreakdown",
    "Variant",
    "assumptions_for",
    "build_model",
    "calibrate",
    "candidate_configurations",
    "grid_configurations",
    "make_simulated_table",
    "simulated_metadata",
    "stage_memory",
    "step_breakdown",
    "throughput",
    "variant_for",
    "write_simulated_table",
]
