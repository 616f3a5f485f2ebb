"""Partial runs: what a run has shown, and cost, after its first ``k`` steps.

A run records one time per training step (``all_time_steps``, the warm-up
first). Stopped after ``k`` of them, it has shown

- a **throughput estimate and its standard error**, the runner's estimators
  (:mod:`bolt_pco64.tables.estimators`: warm-up dropped, outlier steps dropped,
  ``scale / m`` and the delta-method ``scale * s / sqrt(n) / m**2``) over the
  first ``k`` recorded steps;

and it has **cost** start-up plus the training loop up to the end of step
``k`` (:meth:`bolt_pco64.tables.time_model.TimeModel.seconds_after_steps`, the one time
model).

**The unit, row by row.** ``scale`` (what one step counts for in the table's
throughput unit) is not published for the pco tables
(:data:`~bolt_pco64.tables.estimators.THROUGHPUT_UNITS` is an inference). So that any
table of the card's schema works, a measured one included, each row's
``scale`` is *calibrated*: it is the one for which the estimate over all the
row's recorded steps equals the row's ``throughput_mean``. Where the table's
estimates are the runner's (the stand-in from generator 2.1 on), that is the
instance's :func:`~bolt_pco64.tables.estimators.work_per_step` for every row; on
another table it makes a complete run report exactly the table's values.
After all ``n`` recorded steps a partial run *is* the complete run: its
estimate and standard error are the row's ``throughput_mean`` and
``throughput_std``.

**No estimate.** Fewer steps than the estimators need (the warm-up plus
:attr:`~bolt_pco64.tables.estimators.EstimatorDefaults.min_timed_steps`) give NaN; so
do all ``k < n`` of a feasible row without recorded steps, or whose steps give
no estimate, and every ``k`` of a crash (an out-of-memory run reports no
throughput; its cost is the time model's crash cost for any ``k >= 1``).

Everything is precomputed once per table (``N x (n + 1)`` arrays, ``n`` the
most steps any row recorded), so reading an estimate is an index;
:attr:`PartialRuns.every_step` holds every row's estimate and cost after each
of its ``0..n`` steps, built on first use and shared by whoever reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from bolt_pco64.tables.estimators import (
    ESTIMATOR_DEFAULTS,
    EstimatorDefaults,
    estimate_throughput,
    step_matrix,
)
from bolt_pco64.tables.time_model import TimeModel, gpu_hours

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = ["PartialEstimate", "PartialRuns"]


@dataclass(frozen=True)
class PartialEstimate:
    """What runs have shown after some steps, each a ``batch_shape``-dim array.

    Attributes:
        throughput: The throughput estimate in the table's unit (NaN where
            there is none, see the module docstring).
        stderr: Its standard error (NaN where ``throughput`` is).
        n_inliers: Steps the estimate used (int64; 0 where NaN).
        steps: Recorded steps seen, capped at the row's recorded steps (int64).
        complete: Whether the run had finished (all recorded steps seen, or a
            crash after its first step).
        seconds: Seconds the run has cost (start-up included).
        gpu_hours: ``seconds`` in GPU-hours of the instance's cluster.
    """

    throughput: NDArray[np.float64]
    stderr: NDArray[np.float64]
    n_inliers: NDArray[np.int64]
    steps: NDArray[np.int64]
    complete: NDArray[np.bool_]
    seconds: NDArray[np.float64]
    gpu_hours: NDArray[np.float64]


class PartialRuns:
    """Every row's estimate and cost after each number of steps (see the module doc).

    Args:
        table: A validated :class:`~bolt_pco64.tables.table.Table` of any instance.
        time_model: The time model charging the steps (default: the table's
            :class:`~bolt_pco64.tables.time_model.TimeModel` with its defaults).
        defaults: The estimator settings.

    Attributes:
        n_steps: ``N``-dim int64 array: each row's recorded steps (0 for a crash).
        feasible: ``N``-dim bool array: ``ran_successfully``.
        time_model: The time model.

    Raises:
        TableError: If the time model refuses the table (no usable run times).
        ValueError: If ``time_model`` belongs to a table of another size.
    """

    def __init__(
        self,
        table: Table,
        time_model: TimeModel | None = None,
        defaults: EstimatorDefaults = ESTIMATOR_DEFAULTS,
    ) -> None:
        times = TimeModel(table) if time_model is None else time_model
        if len(times) != len(table):
            raise ValueError(
                f"Expected a time model of the table's {len(table)} rows, got "
                f"{len(times)}."
            )
        self.time_model = times
        self.defaults = defaults
        frame = table.frame
        ok = frame["ran_successfully"].to_numpy(dtype=bool)
        T = step_matrix(frame["all_time_steps"])
        T[~ok] = np.nan
        n = (~np.isnan(T)).sum(axis=1).astype(np.int64)
        width = T.shape[1]
        self.feasible: NDArray[np.bool_] = ok
        self.n_steps: NDArray[np.int64] = n
        # Curves over k = 0..width (columns), unit scale.
        raw = [
            estimate_throughput(T, steps=k, defaults=defaults) for k in range(width + 1)
        ]
        thr = np.stack([e.throughput for e in raw], axis=-1)
        se = np.stack([e.stderr for e in raw], axis=-1)
        inl = np.stack([e.n_inliers for e in raw], axis=-1)
        rows = np.arange(len(n))
        full = thr[rows, n]
        target = frame["throughput_mean"].to_numpy(dtype=np.float64)
        scale = np.where(ok & np.isfinite(full), target / full, np.nan)
        self._thr = thr * scale[:, None]
        self._se = se * scale[:, None]
        self._inl = np.where(np.isfinite(self._thr), inl, 0).astype(np.int64)
        # A complete feasible run reports the table's own values.
        std = frame["throughput_std"].to_numpy(dtype=np.float64)
        self._final = (np.where(ok, target, np.nan), np.where(ok, std, np.nan))

    def __len__(self) -> int:
        return len(self.n_steps)

    def __repr__(self) -> str:
        return (
            f"PartialRuns(instance={self.time_model.instance.name!r}, "
            f"rows={len(self)}, max_steps={int(self.n_steps.max(initial=0))})"
        )

    def estimate(self, rows: ArrayLike, steps: ArrayLike) -> PartialEstimate:
        """Estimates and costs of ``rows`` after their first ``steps`` steps.

        Args:
            rows: A ``batch_shape``-dim integer array of canonical row indices.
            steps: Recorded steps seen (warm-up included), ``>= 0``: an int or
                an integer array broadcastable to ``batch_shape``. Steps beyond
                a row's recorded ones are its complete run.

        Returns:
            A :class:`PartialEstimate` of ``batch_shape``-dim arrays.

        Raises:
            ValueError: If a row is out of range or a step count is negative
                or not an integer.
        """
        r = np.asarray(rows)
        k = np.asarray(steps)
        for name, v in (("rows", r), ("steps", k)):
            if v.dtype == np.bool_ or not np.issubdtype(v.dtype, np.integer):
                raise ValueError(f"Expected integer {name}, got dtype {v.dtype}.")
        r, k = np.broadcast_arrays(r.astype(np.int64), k.astype(np.int64))
        if r.size and (r.min() < 0 or r.max() >= len(self)):
            raise ValueError(f"Expected rows in 0..{len(self) - 1}, got {r.tolist()}.")
        if k.size and k.min() < 0:
            raise ValueError(f"Expected steps >= 0, got {k.tolist()}.")
        n = self.n_steps[r]
        seen = np.minimum(k, n)
        ok = self.feasible[r]
        whole = np.maximum(n, 1)  # a row without recorded steps: one loop
        complete = np.where(ok, k >= whole, k >= 1)
        thr = np.where(ok & complete, self._final[0][r], self._thr[r, seen])
        se = np.where(ok & complete, self._final[1][r], self._se[r, seen])
        thr = np.where(ok, thr, np.nan)
        se = np.where(np.isfinite(thr), se, np.nan)
        inl = np.where(np.isfinite(thr), self._inl[r, seen], 0)
        seconds = self.time_model.seconds_after_steps(
            torch.from_numpy(r.copy()), torch.from_numpy(np.minimum(k, whole))
        ).numpy()
        hours = gpu_hours(seconds, self.time_model.num_gpus)
        return PartialEstimate(
            throughput=thr,
            stderr=se,
            n_inliers=inl.astype(np.int64),
            steps=seen.astype(np.int64),
            complete=complete,
            seconds=seconds,
            gpu_hours=hours,
        )

    @cached_property
    def every_step(self) -> PartialEstimate:
        """Every row after each of ``0..n`` steps, ``n`` the most steps any
        row recorded: :meth:`estimate` of ``N x (n + 1)``-dim arrays (row
        ``i``, column ``k``), built once on first use and read-only (shared
        by every run on the table)."""
        width = int(self.n_steps.max(initial=0)) + 1
        est = self.estimate(np.arange(len(self))[:, None], np.arange(width)[None, :])
        for field in fields(est):
            getattr(est, field.name).setflags(write=False)
        return est

    def curve(self, row: int) -> PartialEstimate:
        """Row ``row`` after each of ``0..n`` steps (``n`` its recorded
        steps, at least 1): ``(n + 1)``-dim arrays."""
        if not 0 <= int(row) < len(self):
            raise ValueError(f"Expected a row in 0..{len(self) - 1}, got {row}.")
        n = max(int(self.n_steps[int(row)]), 1)
        return self.estimate(np.full(n + 1, int(row)), np.arange(n + 1))
