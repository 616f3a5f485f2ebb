"""Put one result's conclusions on two tables side by side ("what changed").

Reads the same CSV of a result folder as computed on two tables (for example
the stand-in 2.1 result kept in git history, and its rerun on the reconstructed
default), joins them on key columns and writes a Markdown table with each
value column's *before* and *after* beside each other::

    python benchmarks/what_changed.py \
        --before old/comparisons.csv --after docs/results/comparisons.csv \
        --keys method,reference,measure --columns verdict \
        --last checkpoint --label-before "stand-in 2.1" \
        --label-after "reconstructed" --out docs/results/what_changed.md

``--last COLUMN`` keeps, in each file separately, only the rows at that
column's largest value (the last checkpoint), since the two runs may use
different checkpoints. Rows found in only one file are kept, with a dash on
the other side. ``--filter COLUMN=VALUE`` (repeatable) keeps matching rows.
An old file can be read from git history with
``git show REV:path > old.csv`` first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from bolt_pco64._io import atomic_write_text


def _read(path: Path, last: str | None, filters: list[tuple[str, str]]) -> pd.DataFrame:
    frame = pd.read_csv(path)
    for column, value in filters:
        if column not in frame.columns:
            raise SystemExit(
                f"Expected a column {column!r} in {path}, got {list(frame.columns)}."
            )
        frame = frame[frame[column].astype(str) == value]
    if last is not None:
        if last not in frame.columns:
            raise SystemExit(
                f"Expected a column {last!r} in {path}, got {list(frame.columns)}."
            )
        frame = frame[frame[last] == frame[last].max()]
    return frame


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.3g}"
    return str(value).replace("|", "\\|")


def side_by_side(
    before: pd.DataFrame,
    after: pd.DataFrame,
    keys: list[str],
    columns: list[str],
    labels: tuple[str, str],
    last: str | None = None,
) -> str:
    """A Markdown table: the key columns, then each value column before | after."""
    for name, frame in (("before", before), ("after", after)):
        missing = [c for c in (*keys, *columns) if c not in frame.columns]
        if missing:
            raise SystemExit(f"Expected columns {missing} in the {name} file.")
    merged = before[[*keys, *columns, *([last] if last else [])]].merge(
        after[[*keys, *columns, *([last] if last else [])]],
        on=keys,
        how="outer",
        suffixes=(" (before)", " (after)"),
        sort=False,
    )
    head = list(keys)
    if last:
        head += [f"{last} ({labels[0]})", f"{last} ({labels[1]})"]
    for c in columns:
        head += [f"{c} ({labels[0]})", f"{c} ({labels[1]})"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, row in merged.iterrows():
        cells = [_cell(row[k]) for k in keys]
        if last:
            cells += [_cell(row[f"{last} (before)"]), _cell(row[f"{last} (after)"])]
        for c in columns:
            cells += [_cell(row[f"{c} (before)"]), _cell(row[f"{c} (after)"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--keys", required=True, help="comma-separated join columns")
    parser.add_argument("--columns", required=True, help="comma-separated values")
    parser.add_argument("--last", default=None, help="keep the max of this column")
    parser.add_argument("--filter", action="append", default=[], metavar="COL=VALUE")
    parser.add_argument("--label-before", default="stand-in 2.1")
    parser.add_argument("--label-after", default="reconstructed")
    parser.add_argument("--title", default=None)
    parser.add_argument(
        "--out", type=Path, default=None, help="write here (else stdout)"
    )
    args = parser.parse_args(argv)
    filters = []
    for item in args.filter:
        column, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"Expected --filter COLUMN=VALUE, got {item!r}.")
        filters.append((column, value))
    before = _read(args.before, args.last, filters)
    after = _read(args.after, args.last, filters)
    text = side_by_side(
        before,
        after,
        args.keys.split(","),
        args.columns.split(","),
        (args.label_before, args.label_after),
        args.last,
    )
    if args.title:
        text = f"{args.title}\n\n{text}"
    if args.out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
