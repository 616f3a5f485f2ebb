"""bolt_pco64: the pco parallelism-configuration benchmarks as BoTorch test problems.

``PCO16``, ``PCO32`` and ``PCO64`` serve the pco16, pco32 and pco64 instances
(``INSTANCES``): LLM-training throughput on 16, 32 and 64 GPUs by parallelism
configuration, with out-of-memory crashes as a hidden constraint. A user's
own sweep is served the same way: ``PCO(instance=Instance(...), table=path)``
(or ``read_instance("my_cluster.toml")`` for the instance).

Importing the package does no I/O and loads nothing heavy: each public name
is imported from its module on first use (PEP 562), so that the command line
starts without BoTorch. A table is read when a problem is built or
:func:`~bolt_pco64.table.load_table` is called.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from bolt_pco64.instance_file import read_instance
    from bolt_pco64.instances import INSTANCES, Instance, get_instance
    from bolt_pco64.locations import data_home
    from bolt_pco64.problem import (
        PCO,
        PCO16,
        PCO32,
        PCO64,
        PROBLEMS,
        PCOOutcomeConstraint,
        problem_class,
    )
    from bolt_pco64.standins import content_fingerprint
    from bolt_pco64.table import (
        ReconstructedTableWarning,
        SimulatedTableWarning,
        Table,
        TableError,
        TableSource,
        load_table,
    )

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "INSTANCES": "bolt_pco64.instances",
    "Instance": "bolt_pco64.instances",
    "get_instance": "bolt_pco64.instances",
    "read_instance": "bolt_pco64.instance_file",
    "PCO": "bolt_pco64.problem",
    "PCO16": "bolt_pco64.problem",
    "PCO32": "bolt_pco64.problem",
    "PCO64": "bolt_pco64.problem",
    "PROBLEMS": "bolt_pco64.problem",
    "PCOOutcomeConstraint": "bolt_pco64.problem",
    "problem_class": "bolt_pco64.problem",
    "ReconstructedTableWarning": "bolt_pco64.table",
    "SimulatedTableWarning": "bolt_pco64.table",
    "Table": "bolt_pco64.table",
    "TableError": "bolt_pco64.table",
    "TableSource": "bolt_pco64.table",
    "content_fingerprint": "bolt_pco64.standins",
    "data_home": "bolt_pco64.locations",
    "load_table": "bolt_pco64.table",
}

try:
    __version__ = version("bolt_pco64")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"


#: Deprecated pco64-only names (CHANGELOG.md), served with a warning by their module.
_DEPRECATED: dict[str, str] = {
    "COLUMNS": "bolt_pco64.table",
    "INPUT_COLUMNS": "bolt_pco64.table",
}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        return getattr(importlib.import_module(_DEPRECATED[name]), name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bolt_pco64' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "INSTANCES",
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
    "Instance",
    "PCOOutcomeConstraint",
    "ReconstructedTableWarning",
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
    "read_instance",
]
