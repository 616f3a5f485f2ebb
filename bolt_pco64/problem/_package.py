"""The problem's names belong to the package, whichever module defines them."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["PACKAGE", "in_package"]

#: Where the problem's names are imported from, documented and pickled.
PACKAGE = "bolt_pco64.problem"

_T = TypeVar("_T")


def in_package(obj: _T) -> _T:
    """Give a class or function :data:`PACKAGE` as its ``__module__``.

    numpy's ``set_module``: the objects users import from
    :mod:`bolt_pco64.problem` are documented once, on its page of the API
    reference (the paths they had when it was one module), and a pickle
    names them there, so a problem pickled before it became a package (its
    class, its forward hooks) still loads. As with numpy's, ``inspect`` then
    looks for a class's source in the package's ``__init__.py``.

    Returns:
        ``obj`` itself.
    """
    obj.__module__ = PACKAGE
    return obj
