"""Bayesian-optimisation building blocks for the constrained pco problems.

- :mod:`bolt_pco64.bo.gp`: the exact GPs (objective on feasible observations,
  constraint GP on the memory margin), the constrained qLogNEI/qLogEI and
  Thompson-sampling proposals over a discrete candidate set, and
  :class:`~bolt_pco64.bo.gp.ProposalContext`, what every proposal of a step
  reads (observations, choices, ``q``, seed, configurations in flight);
- :mod:`bolt_pco64.bo.feasibility`: crash models of the hidden constraint: a
  GP classifier of ``ran_successfully`` and a censored (Tobit) margin model,
  each giving the probability of feasibility; the crash methods' defaults;
- :mod:`bolt_pco64.bo.crash`: methods built for the crash (hidden) constraint:
  the classifier or the censored margin model, or a
  probability-of-feasibility threshold, each with LogEI on the objective GP.

Every public name of these modules is importable from here. The package
:mod:`bolt_pco64.bo.prior` (GPs whose prior means are learnable performance
models, and ``propose_prior_ei``) is imported from there.
"""

from bolt_pco64.bo.crash import (
    CrashAwareState,
    propose_censored_logei,
    propose_classifier_logei,
    propose_pof_threshold,
    recommend,
)
from bolt_pco64.bo.feasibility import (
    CRASH_DEFAULTS,
    CensoredGaussianLikelihood,
    CensoredMarginGP,
    CrashDefaults,
    CrashModel,
    FeasibilityClassifier,
    dirichlet_targets,
    fit_censored_margin,
    fit_feasibility_classifier,
    log_prob_feasible,
)
from bolt_pco64.bo.gp import (
    FIT_OPTIONS,
    MC_SAMPLES,
    AcquisitionKind,
    ConstrainedModels,
    ProposalContext,
    acquisition_function,
    copy_parameters,
    fit_constrained_models,
    fit_gp,
    propose_acquisition,
    propose_thompson,
    safe_bounds,
    select_discrete,
)

__all__ = [
    "CRASH_DEFAULTS",
    "FIT_OPTIONS",
    "MC_SAMPLES",
    "AcquisitionKind",
    "CensoredGaussianLikelihood",
    "CensoredMarginGP",
    "ConstrainedModels",
    "CrashAwareState",
    "CrashDefaults",
    "CrashModel",
    "FeasibilityClassifier",
    "ProposalContext",
    "acquisition_function",
    "copy_parameters",
    "dirichlet_targets",
    "fit_censored_margin",
    "fit_constrained_models",
    "fit_feasibility_classifier",
    "fit_gp",
    "log_prob_feasible",
    "propose_acquisition",
    "propose_censored_logei",
    "propose_classifier_logei",
    "propose_pof_threshold",
    "propose_thompson",
    "recommend",
    "safe_bounds",
    "select_discrete",
]
