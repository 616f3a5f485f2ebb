"""A run's throughput and its standard error from its per-step times.

What the columns mean: ``docs/architecture.md`` §6.

The pco tables' ``throughput_mean`` and ``throughput_std`` are what the public
training runner of this problem (repository ``apivich-h/oppa``,
``src/oppa/runners/out_data.py`` and ``src/oppa/utils/robust_stats.py``)
computes from the step times it records in ``all_time_steps``. This module
writes those estimators in our own code, vectorised over a batch of runs:

1. the first :attr:`EstimatorDefaults.warmup_steps` recorded step(s) are a
   warm-up ("usually abnormally higher") and are dropped;
2. of the remaining *timed* steps, those with ``|t - median| >=
   outlier_iqrs * IQR`` are dropped (median and quartiles with NumPy's
   default linear interpolation; ``outlier_iqrs = 2``);
3. over the ``n`` inlier steps, with mean ``m`` and population standard
   deviation ``s`` (``ddof = 0``): the throughput is ``scale / m`` and its
   delta-method standard error ``scale * s / sqrt(n) / m**2`` -- a standard
   error of the estimate, not the spread of the steps.

``scale`` is what one step counts for in the table's throughput unit
(:func:`work_per_step`): the runner reports optimizer steps per second
(``scale = 1``); the unit of the pco tables is not published and is an
inference (:data:`THROUGHPUT_UNITS`).

Two choices where the runner's code is silent or degenerate, both stated:

* fewer than :attr:`EstimatorDefaults.min_timed_steps` timed steps give NaN
  (the runner estimates only from more than two recorded steps);
* where the IQR is 0 (e.g. identical step times) the runner's rule would drop
  every step; the steps equal to the median are kept instead (the rule's
  limit as the spread shrinks to 0). With an IQR above 0 nothing changes.

A batch of runs is a ``batch_shape x n``-dim array of step times in recorded
order, NaN-padded where a run recorded fewer than ``n`` steps
(:func:`step_matrix` builds one from the table's lists; an OOM row's empty
list is all NaN and estimates to NaN). A *partial run* -- the estimate after
the first ``k`` recorded steps, warm-up included -- is the same call with
``steps=k`` (an int, or one per run). Everything is NumPy float64 on the CPU.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bolt_pco64.instances import INSTANCES, Instance, ThroughputUnit

__all__ = [
    "ESTIMATOR_DEFAULTS",
    "THROUGHPUT_UNITS",
    "EstimatorDefaults",
    "StepEstimate",
    "estimate_throughput",
    "step_matrix",
    "work_per_step",
]

#: The inferred throughput unit of each instance's table, by name (derived:
#: each instance's :attr:`~bolt_pco64.instances.Instance.throughput_unit`,
#: the one place it lives; the reasoning:
#: :data:`bolt_pco64.tables.simulate.spec.ASSUMPTIONS`). Read as samples/s/GPU,
#: pco64's and pco32's published bests are 36 % and 31 % model FLOPs
#: utilisation (as steps/s, impossible multiples of the peak); pco16's only
#: plausibly as steps/s.
THROUGHPUT_UNITS: Mapping[str, ThroughputUnit] = MappingProxyType(
    {name: inst.throughput_unit for name, inst in INSTANCES.items()}
)


@dataclass(frozen=True)
class EstimatorDefaults:
    """The runner's estimator settings (one place).

    Attributes:
        warmup_steps: Leading recorded steps dropped as warm-up (the runner: 1).
        outlier_iqrs: A timed step is an outlier where ``|t - median| >=
            outlier_iqrs * IQR`` (the runner: 2).
        min_timed_steps: Fewest timed steps an estimate is made from (NaN
            below; the runner needs more than two recorded steps, i.e. 2).
    """

    warmup_steps: int = 1
    outlier_iqrs: float = 2.0
    min_timed_steps: int = 2


ESTIMATOR_DEFAULTS = EstimatorDefaults()


@dataclass(frozen=True)
class StepEstimate:
    """Estimates of a batch of runs, each a ``batch_shape``-dim array.

    Attributes:
        throughput: ``scale / m``, the robust mean step time ``m`` of the
            inlier steps; NaN where too few timed steps were seen.
        stderr: Its delta-method standard error ``scale * s / sqrt(n) / m**2``;
            NaN where ``throughput`` is.
        mean_step_s: ``m``, seconds (NaN as above).
        n_inliers: ``n``, the inlier steps (int64; 0 where NaN above).
        n_timed: Timed steps seen (after the warm-up; int64).
    """

    throughput: NDArray[np.float64]
    stderr: NDArray[np.float64]
    mean_step_s: NDArray[np.float64]
    n_inliers: NDArray[np.int64]
    n_timed: NDArray[np.int64]


def work_per_step(instance: Instance, unit: ThroughputUnit | None = None) -> float:
    """What one step counts for in ``unit`` (default: the instance's inferred one).

    ``global_batch / num_gpus`` samples per GPU for ``"samples/s/gpu"``, one
    step for ``"steps/s"``: a step of ``t`` seconds measures ``work / t``.

    Raises:
        ValueError: If ``unit`` is not a :data:`~bolt_pco64.instances.ThroughputUnit`.
    """
    if unit is None:
        unit = instance.throughput_unit
    if unit == "steps/s":
        return 1.0
    if unit == "samples/s/gpu":
        return instance.model.batch_size / instance.num_gpus
    raise ValueError(
        f"Expected a throughput unit of {['samples/s/gpu', 'steps/s']}, got {unit!r}."
    )


def step_matrix(lists: Iterable[Sequence[float]]) -> NDArray[np.float64]:
    """A ``N x n``-dim array of step times from ``N`` lists, NaN-padded.

    ``n`` is the longest list's length (0 if all are empty); an empty list
    (an OOM row) is a row of NaN. A table's ``frame["all_time_steps"]`` (tuples
    of floats) is such an iterable.
    """
    rows = [np.asarray(row, dtype=np.float64).reshape(-1) for row in lists]
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def _check_times(times: ArrayLike) -> NDArray[np.float64]:
    t = np.array(times, dtype=np.float64)
    if t.ndim < 1:
        raise ValueError(
            f"Expected a batch_shape x n array of step times, got a {t.ndim}-dim one."
        )
    bad = ~(np.isnan(t) | (np.isfinite(t) & (t > 0)))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"Expected step times > 0 (NaN for a step not recorded), got "
            f"{t[where]!r} at index {where}."
        )
    return t


def _check_steps(steps: ArrayLike | None, batch_shape: tuple[int, ...]) -> np.ndarray:
    if steps is None:
        return np.full(batch_shape, np.iinfo(np.int64).max, dtype=np.int64)
    k = np.asarray(steps)
    if k.dtype == np.bool_ or not np.issubdtype(k.dtype, np.integer):
        raise ValueError(
            f"Expected `steps` as integer(s) >= 0, got dtype {k.dtype} ({steps!r})."
        )
    if (k < 0).any():
        raise ValueError(f"Expected `steps` >= 0, got {steps!r}.")
    try:
        return np.broadcast_to(k.astype(np.int64), batch_shape)
    except ValueError:
        raise ValueError(
            f"Expected `steps` broadcastable to the batch shape {batch_shape}, "
            f"got shape {k.shape}."
        ) from None


def _timed(
    times: NDArray[np.float64], steps: np.ndarray, warmup: int
) -> NDArray[np.float64]:
    """The timed steps seen: the first ``steps`` recorded, less the warm-up."""
    seen = np.arange(times.shape[-1]) < steps[..., None]
    return np.where(seen, times, np.nan)[..., warmup:]


def _inliers(timed: NDArray[np.float64], iqrs: float) -> NDArray[np.bool_]:
    present = ~np.isnan(timed)
    if timed.shape[-1] == 0:  # every recorded step was warm-up: no timed step
        return present
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows
        median = np.nanmedian(timed, axis=-1, keepdims=True)
        q25, q75 = np.nanquantile(timed, [0.25, 0.75], axis=-1, keepdims=True)
    dev = np.abs(timed - median)
    return present & ((dev < iqrs * (q75 - q25)) | (dev == 0))


def estimate_throughput(
    times: ArrayLike,
    steps: ArrayLike | None = None,
    scale: float = 1.0,
    defaults: EstimatorDefaults = ESTIMATOR_DEFAULTS,
) -> StepEstimate:
    """The runner's throughput estimate and standard error of a batch of runs.

    Args:
        times: A ``batch_shape x n``-dim array of step times in seconds, in
            recorded order, warm-up first, NaN-padded (:func:`step_matrix`).
        steps: Recorded steps seen per run, warm-up included (a partial run
            after ``k`` steps: ``steps=k``): an int or a ``batch_shape``-dim
            integer array; ``None`` uses every step.
        scale: What one step counts for in the throughput unit
            (:func:`work_per_step`); 1 gives steps per second.
        defaults: The estimator settings.

    Returns:
        A :class:`StepEstimate` of ``batch_shape``-dim arrays.

    Raises:
        ValueError: On a step time that is not > 0 or NaN, bad ``steps``, or a
            ``scale`` that is not finite and > 0.
    """
    t = _check_times(times)
    k = _check_steps(steps, t.shape[:-1])
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"Expected a finite `scale` > 0, got {scale!r}.")
    return _estimate(t, k, float(scale), defaults)


def _estimate(
    t: NDArray[np.float64], k: np.ndarray, scale: float, d: EstimatorDefaults
) -> StepEstimate:
    timed = _timed(t, k, d.warmup_steps)
    n_timed = (~np.isnan(timed)).sum(axis=-1)
    keep = _inliers(timed, d.outlier_iqrs)
    n = keep.sum(axis=-1)
    ok = (n_timed >= d.min_timed_steps) & (n > 0)
    values = np.where(keep, timed, 0.0)
    safe_n = np.where(ok, n, 1)
    mean = values.sum(axis=-1) / safe_n
    dev = np.where(keep, timed - mean[..., None], 0.0)
    std = np.sqrt((dev**2).sum(axis=-1) / safe_n)
    mean = np.where(ok, mean, np.nan)
    std = np.where(ok, std, np.nan)
    return StepEstimate(
        throughput=scale / mean,
        stderr=scale * std / np.sqrt(safe_n) / mean**2,
        mean_step_s=mean,
        n_inliers=np.where(ok, n, 0).astype(np.int64),
        n_timed=n_timed.astype(np.int64),
    )
