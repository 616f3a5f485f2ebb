"""``docs/architecture.md`` names every module of the package (section 5's tree)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bolt_pco64"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


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
