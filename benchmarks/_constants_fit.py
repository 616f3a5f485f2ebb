"""Fit the stand-in's physical constants to measured rows (stand-in 3.0).

Study code of ``standin_fit.py`` (imported as a sibling module; the package never
imports it).

The calibration (:mod:`bolt_pco64.tables.simulate.calibrate`) meets a card's few
published figures. Where rows of the measured table are known -- the
published optimisation traces give, for every configuration they visited,
its exact feasibility, its exact peak memory if it ran and its (observed)
throughput (:func:`bolt_pco64.tables.traces.visited_rows`) -- the model's
*constants* can be fitted to them. Nothing here copies a value into a table:
the fit returns constants (:class:`FittedConstants`), the generator writes
every row from the model as before, and the calibration still meets the
card's figures on top of them.

Two fits, each a robust least-squares problem
(:func:`scipy.optimize.least_squares`, soft-L1 loss) over the rows of a training set:

* **memory** (:func:`fit_memory`): the model's reported peak of a GPU of stage ``i`` is
  linear in the constants that scale its terms -- the backward working set
  (:attr:`~bolt_pco64.tables.simulate.spec.ModelConstants.working_set_layers`), the bytes per
  logit (``logits_bytes``), ZeRO-2's ``overlap_comm`` footprint
  (``overlap_comm_factor``, and with it the all-gather bucket
  ``allgather_bucket_elements``), and a uniform overhead:
  ``peak_i = base_i + sum_j theta_j f_ij + overhead``. :func:`memory_basis` evaluates
  the model's own terms once per configuration and stage; the reported peak is the
  largest over stages, fitted to the measured ``peak_mem`` of the rows that ran.
* **step time** (:func:`fit_steptime`): the throughput of the rows that ran,
  in log space, over the constants of the time model
  (:data:`STEPTIME_CONSTANTS`: the narrow-GEMM penalty, the exposed TP and
  ZeRO-3 fractions, the ring-attention cost, the memory-bound passes, the
  bucket launch cost, the NIC and NVLink bandwidths) and the compute
  efficiency; the calibration later re-solves the efficiency so that the
  card's best configuration measures the published best value.

The discrete readings (micro-batching, ZeRO-0 layout, sequence-parallel
group, distributed saved activations) are not fitted by gradient: a reading is
a :class:`~bolt_pco64.tables.simulate.variants.Variant`, and :func:`fit_variant` fits
one; ``benchmarks/standin_fit.py`` compares readings on held-out rows.

What ships (stand-in 3.0, :data:`bolt_pco64.tables.simulate.variants.TRACE_STEPTIME`)
is the step-time fit of each pco64 variant with ``memory=False``: the
variant's memory reading stays calibrated to the card (560 runs, the best at
74.2 GB, the largest at 79.3 GB), and the step-time fit keeps every row that
reading lets run below the card's best (a hinge, :data:`RIVAL_MARGIN`). The
memory fit is not shipped: under the readings that fit the traces' peaks best
(median error under 4 GB; ``benchmarks/standin_fit.py --readings``), the
fitted model lets 624 of the 780 configurations fit under the capacity the
traces imply, the card's best only the 589th-593rd lightest, while the card
counts 560 with the best among them; the readings that put the best among
the 560 lightest miss the peaks by a median 7.5 GB or more. The traces' OOM
rows below the fitted capacity (57 of 643 visited under the traces' reading)
are failures a memory cut cannot produce.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from bolt_pco64.instances import ABSENT_KNOBS, KNOBS, PCO64_INSTANCE, Instance
from bolt_pco64.tables.simulate.calibrate import card_feasible
from bolt_pco64.tables.simulate.memory import peak_spread, rank_stage, stage_memory
from bolt_pco64.tables.simulate.spec import (
    ASSUMPTIONS,
    GIB,
    Assumptions,
    Config,
    Hardware,
    Microbatching,
    ModelConstants,
)
from bolt_pco64.tables.simulate.steptime import step_breakdown, throughput
from bolt_pco64.tables.simulate.variants import Variant

__all__ = [
    "MEMORY_CONSTANTS",
    "STEPTIME_CONSTANTS",
    "TRACE_READINGS",
    "FittedConstants",
    "MemoryBasis",
    "configs_of",
    "fit_memory",
    "fit_steptime",
    "fit_variant",
    "memory_basis",
    "model_throughput",
    "predict",
    "predict_peak",
    "steptime_vector",
    "theta_of",
]

#: The reading the pco64 traces select (``benchmarks/standin_fit.py`` scans
#: the readings; this one has the smallest peak-memory error on held-out
#: rows): the per-rank batch (``512 / dp`` sequences) as one micro-batch
#: without a pipeline and ``4 pp`` with one; ZeRO-0 as Megatron's distributed
#: optimizer; sequence parallelism over the whole TP group; the checkpointed
#: layer inputs split over TP (``--distribute-saved-activations``). Its
#: constants are the starting point of :func:`fit_variant`.
TRACE_READINGS: dict[str, Variant] = {
    PCO64_INSTANCE.name: Variant(
        "traces",
        "fitted to the published traces: a rank's 512/dp sequences as 1 "
        "micro-batch without a pipeline, 4 x pp with one; Megatron's "
        "distributed optimizer for ZeRO-0; SP over the TP group; saved "
        "activations split over TP",
        replace(
            ASSUMPTIONS[PCO64_INSTANCE.name],
            micro_unpipelined=Microbatching("count", 1),
            micro_pipelined=Microbatching("per_stage", 4),
            zero0="distributed",
            sequence_parallel_group="tp",
            distribute_saved_activations=True,
        ),
    ),
}

#: The memory constants the fit sets (each scales one term of the model).
MEMORY_CONSTANTS: tuple[str, ...] = (
    "working_set_layers",
    "logits_bytes",
    "overlap_comm_factor",
    "retained_logits_bytes",
)
#: The step-time constants the fit sets, as ``(name, lower, upper)``; names of
#: :class:`~bolt_pco64.tables.simulate.spec.ModelConstants` fields, or ``hardware.``
#: and a :class:`~bolt_pco64.tables.simulate.spec.Hardware` field.
STEPTIME_CONSTANTS: tuple[tuple[str, float, float], ...] = (
    ("gemm_half_dim", 0.0, 2048.0),
    ("rho_tp", 0.0, 1.0),
    ("rho_z3", 0.0, 1.0),
    ("ring_attention_cost", 0.0, 1.0),
    ("elementwise_passes", 0.0, 40.0),
    ("bucket_launch_s", 0.0, 5e-3),
    ("hardware.inter_bus_gbs", 1.0, 100.0),
    ("hardware.intra_bus_gbs", 10.0, 900.0),
)
#: Relative throughput gap (log) the step-time fit keeps between the card's
#: best and every other row that runs (about two standard errors of a row's
#: measured mean; the calibration's noise draw does the rest).
RIVAL_MARGIN = 0.003
#: Weight of a rival's excess against a row's log-throughput error.
RIVAL_WEIGHT = 30.0
#: Where the efficiency search of the step-time fit may go.
EFFICIENCY_BOUNDS = (0.05, 1.0)
#: Scale of the soft-L1 loss (memory residuals in GB, log-throughput in units).
MEMORY_LOSS_SCALE_GB = 1.0
STEPTIME_LOSS_SCALE = 0.02


@dataclass(frozen=True)
class MemoryBasis:
    """The model's memory terms of some configurations, per stage (GB).

    Attributes:
        base: ``n x width`` reported memory with every fitted term at zero
            (``-inf`` past a configuration's last stage).
        terms: ``n x width x p`` memory per unit of each fitted constant
            (:data:`MEMORY_CONSTANTS`, then the all-gather bucket per 1e8
            elements times ``overlap_comm_factor``).
        spread: ``n x width`` the largest per-GPU relative spread of a stage.
    """

    base: np.ndarray
    terms: np.ndarray
    spread: np.ndarray


#: Elements of the all-gather bucket per unit of its basis term.
_AG_UNIT = 1e8


def configs_of(instance: Instance, rows: pd.DataFrame) -> list[Config]:
    """The configurations of ``rows`` (the card's raw input and context columns)."""
    cells = rows[list(instance.input_columns) + list(instance.context_columns)]
    out = []
    for r in cells.itertuples(index=False):
        sizes = {
            KNOBS[column]: int(v) if column == "zero_stage" else 2 ** int(v)
            for column, v in zip(cells.columns, r, strict=True)
        }
        out.append(Config(**(ABSENT_KNOBS | sizes)))
    return out


def _stage_total(
    instance: Instance, a: Assumptions, k: ModelConstants, cfg: Config, stage: int
) -> float:
    m = stage_memory(instance, a, k, cfg, stage)
    return (m.static + m.dynamic) / GIB


def memory_basis(
    instance: Instance, variant: Variant, configs: Sequence[Config]
) -> MemoryBasis:
    """The memory terms of ``configs`` under ``variant``'s reading."""
    a = variant.assumptions
    zero = dict.fromkeys(MEMORY_CONSTANTS, 0.0)
    k0 = replace(variant.constants, **zero, allgather_bucket_elements=0.0)
    units = [replace(k0, **{name: 1.0}) for name in MEMORY_CONSTANTS]
    units.append(
        replace(k0, overlap_comm_factor=1.0, allgather_bucket_elements=_AG_UNIT)
    )
    n, width = len(configs), max(c.pp for c in configs)
    base = np.full((n, width), -np.inf)
    terms = np.zeros((n, width, len(units)))
    spread = np.ones((n, width))
    for i, cfg in enumerate(configs):
        s = 1.0 + peak_spread(cfg, variant.constants)
        stages = rank_stage(cfg)
        for j in range(cfg.pp):
            b = _stage_total(instance, a, k0, cfg, j)
            base[i, j] = b
            for u, ku in enumerate(units):
                terms[i, j, u] = _stage_total(instance, a, ku, cfg, j) - b
            spread[i, j] = s[stages == j].max()
    # The all-gather term is measured on top of the overlap factor's.
    terms[:, :, -1] -= terms[:, :, MEMORY_CONSTANTS.index("overlap_comm_factor")]
    return MemoryBasis(base=base, terms=terms, spread=spread)


def theta_of(k: ModelConstants) -> np.ndarray:
    """The memory constants of ``k`` as :func:`predict_peak` takes them."""
    ag = k.overlap_comm_factor * k.allgather_bucket_elements / _AG_UNIT
    return np.array([*(getattr(k, n) for n in MEMORY_CONSTANTS), ag])


def predict_peak(basis: MemoryBasis, theta: np.ndarray, overhead: float) -> np.ndarray:
    """Reported peak (GB) of each configuration: the largest over its stages."""
    stage = basis.base + basis.terms @ theta + overhead
    return (stage * basis.spread).max(axis=1)


def fit_memory(
    basis: MemoryBasis, peak: np.ndarray, ran: np.ndarray, start: ModelConstants
) -> tuple[ModelConstants, float, float]:
    """Constants, overhead and capacity (GB) that fit measured rows.

    ``basis`` holds every measured row; ``peak`` their reported peaks (GB;
    any value where the run did not fit) and ``ran`` whether they fitted. The
    rows that ran contribute their peak's error; those that ran out of memory
    the shortfall of their modelled peak below a fitted capacity, and those
    that ran the excess over it (a hinge, in GB). Non-negative constants; the
    all-gather bucket is returned as elements.
    """
    x0 = np.append(theta_of(start), [0.0, float(np.max(peak[ran]))])
    x0[:-2] = np.maximum(x0[:-2], 0.0)
    oom = ~ran

    def residual(x: np.ndarray) -> np.ndarray:
        pred = predict_peak(basis, x[:-2], x[-2])
        cap = x[-1]
        return np.concatenate(
            [
                pred[ran] - peak[ran],
                np.maximum(0.0, pred[ran] - cap),
                np.maximum(0.0, cap - pred[oom]),
            ]
        )

    # A run that reported its peak fitted: the capacity is at least that.
    lower = np.append(np.zeros(len(x0) - 2), [-np.inf, x0[-1]])
    upper = np.full(len(x0), np.inf)
    x0[-1] += 1.0
    sol = least_squares(
        residual,
        np.clip(x0, lower, upper),
        bounds=(lower, upper),
        loss="soft_l1",
        f_scale=MEMORY_LOSS_SCALE_GB,
    )
    theta, overhead, cap = sol.x[:-2], float(sol.x[-2]), float(sol.x[-1])
    ocf = float(theta[MEMORY_CONSTANTS.index("overlap_comm_factor")])
    fields = {n: float(v) for n, v in zip(MEMORY_CONSTANTS, theta, strict=False)}
    fields["allgather_bucket_elements"] = (
        float(theta[-1]) * _AG_UNIT / ocf if ocf > 0 else 0.0
    )
    return replace(start, **fields), overhead, cap


def _with_steptime(
    a: Assumptions, k: ModelConstants, x: np.ndarray
) -> tuple[Assumptions, ModelConstants, float]:
    """The reading with the step-time vector ``x`` (last entry: efficiency)."""
    ks: dict[str, float] = {}
    hw: dict[str, float] = {}
    for (name, _, _), v in zip(STEPTIME_CONSTANTS, x[:-1], strict=True):
        if name.startswith("hardware."):
            hw[name.removeprefix("hardware.")] = float(v)
        else:
            ks[name] = float(v)
    hardware: Hardware = replace(a.hardware, **hw)
    return replace(a, hardware=hardware), replace(k, **ks), float(x[-1])


def steptime_vector(a: Assumptions, k: ModelConstants, efficiency: float) -> np.ndarray:
    """The step-time constants of a reading (:data:`STEPTIME_CONSTANTS` order), then ``efficiency``."""
    values = []
    for name, _, _ in STEPTIME_CONSTANTS:
        if name.startswith("hardware."):
            values.append(getattr(a.hardware, name.removeprefix("hardware.")))
        else:
            values.append(getattr(k, name))
    return np.array([*values, efficiency], dtype=float)


def model_throughput(
    instance: Instance,
    a: Assumptions,
    k: ModelConstants,
    configs: Sequence[Config],
    efficiency: float,
) -> np.ndarray:
    """Noise-free throughput of ``configs`` (the instance's unit)."""
    return np.array(
        [
            throughput(
                step_breakdown(instance, a, k, c, efficiency).step_s, instance, a
            )
            for c in configs
        ]
    )


def fit_steptime(
    instance: Instance,
    a: Assumptions,
    k: ModelConstants,
    configs: Sequence[Config],
    measured: np.ndarray,
    efficiency: float,
    best: Config | None = None,
    rivals: Sequence[Config] = (),
) -> tuple[Assumptions, ModelConstants, float]:
    """Step-time constants and efficiency whose throughputs fit ``measured``.

    ``configs`` and ``measured`` are the rows that ran; the residual is the
    log ratio of modelled to measured throughput. Where ``best`` is given
    (the card's best configuration), each of ``rivals`` (configurations the
    stand-in lets run) that the model puts within :data:`RIVAL_MARGIN` of it
    or above adds the excess, times :data:`RIVAL_WEIGHT`: the card says no
    row outruns its best, and the calibration needs it on top.
    """
    x0 = steptime_vector(a, k, efficiency)
    lower = np.array([lo for _, lo, _ in STEPTIME_CONSTANTS] + [EFFICIENCY_BOUNDS[0]])
    upper = np.array([hi for _, _, hi in STEPTIME_CONSTANTS] + [EFFICIENCY_BOUNDS[1]])
    x0 = np.clip(x0, lower, upper)
    scale = np.maximum(np.abs(x0), 1e-6)
    target = np.log(measured)
    others = [c for c in rivals if c != best]

    def residual(z: np.ndarray) -> np.ndarray:
        ai, ki, eff = _with_steptime(a, k, z * scale)
        fit_part = np.log(model_throughput(instance, ai, ki, configs, eff)) - target
        if best is None or not others:
            return fit_part
        top = np.log(model_throughput(instance, ai, ki, [best], eff))[0]
        rival = np.log(model_throughput(instance, ai, ki, others, eff))
        excess = np.maximum(0.0, rival - top + RIVAL_MARGIN)
        return np.concatenate([fit_part, RIVAL_WEIGHT * excess])

    sol = least_squares(
        residual,
        x0 / scale,
        bounds=(lower / scale, upper / scale),
        loss="soft_l1",
        f_scale=STEPTIME_LOSS_SCALE,
        diff_step=1e-3,
        max_nfev=200,
    )
    return _with_steptime(a, k, sol.x * scale)


@dataclass(frozen=True)
class FittedConstants:
    """What :func:`fit_variant` fitted for one reading.

    Attributes:
        variant: The reading with the fitted constants (its assumptions carry
            the fitted hardware bandwidths).
        overhead_gb: The fitted uniform overhead (the calibration refits it to
            the card's best peak when it generates).
        capacity_gb: The fitted capacity that separates the rows that ran
            (the calibration refits it to the card's feasible count); NaN
            where memory was not fitted.
        efficiency: The fitted compute efficiency (likewise re-solved).
    """

    variant: Variant
    overhead_gb: float
    capacity_gb: float
    efficiency: float


def fit_variant(
    instance: Instance,
    variant: Variant,
    rows: pd.DataFrame,
    *,
    efficiency: float = 0.5,
    memory: bool = True,
    steptime: bool = True,
) -> FittedConstants:
    """Fit ``variant``'s constants to measured ``rows``.

    Args:
        instance: The instance.
        variant: The reading (its constants are the starting point).
        rows: Measured rows with the card's raw input and context columns,
            ``ran_successfully``, ``peak_mem`` (GB) and ``throughput_mean``
            (:func:`bolt_pco64.tables.traces.visited_rows` gives such rows).
        efficiency: Starting compute efficiency of the step-time fit.
        memory: Fit the memory constants, overhead and capacity (else they
            stay the variant's, overhead and capacity are NaN, and the
            step-time fit keeps every configuration the variant's card
            calibration lets run below the card's best:
            :func:`~bolt_pco64.tables.simulate.calibrate.card_feasible`).
        steptime: Fit the step-time constants and efficiency.

    Returns:
        The fitted reading, overhead and efficiency.

    Raises:
        ValueError: If ``rows`` hold no row that ran.
    """
    ran = rows["ran_successfully"].to_numpy(dtype=bool)
    if not ran.any():
        raise ValueError("Expected measured rows of which some ran, got none.")
    every = configs_of(instance, rows)
    configs = [c for c, r in zip(every, ran, strict=True) if r]
    k, overhead, capacity = variant.constants, float("nan"), float("nan")
    if memory:
        basis = memory_basis(instance, variant, every)
        k, overhead, capacity = fit_memory(
            basis, rows["peak_mem"].to_numpy(dtype=float), ran, k
        )
    a = variant.assumptions
    if steptime:
        best, rivals = None, []
        if not memory:
            # The card's calibration decides which rows run: none of them may
            # outrun the card's best.
            grid, feasible, top = card_feasible(instance, variant)
            best = grid[top]
            rivals = [c for c, f in zip(grid, feasible, strict=True) if f]
        a, k, efficiency = fit_steptime(
            instance,
            a,
            k,
            configs,
            rows["throughput_mean"].to_numpy(dtype=float)[ran],
            efficiency,
            best,
            rivals,
        )
    fitted = replace(variant, assumptions=a, constants=k)
    return FittedConstants(fitted, overhead, capacity, efficiency)


def predict(
    instance: Instance, fitted: FittedConstants, rows: pd.DataFrame
) -> pd.DataFrame:
    """The fitted model's ``ran_successfully``, ``peak_mem`` and throughput of ``rows``.

    Feasible where the modelled peak is within the fitted capacity
    (:attr:`FittedConstants.capacity_gb`); ``throughput_mean`` is the
    noise-free modelled throughput (NaN where not feasible), ``peak_mem``
    the modelled reported peak (every row).
    """
    configs = configs_of(instance, rows)
    v = fitted.variant
    basis = memory_basis(instance, v, configs)
    peak = predict_peak(basis, theta_of(v.constants), fitted.overhead_gb)
    ran = peak <= fitted.capacity_gb
    tput = model_throughput(
        instance, v.assumptions, v.constants, configs, fitted.efficiency
    )
    return pd.DataFrame(
        {
            "ran_successfully": ran,
            "peak_mem": peak,
            "throughput_mean": np.where(ran, tput, np.nan),
        },
        index=rows.index,
    )
