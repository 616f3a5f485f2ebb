"""Alias of :mod:`bolt_pco64.integrations.ax`, kept so ``bolt_pco64.ax`` imports.

The Ax adapter lives in :mod:`bolt_pco64.integrations.ax`; its framework-neutral
pieces in :mod:`bolt_pco64.integrations.common`. Needs the ``ax`` extra.
"""

from __future__ import annotations

from bolt_pco64.integrations.ax import *  # noqa: F403
from bolt_pco64.integrations.ax import __all__ as __all__
