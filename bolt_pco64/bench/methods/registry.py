"""Where a comparison finds its methods by name: built-in, registered, entry points.

Three sources, looked up in this order:

- the methods registered in this process with :func:`register_method`
  (a registered name, a built-in one included, takes precedence);
- the built-in methods (:data:`~bolt_pco64.bench.methods.catalog.BUILTINS`);
- the entry points of other packages in the group
  :data:`~bolt_pco64.bench.contract.ENTRY_POINT_GROUP` (``bolt_pco64.methods``), e.g. in
  a distribution's ``pyproject.toml``::

      [project.entry-points."bolt_pco64.methods"]
      lowest_memory_first = "my_package.methods:LowestMemoryFirst"

  which makes ``lowest_memory_first`` a method of ``bolt-pco64 bench
  --methods`` (and of its ``--help``). The object named is a
  :class:`~bolt_pco64.bench.contract.Method` instance, a ``Method`` subclass
  (instantiated without arguments) or a function.

:data:`METHODS` is a read-only view of the first two. :func:`method_registry`
returns a new read-only mapping of all three (:class:`MethodRegistry`): its
entry points are listed without being imported and one is loaded, into that
mapping alone, when it is looked up; nothing global changes on a lookup.

Every function that looks a method up takes ``registry=`` (Ax's style): a mapping of
names to methods (a :class:`~bolt_pco64.bench.contract.Method` or a function), ``None``
for :func:`method_registry`'s. So a caller can run a comparison on methods of its own
without registering anything::

    get_method("mine", registry={"mine": my_method})
"""

from __future__ import annotations

import re
from collections import ChainMap, Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, overload

from bolt_pco64.bench.contract import (
    ENTRY_POINT_GROUP,
    Method,
    MethodFn,
    as_method,
    method_entry_points,
)
from bolt_pco64.bench.methods.catalog import BUILTIN_METHODS
from bolt_pco64.params import POSITIVE_INT, check_param

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "METHODS",
    "MethodRegistry",
    "check_methods",
    "get_method",
    "method_names",
    "method_registry",
    "register_method",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

#: The methods registered in this process (by :func:`register_method` only).
_registered: dict[str, Method] = {}

#: The registered and the built-in methods by name, read-only (a registered
#: name replaces a built-in one; built-in names first, in their order).
METHODS: Mapping[str, Method] = MappingProxyType(ChainMap(_registered, BUILTIN_METHODS))


class MethodRegistry(Mapping[str, Method]):
    """Methods by name, with entry points loaded when looked up.

    Names iterate as ``methods``' then the entry points' (sorted) that
    ``methods`` lacks. Looking an entry point up loads it into this mapping
    alone (a second look-up returns the same method); ``in`` and iteration
    load nothing.

    Args:
        methods: Methods (or functions, wrapped) by name.
        entry_points: Entry points by name, not loaded; a name that is not a
            simple file-safe one is left out.
    """

    def __init__(
        self,
        methods: Mapping[str, object],
        entry_points: Mapping[str, EntryPoint] | None = None,
    ) -> None:
        self._methods = methods
        self._entry_points = {
            name: ep
            for name, ep in sorted((entry_points or {}).items())
            if name not in methods and _NAME.match(name)
        }
        self._loaded: dict[str, Method] = {}

    def __getitem__(self, name: str) -> Method:
        if name in self._methods:
            return as_method(self._methods[name])
        if name in self._loaded:
            return self._loaded[name]
        ep = self._entry_points[name]  # KeyError for an unknown name
        try:
            method = as_method(ep.load())
            _check_n_init(name, method.n_init)
        except Exception as err:
            raise ValueError(
                f"Expected entry point {name!r} of {ENTRY_POINT_GROUP!r} to load "
                f"a method, got {type(err).__name__}: {err} (from {ep.value!r})."
            ) from err
        self._loaded[name] = method
        return method

    def __contains__(self, name: object) -> bool:
        return name in self._methods or name in self._entry_points

    def __iter__(self) -> Iterator[str]:
        yield from self._methods
        yield from self._entry_points

    def __len__(self) -> int:
        return len(self._methods) + len(self._entry_points)

    def entry_point(self, name: str) -> EntryPoint | None:
        """The entry point ``name`` is loaded from, ``None`` for the others."""
        return self._entry_points.get(name)


