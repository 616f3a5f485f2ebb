"""Write the stand-in table and its metadata from the calibrated model.

One generation calibrates once (:func:`bolt_pco64.simulate.calibrate.
build_model`) and writes every row from that model; the table and its
metadata come from the same calibration.

Noise and wall time: each feasible run has
:data:`~bolt_pco64.simulate.calibrate.N_TIMED_STEPS` timed steps with
throughputs ``T (1 + cv z - slow)`` (``z`` standard normal, ``cv`` 0.4 % plus
3 % of the exposed-communication share plus 0.3 % where gradient reduction
crosses hosts; 5 % of steps are slowed by up to 4 %, as garbage collection
and network jitter do in synchronous training). ``throughput_mean`` is
their mean -- a measurement, not the model's noise-free value --,
``throughput_std`` their sample standard deviation (``ddof = 1``),
``all_time_steps`` the per-step times (seconds: what one step counts for in
the instance's throughput unit over the rate, :func:`~bolt_pco64.simulate.
time.work_per_step`),
``overall_time`` start-up, two warm-up steps and the timed steps. All noise
comes from ``numpy.random.default_rng(seed)`` (the first draw in which the
published best configuration is the best row: calibration step 4, see
:mod:`bolt_pco64.simulate.calibrate`); feasibility and peaks do not depend
on the seed.

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
import pyarrow as pa
import pyarrow.parquet as pq

from bolt_pco64._io import atomic_write_with
from bolt_pco64.instances import Instance, get_instance
from bolt_pco64.simulate.calibrate import StandinModel, build_model
from bolt_pco64.simulate.time import work_per_step

__all__ = [
    "GENERATOR_VERSION",
    "N_WARMUP_STEPS",
    "OOM_PAD",
    "make_simulated_table",
    "simulated_metadata",
    "write_simulated_table",
]

#: Version of the generator, recorded in the parquet metadata. Bump it whenever
#: the model, the constants or the output format change.
GENERATOR_VERSION = "2.0.0"
#: ``peak_mem_normalised`` of an OOM row: a fixed positive pad (docs/architecture.md §1).
OOM_PAD = 1.0
#: Untimed warm-up steps before the timed ones (counted in ``overall_time``).
N_WARMUP_STEPS = 2


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
    nan = np.full(n, np.nan)
    tmean, tstd, overall = nan.copy(), nan.copy(), nan.copy()
    peak = np.full(n, np.inf)
    margin = np.full(n, OOM_PAD)
    steps_col = ["[]"] * n
    peaks_col = ["[]"] * n
    work = work_per_step(inst, model.assumptions)
    for i in np.flatnonzero(feasible):
        rates = model.rates[i]
        times = work / rates
        startup = (
            k.startup_s
            + k.startup_per_comm_s * float(model.n_comms[i])
            + k.startup_per_gb_s * float(model.state_gb[i])
        ) * (0.95 + 0.1 * float(model.noise.startup[i]))
        gpu_peaks = np.round(model.peaks[i], 4)
        tmean[i] = float(rates.mean())
        tstd[i] = float(np.std(rates, ddof=1))
        warmup = N_WARMUP_STEPS * k.first_step_factor * float(model.step_s[i])
        overall[i] = startup + warmup + float(times.sum())
        peak[i] = float(gpu_peaks.max())
        margin[i] = peak[i] / inst.gpu_memory_gb - 1.0
        steps_col[i] = _format_list(times, 6)
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
    inst, a = model.instance, model.assumptions
    meta = {
        "source": "simulated",
        "generator": "bolt_pco64.simulate",
        "generator_version": GENERATOR_VERSION,
        "instance": inst.name,
        "seed": str(seed),
        "description": (
            f"SIMULATED stand-in for the {inst.name} table (analytic model of "
            f"the {inst.num_gpus}-GPU training job, calibrated to its published "
            "figures); not measured."
        ),
        "assumptions.architecture": a.architecture,
        "assumptions.recompute": a.recompute,
        "assumptions.micro_batch_size": str(a.micro_batch_size),
        "assumptions.hardware": a.hardware.description,
        "assumptions.throughput_unit": a.throughput_unit,
        "published_best_is_top": str(model.top == model.best).lower(),
        "noise_draw": str(model.noise_draw),
    }
    for name, value in asdict(model.calibration).items():
        meta[f"calibration.{name}"] = repr(float(value))
    return meta


def _resolve(instance: str | Instance) -> Instance:
    return get_instance(instance)


def make_simulated_table(
    seed: int = 0, instance: str | Instance = "pco64"
) -> pd.DataFrame:
    """The simulated stand-in table of ``instance``, in the raw export's form.

    Args:
        seed: Seed of the run-to-run noise (per-step throughputs and their
            mean, spread and wall time). Configurations, feasibility and peaks
            do not depend on it.
        instance: An instance name (``"pco16"``, ``"pco32"``, ``"pco64"``) or
            an :class:`~bolt_pco64.instances.Instance`.

    Returns:
        A DataFrame with the instance's columns in order, one row per
        candidate in canonical order: inputs and context int64 (``zero_stage``
        raw 0/2/3), ``ran_successfully`` bool, the other outputs float64, the
        two list columns strings such as ``"[29.5, 29.6]"`` (``"[]"`` for OOM
        rows).

    Raises:
        TypeError: If ``seed`` is not an integer.
        ValueError: If ``seed`` is negative or ``instance`` unknown.
    """
    s = _check_seed(seed)
    return _frame(build_model(_resolve(instance), s))


def simulated_metadata(
    seed: int = 0, instance: str | Instance = "pco64"
) -> dict[str, str]:
    """The key-value metadata of the stand-in parquet file (arguments as above)."""
    s = _check_seed(seed)
    return _metadata(build_model(_resolve(instance), s), s)


def write_simulated_table(
    path: str | os.PathLike[str], seed: int = 0, instance: str | Instance = "pco64"
) -> Path:
    """Write the stand-in table of ``instance`` to ``path`` as parquet, atomically.

    The file's key-value metadata records ``source=simulated``, the instance,
    ``generator_version`` (:data:`GENERATOR_VERSION`), ``seed``, the main
    assumptions and the calibrated constants. One calibration serves both.

    Returns:
        The path written.
    """
    s = _check_seed(seed)
    model = build_model(_resolve(instance), s)
    frame = _frame(model)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    extra = {key.encode(): value.encode() for key, value in _metadata(model, s).items()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})

    def _write(tmp: Path) -> None:
        pq.write_table(table, tmp)

    target = Path(path)
    atomic_write_with(target, _write)
    return target
