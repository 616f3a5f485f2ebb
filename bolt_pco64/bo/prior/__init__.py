"""A parallelism-informed prior: GPs whose prior means are performance models.

A Gaussian process with a constant prior mean knows nothing about parallel
training; the means here do: the throughput of a learnable step-time model
(compute with the pipeline bubble, collectives inside and across hosts,
pipeline sends) and the memory margin of a learnable peak-memory model (ZeRO
model states, activations under tp/sp/cp/pp). Their few parameters are
positive, named and physically readable (times per FLOP and per byte,
bytes per parameter); they are fitted jointly with the GP hyperparameters.
The form follows public sources (the parallelism prior of the
``apivich-h/oppa`` repository, Narayanan et al. 2021, Rajbhandari et al.
2020, Korthikanti et al. 2022), cited in each module. This package does not
import the stand-in generator (:mod:`bolt_pco64.tables.simulate`) and its form was not
taken from it; see :data:`~bolt_pco64.bo.prior.base.STANDIN_CAVEAT`.

- :mod:`~bolt_pco64.bo.prior.layout`: encoded inputs to parallel sizes, read
  from the instance's input specs and context columns;
- :mod:`~bolt_pco64.bo.prior.base`: :class:`~bolt_pco64.bo.prior.base.PriorDefaults`,
  the :class:`~bolt_pco64.bo.prior.base.PhysicalMean` base class, and the deliberately
  misspecified prior of the robustness check
  (:func:`~bolt_pco64.bo.prior.base.misspecified`,
  :data:`~bolt_pco64.bo.prior.base.PRIORS`);
- :mod:`~bolt_pco64.bo.prior.throughput`:
  :class:`~bolt_pco64.bo.prior.throughput.ThroughputPriorMean`;
- :mod:`~bolt_pco64.bo.prior.memory`:
  :class:`~bolt_pco64.bo.prior.memory.MemoryPriorMean`;
- :mod:`~bolt_pco64.bo.prior.fit`: :func:`~bolt_pco64.bo.prior.fit.fit_prior_models` and
  :func:`~bolt_pco64.bo.prior.fit.propose_prior_ei` (constrained qLogNEI on both prior
  means, or only the throughput prior).
"""

from bolt_pco64.bo.prior.base import (
    BAD_PRIOR_FACTOR,
    PRIOR_DEFAULTS,
    PRIORS,
    STANDIN_CAVEAT,
    PhysicalMean,
    PriorDefaults,
    PriorQuality,
    misspecified,
)
from bolt_pco64.bo.prior.fit import (
    PriorKind,
    PriorState,
    condition_prior_gp,
    fit_prior_gp,
    fit_prior_models,
    propose_prior_ei,
)
from bolt_pco64.bo.prior.layout import Layout, LayoutDecoder
from bolt_pco64.bo.prior.memory import MEMORY_PARAMETERS, MemoryPriorMean
from bolt_pco64.bo.prior.throughput import (
    THROUGHPUT_PARAMETERS,
    ThroughputPriorMean,
    model_parameters,
    physical_summary,
    sequence_flops,
)

__all__ = [
    "BAD_PRIOR_FACTOR",
    "MEMORY_PARAMETERS",
    "PRIORS",
    "PRIOR_DEFAULTS",
    "STANDIN_CAVEAT",
    "THROUGHPUT_PARAMETERS",
    "Layout",
    "LayoutDecoder",
    "MemoryPriorMean",
    "PhysicalMean",
    "PriorDefaults",
    "PriorKind",
    "PriorQuality",
    "PriorState",
    "ThroughputPriorMean",
    "condition_prior_gp",
    "fit_prior_gp",
    "fit_prior_models",
    "misspecified",
    "model_parameters",
    "physical_summary",
    "propose_prior_ei",
    "sequence_flops",
]
