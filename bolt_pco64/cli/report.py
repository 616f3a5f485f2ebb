"""The ``report`` command: rewrite a result folder's report from its records."""

from __future__ import annotations

from pathlib import Path

import click

from bolt_pco64.cli._core import _one_line, main

__all__ = ["report"]


@main.command(
    short_help="Rewrite a result folder's summaries, tables and plots from its records."
)
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
def report(folder: Path) -> None:
    """Recompute every summary, comparison table and plot under FOLDER from the
    per-evaluation records kept there (see bolt_pco64.bench.regenerate).

    Text and CSV files come out byte for byte as the run wrote them; PNG bytes
    depend on the matplotlib version. Files a benchmarks/ script wrote are
    listed, not rewritten (benchmarks/report_results.py does that).
    """
    from bolt_pco64.bench.regenerate import regenerate, script_folders

    try:
        written = regenerate(folder)
        scripts = script_folders(folder)
    except (ValueError, OSError) as err:
        raise _one_line(err, str(folder)) from err
    if not written and not scripts:
        raise _one_line(
            ValueError(
                "expected records of a comparison (meta.json and runs.parquet) or "
                "a report.json marker in it or its sub-folders, found none"
            ),
            str(folder),
        )
    if written:
        click.echo("\n".join(str(p) for p in written))
        click.echo("\n".join(_table_lines(written)))
    click.echo(f"{len(written)} file(s) rewritten from the records under {folder}.")
    if scripts:
        click.echo(
            f"{len(scripts)} folder(s) hold files a study script of the source "
            "checkout wrote, left as they are (its report_results.py DIR "
            "rewrites them):"
        )
        click.echo("\n".join(f"  {p} ({name})" for p, name in scripts))


def _table_lines(written: list[Path]) -> list[str]:
    """Each rewritten comparison's table, as its ``meta.json`` names it:
    instance, source, rows and feasible rows."""
    import json

    lines = []
    for path in written:
        meta_path = path.parent / "meta.json"
        if path.name != "summary.md" or not meta_path.is_file():
            continue
        meta = json.loads(meta_path.read_text())
        table = meta.get("table", {})
        lines.append(
            f"table of {path.parent}: {meta.get('problem')}, {table.get('source')} "
            f"({table.get('rows')} rows, {table.get('feasible')} feasible)"
        )
    return lines
