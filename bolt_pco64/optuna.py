"""Alias of :mod:`bolt_pco64.integrations.optuna`: ``from bolt_pco64.optuna import PCOProblem``.

The Optuna adapter lives in :mod:`bolt_pco64.integrations.optuna`; its
framework-neutral pieces in :mod:`bolt_pco64.integrations.common`. Needs the
``optuna`` extra.
"""

from __future__ import annotations

from bolt_pco64.integrations.optuna import *  # noqa: F403
from bolt_pco64.integrations.optuna import __all__ as __all__
from bolt_pco64.integrations.optuna import __getattr__ as __getattr__
