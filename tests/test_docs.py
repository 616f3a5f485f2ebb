"""The documents the package's docstrings cite exist and hold what they cite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _sources() -> list[Path]:
    return sorted((ROOT / "bolt_pco64").rglob("*.py"))


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
