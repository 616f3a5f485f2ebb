"""The documents: what the package's docstrings cite exists, and the code on
the documentation site's pages runs.

The site itself (built by ``bash .ci/docs``) is tested in a browser by
``tests/test_site.py``; its tutorials are ``examples/*.py``, run during the
build and by ``tests/test_examples.py``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import warnings
from pathlib import Path

import pytest

from bolt_pco64.tables import table as table_module

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"


def _sources() -> list[Path]:
    return sorted((ROOT / "bolt_pco64").rglob("*.py"))


#: Pages the site build writes into docs/ (git ignores them), by the
#: extension that writes them: a link to one is checked against its writer.
GENERATED_PAGES = {
    "results.md": "sphinxext/results_index.py",
    "public-names.md": "sphinxext/api_index.py",
}


def _pages() -> list[Path]:
    """The site's own Markdown pages (not generated, not under results/)."""
    return sorted(p for p in DOCS.glob("*.md") if p.name not in GENERATED_PAGES)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_every_cited_section_of_the_architecture_document_exists() -> None:
    sections = set(re.findall(r"^## (\d+)\. ", ARCHITECTURE.read_text(), re.M))
    cited = {
        (path.name, n)
        for path in _sources()
        for n in re.findall(r"architecture\.md`{0,2} §(\d+)", path.read_text())
    }
    assert cited, "no module cites docs/architecture.md"
    assert {n for _, n in cited} <= sections, sorted(cited)


def test_no_module_cites_a_document_the_package_does_not_ship() -> None:
    offenders = [
        path.name for path in _sources() if "design section" in path.read_text()
    ]
    assert not offenders


