"""The pco BoTorch test problems and their outcome constraint (a package).

One implementation, :class:`PCO`, parametrised by an
:class:`~bolt_pco64.instances.Instance`; :class:`PCO16`, :class:`PCO32` and
:class:`PCO64` bind one instance each. :data:`PROBLEMS` maps the name of
every instance of :data:`~bolt_pco64.instances.INSTANCES` to its class. Any
other :class:`~bolt_pco64.instances.Instance` (a user's own cluster) is
served by :func:`problem_class` or ``PCO(instance=..., table=...)``.

Every public name is imported, documented and cited from here
(``bolt_pco64.problem.PCO64``), whichever module below defines it. The
parts:

- :mod:`~bolt_pco64.problem.base`: :class:`PCO` itself, BoTorch's private
  hooks on the rows of a table, its lookups and snapping;
- :mod:`~bolt_pco64.problem.arguments`: what its constructor accepts (the
  argument types, and the checks that name a bad one);
- :mod:`~bolt_pco64.problem.classes`: the class of each instance
  (:class:`PCO16`, :class:`PCO32`, :class:`PCO64`, built ones) and
  :func:`problem_class`;
- :mod:`~bolt_pco64.problem.constraint`: :class:`PCOOutcomeConstraint`, the
  memory constraint as a torch module;
- :mod:`~bolt_pco64.problem.points`: :func:`validate_points`, the checks of
  a candidate point;
- :mod:`~bolt_pco64.problem.hooks`: the forward hooks (validate and snap
  before BoTorch's ``forward``, the measured noise after it);
- :mod:`~bolt_pco64.problem.oom`: what an out-of-memory configuration
  evaluates to (:data:`OOMPolicy`, :data:`OOM_POLICIES`: ``"nan"`` or the
  nearest-feasible ``"impute"``);
- :mod:`~bolt_pco64.problem.far_snap`: the warning of a snap far from every
  configuration (:class:`FarSnapWarning`, :data:`FAR_SNAP_DISTANCE`);
- :mod:`~bolt_pco64.problem.buffers`: the table's columns held exactly as
  buffers, every output a new tensor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from torch import Tensor

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.instances import INSTANCES
from bolt_pco64.params import is_noise_std
from bolt_pco64.problem import far_snap, oom
from bolt_pco64.problem.arguments import NoiseStd as NoiseStd
from bolt_pco64.problem.arguments import TableLike as TableLike
from bolt_pco64.problem.base import PCO
from bolt_pco64.problem.classes import PCO16, PCO32, PCO64, problem_class
from bolt_pco64.problem.classes import _bare_problem as _bare_problem
from bolt_pco64.problem.constraint import PCOOutcomeConstraint
from bolt_pco64.problem.far_snap import FarSnapWarning
from bolt_pco64.problem.hooks import _add_measured_noise as _add_measured_noise
from bolt_pco64.problem.hooks import _snap_inputs as _snap_inputs
from bolt_pco64.problem.points import validate_points

# Also importable from here, outside __all__: the constructor's argument types
# (TableLike, NoiseStd), and what a problem pickled when this package was one
# module names besides its class (its forward hooks; a built class's
# _bare_problem), so such pickles still load.

__all__ = [
    "FAR_SNAP_DISTANCE",
    "OOM_POLICIES",
    "PCO",
    "PCO16",
    "PCO32",
    "PCO64",
    "PROBLEMS",
    "FarSnapWarning",
    "OOMPolicy",
    "PCOOutcomeConstraint",
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

#: Euclidean distance (in the encoded space) from a point's nearest integer point
#: to the configuration it snaps to beyond which the problem warns: one lattice
#: step (a real point rounding to a configuration, or next to one, stays silent).
FAR_SNAP_DISTANCE = far_snap.FAR_SNAP_DISTANCE

#: The problem class of every instance of
#: :data:`~bolt_pco64.instances.INSTANCES`, by name.
PROBLEMS: Mapping[str, type[PCO]] = MappingProxyType(
    {name: problem_class(inst) for name, inst in INSTANCES.items()}
)


__getattr__ = deprecated_names(
    __name__,
    {"PCO64OutcomeConstraint": (lambda: PCOOutcomeConstraint, "PCOOutcomeConstraint")},
)
