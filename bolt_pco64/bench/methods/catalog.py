"""The one list of the built-in methods.

:data:`BUILTINS` gives each one's name, its method, its line in
``bench --help`` and whether the default and the ``--quick`` comparisons run it
(:data:`~bolt_pco64.bench.spec.DEFAULTS` and the command line's help read
it from here). Torch and BoTorch are imported when a method first runs, not
when this module is imported (``bench --help`` lists the methods).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from bolt_pco64.bench.contract import Method
from bolt_pco64.bench.methods.baselines import NaiveMethod, RandomMethod
from bolt_pco64.bench.methods.constrained import BoxMethod, ConstrainedMethod
from bolt_pco64.bench.methods.cost import CostAwareMethod
from bolt_pco64.bench.methods.crash import CrashAwareMethod
from bolt_pco64.bench.methods.prior import PRIOR_N_INIT, PriorMethod

__all__ = ["BUILTINS", "BUILTIN_METHODS", "Builtin"]


@dataclass(frozen=True)
class Builtin:
    """A built-in method and what the command line says of it.

    Attributes:
        method: The method.
        help: Its line in ``bench --help``.
        default: Whether the default comparison runs it
            (:data:`~bolt_pco64.bench.spec.DEFAULTS`' ``methods``).
        quick: Whether ``--quick`` runs it
            (:data:`~bolt_pco64.bench.spec.QUICK`'s ``methods``).
    """

    method: Method
    help: str
    default: bool = False
    quick: bool = False


#: The built-in methods by name, in report order (the one list of them).
BUILTINS: Mapping[str, Builtin] = MappingProxyType(
    {
        "random": Builtin(
            RandomMethod(),
            "uniform over the untried configurations",
            default=True,
            quick=True,
        ),
        "qlognei": Builtin(
            ConstrainedMethod("qlognei"),
            "constrained qLogNEI over the untried configurations",
            default=True,
            quick=True,
        ),
        "qlogei": Builtin(
            ConstrainedMethod("qlogei"),
            "constrained qLogEI over the untried configurations",
            default=True,
        ),
        "ts": Builtin(
            ConstrainedMethod("ts"),
            "constrained Thompson sampling over the untried configurations",
            default=True,
            quick=True,
        ),
        "naive": Builtin(
            NaiveMethod(),
            "qLogNEI that records an OOM as the worst feasible value",
            default=True,
        ),
        "qlognei-box": Builtin(
            BoxMethod("box"),
            "qlognei optimised over the continuous box, snapped to rows",
        ),
        "qlognei-mixed": Builtin(
            BoxMethod("mixed"),
            "qlognei optimised over the integer lattice, snapped to rows",
        ),
        "gpc_ei": Builtin(
            CrashAwareMethod("gpc_ei"),
            "LogEI x P(feasible) of a GP classifier of ran_successfully",
            default=True,
        ),
        "tobit_ei": Builtin(
            CrashAwareMethod("tobit_ei"),
            "LogEI x P(margin <= 0) of a GP of the memory margin, crashes as "
            "censored observations",
            default=True,
        ),
        "gpc_pof": Builtin(
            CrashAwareMethod("gpc_pof"),
            "LogEI where the classifier's P(feasible) reaches a threshold",
            default=True,
        ),
        "eipu": Builtin(
            CostAwareMethod("eipu"),
            "qlognei per unit of expected cost (crash risk counted); use with "
            "--budget-hours",
        ),
        "ei_cool": Builtin(
            CostAwareMethod("ei_cool"),
            "eipu with the cost's exponent cooling from 1 to 0 as the budget is "
            "spent (Lee et al. 2020)",
        ),
        "prior_ei": Builtin(
            PriorMethod("both"),
            "qlognei on GPs with performance-model prior means (throughput, "
            f"memory margin), from {PRIOR_N_INIT} initial rows",
        ),
        "prior_ei_tp": Builtin(
            PriorMethod("throughput"),
            "prior_ei with the throughput prior only (ablation)",
        ),
        "prior_ei_bad": Builtin(
            PriorMethod("both", quality="bad"),
            "prior_ei with a deliberately misspecified prior (constants off by "
            "2x, twice the GPU memory)",
        ),
        "qlognei_init3": Builtin(
            ConstrainedMethod("qlognei", n_init=PRIOR_N_INIT),
            f"qlognei from {PRIOR_N_INIT} initial rows (the prior methods' control)",
        ),
    }
)
#: The built-in methods themselves, by name (:data:`BUILTINS`' methods).
BUILTIN_METHODS: Mapping[str, Method] = MappingProxyType(
    {name: b.method for name, b in BUILTINS.items()}
)
