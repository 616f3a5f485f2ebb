"""Write the stand-in table and its metadata from the calibrated model.

One generation calibrates once (:func:`bolt_pco64.tables.simulate.calibrate.build_model`) and
writes every row from that model; the table and its metadata come from the same
calibration.

The columns are what the public runner of this problem records
(``docs/architecture.md`` §6; ``apivich-h/oppa``, ``src/oppa/runners/out_data.py``):

* ``all_time_steps``: the :data:`~bolt_pco64.tables.simulate.calibrate.N_RECORDED_STEPS`
  recorded step times in seconds, the warm-up step first
  (:func:`~bolt_pco64.tables.simulate.calibrate.measured_times`: 0.4 % per-step variation plus
  3 % of the exposed-communication share plus 0.3 % where gradient reduction crosses
  hosts; 5 % of the timed steps slowed by up to 4 %, as garbage collection and network
  jitter do in synchronous training);
* ``throughput_mean`` and ``throughput_std``: the runner's estimators
  (:func:`bolt_pco64.tables.estimators.estimate_throughput`) of those steps -- the
  warm-up dropped, outliers beyond 2 IQR of the median dropped, the
  reciprocal of the robust mean step time and its delta-method *standard
  error* -- times the instance's throughput-unit factor
  (:func:`~bolt_pco64.tables.simulate.steptime.work_per_step`). The estimate is
  made from the unrounded times; the 6-decimal list reproduces it to about
  1e-7 relative;
* ``overall_time``: as the runner's, from the start of the training loop to
  the end of the last step: the recorded steps plus the runner's bookkeeping
  between them (:attr:`~bolt_pco64.tables.simulate.spec.ModelConstants.step_gap_s`).
  Start-up before the loop (launch, model construction, communicator set-up)
  is **not** in it: a time model that charges it adds it separately.

All noise comes from ``numpy.random.default_rng(seed)`` (the first draw in
which the published best configuration is the best row: calibration step 4,
see :mod:`bolt_pco64.tables.simulate.calibrate`); feasibility and peaks do not
depend on the seed.

OOM rows follow docs/architecture.md §1: ``throughput_mean``, ``throughput_std``
and ``overall_time`` NaN, ``peak_mem`` inf, ``peak_mem_normalised`` the pad
:data:`OOM_PAD` (1.0; tables in the wild use other pads, and the problem
serves whatever the table holds), ``"[]"`` for the two list columns.
Feasible rows have ``peak_mem_normalised = peak_mem / gpu_memory_gb - 1`` and
``peak_mem`` the largest of ``peak_mem_per_gpu`` (one value per GPU, global
rank order).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_parquet
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance, get_instance
from bolt_pco64.tables.simulate.calibrate import StandinModel, build_model
from bolt_pco64.tables.simulate.spec import ModelConstants

#: The constants every variant starts from; metadata lists only its changes.
DEFAULT_CONSTANTS = ModelConstants()

__all__ = [
    "GENERATOR_VERSION",
    "OOM_PAD",
    "STEP_DECIMALS",
    "make_simulated_table",
    "simulated_metadata",
    "write_simulated_table",
]

#: Version of the generator, recorded in the parquet metadata. Bump it whenever
#: the model, the constants or the output format change.
GENERATOR_VERSION = "3.1.0"
#: ``peak_mem_normalised`` of an OOM row: a fixed positive pad (docs/architecture.md §1).
OOM_PAD = 1.0
#: Decimals of the seconds in ``all_time_steps``.
STEP_DECIMALS = 6


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"Expected an integer seed, got {type(seed).__name__}.")
    if seed < 0:
        raise ValueError(f"Expected a non-negative seed, got {seed}.")
    return int(seed)


def _format_list(values: np.ndarray, decimals: int) -> str:
    """A list cell in the raw export's form, e.g. ``"[29.55, 29.61]"``."""
    return "[" + ", ".join(repr(round(float(v), decimals)) for v in values) + "]"


def _frame(model: StandinModel) -> pd.DataFrame:
    inst, k = model.instance, model.constants
    n = len(model.configs)
    feasible = model.feasible
    est = model.estimate
    tmean = np.where(feasible, est.throughput, np.nan)
    tstd = np.where(feasible, est.stderr, np.nan)
    overall = np.full(n, np.nan)
    peak = np.full(n, np.inf)
    margin = np.full(n, OOM_PAD)
    steps_col = ["[]"] * n
    peaks_col = ["[]"] * n
    gaps = (model.times.shape[1] - 1) * k.step_gap_s
    for i in np.flatnonzero(feasible):
        times = model.times[i]
        gpu_peaks = np.round(model.peaks[i], 4)
        overall[i] = float(times.sum()) + gaps
        peak[i] = float(gpu_peaks.max())
        margin[i] = peak[i] / inst.gpu_memory_gb - 1.0
        steps_col[i] = _format_list(times, STEP_DECIMALS)
        peaks_col[i] = _format_list(gpu_peaks, 4)
    cells = [c.raw_cells() for c in model.configs]
    data: dict[str, object] = {
        name: np.array([row[name] for row in cells], dtype=np.int64)
        for name in (*inst.input_columns, *inst.context_columns)
    }
    data.update(
        ran_successfully=feasible.astype(bool),
        throughput_mean=tmean,
        throughput_std=tstd,
        peak_mem_normalised=margin,
        overall_time=overall,
        all_time_steps=pd.Series(steps_col, dtype="str"),
        peak_mem=peak,
        peak_mem_per_gpu=pd.Series(peaks_col, dtype="str"),
    )
    return pd.DataFrame({c: data[c] for c in inst.columns})


