"""Framework-neutral pieces of the optimisation-framework adapters.

Everything an adapter (Ax, Optuna, ...) needs from a pco problem, without
importing any framework:

- :func:`knob_levels`: the raw levels of each knob that the loaded table holds
  (the search space a framework should offer);
- :class:`ParameterRows`: the table row that a parameter assignment (knob name
  to raw value) snaps to, as in the BoTorch problem;
- :func:`run_seconds`: the time model's entry point, a run's wall-clock seconds
  per row (:class:`bolt_pco64.costs.TimeModel`: start-up plus the training
  loop; a crash start-up plus the step in which memory ran out);
- :class:`TableRuns`: one evaluation of an assignment, as a
  :class:`RunOutcome` (row, ran, throughput, memory margin, seconds);
- :func:`expected_best_of_random_draws` and :func:`random_baseline`: the exact
  expected best feasible throughput of ``k`` table rows drawn without
  replacement (the baseline a method must beat).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from bolt_pco64.costs import COST_DEFAULTS, TimeModel
from bolt_pco64.instances import InputSpec
from bolt_pco64.problem import PCO

__all__ = [
    "BASELINE_DRAWS",
    "CONSTRAINT_NAME",
    "OBJECTIVE_NAME",
    "ParameterRows",
    "RunOutcome",
    "TableRuns",
    "expected_best_of_random_draws",
    "knob_levels",
    "random_baseline",
    "run_seconds",
]

#: The objective (maximised): the card's column.
OBJECTIVE_NAME = "throughput_mean"
#: The constraint: the card's column; a run fits in memory iff it is ``<= 0``.
CONSTRAINT_NAME = "peak_mem_normalised"
#: Number of random table rows whose expected best is the default baseline.
BASELINE_DRAWS = 5


def knob_levels(problem: PCO) -> dict[str, tuple[int, ...]]:
    """The raw levels of each knob found in ``problem``'s loaded table.

    Returns:
        A dict from input column name (in the order of the problem's ``X``) to
        its distinct raw values, sorted ascending (``zero_stage`` holds raw
        stages such as 0/2/3, not their ordinal codes).
    """
    frame = problem.table.frame
    return {
        spec.name: tuple(sorted({int(v) for v in frame[spec.name]}))
        for spec in problem.instance.inputs
    }


def _raw_value(spec: InputSpec, value: object) -> int:
    """The raw integer level of one knob's value, checked."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    if not float(value).is_integer():
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    raw = int(value)
    if spec.encoding == "ordinal" and raw not in spec.levels:
        raise ValueError(
            f"Expected a value of {list(spec.levels)} for knob {spec.name!r}, got {raw}."
        )
    return raw


class ParameterRows:
    """The table row that a parameter assignment snaps to.

    An assignment maps every knob's column name to a raw value (``zero_stage``
    as its raw stage); it is encoded as the problem's ``X`` and snapped to the
    nearest table row by :meth:`~bolt_pco64.problem.PCO.lookup`. Extra keys are
    ignored.

    Args:
        problem: The BoTorch problem whose table is served.
    """

    def __init__(self, problem: PCO) -> None:
        self.problem = problem
        self.specs: tuple[InputSpec, ...] = problem.instance.inputs

    def encode(self, params: Mapping[str, object]) -> list[float]:
        """The encoded ``d`` inputs of one assignment, in ``X`` order.

        Raises:
            ValueError: If a knob has no value, a value that is not an integer,
                or an ordinal value that is not one of its levels.
        """
        missing = [s.name for s in self.specs if s.name not in params]
        if missing:
            raise ValueError(
                f"Expected a value for every knob, got none for {missing} in {dict(params)}."
            )
        return [float(s.encode(_raw_value(s, params[s.name]))) for s in self.specs]

    def __call__(self, params: Mapping[str, object]) -> int:
        """The canonical row index that one assignment snaps to."""
        x = torch.tensor([self.encode(params)], dtype=torch.float64)
        return int(self.problem.lookup(x)[0])


def run_seconds(
    problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
) -> Tensor:
    """``N``-dim tensor: wall-clock seconds of evaluating each table row.

    The time model's entry point for adapters, the harness's own
    (:attr:`bolt_pco64.costs.TimeModel.run_seconds`): a run takes the
    start-up plus its ``overall_time``; a crash the start-up plus the step in
    which memory ran out.

    Raises:
        ValueError: If ``startup_seconds`` is not a finite number >= 0.
        TableError: If the table has no usable run times.
    """
    return TimeModel(problem.table, startup_seconds).run_seconds


@dataclass(frozen=True)
class RunOutcome:
    """What one evaluation of a configuration reports.

    Attributes:
        row: Canonical index of the table row the assignment snapped to.
        ran: Whether the run fit in memory (``False``: a crash).
        throughput: ``throughput_mean``; NaN for a crash (it has none).
        margin: ``peak_mem_normalised`` (positive for a crash).
        seconds: Wall-clock seconds the run took (:func:`run_seconds`).
    """

    row: int
    ran: bool
    throughput: float
    margin: float
    seconds: float


class TableRuns:
    """Evaluations of parameter assignments against a problem's table.

    Args:
        problem: The BoTorch problem whose table is served.
        startup_seconds: The time model's start-up of every run and crash
            (:func:`run_seconds`).
    """

    def __init__(
        self, problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
    ) -> None:
        self.rows = ParameterRows(problem)
        self.seconds = run_seconds(problem, startup_seconds)
        table = problem.table
        self._ran = table.feasible
        self._throughput = table.column("throughput_mean")
        self._margin = table.column("peak_mem_normalised")

    def __call__(self, params: Mapping[str, object]) -> RunOutcome:
        """The outcome of running one assignment (see :class:`ParameterRows`)."""
        row = self.rows(params)
        ran = bool(self._ran[row])
        return RunOutcome(
            row=row,
            ran=ran,
            throughput=float(self._throughput[row]) if ran else math.nan,
            margin=float(self._margin[row]),
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
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"Expected `draws` to be an int >= 1, got {draws!r}.")
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
