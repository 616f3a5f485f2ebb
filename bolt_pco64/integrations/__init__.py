"""Adapters of the pco problems to optimisation frameworks (optional extras).

- :mod:`bolt_pco64.integrations.common`: the framework-neutral pieces every
  adapter shares (row of a parameter assignment, knob levels, the expected best
  of random rows, run lengths); imports no framework.
- :mod:`bolt_pco64.integrations.ax`: Ax benchmark problems (the ``ax`` extra).
- :mod:`bolt_pco64.integrations.optuna`: OptunaHub benchmark problems and
  Optuna's samplers as harness methods (the ``optuna`` extra).

Importing this package imports no framework and does no work.
"""
