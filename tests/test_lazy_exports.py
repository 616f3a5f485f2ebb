"""The lazily-exporting packages: each one's public names are those of its
``__init__.pyi`` (``lazy_loader.attach_stub``), so a type checker reading the
stub sees the very objects that ``from package import Name`` gives, and
importing a package loads none of the heavy libraries behind its names."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bolt_pco64"

#: The packages whose ``__init__.py`` attaches its stub.
LAZY = (
    "bolt_pco64",
    "bolt_pco64.bench",
    "bolt_pco64.bench.protocol",
    "bolt_pco64.tables.reconstruct",
)

#: Names a package defines itself, declared in its stub but not imported.
OWN = {"bolt_pco64": ("__version__",)}

#: What importing a lazy package must not load (the point of its laziness).
HEAVY = ("torch", "botorch", "gpytorch", "linear_operator", "scipy", "statsmodels")


def _stub(package: str) -> Path:
    return PACKAGE.joinpath(*package.split(".")[1:], "__init__.pyi")


def _stub_imports(package: str) -> list[tuple[str, ast.alias]]:
    """``(module relative to package, alias)`` of each import of the stub."""
    tree = ast.parse(_stub(package).read_text(encoding="utf-8"))
    return [
        (node.module or "", alias)
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


def test_every_package_with_a_stub_is_listed() -> None:
    stubs = {".".join(p.parent.relative_to(ROOT).parts) for p in PACKAGE.rglob("*.pyi")}
    assert stubs == set(LAZY)


@pytest.mark.parametrize("package", LAZY)
def test_the_stub_holds_only_what_the_loader_and_type_checkers_read(
    package: str,
) -> None:
    """Relative ``from .module import Name as Name`` lines (``lazy_loader``
    refuses others; ``as Name`` re-exports the name to a type checker, PEP 484)
    and annotations of the package's own names; anything else would be read by
    a type checker but ignored at run time."""
    tree = ast.parse(_stub(package).read_text(encoding="utf-8"))
    body = tree.body
    if body and isinstance(body[0], ast.Expr):
        body = body[1:]  # the docstring
    own = []
    for node in body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1, ast.unparse(node)
            assert node.module, ast.unparse(node)
            for alias in node.names:
                assert alias.asname == alias.name, ast.unparse(node)
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            own.append(ast.unparse(node.target))
        else:
            pytest.fail(
                f"Expected imports and annotations in {package}'s stub, "
                f"got {ast.unparse(node)!r}"
            )
    assert own == list(OWN.get(package, ()))


@pytest.mark.parametrize("package", LAZY)
def test_all_is_the_stubs_names(package: str) -> None:
    names = [alias.name for _, alias in _stub_imports(package)]
    assert len(names) == len(set(names)), "a name is declared twice"
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted([*names, *OWN.get(package, ())])
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", LAZY)
def test_each_name_is_the_object_its_stub_module_defines(package: str) -> None:
    """What a type checker reads for ``Name`` (the stub's module's ``Name``) is
    what the package gives, on first and on later use."""
    module = importlib.import_module(package)
    for where, alias in _stub_imports(package):
        defining = importlib.import_module(f"{package}.{where}")
        assert hasattr(defining, alias.name), f"{package}.{where}.{alias.name}"
        expected = getattr(defining, alias.name)
        assert getattr(module, alias.name) is expected, alias.name
        assert getattr(module, alias.name) is expected, alias.name  # cached
    with pytest.raises(AttributeError):
        getattr(module, "no_such_name")  # noqa: B009


def test_the_version_is_a_string() -> None:
    import bolt_pco64

    assert isinstance(bolt_pco64.__version__, str)
    assert bolt_pco64.__version__


@pytest.mark.parametrize("package", LAZY)
def test_importing_the_package_loads_nothing_heavy(package: str) -> None:
    """One fresh interpreter per package: its public names stay unloaded."""
    code = (
        f"import sys, {package}\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
        f"print(sorted(m for m in sys.modules if m.startswith('{package}.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    heavy, submodules = (ast.literal_eval(line) for line in out.stdout.splitlines())
    assert heavy == []
    loaded = {m.removeprefix(f"{package}.") for m in submodules}
    declared = {where for where, _ in _stub_imports(package)}
    assert not loaded & declared, loaded & declared
