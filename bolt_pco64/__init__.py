"""bolt_pco64: the pco parallelism-configuration benchmarks as BoTorch test problems.

``PCO16``, ``PCO32`` and ``PCO64`` serve the pco16, pco32 and pco64 instances
(``INSTANCES``): LLM-training throughput on 16, 32 and 64 GPUs by parallelism
configuration, with out-of-memory crashes as a hidden constraint.

Importing the package does no I/O; a table is read when a problem is built or
:func:`load_table` is called.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from bolt_pco64.instances import INSTANCES, Instance, get_instance
from bolt_pco64.problem import (
    PCO,
    PCO16,
    PCO32,
    PCO64,
    PROBLEMS,
    PCO64OutcomeConstraint,
    PCOOutcomeConstraint,
    problem_class,
)
from bolt_pco64.table import (
    COLUMNS,
    INPUT_COLUMNS,
    SimulatedTableWarning,
    Table,
    TableError,
    TableSource,
    content_fingerprint,
    data_home,
    load_table,
)

try:
    __version__ = version("bolt_pco64")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

__all__ = [
    "COLUMNS",
    "INPUT_COLUMNS",
    "INSTANCES",
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
    "Instance",
    "PCO64OutcomeConstraint",
    "PCOOutcomeConstraint",
    "SimulatedTableWarning",
    "Table",
    "TableError",
    "TableSource",
    "__version__",
    "content_fingerprint",
    "data_home",
    "get_instance",
    "load_table",
    "problem_class",
]
