"""Framework-neutral pieces of the optimisation-framework adapters (a package).

Everything an adapter (Ax, Optuna, or a new one such as Nevergrad or SMAC)
needs from a pco problem, without importing any framework: the one problem
factory and how a configuration is named as framework parameters
(:mod:`~bolt_pco64.integrations.common.problem`), what evaluating a
configuration reports and the random baseline
(:mod:`~bolt_pco64.integrations.common.runs`), the one vocabulary of how a
crash reports (:mod:`~bolt_pco64.integrations.common.crash`), and a
framework's ask-and-tell loop as a harness method
(:mod:`~bolt_pco64.integrations.common.bridge`).
"""

from __future__ import annotations

from bolt_pco64.integrations.common.bridge import AskTellBridge, BridgeMethod, Proposer
from bolt_pco64.integrations.common.crash import (
    CRASH_REPORTS,
    DEFAULT_CRASH_REPORT,
    CrashPolicy,
    CrashReport,
    check_crash_report,
)
from bolt_pco64.integrations.common.problem import (
    CONSTRAINT_NAME,
    OBJECTIVE_NAME,
    Parameters,
    ParameterScale,
    get_problem,
    knob_levels,
)
from bolt_pco64.integrations.common.runs import (
    BASELINE_DRAWS,
    Evaluation,
    TableRuns,
    expected_best_of_random_draws,
    random_baseline,
    run_seconds,
)

__all__ = [
    "BASELINE_DRAWS",
    "CONSTRAINT_NAME",
    "CRASH_REPORTS",
    "DEFAULT_CRASH_REPORT",
    "OBJECTIVE_NAME",
    "AskTellBridge",
    "BridgeMethod",
    "CrashPolicy",
    "CrashReport",
    "Evaluation",
    "ParameterScale",
    "Parameters",
    "Proposer",
    "TableRuns",
    "check_crash_report",
    "expected_best_of_random_draws",
    "get_problem",
    "knob_levels",
    "random_baseline",
    "run_seconds",
]
