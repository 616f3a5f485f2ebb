"""The site's results section, written from the folders of ``docs/results/``.

Each committed result keeps its own ``README.md`` (with its plots and the
command that made it) beside its files; the site shows those files as they
are in the checkout. :func:`write_results_index` lists them in
``docs/results.md`` (generated, not committed) when the site is built, so a
result added or rerun appears without editing the site.
"""

from __future__ import annotations

from pathlib import Path

INTRO = """\
# Results

Every result committed under `docs/results/`, shown as its folder holds it
(the page of each result is that folder's `README.md`, with its plots and
the command that made it; this list is made from the folders when the site is
built). The numbers are measurements on the table named in each result:
read the table's label before you compare them with anything
([the tables](problem.md#the-tables)).
"""


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.parent.name


def write_results_index(docs: Path) -> Path:
    """Write ``docs/results.md`` from ``docs/results/`` and return its path.

    The page lists, and holds in its hidden table of contents, the
    top-level ``results/README.md`` first, then every other ``README.md``
    under ``results/`` in path order, those of nested folders too
    (``results/optuna/harness/README.md``). Every other Markdown file under
    ``results/`` (the summaries the READMEs link to) is an orphan page
    (``conf.py``): built and reachable from its README. The file is rewritten
    only when its text changes, so an unchanged checkout does not force
    Sphinx to rebuild the page.
    """
    results = docs / "results"
    readmes = []
    if (results / "README.md").exists():
        readmes.append(results / "README.md")
    readmes += sorted(p for p in results.rglob("README.md") if p.parent != results)

    def docname(path: Path) -> str:
        return path.relative_to(docs).with_suffix("").as_posix()

    lines = [INTRO]
    if (docs / "reproducibility.md").exists():
        readmes.insert(0, docs / "reproducibility.md")
        lines.append(
            "How every result is recorded and rerun: [reproducibility](reproducibility.md).\n"
        )
    lines += ["| result | folder |", "|---|---|"]
    for path in readmes:
        if path.parent == docs:
            continue
        folder = path.parent.relative_to(docs).as_posix()
        lines.append(f"| [{_title(path)}]({docname(path)}.md) | `docs/{folder}/` |")
    lines += ["", "```{toctree}", ":maxdepth: 1", ":hidden:", ""]
    lines += [docname(p) for p in readmes]
    lines += ["```", ""]
    text = "\n".join(lines)
    target = docs / "results.md"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return target
