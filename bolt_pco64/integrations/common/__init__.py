"""Framework-neutral pieces of the optimisation-framework adapters (a package).

Everything an adapter (Ax, Optuna, or a new one such as Nevergrad or SMAC)
needs from a pco problem, without importing any framework:

- :func:`~bolt_pco64.integrations.common.problem.get_problem`: the one problem factory
  (an instance and a table, or a problem as it is);
- :class:`~bolt_pco64.integrations.common.problem.Parameters`: how a configuration is
  named as framework parameters (one integer parameter per knob, by its column name,
  valued on the ``"raw"`` or ``"encoded"`` scale) and the table row it snaps to;
- :func:`~bolt_pco64.integrations.common.problem.knob_levels`: the raw levels of each
  knob that the loaded table holds;
- :func:`~bolt_pco64.integrations.common.runs.run_seconds`: the time model's entry
  point, a run's wall-clock seconds per row (:class:`bolt_pco64.tables.time_model.TimeModel`:
  start-up plus the training loop; a crash start-up, its recorded steps if any and the
  step in which memory ran out);
- :class:`~bolt_pco64.integrations.common.runs.Evaluation` and
  :class:`~bolt_pco64.integrations.common.runs.TableRuns`: one evaluation of a
  configuration (row, ran, throughput, memory margin, seconds);
- :data:`~bolt_pco64.integrations.common.crash.CrashReport` and
  :class:`~bolt_pco64.integrations.common.crash.CrashPolicy`: the one vocabulary of how
  a crashed run reports to a framework (``"placeholder"``, ``"missing"``, ``"failed"``)
  and the placeholder it reports;
- :class:`~bolt_pco64.integrations.common.bridge.AskTellBridge` (over a framework's
  :class:`~bolt_pco64.integrations.common.bridge.Proposer`) and
  :class:`~bolt_pco64.integrations.common.bridge.BridgeMethod`: a framework's
  ask-and-tell loop, and that loop as a method of the benchmark harness;
- :func:`~bolt_pco64.integrations.common.runs.expected_best_of_random_draws` and
  :func:`~bolt_pco64.integrations.common.runs.random_baseline`: the exact expected best
  feasible throughput of ``k`` table rows drawn without replacement (the baseline a
  method must beat).
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
