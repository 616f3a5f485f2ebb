"""The Optuna adapter under its short name: :mod:`bolt_pco64.integrations.optuna`.

``from bolt_pco64.optuna import PCOProblem`` (the optional ``optuna`` extra).
"""

from bolt_pco64.integrations.optuna import *  # noqa: F403
from bolt_pco64.integrations.optuna import __all__  # noqa: F401
