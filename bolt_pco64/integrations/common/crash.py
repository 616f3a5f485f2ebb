"""The one vocabulary of how a crashed run reports to a framework.

:data:`CrashReport` (``"placeholder"``, ``"missing"``, ``"failed"``) and
:class:`CrashPolicy` (the placeholder a crash reports).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, get_args

from bolt_pco64.integrations.common.runs import Evaluation
from bolt_pco64.params import Interval, check_param
from bolt_pco64.problem import PCO

__all__ = [
    "CRASH_REPORTS",
    "DEFAULT_CRASH_REPORT",
    "CrashPolicy",
    "CrashReport",
    "check_crash_report",
]

#: How a crashed (out-of-memory) run reports to a framework; every adapter
#: maps it onto its own trial states:
#:
#: - ``"placeholder"``: a completed trial, its constraint observed and its
#:   objective the policy's placeholder (:class:`CrashPolicy`);
#: - ``"missing"``: its constraint observed and no objective (Ax: a completed
#:   trial without the objective's data; Optuna: a PRUNED trial);
#: - ``"failed"``: a failed trial no model learns from (Ax: NaN objective, so
#:   ABANDONED; Optuna: FAIL).
CrashReport = Literal["placeholder", "missing", "failed"]
#: Every crash report.
CRASH_REPORTS: tuple[CrashReport, ...] = get_args(CrashReport)
#: The report used unless told otherwise (measured in the README's Ax and
#: Optuna sections).
DEFAULT_CRASH_REPORT: CrashReport = "placeholder"


def check_crash_report(value: object, name: str = "`crash_report`") -> CrashReport:
    """``value`` as a :data:`CrashReport`.

    Raises:
        ValueError: If ``value`` is no crash report.
    """
    if value in CRASH_REPORTS:
        return value  # type: ignore[return-value]
    raise ValueError(f"Expected {name} to be one of {CRASH_REPORTS}, got {value!r}.")


@dataclass(frozen=True)
class CrashPolicy:
    """What a crash reports as its objective: the one placeholder policy.

    Attributes:
        report: How a crash reports (:data:`CrashReport`).
        placeholder: The objective of a crash under ``"placeholder"``; every
            adapter's default is the table's worst feasible throughput
            (:meth:`for_problem`).

    Raises:
        ValueError: For an unknown report, or a placeholder that is not a
            finite number under ``"placeholder"``.
    """

    report: CrashReport = DEFAULT_CRASH_REPORT
    placeholder: float = math.nan

    def __post_init__(self) -> None:
        object.__setattr__(self, "report", check_crash_report(self.report))
        if self.report == "placeholder":
            check_param("`crash_value`", self.placeholder, Interval(numbers.Real))
        object.__setattr__(self, "placeholder", float(self.placeholder))

    @classmethod
    def for_problem(
        cls,
        problem: PCO,
        report: CrashReport = DEFAULT_CRASH_REPORT,
        placeholder: float | None = None,
    ) -> CrashPolicy:
        """The policy whose placeholder defaults to ``problem``'s worst feasible throughput."""
        if placeholder is None:
            placeholder = float(problem.worst_feasible_value)
        return cls(report, placeholder)

    @property
    def crash_objective(self) -> float | None:
        """What a crash reports as its objective, the placeholder, ``None``
        (``"missing"``: no objective) or NaN (``"failed"``)."""
        if self.report == "placeholder":
            return self.placeholder
        return None if self.report == "missing" else math.nan

    def objective(self, outcome: Evaluation) -> float | None:
        """The objective ``outcome`` reports: its throughput, or :attr:`crash_objective`."""
        return outcome.throughput if outcome.ran else self.crash_objective
