"""bolt_pco64: the pco64 parallelism-configuration benchmark as a BoTorch test problem.

Importing the package does no I/O; the table is read when a problem is built or
:func:`load_table` is called.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from bolt_pco64.problem import PCO64, PCO64OutcomeConstraint
from bolt_pco64.table import (
    COLUMNS,
    INPUT_COLUMNS,
    SimulatedTableWarning,
    Table,
    TableError,
    TableSource,
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
    "PCO64",
    "PCO64OutcomeConstraint",
    "SimulatedTableWarning",
    "Table",
    "TableError",
    "TableSource",
    "__version__",
    "data_home",
    "load_table",
]
