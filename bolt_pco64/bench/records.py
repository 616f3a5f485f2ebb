"""The records of a run, one row per evaluation, and the outcome of a run.

Every evaluation is one row of a long table (:func:`record_columns`), **in
the order the results came in**:

- ``method``, ``seed``, ``iteration`` (1-based count of results in), ``row``
  (canonical table index), the instance's inputs by their card names
  (encoded: log2 values, ZeRO as the ordinal 0/1/2);
- ``proposed_<input>`` for each input: what the method proposed. A method
  may return rows or ``q x d`` points of the box, which the harness snaps
  with ``problem.lookup`` (:mod:`bolt_pco64.bench.proposals`); for rows (and
  the initial design) these are the row's own encoded inputs. ``row`` is
  always ``problem.lookup`` of the proposed point;
- ``repeat``: the row was proposed before in this run (only a point method
  can repeat). **A repeat is charged** like any evaluation (budget and
  GPU-hours) and returns the same observation as the row's first evaluation
  (noise is not redrawn);
- ``throughput``: the observed throughput (the table's ``throughput_mean``,
  plus Gaussian noise when ``noise`` is set), NaN when the run OOMed;
  ``margin``: the row's ``peak_mem_normalised`` (``<= 0`` iff feasible);
  ``feasible``;
- ``best_feasible``: the best *true* (noise-free) feasible throughput
  evaluated so far, NaN before the first feasible evaluation; ``regret``:
  ``optimal_value - best_feasible`` (never negative, with or without noise);
  this is the *simple* regret;
- ``recommended_row``: the configuration the method would recommend after
  this evaluation, among the feasible ones evaluated so far
  (``Method.recommend``, :mod:`bolt_pco64.bench.contract`): for the built-in
  model methods (and a method that exposes an objective GP,
  ``Method.objective_model``), the one of highest posterior mean under its
  objective GP (its hyperparameters, conditioned on every feasible
  observation up to this one); before its first model, and for model-free
  methods, the best *observed* throughput; -1 before the first
  feasible evaluation. ``inference_regret``: ``optimal_value`` minus the
  recommended row's true throughput (NaN before the first feasible
  evaluation). Noise-free, it differs from ``regret`` only where the model's
  posterior mean ranks the evaluated configurations differently from their
  observations; with noise the two part (Ax's benchmarks call them
  "inference" and "oracle" traces);
- ``gpu_hours``: the GPU-hours consumed when this result came in, over all
  the run's evaluations (those still running in proportion to the part that
  has run; with one worker, the cumulative cost of the evaluations so far);
  ``run_gpu_hours``: this evaluation's own cost. Both come from the time
  model (:class:`~bolt_pco64.tables.time_model.TimeModel`: start-up plus
  ``overall_time`` for a run, start-up plus the step in which memory ran
  out for a crash, times ``num_gpus / 3600``). On the simulated stand-in
  these are simulated hours;
- ``worker`` (0-based), ``sim_start_s`` and ``sim_end_s``: the worker that
  ran the evaluation and its simulated start and end, in seconds since the
  run's start (``sim_end_s`` is the simulated wall clock at which the result
  came in);
- ``steps_run`` and ``stopped``: the recorded steps the run ran (0 for a
  crash) and whether early termination (``config.early_stop``,
  :mod:`bolt_pco64.bench.early`) stopped it; a stopped run's ``throughput``
  is its partial estimate, its ``run_gpu_hours`` the steps it ran, and it
  does not count as found in ``best_feasible`` and ``regret``;
- ``fit_seconds`` and ``acq_seconds``: the wall time of the proposal step that
  chose this evaluation (model fitting, and the rest of the proposal). A batch
  of ``q`` evaluations carries the time on its first row and 0 on the others;
  the initial design costs 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from bolt_pco64.instances import Instance

__all__ = [
    "PROPOSED_PREFIX",
    "RunOutcome",
    "build_records",
    "empty_records",
    "error_line",
    "record_columns",
]

_LEADING = ("method", "seed", "iteration", "row")
#: Prefix of the columns that hold the proposed point.
PROPOSED_PREFIX = "proposed_"
_TRAILING = (
    "throughput",
    "margin",
    "feasible",
    "best_feasible",
    "regret",
    "recommended_row",
    "inference_regret",
    "gpu_hours",
    "run_gpu_hours",
    "worker",
    "sim_start_s",
    "sim_end_s",
    "steps_run",
    "stopped",
    "fit_seconds",
    "acq_seconds",
)


def record_columns(instance: Instance) -> tuple[str, ...]:
    """Columns of a run's records on ``instance``, in order."""
    inputs = instance.input_columns
    proposed = tuple(PROPOSED_PREFIX + name for name in inputs)
    return (*_LEADING, *inputs, *proposed, "repeat", *_TRAILING)


