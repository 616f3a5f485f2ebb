"""The package's layout: ``docs/architecture.md`` names every module (section 5's
tree), the imports between modules make no circle, data flows one way, and the
package imports and runs nothing of the checkout's ``benchmarks/``.

The import graph is read with :mod:`ast`, so an import inside a function or
under ``if TYPE_CHECKING:`` counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bolt_pco64"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BENCHMARKS = ROOT / "benchmarks"

#: The layers, lowest first (docs/architecture.md section 5: instance -> tables ->
#: snap -> problem -> bo -> bench, with integrations and cli on top). A module
#: may import from its own layer and the layers below it, never from above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_io", "_stack", "params"),
    ("instances", "instance_file"),
    ("tables",),
    ("snap",),
    ("problem",),
    ("bo",),
    ("bench",),
    ("integrations",),
    ("cli", "__main__"),
)


def _layout_tree() -> list[str]:
    """The indented block of section 5 that starts at ``bolt_pco64/``."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = re.search(r"^## 5\. .*?(?=^## )", text, re.M | re.S)
    assert section, "docs/architecture.md has no section 5"
    lines = section.group(0).splitlines()
    start = lines.index("    bolt_pco64/")
    block = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        block.append(line)
    return block


def named_modules(tree: list[str]) -> set[str]:
    """The paths (relative to the package) the tree names: an entry is a
    name at the start of a line, ``name/`` a folder holding the entries
    indented below it; continuation lines start past the name column."""
    folders: list[tuple[int, str]] = []  # (indent, name) of the open folders
    named: set[str] = set()
    for line in tree[1:]:
        m = re.match(r"^( +)(\S+)", line)
        if m is None:
            continue
        indent, name = len(m.group(1)), m.group(2)
        if not (name.endswith("/") or name.endswith(".py")):
            continue  # a description's continuation line
        while folders and folders[-1][0] >= indent:
            folders.pop()
        path = "/".join([*(f for _, f in folders), name.rstrip("/")])
        if name.endswith("/"):
            folders.append((indent, name.rstrip("/")))
        else:
            named.add(path)
    return named


def test_the_tree_reader_follows_folders_and_skips_descriptions() -> None:
    tree = [
        "    bolt_pco64/",
        "      a.py          one",
        "                    two, not a module.py",
        "      sub/          a folder",
        "        b.py        three",
        "        deeper/",
        "          c.py      four",
        "      d.py          five",
    ]
    assert named_modules(tree) == {"a.py", "sub/b.py", "sub/deeper/c.py", "d.py"}


def test_the_architecture_document_names_every_module() -> None:
    modules = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}
    named = named_modules(_layout_tree())
    assert not modules - named, (
        f"modules missing from docs/architecture.md section 5: "
        f"{sorted(modules - named)}"
    )
    assert not named - modules, (
        f"docs/architecture.md section 5 names modules that do not exist: "
        f"{sorted(named - modules)}"
    )


# -- the import graph ------------------------------------------------------------


