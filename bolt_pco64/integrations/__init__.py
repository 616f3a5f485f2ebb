"""Adapters of the pco problems to optimisation frameworks (optional extras).

- :mod:`bolt_pco64.integrations.common`: the framework-neutral pieces every
  adapter shares (the problem factory, parameters and their rows, the crash
  vocabulary and placeholder policy, evaluations and run lengths, the
  ask-and-tell bridge and its harness method, the expected best of random
  rows); imports no framework.
- :mod:`bolt_pco64.integrations.ax`: Ax benchmark problems (the ``ax`` extra).
- :mod:`bolt_pco64.integrations.optuna`: OptunaHub benchmark problems and
  Optuna's samplers as harness methods (the ``optuna`` extra).

Importing this package imports no framework and does no work.
"""