def method_registry() -> MethodRegistry:
    """A new read-only mapping of every method a comparison may name: the
    registered and built-in ones (:data:`METHODS`), then the entry points'
    (sorted, none imported until looked up)."""
    return MethodRegistry(METHODS, method_entry_points())


def _resolve(registry: Mapping[str, object] | None) -> Mapping[str, object]:
    return method_registry() if registry is None else registry


@overload
def register_method(
    name: str, fn: None = None, *, n_init: int | None = None
) -> Callable[[MethodFn], MethodFn]: ...


@overload
def register_method(name: str, fn: object, *, n_init: int | None = None) -> object: ...


def register_method(
    name: str, fn: object | None = None, *, n_init: int | None = None
) -> object:
    """Register a method under ``name``; usable as a decorator or a function.

    ``register_method("mine", fn)`` or ``@register_method("mine")``. ``fn`` is a
    :class:`~bolt_pco64.bench.contract.Method` (instance or subclass) or a function
    ``fn(ctx: RunContext) ->`` ``q`` distinct untried row indices (a long tensor or a
    sequence of ints) or a ``q x d`` floating tensor of points in the box (snapped by
    the harness). Re-registering a name replaces it.

    Args:
        name: A file-safe name (letters, digits, ``_``, ``.``, ``-``).
        fn: The method; omitted, a decorator is returned.
        n_init: A function's own initial-design size (a
            :class:`~bolt_pco64.bench.contract.Method` states it as its ``n_init``
            attribute).

    Returns:
        ``fn`` itself (or the decorator), so a decorated function stays a
        function.

    Raises:
        ValueError: If ``name`` is not a simple file-safe name, or ``n_init``
            is neither ``None`` nor an integer ``>= 1``.
        TypeError: If ``fn`` is neither a :class:`~bolt_pco64.bench.contract.Method` nor
            callable.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"Expected a method name of letters, digits, '_', '.', '-', got {name!r}."
        )

    def add(f: object) -> object:
        method = as_method(f, n_init)
        _check_n_init(name, method.n_init)
        _registered[name] = method
        return f

    return add(fn) if fn is not None else add


def _check_n_init(name: str, n_init: object) -> None:
    if n_init is not None:
        check_param(f"n_init of method {name!r}", n_init, POSITIVE_INT)


def method_names(registry: Mapping[str, object] | None = None) -> list[str]:
    """Every method a comparison may name, in ``registry``'s order (default:
    :func:`method_registry`'s: registered and built-in, then entry points),
    nothing imported."""
    return list(_resolve(registry))


def get_method(name: str, registry: Mapping[str, object] | None = None) -> Method:
    """The method named ``name`` in ``registry`` (default: :func:`method_registry`'s,
    loading an entry point if needed).

    Raises:
        ValueError: If no method has that name, or its entry point cannot be
            loaded or names no method.
    """
    methods = _resolve(registry)
    if not isinstance(name, str) or name not in methods:
        raise ValueError(f"Expected a method in {list(methods)}, got {name!r}.")
    return as_method(methods[name])


def check_methods(
    methods: Sequence[str], registry: Mapping[str, object] | None = None
) -> list[str]:
    """``methods``, in order, each loaded (:func:`get_method`).

    Raises:
        ValueError: If it is empty, names a method twice, names an unknown
            method or an entry point that does not load.
    """
    found = _resolve(registry)
    names = list(methods)
    repeated = [m for m, n in Counter(names).items() if n > 1]
    if repeated:
        raise ValueError(
            f"Expected distinct methods, got {', '.join(map(repr, repeated))} "
            "more than once."
        )
    unknown = [m for m in names if m not in found]
    if not names or unknown:
        raise ValueError(
            f"Expected methods from {sorted(found)}, got {unknown or names!r}."
        )
    for m in names:
        get_method(m, found)
    return names