def _modules(package: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of ``package`` (a package is its
    ``__init__.py``)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def lazy_exports(package: str, init: Path) -> dict[str, str]:
    """A lazily-exporting package's public names -> their defining modules, read
    from the stub beside its ``__init__.py`` (``__init__.pyi``, which
    ``lazy_loader.attach_stub`` reads: ``from .module import Name``); empty for
    a package without one."""
    stub = init.with_suffix(".pyi")
    if not stub.is_file():
        return {}
    exports = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                exports[alias.asname or alias.name] = f"{package}.{node.module}"
    return exports


def import_graph(modules: Mapping[str, Path], root: str) -> dict[str, set[str]]:
    """Module -> the modules of ``root`` it imports, anywhere in its body
    (``from package import Name`` of a lazy export, declared in the package's
    ``__init__.pyi``, counts as the module that defines it)."""
    exports = {
        package: lazy_exports(package, path)
        for package, path in modules.items()
        if path.name == "__init__.py"
    }

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = module.split(".")[: None if is_package else -1]
                    here = here[: len(here) - node.level + 1]
                    base = ".".join([*here, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if alias.name in exports.get(base, {}):
                        targets.append(exports[base][alias.name])
                    else:
                        targets.append(sub if sub in modules else base)
            for target in targets:
                if target.split(".")[0] == root:
                    found = resolve(target)
                    if found is not None and found != module:
                        graph[module].add(found)
    return graph


def import_circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def layer_of(module: str, root: str = "bolt_pco64") -> int | None:
    """The index in :data:`LAYERS` of ``module``'s layer, ``None`` if it has none."""
    name = module.removeprefix(root + ".")
    for i, layer in enumerate(LAYERS):
        if any(name == top or name.startswith(top + ".") for top in layer):
            return i
    return None


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import from a higher layer (or of a module in no layer)."""
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            low, high = layer_of(module), layer_of(target)
            if low is None or high is None or high > low:
                found.append(f"{module} -> {target}")
    return found


def _write(folder: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_graph_reader_sees_imports_inside_functions(tmp_path: Path) -> None:
    _write(
        tmp_path / "pkg",
        {
            "__init__.py": "import lazy_loader\n",
            "__init__.pyi": "from .c import Thing as Thing\n",
            "a.py": "def f():\n    from pkg import b\n",
            "b.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from .a import f\n",
            "c.py": "import pkg.sub.d\n",
            "sub/__init__.py": "",
            "sub/__init__.pyi": "from .deeper.e import Deep as Deep\n",
            "sub/d.py": "from pkg import Thing\nimport os\n",
            "sub/deeper/__init__.py": "",
            "sub/deeper/e.py": "",
            "f.py": "from .sub import Deep\n",
        },
    )
    graph = import_graph(_modules(tmp_path / "pkg"), "pkg")
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == {"pkg.sub.d"}
    assert graph["pkg.sub.d"] == {"pkg.c"}
    assert graph["pkg.f"] == {"pkg.sub.deeper.e"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub.d"]]


def test_the_layers_name_every_module() -> None:
    unplaced = [
        m for m in _modules(PACKAGE) if m != "bolt_pco64" and layer_of(m) is None
    ]
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"
    assert layer_of("bolt_pco64.tables.table") < layer_of("bolt_pco64.problem.base")  # type: ignore[operator]
    assert upward_imports({"bolt_pco64.tables.table": {"bolt_pco64.bench.loop"}})


def test_no_import_circle_between_modules() -> None:
    circles = import_circles(import_graph(_modules(PACKAGE), "bolt_pco64"))
    assert not circles, f"import circles (function-level imports included): {circles}"


def test_data_flows_one_way() -> None:
    up = upward_imports(import_graph(_modules(PACKAGE), "bolt_pco64"))
    assert not up, f"imports from a higher layer (LAYERS): {up}"


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of ``tree`` that are not docstrings or comments-as-strings."""
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in prose
    ]


@pytest.mark.parametrize(
    "path",
    sorted(PACKAGE.rglob("*.py")),
    ids=lambda p: p.relative_to(PACKAGE).as_posix(),
)
def test_the_package_neither_imports_nor_runs_the_checkouts_benchmarks(
    path: Path,
) -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} | {"benchmarks"}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ] + [
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    ]
    assert not scripts & set(imported)
    named = [s.value for s in _code_strings(tree) if "benchmarks" in s.value]
    assert not named, f"{path.relative_to(ROOT)} names benchmarks/ in code: {named}"


#: The longest function the package holds (issue: no function over 80 lines).
MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function in ``source`` longer than ``limit``
    lines, its decorators and docstring included."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_length_reader_counts_nested_and_async_functions() -> None:
    def body(indent: int) -> str:
        return "\n".join(" " * indent + f"x{i} = {i}" for i in range(5))

    source = (
        f"def short():\n{body(4)}\n\n"
        f"async def outer():\n    def inner():\n{body(8)}\n{body(8)}\n{body(4)}\n"
    )
    # short: 6 lines; inner: 11; outer: 17 (its own line, inner's 11, 5 more).
    assert long_functions(source, 10) == [("outer", 17), ("inner", 11)]
    assert long_functions(source, 17) == []


def test_no_function_is_longer_than_eighty_lines() -> None:
    found = {
        f"{path.relative_to(PACKAGE).as_posix()}:{name}": lines
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, lines in long_functions(
            path.read_text(encoding="utf-8"), MAX_FUNCTION_LINES
        )
    }
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines: {found}"
