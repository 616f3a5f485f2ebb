"""A protocol that says which methods differ, and when it cannot.

From a comparison's per-evaluation records
(:func:`~bolt_pco64.bench.records.record_columns`) to a
:class:`~bolt_pco64.bench.protocol.analysis.ProtocolResult`
(:func:`~bolt_pco64.bench.protocol.analysis.run_protocol`), its Markdown
section (:func:`~bolt_pco64.bench.protocol.render.protocol_markdown`), its
Kaplan-Meier figure (:func:`~bolt_pco64.bench.protocol.render.plot_time_to_target`)
and its files (:func:`~bolt_pco64.bench.protocol.render.write_protocol`); over
the family of problems, the suite table
(:func:`~bolt_pco64.bench.protocol.suite.protocol_suite`,
:func:`~bolt_pco64.bench.protocol.suite.suite_markdown`,
:func:`~bolt_pco64.bench.protocol.suite.write_suite`). What the protocol
is: ``docs/protocol.md``.

- :mod:`~bolt_pco64.bench.protocol.design`: the declared design and the
  default seeds, :data:`~bolt_pco64.bench.protocol.design.PROTOCOL_SEEDS`
  (imports nothing heavy);
- :mod:`~bolt_pco64.bench.protocol.endpoints`: the endpoints and each run's
  outcome on them;
- :mod:`~bolt_pco64.bench.protocol.pairs`: every pair on one endpoint;
- :mod:`~bolt_pco64.bench.protocol.groups`: the groups that cannot be told
  apart;
- :mod:`~bolt_pco64.bench.protocol.power`: the seeds a comparison needs;
- :mod:`~bolt_pco64.bench.protocol.analysis`: the protocol on one problem;
- :mod:`~bolt_pco64.bench.protocol.render`: the page, figure and files;
- :mod:`~bolt_pco64.bench.protocol.suite`: the family.

The names of ``__all__`` load their module when first used, so that
``from bolt_pco64.bench.protocol import PROTOCOL_SEEDS`` loads no statistics
library.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "PROTOCOL_DEFAULTS",
    "PROTOCOL_FILES",
    "PROTOCOL_SEEDS",
    "SUITE_FILES",
    "Endpoint",
    "ProtocolDesign",
    "ProtocolResult",
    "declared_endpoints",
    "plot_time_to_target",
    "protocol_markdown",
    "protocol_suite",
    "run_outcomes",
    "run_protocol",
    "suite_markdown",
    "write_protocol",
    "write_suite",
]

_WHERE = {
    "PROTOCOL_DEFAULTS": "design",
    "PROTOCOL_SEEDS": "design",
    "ProtocolDesign": "design",
    "Endpoint": "endpoints",
    "declared_endpoints": "endpoints",
    "run_outcomes": "endpoints",
    "ProtocolResult": "analysis",
    "run_protocol": "analysis",
    "PROTOCOL_FILES": "render",
    "plot_time_to_target": "render",
    "protocol_markdown": "render",
    "write_protocol": "render",
    "protocol_suite": "suite",
    "suite_markdown": "suite",
    "SUITE_FILES": "suite",
    "write_suite": "suite",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module = importlib.import_module(f"{__name__}.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
