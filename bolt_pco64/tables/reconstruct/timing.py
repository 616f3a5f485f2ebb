"""The columns no trace gives, modelled from the reconstructed throughput.

The traces give no step times, wall time or spread; a reconstruction writes
them from the package's models, driven by each row's reconstructed
``throughput_mean``, and labels them *modelled* (:data:`MODELLED_COLUMNS`):

- ``all_time_steps``: the stand-in's recorded steps
  (:func:`bolt_pco64.tables.simulate.calibrate.measured_times`: a warm-up step, then timed
  steps with its base run-to-run noise,
  :func:`~bolt_pco64.tables.simulate.calibrate.draw_noise` from :data:`TIMING_SEED`) around the
  step time ``work / throughput_mean`` (:func:`bolt_pco64.tables.estimators.work_per_step`),
  scaled so that the runner's estimator
  (:func:`bolt_pco64.tables.estimators.estimate_throughput`) reads ``throughput_mean`` back
  from them;
- ``throughput_std``: that estimator's standard error of those steps;
- ``overall_time``: the steps plus the stand-in's gap between steps
  (:attr:`~bolt_pco64.tables.simulate.spec.ModelConstants.step_gap_s`);
- ``peak_mem_per_gpu``: every rank at the row's ``peak_mem`` (no per-rank
  model: the traces give one peak per run).
"""

from __future__ import annotations

import numpy as np

from bolt_pco64.instances import Instance
from bolt_pco64.tables.estimators import estimate_throughput, work_per_step
from bolt_pco64.tables.simulate.calibrate import draw_noise, measured_times
from bolt_pco64.tables.simulate.spec import ModelConstants

__all__ = ["MODELLED_COLUMNS", "STEP_DECIMALS", "TIMING_SEED", "modelled_columns"]

#: The columns a reconstruction models (the traces do not give them).
MODELLED_COLUMNS: tuple[str, ...] = (
    "throughput_std",
    "overall_time",
    "all_time_steps",
    "peak_mem_per_gpu",
)
#: Seed of the modelled run-to-run noise of the step times.
TIMING_SEED = 2027
#: Decimals of a written step time (s) and of a per-GPU peak (GB).
STEP_DECIMALS = 6
PEAK_DECIMALS = 3


def _cell(values: np.ndarray, decimals: int) -> str:
    return "[" + ", ".join(repr(round(float(v), decimals)) for v in values) + "]"


def modelled_columns(
    instance: Instance,
    throughput: np.ndarray,
    peak_mem: np.ndarray,
    feasible: np.ndarray,
    seed: int = TIMING_SEED,
) -> dict[str, object]:
    """The :data:`MODELLED_COLUMNS` (by name, one entry per row) of rows with
    ``throughput`` and ``peak_mem`` (``N``-dim arrays).

    Rows that did not run (``feasible`` false) get the card's OOM cells
    (NaN, ``"[]"``).
    """
    n = len(throughput)
    k = ModelConstants()
    work = work_per_step(instance)
    ok = np.asarray(feasible, dtype=bool)
    step_s = np.where(ok, work / np.where(ok, throughput, 1.0), 1.0)
    noise = draw_noise(n, np.random.default_rng(seed), k)
    zeros = np.zeros(n)
    times = measured_times(step_s, zeros, zeros, noise, k)
    first = estimate_throughput(times, scale=work).throughput
    times = np.round(
        times * (first / np.where(ok, throughput, first))[:, None], STEP_DECIMALS
    )
    est = estimate_throughput(times, scale=work)
    gaps = (times.shape[1] - 1) * k.step_gap_s
    steps_cells = ["[]"] * n
    peak_cells = ["[]"] * n
    for i in np.flatnonzero(ok):
        steps_cells[i] = _cell(times[i], STEP_DECIMALS)
        peak_cells[i] = _cell(np.full(instance.num_gpus, peak_mem[i]), PEAK_DECIMALS)
    return dict(
        throughput_std=np.where(ok, est.stderr, np.nan),
        overall_time=np.where(
            ok, np.round(times.sum(axis=1) + gaps, STEP_DECIMALS), np.nan
        ),
        all_time_steps=steps_cells,
        peak_mem_per_gpu=peak_cells,
    )
