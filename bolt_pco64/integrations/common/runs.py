"""What evaluating a configuration against the table reports, and the baseline.

:func:`run_seconds` (the time model's entry point), :class:`Evaluation`,
:class:`TableRuns`, and :func:`expected_best_of_random_draws` /
:func:`random_baseline` (the expected best of random rows, the baseline a
method must beat).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from torch import Tensor

from bolt_pco64.integrations.common.problem import Parameters, ParameterScale
from bolt_pco64.params import POSITIVE_INT, check_param
from bolt_pco64.problem import PCO
from bolt_pco64.tables.time_model import COST_DEFAULTS, TimeModel

__all__ = [
    "BASELINE_DRAWS",
    "Evaluation",
    "TableRuns",
    "expected_best_of_random_draws",
    "random_baseline",
    "run_seconds",
]

#: Number of random table rows whose expected best is the default baseline.
BASELINE_DRAWS = 5


def run_seconds(
    problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
) -> Tensor:
    """``N``-dim tensor: wall-clock seconds of evaluating each table row.

    The time model's entry point for adapters, the harness's own
    (:attr:`bolt_pco64.tables.time_model.TimeModel.run_seconds`): a run takes the
    start-up plus its ``overall_time``; a crash the start-up plus the steps it
    recorded, if any, plus the step in which memory ran out (estimated from
    its feasible neighbours, :class:`~bolt_pco64.tables.time_model.TimeModel`).

    Raises:
        ValueError: If ``startup_seconds`` is not a finite number >= 0.
        TableError: If the table has no usable run times.
    """
    return TimeModel(problem.table, startup_seconds).run_seconds


@dataclass(frozen=True)
class Evaluation:
    """What one evaluation of a configuration reports.

    Attributes:
        row: Canonical index of the table row the configuration snapped to.
        ran: Whether the run fit in memory (``False``: a crash).
        throughput: ``throughput_mean`` (as observed); NaN for a crash.
        margin: ``peak_mem_normalised`` (positive for a crash).
        seconds: Wall-clock seconds the run took (:func:`run_seconds`).
    """

    row: int
    ran: bool
    throughput: float
    margin: float
    seconds: float


class TableRuns:
    """Evaluations of configurations against a problem's table.

    Args:
        problem: The BoTorch problem whose table is served.
        startup_seconds: The time model's start-up of every run and crash
            (:func:`run_seconds`).
        scale: The scale of the configurations
            (:class:`~bolt_pco64.integrations.common.problem.Parameters`).
    """

    def __init__(
        self,
        problem: PCO,
        startup_seconds: float = COST_DEFAULTS.startup_seconds,
        scale: ParameterScale = "raw",
    ) -> None:
        self.parameters = Parameters(problem, scale)
        self.seconds = run_seconds(problem, startup_seconds)
        table = problem.table
        self._ran = table.feasible
        self._throughput = table.column("throughput_mean")
        self._margin = table.column("peak_mem_normalised")

    def __call__(self, params: Mapping[str, object]) -> Evaluation:
        """The outcome of running one configuration (see
        :class:`~bolt_pco64.integrations.common.problem.Parameters`)."""
        return self.of_row(self.parameters.row(params))

    def of_row(self, row: int) -> Evaluation:
        """The outcome of running table row ``row``, as the table holds it."""
        ran = bool(self._ran[row])
        return Evaluation(
            row=row,
            ran=ran,
            throughput=float(self._throughput[row]) if ran else math.nan,
            margin=float(self._margin[row]),
            seconds=float(self.seconds[row]),
        )

    def observed(self, row: int, throughput: float, margin: float) -> Evaluation:
        """An evaluation of row ``row`` as observed (noise included); NaN: a crash."""
        return Evaluation(
            row=int(row),
            ran=not math.isnan(throughput),
            throughput=float(throughput),
            margin=float(margin),
            seconds=float(self.seconds[row]),
        )


def expected_best_of_random_draws(
    values: Sequence[float], feasible: Sequence[bool], draws: int = BASELINE_DRAWS
) -> float:
    """Expected best feasible value among ``draws`` rows drawn without replacement.

    Every row is equally likely; a draw without a feasible row counts as the
    worst feasible value. Computed exactly: with ``N`` rows, ``F`` feasible and
    their values sorted ascending ``v_1 <= ... <= v_F``, the best is at most
    ``v_j`` with probability ``C(N - F + j, k) / C(N, k)`` (``k`` the number of
    draws, at most ``N``).

    Args:
        values: ``N`` values (ignored where infeasible).
        feasible: ``N`` flags.
        draws: Rows drawn, ``>= 1``.

    Raises:
        ValueError: If ``draws < 1``, the lengths differ or no row is feasible.
    """
    check_param("draws", draws, POSITIVE_INT)
    if len(values) != len(feasible):
        raise ValueError(
            f"Expected as many feasibility flags as values, got {len(feasible)} and {len(values)}."
        )
    ok = sorted(float(v) for v, f in zip(values, feasible, strict=True) if f)
    if not ok:
        raise ValueError("Expected at least one feasible row, got none.")
    n, k = len(values), min(draws, len(values))
    total = math.comb(n, k)
    below = n - len(ok)
    expected, previous = 0.0, 0.0
    for j, value in enumerate(ok, start=1):
        cdf = math.comb(below + j, k) / total
        expected += value * (cdf - previous)
        previous = cdf
    return expected


def random_baseline(problem: PCO, draws: int = BASELINE_DRAWS) -> float:
    """Expected best feasible throughput of ``draws`` random rows of ``problem``'s table.

    :func:`expected_best_of_random_draws` on the table's ``throughput_mean``
    and ``ran_successfully``.
    """
    frame = problem.table.frame
    return expected_best_of_random_draws(
        frame["throughput_mean"].tolist(),
        [bool(f) for f in frame["ran_successfully"]],
        draws,
    )
