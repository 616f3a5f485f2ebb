"""The public names of :mod:`bolt_pco64`: the one place each is spelled.

``__init__.py`` hands this file to ``lazy_loader.attach_stub``, which reads its
imports (relative ones only) and loads each name's module on first use; type
checkers read it as the package's interface, with the real types. ``X as X``
re-exports ``X`` to a type checker (PEP 484).
"""

from .instances import (
    INSTANCES as INSTANCES,
    Instance as Instance,
    get_instance as get_instance,
)
from .instance_file import read_instance as read_instance
from .problem import (
    PCO as PCO,
    PCO16 as PCO16,
    PCO32 as PCO32,
    PCO64 as PCO64,
    PROBLEMS as PROBLEMS,
    PCOOutcomeConstraint as PCOOutcomeConstraint,
    problem_class as problem_class,
)
from .tables.table import (
    ReconstructedTableWarning as ReconstructedTableWarning,
    SimulatedTableWarning as SimulatedTableWarning,
    Table as Table,
    TableError as TableError,
    TableSource as TableSource,
    load_table as load_table,
)
from .tables.standins import content_fingerprint as content_fingerprint
from .tables.locations import data_home as data_home

#: The installed distribution's version (``0+unknown`` in a bare checkout).
__version__: str