@dataclass
class RunOutcome:
    """The result of one run: its records and, if it failed, the error.

    ``n_init`` is the initial-design size the run used (the method's own, or
    the configuration's); ``None`` where unknown (a crashed worker).
    """

    method: str
    seed: int
    records: pd.DataFrame
    error: str | None = None
    traceback: str | None = None
    n_init: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the run completed its budget."""
        return self.error is None


def error_line(err: BaseException) -> str:
    """The first line of ``"Type: message"``, at most 500 characters."""
    return f"{type(err).__name__}: {err}".splitlines()[0][:500]


def build_records(
    method: str,
    seed: int,
    rows: Sequence[int],
    ys: Sequence[float],
    cand: Tensor,
    margins: Tensor,
    true_y: Tensor,
    optimal: float,
    instance: Instance,
    recommended: Sequence[int] = (),
    points: Tensor | None = None,
    repeats: Sequence[bool] = (),
    clock_rows: Sequence[tuple[float, float, int, float, float]] = (),
    steps_run: Sequence[int] = (),
    stopped: Sequence[bool] = (),
) -> pd.DataFrame:
    """The records of one run's evaluations, in the order the results came in.

    The columns of :func:`record_columns`; ``fit_seconds`` and ``acq_seconds``
    are 0 (the caller sets them).
    """
    idx = torch.tensor(list(rows), dtype=torch.long)
    n = len(rows)
    inputs = instance.input_columns
    true = true_y[idx].numpy() if n else np.zeros(0)
    feas = ~np.isnan(true)
    halted = _padded(stopped, n, False).astype(bool)
    best = np.full(n, np.nan)
    running = -np.inf
    for i in range(n):
        if feas[i] and not halted[i] and true[i] > running:
            running = float(true[i])
        best[i] = running if math.isfinite(running) else np.nan
    data: dict[str, Any] = {
        "method": pd.Series([method] * n, dtype=object),
        "seed": np.full(n, seed, dtype=np.int64),
        "iteration": np.arange(1, n + 1, dtype=np.int64),
        "row": idx.numpy().astype(np.int64),
    }
    X = cand[idx].numpy() if n else np.zeros((0, len(inputs)))
    for j, name in enumerate(inputs):
        data[name] = np.rint(X[:, j]).astype(np.int64)
    P = points.numpy() if points is not None else X
    for j, name in enumerate(inputs):
        data[PROPOSED_PREFIX + name] = P[:, j].astype(np.float64)
    data["repeat"] = _padded(repeats, n, False).astype(bool)
    data["throughput"] = np.asarray(ys, dtype=np.float64)
    data["margin"] = margins[idx].numpy().astype(np.float64) if n else np.zeros(0)
    data["feasible"] = feas
    data["best_feasible"] = best
    data["regret"] = optimal - best
    # A method whose model fails mid-batch leaves later rows unrecommended.
    rec = _padded(recommended, n, -1).astype(np.int64)
    rec_true = true_y.numpy()[np.clip(rec, 0, None)] if n else np.zeros(0)
    data["recommended_row"] = rec
    data["inference_regret"] = np.where(rec >= 0, optimal - rec_true, np.nan)
    clock = np.asarray(list(clock_rows), dtype=np.float64).reshape(-1, 5)
    data["gpu_hours"] = clock[:, 0]
    data["run_gpu_hours"] = clock[:, 1]
    data["worker"] = clock[:, 2].astype(np.int64)
    data["sim_start_s"] = clock[:, 3]
    data["sim_end_s"] = clock[:, 4]
    data["steps_run"] = _padded(steps_run, n, 0).astype(np.int64)
    data["stopped"] = halted
    data["fit_seconds"] = np.zeros(n)
    data["acq_seconds"] = np.zeros(n)
    return pd.DataFrame(data, columns=list(record_columns(instance)))


def _padded(values: Sequence[Any], n: int, fill: Any) -> np.ndarray:
    """The first ``n`` of ``values``, padded with ``fill`` to length ``n``."""
    out = list(values)[:n]
    return np.asarray(out + [fill] * (n - len(out)))


def empty_records(instance: Instance) -> pd.DataFrame:
    """Records with no rows (the columns and dtypes of
    :func:`~bolt_pco64.bench.run.run_one`'s)."""
    nothing = torch.zeros(0, dtype=torch.double)
    cand = torch.zeros((0, instance.dim), dtype=torch.double)
    return build_records("", 0, [], [], cand, nothing, nothing, 0.0, instance)
