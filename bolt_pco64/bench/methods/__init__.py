"""The built-in methods: one module per family, and their one list.

A method follows the contract of :mod:`bolt_pco64.bench.contract`: a
:class:`~bolt_pco64.bench.contract.Method` (``propose``, and optionally
``n_init``, ``new_state``, ``recommend`` and ``predict``) or a plain
function of the step's :class:`~bolt_pco64.bench.contract.RunContext`.
:data:`~bolt_pco64.bench.methods.catalog.BUILTINS` is the one list of the
built-in methods: each one's name, its method, its line in ``bench --help``
and whether the default and the ``--quick`` comparisons run it
(:data:`~bolt_pco64.bench.spec.DEFAULTS` and the command line's help read
it from here). Methods registered by the user and those of other packages'
entry points are looked up in :mod:`bolt_pco64.bench.methods.registry`.

The modules, by family:

- :mod:`~bolt_pco64.bench.methods.baselines`: ``random`` (uniform over the
  untried configurations) and ``naive`` (qLogNEI on one GP that ignores the
  constraint: an OOM is recorded as the problem's ``worst_feasible_value``);
- :mod:`~bolt_pco64.bench.methods.constrained`: constrained qLogNEI / qLogEI
  (``qlognei``, ``qlogei``, ``qlognei_init3``) and Thompson sampling
  (``ts``) over the untried candidates, and qLogNEI over the box
  (``qlognei-box``, ``qlognei-mixed``): an objective GP on the feasible
  observations, a constraint GP on every margin (:mod:`bolt_pco64.bo`);
- :mod:`~bolt_pco64.bench.methods.crash`: the crash-aware methods
  (``gpc_ei``, ``tobit_ei``, ``gpc_pof``; :mod:`bolt_pco64.bo.crash`);
- :mod:`~bolt_pco64.bench.methods.cost`: the cost-aware methods (``eipu``,
  ``ei_cool``; :mod:`bolt_pco64.bo.cost`), for a GPU-hour budget;
- :mod:`~bolt_pco64.bench.methods.prior`: the prior-informed methods
  (``prior_ei``, ``prior_ei_tp``, ``prior_ei_bad``;
  :mod:`bolt_pco64.bo.prior`);
- :mod:`~bolt_pco64.bench.methods.state`: what the model methods keep across
  a run's steps;
- :mod:`~bolt_pco64.bench.methods.catalog`: the list of them all
  (:data:`~bolt_pco64.bench.methods.catalog.BUILTINS`).

How the model methods start before a feasible observation, treat pending
rows and keep their models: ``docs/benchmarking.md`` and
``docs/architecture.md``. Torch and BoTorch are imported when a method first
runs, not when this package is imported (``bench --help`` lists the methods).
"""

from __future__ import annotations

from bolt_pco64.bench.contract import (
    ENTRY_POINT_GROUP,
    FunctionMethod,
    Method,
    MethodFn,
    RunContext,
)
from bolt_pco64.bench.methods.baselines import NaiveMethod, RandomMethod
from bolt_pco64.bench.methods.catalog import BUILTIN_METHODS, BUILTINS, Builtin
from bolt_pco64.bench.methods.constrained import BoxMethod, ConstrainedMethod
from bolt_pco64.bench.methods.cost import CostAwareMethod
from bolt_pco64.bench.methods.crash import CrashAwareMethod
from bolt_pco64.bench.methods.prior import PRIOR_N_INIT, PriorMethod
from bolt_pco64.bench.methods.state import CostAwareState, ModelState, NaiveState

__all__ = [
    "BUILTINS",
    "BUILTIN_METHODS",
    "ENTRY_POINT_GROUP",
    "PRIOR_N_INIT",
    "BoxMethod",
    "Builtin",
    "ConstrainedMethod",
    "CostAwareMethod",
    "CostAwareState",
    "CrashAwareMethod",
    "FunctionMethod",
    "Method",
    "MethodFn",
    "ModelState",
    "NaiveMethod",
    "NaiveState",
    "PriorMethod",
    "RandomMethod",
    "RunContext",
]
