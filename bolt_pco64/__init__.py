"""bolt_pco64: the pco parallelism-configuration benchmarks as BoTorch test problems.

``PCO16``, ``PCO32`` and ``PCO64`` serve the pco16, pco32 and pco64 instances
(``INSTANCES``): LLM-training throughput on 16, 32 and 64 GPUs by parallelism
configuration, with out-of-memory crashes as a hidden constraint. A user's
own sweep is served the same way: ``PCO(instance=Instance(...), table=path)``
(or ``read_instance("my_cluster.toml")`` for the instance).

Importing the package does no I/O and loads nothing heavy: each public name
is imported from its module on first use (PEP 562), so that the command line
starts without BoTorch. A table is read when a problem is built or
:func:`~bolt_pco64.tables.table.load_table` is called.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

#: Public name -> the module that defines it (the one place each is spelled).
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
    "ReconstructedTableWarning": "bolt_pco64.tables.table",
    "SimulatedTableWarning": "bolt_pco64.tables.table",
    "Table": "bolt_pco64.tables.table",
    "TableError": "bolt_pco64.tables.table",
    "TableSource": "bolt_pco64.tables.table",
    "content_fingerprint": "bolt_pco64.tables.standins",
    "data_home": "bolt_pco64.tables.locations",
    "load_table": "bolt_pco64.tables.table",
}

try:
    __version__ = version("bolt_pco64")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bolt_pco64' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