def _metadata(model: StandinModel, seed: int) -> dict[str, str]:
    inst, a, k = model.instance, model.assumptions, model.constants
    variant = model.variant
    meta = {
        "source": "simulated",
        # The generator's name as the shipped files record it (its module moved).
        "generator": "bolt_pco64.simulate",
        "generator_version": GENERATOR_VERSION,
        "instance": inst.name,
        "variant": variant.name,
        "seed": str(seed),
        "description": (
            f"SIMULATED stand-in for the {inst.name} table (analytic model of "
            f"the {inst.num_gpus}-GPU training job, calibrated to its published "
            f"figures), variant {variant.name!r}: {variant.summary}; not measured."
        ),
        "assumptions.architecture": a.architecture,
        "assumptions.vocab_size": str(a.vocab_size),
        "assumptions.recompute": a.recompute,
        "assumptions.micro_batching": (
            f"pp = 1: {a.micro_unpipelined.describe()}; "
            f"pp > 1: {a.micro_pipelined.describe()}"
        ),
        "assumptions.zero0": a.zero0,
        "assumptions.hardware": a.hardware.description,
        "assumptions.hardware.intra_bus_gbs": repr(float(a.hardware.intra_bus_gbs)),
        "assumptions.hardware.inter_bus_gbs": repr(float(a.hardware.inter_bus_gbs)),
        "assumptions.throughput_unit": a.throughput_unit,
        "recorded_steps": str(model.times.shape[1]),
        "published_best_is_top": str(model.top == model.best).lower(),
        "noise_draw": str(model.noise_draw),
    }
    for name, value in asdict(model.calibration).items():
        meta[f"calibration.{name}"] = repr(float(value))
    for name, value in asdict(k).items():
        if value != getattr(DEFAULT_CONSTANTS, name):  # the variant's own
            meta[f"constants.{name}"] = repr(float(value))
    return meta


def _resolve(instance: str | Instance) -> Instance:
    return get_instance(instance)


def make_simulated_table(
    seed: int = 0,
    instance: str | Instance = DEFAULT_INSTANCE,
    variant: str | None = None,
) -> pd.DataFrame:
    """The simulated stand-in table of ``instance``, in the raw export's form.

    Args:
        seed: Seed of the run-to-run noise (the recorded step times, their
            estimates and wall time). Configurations, feasibility and peaks
            do not depend on it.
        instance: An instance name (``"pco16"``, ``"pco32"``, ``"pco64"``) or
            an :class:`~bolt_pco64.instances.Instance`.
        variant: One of the instance's stand-in variants
            (:data:`bolt_pco64.tables.standins.STANDIN_VARIANTS`, described in
            :mod:`bolt_pco64.tables.simulate.variants`); ``None``: the default.

    Returns:
        A DataFrame with the instance's columns in order, one row per
        candidate in canonical order: inputs and context int64 (``zero_stage``
        raw 0/2/3), ``ran_successfully`` bool, the other outputs float64, the
        two list columns strings such as ``"[29.5, 29.6]"`` (``"[]"`` for OOM
        rows).

    Raises:
        TypeError: If ``seed`` is not an integer.
        ValueError: If ``seed`` is negative, or ``instance`` or ``variant``
            unknown.
    """
    s = _check_seed(seed)
    return _frame(build_model(_resolve(instance), s, variant))


def simulated_metadata(
    seed: int = 0,
    instance: str | Instance = DEFAULT_INSTANCE,
    variant: str | None = None,
) -> dict[str, str]:
    """The key-value metadata of the stand-in parquet file (arguments as above)."""
    s = _check_seed(seed)
    return _metadata(build_model(_resolve(instance), s, variant), s)


def write_simulated_table(
    path: str | os.PathLike[str],
    seed: int = 0,
    instance: str | Instance = DEFAULT_INSTANCE,
    variant: str | None = None,
) -> Path:
    """Write the stand-in table of ``instance`` to ``path`` as parquet, atomically.

    The file's key-value metadata records ``source=simulated``, the instance,
    the ``variant``, ``generator_version`` (:data:`GENERATOR_VERSION`),
    ``seed``, the main assumptions, the fixed and the calibrated constants.
    One calibration serves both. Arguments as :func:`make_simulated_table`.

    Returns:
        The path written.
    """
    s = _check_seed(seed)
    model = build_model(_resolve(instance), s, variant)
    return atomic_write_parquet(path, _frame(model), _metadata(model, s))
