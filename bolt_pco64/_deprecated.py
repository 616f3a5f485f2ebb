"""Deprecated names kept importable for a while (0.x), with a warning.

A module lists its deprecated names with what replaces them and gets a PEP
562 module ``__getattr__`` that returns the old value with a
``DeprecationWarning``. The names and their removal are listed in
``CHANGELOG.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

__all__ = ["deprecated_names"]


def deprecated_names(
    module: str, names: Mapping[str, tuple[Callable[[], object], str]]
) -> Callable[[str], object]:
    """A module ``__getattr__`` serving ``names``: ``old -> (value, replacement)``.

    Args:
        module: The module's name (in the warning).
        names: For each deprecated name, a function returning its value (so
            nothing is computed until it is used) and what to use instead.
    """

    def __getattr__(name: str) -> object:
        entry = names.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value, replacement = entry
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in a future "
            f"0.x release; use {replacement}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return value()

    return __getattr__