def test_every_relative_link_of_a_page_points_at_a_file() -> None:
    """Links between the Markdown pages resolve in the repository too (a code
    host shows them as files); the site build checks the same for the HTML."""
    broken = []
    for page in [ROOT / "README.md", *_pages()]:
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+:", path):
                continue  # an anchor of the page itself, or another site
            if page.parent == DOCS and path in GENERATED_PAGES:
                path = GENERATED_PAGES[path]
            elif path.startswith("tutorials/"):  # generated from examples/
                stem = Path(path).stem
                source = "GALLERY_HEADER.rst" if stem == "index" else f"{stem}.py"
                path = f"../examples/{source}"
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [p for p in _pages() if _python_blocks(p.read_text())],
    ids=lambda p: p.name,
)
def test_the_python_blocks_of_a_page_run_in_order(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's Python blocks run as written, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    table_module.reset_simulated_warnings()
    namespace: dict[str, object] = {"__name__": f"__{page.stem}__"}
    with warnings.catch_warnings():
        # The pages serve the default tables on purpose.
        warnings.simplefilter("ignore", table_module.SimulatedTableWarning)
        warnings.simplefilter("ignore", table_module.ReconstructedTableWarning)
        for i, block in enumerate(_python_blocks(page.read_text())):
            exec(compile(block, f"{page.name}[python block {i}]", "exec"), namespace)


def test_every_markdown_page_of_the_site_starts_its_headings_at_h1() -> None:
    """MyST warns (and the strict site build fails) when a page's first heading
    is not a level-1 one, as a results script's Markdown once was."""
    skip = {"_build", "tutorials", "generated"}
    wrong = []
    for page in sorted(DOCS.rglob("*.md")):
        rel = page.relative_to(DOCS)
        if rel.parts[0] in skip or rel.name in GENERATED_PAGES:
            continue
        text = page.read_text()
        if text.startswith("```{include}"):
            continue  # its first heading is the included file's (README.md)
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        first = re.search(r"^(#+) ", text, flags=re.M)
        if first is not None and len(first.group(1)) != 1:
            wrong.append(f"{rel}: first heading is H{len(first.group(1))}")
    assert not wrong


def test_the_results_index_holds_the_readme_of_every_result_folder_nested_too(
    tmp_path: Path,
) -> None:
    """A README in a nested result folder (``results/optuna/harness/``) is in
    the results page's table of contents: the strict site build fails on a
    page outside every table of contents; other Markdown files are not."""
    spec = importlib.util.spec_from_file_location(
        "results_index", DOCS / "sphinxext" / "results_index.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = tmp_path / "results"
    for rel, title in [
        ("README.md", "All"),
        ("snapping/README.md", "Snapping"),
        ("optuna/harness/README.md", "Harness"),
        ("optuna/harness/summary.md", "Summary"),
    ]:
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        (results / rel).write_text(f"# {title}\n", encoding="utf-8")
    text = module.write_results_index(tmp_path).read_text(encoding="utf-8")
    toctree = text.split("```{toctree}", 1)[1].splitlines()
    assert "results/optuna/harness/README" in toctree
    assert "results/snapping/README" in toctree
    assert "results/optuna/harness/summary" not in toctree
    assert "[Harness](results/optuna/harness/README.md)" in text


#: The Python roles a cross-reference of the site can have.
PY_ROLES = ("mod", "func", "data", "const", "class", "meth", "attr", "exc", "obj")


def _conf_settings() -> dict[str, object]:
    """docs/conf.py's module-level settings that are literals, read without
    running it (running it imports Sphinx and every package)."""
    settings: dict[str, object] = {}
    for node in ast.parse((DOCS / "conf.py").read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    try:
                        settings[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        continue  # not a literal (a call, a name)
    return settings


def _package_names() -> set[str]:
    """Every name a reference to this package's objects can have: each
    module, each object its module defines at the top level (and each member
    of its classes), by full name, by the paths of its packages (re-exports)
    and by short name."""
    names: set[str] = set()
    for path in _sources():
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        packages = [".".join(parts[:i]) for i in range(1, len(parts))]
        names.add(module)
        for node in ast.parse(path.read_text()).body:
            defined: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined.append(node.name)
            elif isinstance(node, ast.Assign):
                defined += [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.append(node.target.id)
            for name in defined:
                names.update({name, f"{module}.{name}"})
                names.update(f"{package}.{name}" for package in packages)
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, ast.FunctionDef):
                        names.add(f"{module}.{node.name}.{member.name}")
                        names.add(f"{node.name}.{member.name}")
    return names


def test_the_site_build_reports_every_unresolved_cross_reference() -> None:
    """``nitpicky``: a Python cross-reference that resolves to nothing is a
    warning, which the strict build (``bash .ci/docs``, ``-W``) makes an error;
    no ``suppress_warnings`` entry hides those warnings."""
    settings = _conf_settings()
    assert settings.get("nitpicky") is True
    suppressed = settings.get("suppress_warnings", [])
    assert isinstance(suppressed, list)
    assert not [s for s in suppressed if s == "ref" or s.startswith("ref.")]


def test_no_nitpick_exception_covers_a_name_of_the_package() -> None:
    """docs/conf.py exempts only other projects' objects (no inventory of theirs
    can be fetched offline): no ``nitpick_ignore`` entry or
    ``nitpick_ignore_regex`` pattern matches a name of this package, so a
    broken reference to one of its objects still fails the build."""
    settings = _conf_settings()
    names = _package_names()
    assert {"bolt_pco64.problem.PCO64", "PCO64", "bolt_pco64.bench.Method"} <= names
    exact = settings.get("nitpick_ignore", [])
    patterns = settings.get("nitpick_ignore_regex", [])
    assert isinstance(exact, list)
    assert isinstance(patterns, list)
    assert patterns, "no nitpick_ignore_regex in docs/conf.py (not a literal?)"
    exempted = [entry for entry in exact if entry[1] in names]
    for kind, target in patterns:
        roles = [f"py:{r}" for r in PY_ROLES if re.fullmatch(kind, f"py:{r}")]
        if roles:
            exempted += [(kind, n) for n in sorted(names) if re.fullmatch(target, n)]
    assert not exempted


def test_no_page_cites_an_internal_issue_number() -> None:
    """Readers of the site have no access to the project's tracker: pages say
    what changed, not which issue asked for it (the CHANGELOG included)."""
    repo = Path(__file__).resolve().parents[1]
    pages = [repo / "README.md", repo / "CHANGELOG.md"]
    generated = {"_build", "generated", "tutorials"}  # written by the site's build
    pages += [
        p
        for p in (repo / "docs").rglob("*.md")
        if not generated & set(p.parts)
        and p.name not in {"results.md", "public-names.md"}
    ]
    pages += list((repo / "examples").glob("*.py"))
    cited = re.compile(r"\bissues? \d+|\(#\d+\)", re.IGNORECASE)
    found = [
        f"{p.relative_to(repo)}:{i}"
        for p in pages
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if cited.search(line)
    ]
    assert found == []
