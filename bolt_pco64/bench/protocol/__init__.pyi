"""The public names of :mod:`bolt_pco64.bench.protocol`: the one place each is spelled.

``__init__.py`` hands this file to ``lazy_loader.attach_stub``, which reads its
imports (relative ones only) and loads each name's module on first use; type
checkers read it as the package's interface, with the real types. ``X as X``
re-exports ``X`` to a type checker (PEP 484).
"""

from .design import (
    PROTOCOL_DEFAULTS as PROTOCOL_DEFAULTS,
    PROTOCOL_SEEDS as PROTOCOL_SEEDS,
    ProtocolDesign as ProtocolDesign,
)
from .endpoints import (
    Endpoint as Endpoint,
    declared_endpoints as declared_endpoints,
    run_outcomes as run_outcomes,
)
from .analysis import ProtocolResult as ProtocolResult, run_protocol as run_protocol
from .render import (
    PROTOCOL_FILES as PROTOCOL_FILES,
    plot_time_to_target as plot_time_to_target,
    protocol_markdown as protocol_markdown,
    write_protocol as write_protocol,
)
from .suite import (
    SUITE_FILES as SUITE_FILES,
    protocol_suite as protocol_suite,
    suite_markdown as suite_markdown,
    write_suite as write_suite,
)
