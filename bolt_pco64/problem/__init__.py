"""The pco BoTorch test problems and their outcome constraint (a package).

One class, :class:`PCO`, serves any :class:`~bolt_pco64.instances.Instance`
(``PCO(instance="pco16")``, ``PCO(instance=Instance(...), table=path)``);
:class:`PCO16`, :class:`PCO32` and :class:`PCO64` fix a shipped instance
each. :data:`PROBLEMS` maps the name of every instance of
:data:`~bolt_pco64.instances.INSTANCES` to its class, :func:`problem_class`
finds the class of any instance.

Every public name is imported, documented and cited from here
(``bolt_pco64.problem.PCO64``), whichever module below defines it; the
modules import one way (``docs/architecture.md``, section 2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from torch import Tensor

from bolt_pco64 import snap
from bolt_pco64.instances import INSTANCES
from bolt_pco64.params import is_noise_std
from bolt_pco64.problem import oom
from bolt_pco64.problem.arguments import NoiseStd as NoiseStd
from bolt_pco64.problem.arguments import TableLike as TableLike
from bolt_pco64.problem.base import PCO
from bolt_pco64.problem.classes import PCO16, PCO32, PCO64, problem_class
from bolt_pco64.problem.constraint import PCOOutcomeConstraint
from bolt_pco64.problem.counts import SnapCounts
from bolt_pco64.problem.points import validate_points

# Also importable from here, outside __all__: the constructor's argument types
# (TableLike, NoiseStd).

__all__ = [
    "FAR_SNAP_DISTANCE",
    "OOM_POLICIES",
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
    "OOMPolicy",
    "PCOOutcomeConstraint",
    "SnapCounts",
    "is_noise_std",
    "problem_class",
    "validate_points",
]

# Constants documented here, where users import them from (a re-exported
# constant has no docstring of its own for the reference to show).

#: What an out-of-memory configuration evaluates to (``oom=`` of :class:`PCO`).
OOMPolicy = oom.OOMPolicy

#: How each ``oom`` policy fills the rows that ran out of memory.
OOM_POLICIES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = oom.OOM_POLICIES

#: Euclidean distance (in the encoded space) from the lattice point a point
#: rounds to, to the configuration it snaps to, beyond which the snap counts as
#: far in :attr:`PCO.snap_counts`: one lattice step (a real point rounding to a
#: configuration, or next to one, is not far).
FAR_SNAP_DISTANCE = snap.FAR_SNAP_DISTANCE

#: The problem class of every instance of
#: :data:`~bolt_pco64.instances.INSTANCES`, by name.
PROBLEMS: Mapping[str, type[PCO]] = MappingProxyType(
    {name: problem_class(inst) for name, inst in INSTANCES.items()}
)
