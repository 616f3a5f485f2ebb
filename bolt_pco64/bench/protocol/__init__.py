"""A protocol that says which methods differ, and when it cannot.

From a comparison's per-evaluation records to a
:class:`~bolt_pco64.bench.protocol.analysis.ProtocolResult`
(:func:`~bolt_pco64.bench.protocol.analysis.run_protocol`: the declared
:mod:`~bolt_pco64.bench.protocol.design`, each run's outcome on the
:mod:`~bolt_pco64.bench.protocol.endpoints`, every pair
(:mod:`~bolt_pco64.bench.protocol.pairs`), the groups that cannot be told
apart (:mod:`~bolt_pco64.bench.protocol.groups`) and the seeds a comparison
needs (:mod:`~bolt_pco64.bench.protocol.power`)); its page, Kaplan-Meier
figure and files (:mod:`~bolt_pco64.bench.protocol.render`); over the family
of problems, the suite table (:mod:`~bolt_pco64.bench.protocol.suite`). What
the protocol is: ``docs/protocol.md``.

The names of ``__all__`` load their module when first used, so that
``from bolt_pco64.bench.protocol import PROTOCOL_SEEDS`` loads no statistics
library.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Module -> the public names it defines (each spelled once).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "design": ("PROTOCOL_DEFAULTS", "PROTOCOL_SEEDS", "ProtocolDesign"),
    "endpoints": ("Endpoint", "declared_endpoints", "run_outcomes"),
    "analysis": ("ProtocolResult", "run_protocol"),
    "render": (
        "PROTOCOL_FILES",
        "plot_time_to_target",
        "protocol_markdown",
        "write_protocol",
    ),
    "suite": ("SUITE_FILES", "protocol_suite", "suite_markdown", "write_suite"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module = importlib.import_module(f"{__name__}.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
