"""The time model: what evaluating a configuration costs, in seconds and GPU-hours.

This is the **one** time model of the package. The harness's GPU-hours and
simulated clock, the Ax adapter's step runtime, the Optuna adapter and
early termination (the cost of a partial run) all read it. It works on any
table of a card's schema (docs/architecture.md §1); nothing in it depends on the
stand-in's numbers.

**A run that fits in memory** costs

    start-up + the training loop,

- *the training loop* is the row's ``overall_time``: by docs/architecture.md §6 (the
  public runner ``apivich-h/oppa`` that writes these columns) it runs from the
  start of the training loop to the end of the last step, so it holds every
  recorded step (``all_time_steps``, the warm-up first) and the runner's
  bookkeeping between them, but not what happens before the loop;
- *start-up* is what happens before the loop: launching the job on the
  instance's hosts, imports, model construction, communicator set-up. No
  column records it, so it is **one documented default**,
  :attr:`CostDefaults.startup_seconds` (120 s), the same for every
  configuration; pass ``startup_seconds=`` to change it (0 charges the loop
  alone). A table whose ``overall_time`` already includes start-up (the
  stand-in before generator 2.1) is charged its start-up twice under the
  default; pass ``startup_seconds=0`` for such a table.

**A crash** (an out-of-memory run, ``ran_successfully`` false) costs

    start-up + the recorded steps, if any + the step in which memory ran out.

The allocator fails in the first step (the warm-up step: the first forward
and backward pass allocate the activations, the first optimizer step the
optimizer state), so a crash with no recorded steps (the card's ``"[]"``)
costs start-up plus one first step. A crash records no step times, so that
step is **estimated from its neighbours**: the median, over the
:attr:`CostDefaults.crash_neighbours` (5) feasible rows nearest to the
crashed configuration (Euclidean distance in the encoded inputs, ties to the
earliest row in canonical order; fewer when the table has fewer feasible
rows), of what the first step of a run costs under this model
(:meth:`TimeModel.seconds_after_steps` with one step, minus start-up). Any
table works: a table has at least one feasible row (docs/architecture.md §1).

**The first k steps of a run** (a run stopped early) cost start-up
plus the loop up to the end of step k. The loop's time between the steps
(``overall_time`` minus the sum of the recorded steps: logging, checkpoints,
data loading) is spread over the steps in proportion to their length:

    start-up + overall_time x (t_1 + ... + t_k) / (t_1 + ... + t_n),

so that zero steps cost start-up alone and all ``n`` recorded steps cost the
whole run. A feasible row without recorded steps is one indivisible loop: any
``k >= 1`` costs the whole run. For a crash, ``k = 0`` costs start-up and any
``k >= 1`` the whole crash (it never got further).

**GPU-hours** are seconds x the instance's GPUs (``instance.num_gpus``, the
cluster one run occupies) / 3600 (:func:`gpu_hours`).

**Usable run times.** Every feasible row needs ``overall_time > 0`` (the card
allows any finite value) and, where it records steps, step times that are
finite and ``> 0``. A table that breaks this is refused with one
:class:`~bolt_pco64.tables.validation.TableError` naming the column and the first
offending row, before anything is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from bolt_pco64.params import POSITIVE_INT, check_param
from bolt_pco64.tables.validation import table_error

if TYPE_CHECKING:
    from bolt_pco64.instances import Instance
    from bolt_pco64.tables.table import Table

__all__ = [
    "COST_DEFAULTS",
    "CostDefaults",
    "TimeModel",
    "gpu_hours",
]

_SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class CostDefaults:
    """The defaults of the time model (one place).

    Attributes:
        startup_seconds: Seconds before the training loop (launch, imports,
            model construction, communicator set-up), charged to every run
            and every crash. No column records it; 120 s is an assumption of
            the order a multi-host PyTorch job of these models takes, not a
            measurement.
        crash_neighbours: Feasible rows whose first step estimates the step in
            which a crash ran out of memory (their median).
    """

    startup_seconds: float = 120.0
    crash_neighbours: int = 5


#: The defaults used when no other value is passed.
COST_DEFAULTS = CostDefaults()


def gpu_hours(seconds: Tensor | float, num_gpus: int) -> Tensor | float:
    """GPU-hours of ``seconds`` of wall clock on ``num_gpus`` GPUs.

    Args:
        seconds: A number or a tensor of any shape.
        num_gpus: GPUs the run occupies (``>= 1``).

    Returns:
        ``seconds x num_gpus / 3600``, of ``seconds``' type and shape.
    """
    check_param("num_gpus", num_gpus, POSITIVE_INT)
    return seconds * num_gpus / _SECONDS_PER_HOUR


def _check_startup(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"Expected startup_seconds to be a finite number >= 0, got {value!r}."
        )
    return float(value)


def _check_neighbours(value: object) -> int:
    check_param("crash_neighbours", value, POSITIVE_INT)
    return int(value)  # type: ignore[call-overload]


class TimeModel:
    """Seconds and GPU-hours of evaluating each row of a table (see the module doc).

    Args:
        table: A validated :class:`~bolt_pco64.tables.table.Table` of any instance.
        startup_seconds: Seconds before the training loop, charged to every
            run and crash (default :attr:`CostDefaults.startup_seconds`).
        crash_neighbours: Feasible rows whose first step estimates a crash's
            (default :attr:`CostDefaults.crash_neighbours`).

    Attributes:
        instance: The table's instance.
        num_gpus: GPUs one run occupies (``instance.num_gpus``).
        startup_seconds: As given.
        crash_neighbours: As given.
        feasible: ``N``-dim bool tensor, ``ran_successfully``.
        run_seconds: ``N``-dim tensor: seconds of evaluating each row, a crash
            included (canonical order).
        gpu_hours: ``N``-dim tensor: ``run_seconds`` in GPU-hours.
        n_steps: ``N``-dim long tensor: recorded steps of each row.
        first_step_seconds: ``N``-dim tensor: the loop's seconds up to the end
            of the first step (a feasible row's own; a crash's, the step in
            which it ran out of memory, estimated from its neighbours).

    Raises:
        TableError: If a feasible row has ``overall_time <= 0`` or a recorded
            step time that is not finite and ``> 0``.
        ValueError: If ``startup_seconds`` or ``crash_neighbours`` is invalid.
    """

    def __init__(
        self,
        table: Table,
        startup_seconds: float = COST_DEFAULTS.startup_seconds,
        crash_neighbours: int = COST_DEFAULTS.crash_neighbours,
    ) -> None:
        self.startup_seconds = _check_startup(startup_seconds)
        k = _check_neighbours(crash_neighbours)
        self.crash_neighbours: int = k
        self.instance: Instance = table.instance
        self.num_gpus: int = table.instance.num_gpus
        frame = table.frame
        ok = frame["ran_successfully"].to_numpy(dtype=bool)
        loop = frame["overall_time"].to_numpy(dtype=np.float64)
        steps = [np.asarray(s, dtype=np.float64) for s in frame["all_time_steps"]]
        _check_usable(table, ok, loop, steps)
        n = len(frame)
        self._steps = steps
        self._loop = np.where(ok, loop, np.nan)
        self._ok = ok
        # The loop's seconds up to the end of each recorded step of a feasible
        # row (overall_time spread in proportion to the steps).
        self._cum: list[np.ndarray] = []
        first = np.full(n, np.nan)
        for i in range(n):
            s = steps[i]
            if ok[i] and s.size:
                cum = loop[i] * np.cumsum(s) / s.sum()
                cum[-1] = loop[i]
            elif ok[i]:
                cum = np.asarray([loop[i]])
            else:
                cum = np.zeros(0)
            self._cum.append(cum)
            if ok[i]:
                first[i] = cum[0]
        first[~ok] = _neighbour_first_step(table.X.numpy(), ok, first, k)
        self._first = first
        crash_extra = np.array([s.sum() if s.size else 0.0 for s in steps])
        seconds = np.where(
            ok, self.startup_seconds + loop, self.startup_seconds + crash_extra + first
        )
        self._seconds = seconds
        self.feasible: Tensor = torch.from_numpy(ok.copy())
        self.run_seconds: Tensor = torch.from_numpy(seconds.copy())
        self.gpu_hours: Tensor = gpu_hours(self.run_seconds, self.num_gpus)
        self.first_step_seconds: Tensor = torch.from_numpy(first.copy())
        self.n_steps: Tensor = torch.tensor(
            [s.size if ok[i] else 0 for i, s in enumerate(steps)], dtype=torch.long
        )

    def __repr__(self) -> str:
        return (
            f"TimeModel(instance={self.instance.name!r}, rows={len(self._seconds)}, "
            f"startup_seconds={self.startup_seconds})"
        )

    def __len__(self) -> int:
        return len(self._seconds)

    def describe(self) -> str:
        """One sentence stating the model with its settings (for reports)."""
        return (
            f"a run costs start-up ({self.startup_seconds:g} s, assumed) + "
            f"overall_time; a crash costs start-up + the first step, estimated as "
            f"the median first step of the {self.crash_neighbours} nearest feasible "
            f"rows; GPU-hours = seconds × {self.num_gpus} GPUs / 3600"
        )

    def seconds_after_steps(self, rows: Tensor, steps: Tensor | int) -> Tensor:
        """Seconds of the first ``steps`` steps of each run in ``rows``.

        Start-up plus the loop up to the end of step ``steps`` (see the module
        docstring); ``steps`` at or beyond a row's recorded steps is the whole
        run (:attr:`run_seconds`), a crash's any ``steps >= 1``.

        Args:
            rows: ``batch_shape``-dim long tensor of canonical row indices.
            steps: Steps completed, an int or a ``batch_shape``-dim long
                tensor, each ``>= 0``.

        Returns:
            A ``batch_shape``-dim double tensor of seconds.

        Raises:
            ValueError: If a row is out of range or a step count negative.
        """
        r = torch.as_tensor(rows)
        k = torch.broadcast_to(torch.as_tensor(steps), r.shape)
        if r.dtype.is_floating_point or k.dtype.is_floating_point:
            raise ValueError(
                f"Expected integer rows and steps, got {r.dtype} and {k.dtype}."
            )
        n = len(self._seconds)
        if r.numel() and (int(r.min()) < 0 or int(r.max()) >= n):
            raise ValueError(f"Expected rows in 0..{n - 1}, got {r.tolist()}.")
        if k.numel() and int(k.min()) < 0:
            raise ValueError(f"Expected steps >= 0, got {k.tolist()}.")
        out = np.empty(r.numel())
        for j, (i, kk) in enumerate(
            zip(r.reshape(-1).tolist(), k.reshape(-1).tolist(), strict=True)
        ):
            cum = self._cum[i]
            if kk == 0:
                out[j] = self.startup_seconds
            elif not self._ok[i] or kk >= cum.size:
                out[j] = self._seconds[i]
            else:
                out[j] = self.startup_seconds + cum[kk - 1]
        return torch.from_numpy(out).reshape(r.shape)

    def gpu_hours_after_steps(self, rows: Tensor, steps: Tensor | int) -> Tensor:
        """:meth:`seconds_after_steps` in GPU-hours."""
        return gpu_hours(self.seconds_after_steps(rows, steps), self.num_gpus)

    def step_seconds(self, row: int) -> Tensor:
        """``n``-dim tensor: the loop's seconds of each recorded step of ``row``.

        The row's ``all_time_steps`` scaled so that they add up to its
        ``overall_time`` (see the module docstring); empty for a crash.
        """
        if not 0 <= int(row) < len(self._seconds):
            raise ValueError(
                f"Expected a row in 0..{len(self._seconds) - 1}, got {row}."
            )
        cum = self._cum[int(row)]
        return torch.from_numpy(np.diff(cum, prepend=0.0))


def _check_usable(
    table: Table, ok: np.ndarray, loop: np.ndarray, steps: list[np.ndarray]
) -> None:
    """Raise a TableError at the first feasible row without usable run times."""
    where = f"{table.instance.name} table " + (
        str(table.source.path) if table.source.path is not None else "<DataFrame>"
    )
    for i in np.flatnonzero(ok):
        if not loop[i] > 0:
            raise table_error(
                where,
                "overall_time",
                int(i),
                f"expected a run time > 0 seconds for a feasible row (the time "
                f"model charges it), got {loop[i]}",
            )
    for i, s in enumerate(steps):
        if s.size and not (np.isfinite(s).all() and (s > 0).all()):
            raise table_error(
                where,
                "all_time_steps",
                i,
                f"expected step times that are finite and > 0 seconds, got {s.tolist()}",
            )


def _neighbour_first_step(
    X: np.ndarray, ok: np.ndarray, first: np.ndarray, k: int
) -> np.ndarray:
    """The median first step of the ``k`` nearest feasible rows of each crash."""
    feasible = np.flatnonzero(ok)
    crashes = np.flatnonzero(~ok)
    out = np.empty(crashes.size)
    if crashes.size == 0:
        return out
    d = ((X[crashes, None, :] - X[None, feasible, :]) ** 2).sum(axis=-1)
    # Stable sort: equal distances keep canonical order (earliest row first).
    nearest = np.argsort(d, axis=1, kind="stable")[:, : min(k, feasible.size)]
    out[:] = np.median(first[feasible][nearest], axis=1)
    return out
