"""The rows of ``ax_matrix.py``: replications, their per-trial records, summaries.

A run of ``ax_matrix.py`` gives one :class:`Row` per replication and the
records of its trials (``benchmarks/_trial_records.py``); this module holds
what is read and written from them without running Ax: the rows' derived
columns from the records (:func:`derive`, :func:`rewrite`), the per-cell
summaries (:func:`summarize`), the files (:func:`save`, :func:`finish`) and
``ax_matrix.py --report`` (:func:`report`). ``ax_matrix.py``'s docstring
describes the columns.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import _trial_records
import pandas as pd

from bolt_pco64._io import atomic_write_text

#: The columns of a row that identify its replication (and its trials' records).
KEYS = ("representation", "instance", "method", "num_sobol", "seed",
        "max_concurrency", "trials_requested")  # fmt: skip
#: The columns of a row derived from its trials' records (:func:`derive`).
DERIVED = ("trials", "completed", "abandoned", "oom_share", "repeats", "regret")
#: The suffix of the per-trial records beside a per-replication CSV.
RECORDS_SUFFIX = "_trials.parquet"


@dataclass(frozen=True)
class Case:
    """One replication to run."""

    representation: str
    instance: str
    method: str
    num_sobol: int
    seed: int
    max_concurrency: int
    trials: int


@dataclass
class Row:
    """What one replication gave (the columns: ``ax_matrix.py``'s docstring)."""

    representation: str
    instance: str
    method: str
    num_sobol: int
    seed: int
    max_concurrency: int
    trials_requested: int
    status: str = ""
    error: str = ""
    trials: int = 0
    completed: int = 0
    abandoned: int = 0
    oom_share: float = math.nan
    repeats: int = 0
    regret: float = math.nan
    error_logs: int = 0
    sim_time: float = math.nan
    cost_ok: str = ""
    wall_s: float = math.nan


def derive(row: Row, trials: pd.DataFrame) -> None:
    """Set ``row``'s :data:`DERIVED` columns from its ``trials``' records
    (none: the defaults of a replication that aborted)."""
    if trials.empty:
        for name in DERIVED:
            setattr(row, name, Row.__dataclass_fields__[name].default)
        return
    trials = trials.sort_values("trial")
    status = trials["status"]
    oom = trials["oom"].astype(bool)
    row.trials = len(trials)
    row.completed = int((status == "completed").sum())
    row.abandoned = int(status.isin(["abandoned", "failed"]).sum())
    row.oom_share = round(int(oom.sum()) / len(trials), 3)
    ran = _trial_records.rows_run(trials)
    row.repeats = len(ran) - len(set(ran))
    values = [float(v) for v in trials.loc[~oom, "throughput"]]
    optimal = float(trials["optimal_value"].iloc[0])
    row.regret = round((optimal - max(values)) / optimal, 4) if values else 1.0


def _key(r: Case | Row) -> tuple[object, ...]:
    """What identifies a replication."""
    trials = r.trials if isinstance(r, Case) else r.trials_requested
    return (r.representation, r.instance, r.method, r.num_sobol, r.seed,
            r.max_concurrency, trials)  # fmt: skip


def _row(raw: dict[str, str]) -> Row:
    """A :class:`Row` read back from the CSV."""
    types = {f.name: f.type for f in fields(Row)}
    cast = {"int": int, "float": float, "str": str}
    return Row(**{k: cast[types[k]](v) for k, v in raw.items()})


CELL = ("representation", "instance", "method", "num_sobol")


def summarize(rows: Sequence[Row], by: Sequence[str] = CELL) -> list[dict[str, object]]:
    """Per group of ``by`` fields: counts, and means over the completed replications."""
    out: list[dict[str, object]] = []

    def key(r: Row) -> tuple[object, ...]:
        return tuple(getattr(r, name) for name in by)

    for k, group in itertools.groupby(sorted(rows, key=key), key=key):
        g = list(group)
        ok = [r for r in g if r.status == "ok"]

        def mean(values: list[float]) -> float:
            return round(sum(values) / len(values), 3) if values else math.nan

        out.append(
            {
                **dict(zip(by, k, strict=True)),
                "replications": len(g),
                "aborted": len(g) - len(ok),
                "errors": ";".join(sorted({r.status for r in g if r.status != "ok"})),
                "error_logs": sum(r.error_logs for r in g),
                "trials": mean([r.trials for r in ok]),
                "completed": mean([r.completed for r in ok]),
                "oom_share": mean([r.oom_share for r in ok]),
                "repeats": mean([r.repeats for r in ok]),
                "regret": mean([r.regret for r in ok]),
                "cost_ok": all(r.cost_ok.startswith("yes") for r in ok) if ok else "",
            }
        )
    return out


def _write(path: Path, rows: Sequence[dict[str, object]]) -> None:
    """Write ``rows`` to the CSV ``path`` atomically."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, text.getvalue())


def records_path(path: Path) -> Path:
    """The per-trial records beside the per-replication CSV ``path``."""
    return path.with_name(path.stem + RECORDS_SUFFIX)


def save(path: Path, rows: Sequence[Row], records: Sequence[dict[str, object]]) -> None:
    """Write the trials' ``records`` beside ``path``, then the ``rows`` to ``path``."""
    frame = _trial_records.frame(records, KEYS)
    _trial_records.write(records_path(path), frame, "ax_matrix")
    _write(path, [asdict(r) for r in rows])


def rewrite(path: Path) -> list[Row]:
    """Rewrite the :data:`DERIVED` columns of the CSV ``path`` from the records
    beside it (:func:`records_path`); returns its rows.

    Raises:
        ValueError: If the records are missing or unreadable, a completed
            replication has none, or a record belongs to no row.
    """
    rows = read_rows(path)
    source = records_path(path)
    records = _trial_records.read(source, KEYS)
    groups = {
        tuple(v.item() if hasattr(v, "item") else v for v in k): g
        for k, g in records.groupby(list(KEYS), sort=False)
    }
    keys = {_key(r) for r in rows}
    stray = [k for k in groups if k not in keys]
    if stray:
        raise ValueError(
            f"Expected every record of {str(source)!r} to belong to a row of "
            f"{str(path)!r}, got records of {stray[0]} ({len(stray)} replications)."
        )
    for row in rows:
        trials = groups.get(_key(row), records.iloc[:0])
        if row.status == "ok" and trials.empty:
            raise ValueError(
                f"Expected records in {str(source)!r} of the replication "
                f"{_key(row)} of {str(path)!r}, got none."
            )
        derive(row, trials)
    _write(path, [asdict(r) for r in rows])
    return rows


def finish(path: Path) -> list[dict[str, object]]:
    """Rewrite the rows of ``path`` from their records, as ``--report`` does
    (:func:`rewrite`), and write their summary ``<stem>_summary.csv``;
    returns the summary."""
    summary = summarize(rewrite(path))
    _write(path.with_name(path.stem + "_summary.csv"), summary)
    return summary


def read_rows(path: Path) -> list[Row]:
    """The rows of the per-replication CSV ``path``."""
    with path.open(newline="") as fh:
        return [_row(r) for r in csv.DictReader(fh)]


def report(folder: Path) -> list[Path]:
    """Rewrite the :data:`DERIVED` columns of every per-replication CSV of
    ``folder`` from its records (:func:`rewrite`), then every
    ``<name>_summary.csv`` from the rows of ``<name>.csv`` and of the
    ``<name>_<part>.csv`` beside it (a matrix finished in parts, e.g.
    ``matrix_pco64.csv``), in that order."""
    written = []
    for path in sorted(folder.glob("*.csv")):
        if not path.stem.endswith("_summary"):
            rewrite(path)
            written.append(path)
    for target in sorted(folder.glob("*_summary.csv")):
        name = target.stem.removesuffix("_summary")
        parts = [
            folder / f"{name}.csv",
            *sorted(
                p
                for p in folder.glob(f"{name}_*.csv")
                if not p.stem.endswith("_summary")
            ),
        ]
        rows = [r for p in parts if p.is_file() for r in read_rows(p)]
        if rows:
            _write(target, summarize(rows))
            written.append(target)
    return written


def markdown(summary: Sequence[dict[str, object]]) -> str:
    """The summary as a Markdown table."""
    names = list(summary[0])
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(str(r[n]) for n in names) + " |" for r in summary]
    return "\n".join(lines)
