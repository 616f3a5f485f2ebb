"""The API page's table of public names, written from the packages' ``__all__``.

``from bolt_pco64 import PCO64`` and ``from bolt_pco64.bench import
run_comparison`` are how users import; the reference documents each object
once, under the module that defines it. :func:`write_public_names` lists
every name of the importable packages' ``__all__`` with a link to that
definition, so the list cannot drift from the code.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types
from pathlib import Path

#: Packages documented as one page: their ``__all__`` is documented on the
#: package's page (the paths users import and cite, e.g.
#: ``bolt_pco64.problem.PCO64``), their modules' pages hold each module's
#: docstring and the names the package's ``__all__`` leaves out
#: (:func:`own_page_names`), and source links follow each object to the
#: module that defines it.
DOCUMENTED_AT_PACKAGE: tuple[str, ...] = ("bolt_pco64.problem",)

#: The packages users import public names from, in the order of the page.
PACKAGES: tuple[str, ...] = (
    "bolt_pco64",
    "bolt_pco64.bench",
    "bolt_pco64.bo",
    "bolt_pco64.bo.prior",
)


def _defining_module(package: str, name: str, obj: object) -> str:
    """The module that defines ``obj``: its ``__module__`` when that is one of
    the package's, else the deepest module of the package that lists ``name``
    in its ``__all__`` (constants have no ``__module__``)."""
    own = getattr(obj, "__module__", None)
    if isinstance(own, str) and own.startswith("bolt_pco64"):
        return documented_module(own)
    pkg = importlib.import_module(package)
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(info.name)
    holders = [
        mod.__name__
        for mod_name, mod in list(sys.modules.items())
        if mod_name.startswith(f"{package}.")
        and name in getattr(mod, "__all__", ())
        and getattr(mod, name, None) is obj
    ]
    return max(holders, key=lambda m: m.count("."), default=package)


def documented_module(module: str) -> str:
    """Where the reference documents an object that ``module`` defines: the
    package of :data:`DOCUMENTED_AT_PACKAGE` holding ``module``, else
    ``module`` itself."""
    for package in DOCUMENTED_AT_PACKAGE:
        if module.startswith(f"{package}."):
            return package
    return module


def own_page_names() -> dict[str, list[str]]:
    """For each module of a package of :data:`DOCUMENTED_AT_PACKAGE`, the
    names of its ``__all__`` that the package's ``__all__`` does not list
    (``bolt_pco64.problem.arguments.TableLike``, the constructor's argument
    types): documented on the module's own page, so that every public name
    is documented somewhere."""
    names: dict[str, list[str]] = {}
    for package in DOCUMENTED_AT_PACKAGE:
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__, prefix=f"{package}."):
            if info.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            module = importlib.import_module(info.name)
            own = [n for n in getattr(module, "__all__", ()) if n not in pkg.__all__]
            if own:
                names[info.name] = own
    return names


def shadowed_modules(package: str = "bolt_pco64") -> tuple[str, ...]:
    """The modules whose name their package gives to another object, as
    ``bolt_pco64.tables.simulate.calibrate`` is both a module and the function the
    package imports from it. autosummary documents the object under the
    module's page name; the ``autosummary/function.rst`` template documents
    the module there instead."""
    pkg = importlib.import_module(package)
    shadowed = []
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        parent, _, leaf = info.name.rpartition(".")
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        # getattr, as autosummary resolves the name: a lazily-exporting
        # package (lazy_loader.attach_stub) gives the object it exports under
        # that name even once the module of the same name is imported
        # (bolt_pco64.bench.regenerate).
        obj = getattr(sys.modules[parent], leaf, None)
        if obj is not None and not isinstance(obj, types.ModuleType):
            shadowed.append(info.name)
    return tuple(shadowed)


def write_public_names(docs: Path) -> Path:
    """Write ``docs/public-names.md`` (generated, not committed)."""
    lines = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        lines += [f"### `{package}`", "", "| name | defined in |", "|---|---|"]
        for name in sorted(module.__all__, key=str.lower):
            if name.startswith("_"):
                continue
            home = _defining_module(package, name, getattr(module, name))
            target = f"{home}.{name}"
            lines.append(f"| {{py:obj}}`{name} <{target}>` | `{home}` |")
        lines.append("")
    text = "\n".join(lines)
    target = docs / "public-names.md"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return target
