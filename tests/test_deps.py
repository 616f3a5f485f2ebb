"""The declared dependencies: the oldest-allowed constraints that CI installs are
pyproject.toml's lower bounds, and every package the code imports is declared
(an extra's only where that extra is used)."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bolt_pco64"

#: The distribution that declares an import whose name differs from it, for
#: environments without that extra (CI's oldest-allowed run installs Ax last).
IMPORT_NAMES = {"ax": "ax-platform", "distributed": "dask"}


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "min_constraints", ROOT / ".ci" / "min_constraints.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


min_constraints = _load_script()

TINY = """
[project]
name = "bolt_pco64"
dependencies = [
    "Foo_Bar>=1.2",
    "baz[fast]>=0.5,<1",
    "qux==3.0",
    "old>=9; python_version < '3'",
]

[project.optional-dependencies]
extra = ["foo-bar>=1.4", "ext~=2.1"]
more = ["ext>=2"]
all = ["bolt_pco64[extra,more]", "tool==1"]
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    path = tmp_path / "pyproject.toml"
    path.write_text(TINY, encoding="utf-8")
    assert min_constraints.main(["--pyproject", str(path), *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_core_lower_bounds_become_pins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, capsys) == ["baz==0.5", "foo-bar==1.2", "qux==3.0"]


def test_an_extra_raises_a_repeated_name_to_its_highest_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _run(tmp_path, capsys, "--extras", "extra,more", "--skip", "qux")
    assert lines == ["baz==0.5", "ext==2.1", "foo-bar==1.4"]


def test_only_extras_leaves_the_core_and_the_package_itself_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _run(tmp_path, capsys, "--extras", "all", "--only-extras")
    assert lines == ["tool==1"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [("nobound<2", "got 0"), ("two>=1,==1.5", "got 2")],
)
def test_a_requirement_without_one_lower_bound_is_refused(
    line: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(f'[project]\ndependencies = ["{line}"]\n', encoding="utf-8")
    assert min_constraints.main(["--pyproject", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert line.split("<")[0].split(">")[0] in err
    assert problem in err


def test_an_unknown_extra_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(TINY, encoding="utf-8")
    assert min_constraints.main(["--pyproject", str(path), "--extras", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err


# -- the real pyproject.toml ---------------------------------------------------


def _pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def _runtime_extras(project: dict) -> list[str]:
    """The extras that add features (not the developer tools: tests, lint, docs)."""
    tools = ("test", "dev", "docs")
    return [e for e in project["optional-dependencies"] if e not in tools]


def test_every_runtime_requirement_has_a_lower_bound_to_pin() -> None:
    pyproject = _pyproject()
    for extra in [None, *_runtime_extras(pyproject["project"])]:
        reqs = min_constraints.requirements(
            pyproject, [extra] if extra else [], core=extra is None
        )
        assert reqs, extra
        for req in reqs:
            min_constraints.lower_bound(req)  # raises if there is none


def _imports(path: Path) -> list[tuple[str, bool]]:
    """``(top-level name, at import time?)`` of each absolute import in ``path``.

    Imports inside functions and ``if TYPE_CHECKING:`` blocks are not run when
    the module is imported.
    """
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, eager: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = eager
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = False
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(
                child.test
            ):
                for sub in child.body:
                    visit(ast.Module(body=[sub], type_ignores=[]), False)
                for sub in child.orelse:
                    visit(ast.Module(body=[sub], type_ignores=[]), eager)
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name.split(".")[0], eager) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                assert child.module is not None
                found.append((child.module.split(".")[0], eager))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def test_import_walker_tells_eager_from_lazy_imports(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "import a.b\nfrom c import d\nfrom . import e\n"
        "if TYPE_CHECKING:\n    import f\nelse:\n    import g\n"
        "def h():\n    import i\n",
        encoding="utf-8",
    )
    assert sorted(_imports(path)) == [
        ("a", True),
        ("c", True),
        ("f", False),
        ("g", True),
        ("i", False),
    ]


def _distributions(req: Requirement) -> set[str]:
    """``req``'s distribution and, where installed, those its extras bring."""
    names = {canonicalize_name(req.name)}
    for extra in req.extras:
        try:
            brought = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in brought:
            sub = Requirement(line)
            if sub.marker is not None and sub.marker.evaluate({"extra": extra}):
                names.add(canonicalize_name(sub.name))
    return names


def test_every_imported_package_is_declared_and_extras_only_in_their_modules() -> None:
    project = _pyproject()["project"]
    core = set().union(
        *(_distributions(Requirement(r)) for r in project["dependencies"])
    )
    extras = {
        extra: set().union(
            *(
                _distributions(Requirement(r))
                for r in project["optional-dependencies"][extra]
            )
        )
        for extra in _runtime_extras(project)
    }
    installed = importlib.metadata.packages_distributions()
    ignored = {*sys.stdlib_module_names, "bolt_pco64", "__future__"}
    problems: set[str] = set()
    files = sorted(PACKAGE.rglob("*.py"))
    assert files
    for path in files:
        where = path.relative_to(ROOT)
        for name, eager in _imports(path):
            if name in ignored:
                continue
            dists = {
                canonicalize_name(d)
                for d in installed.get(name, [IMPORT_NAMES.get(name, name)])
            }
            if dists & core:
                continue
            owners = [e for e, names in extras.items() if dists & names]
            if not owners:
                problems.add(f"{where}: {name} ({', '.join(sorted(dists))}) undeclared")
            elif eager and path.stem not in owners:
                problems.add(
                    f"{where}: {name} from extra {owners} imported at module level "
                    "outside a module named after the extra"
                )
    assert not problems, "\n".join(sorted(problems))
