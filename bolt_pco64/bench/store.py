"""The result store of one comparison: per-run files, resume and failures.

Layout of an output directory ``OUT``:

- ``OUT/runs/<method>__seed<seed>.parquet``: one finished run (complete or
  failed), its status, error, configuration, initial-design size and how
  it was made (``made_by``: ``lanes`` or ``alone``, and the lane width) in
  the file's metadata;
- ``OUT/runs.parquet``: every kept run's records, in method then seed order
  (zstd-compressed: the raw records a committed result keeps beside its
  summaries);
- ``OUT/meta.json``: arguments, versions, table, cost model, run status,
  the lane setting (``lanes``: the width and how each method's runs are
  made), and under ``report`` what the report needs besides the records (methods,
  seeds, reference, :class:`~bolt_pco64.bench.report.facts.TableFacts`): the
  report is rewritten from ``runs.parquet`` and ``meta.json`` alone
  (``bolt-pco64 report OUT``, :mod:`bolt_pco64.bench.regenerate`).

Every file is written atomically (``bolt_pco64._io``), so a killed process
leaves every file valid; temporary files a killed writer left behind are
removed when the store is opened again. A store opened on a directory that
holds runs of another configuration is refused before anything is written,
and so is one whose runs were made another way (:func:`~bolt_pco64.bench.lane_record.made_by`): a method
that batches gives different records in lanes
(:mod:`bolt_pco64.bench.lanes`) and alone
(:func:`~bolt_pco64.bench.run.run_one`), so a folder's runs of a method
asked for are all made one way (:class:`~bolt_pco64.bench.lane_record.LaneSettingError`; the folder's
other methods are only reported, as they were made). Lane widths >= 1 give each seed
the same records (a seed's records do not depend on its lane-mates), and a
method that cannot batch runs alone in a lane too: both resume freely.
``meta.json``'s ``status`` is ``running`` while runs go on, ``complete`` at
the end, ``interrupted`` after Ctrl-C and ``aborted`` when the harness itself
failed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bolt_pco64._io import PARQUET_COMPRESSION as _PARQUET_COMPRESSION
from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.bench.contract import Method, RunKey
from bolt_pco64.bench.lane_record import LaneSettingError, made_by, width_text
from bolt_pco64.bench.methods.registry import get_method
from bolt_pco64.bench.problems import instance_of, make_problem
from bolt_pco64.bench.records import RunOutcome, empty_records, record_columns
from bolt_pco64.bench.report.facts import TableFacts
from bolt_pco64.bench.report.tables import checkpoints_for
from bolt_pco64.bench.spec import BenchConfig, check_reference
from bolt_pco64.tables.time_model import TimeModel

if TYPE_CHECKING:
    from bolt_pco64.problem import PCO
    from bolt_pco64.tables.table import Table, TableSource

__all__ = [
    "PARQUET_COMPRESSION",
    "LaneSettingError",
    "OutputDirError",
    "ResultStore",
    "check_output_dir",
    "config_key",
    "made_by",
    "portable_source",
    "table_fingerprint",
]

#: Compression of every parquet file the harness writes (the package's one
#: setting; records are committed beside results, and zstd keeps them small).
PARQUET_COMPRESSION = _PARQUET_COMPRESSION

_META_KEYS = (
    "status",
    "error",
    "config",
    "method",
    "seed",
    "n_init",
    "made_by",
    "lane_width",
)


def portable_source(source: TableSource) -> str:
    """``str(source)`` with the table's path relative to the working directory.

    A result folder is committed and read on other machines: the path of the
    table file as this machine spells it (``/home/me/checkout/data/...``) says
    nothing there, and a path inside the working directory (a checkout's
    ``data/``) is written relative to it. Paths outside it stay as they are.
    """
    text = str(source)
    if source.path is None:
        return text
    try:
        relative = Path(source.path).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return text
    return text.replace(str(source.path), relative.as_posix(), 1)


class OutputDirError(OSError):
    """The output directory cannot be created or written."""


def check_output_dir(out: str | os.PathLike[str]) -> Path:
    """Prove that ``out`` can be created and written, without creating it.

    ``out`` must be a writable directory or, if it does not exist yet, its
    nearest existing ancestor must be one. The check writes and removes one
    temporary file there, so the file system is left as it was.

    Returns:
        ``out`` as a :class:`~pathlib.Path` (``~`` expanded).

    Raises:
        OutputDirError: With a one-line reason, if it cannot be created or written.
    """
    path = Path(out).expanduser()
    probe = path
    while not (probe.exists() or probe.is_symlink()) and probe != probe.parent:
        probe = probe.parent
    folders = [probe]
    if probe == path and (path / "runs").is_dir():
        folders.append(path / "runs")
    if probe.exists() and not probe.is_dir():
        raise _dir_error(path, NotADirectoryError(20, "Not a directory"), probe)
    for folder in folders:
        try:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
                pass
        except OSError as err:
            raise _dir_error(path, err, folder) from None
    return path


def _dir_error(path: Path, err: OSError, where: Path) -> OutputDirError:
    """The error of an output directory ``path`` found unusable at ``where``
    (itself, an existing ancestor, or its ``runs`` folder), named instead of
    the temporary file the check tried to write there."""
    reason = err.strerror or type(err).__name__
    return OutputDirError(
        f"Cannot write to output directory {str(path)!r}: {reason}"
        + (f" ({where})" if where != path else "")
    )


def table_fingerprint(table: Table) -> str:
    """16 hex digits identifying a table's inputs, outcomes and run times."""
    cols = [
        *instance_of(table).input_columns,
        "throughput_mean",
        "peak_mem_normalised",
        "overall_time",
    ]
    values = table.frame[cols].to_numpy(dtype=np.float64)
    values = np.where(np.isnan(values), -1.2345e300, values)
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:16]


def config_key(config: BenchConfig, table: Table) -> dict[str, Any]:
    """What two runs must share to be comparable (stored in every run file)."""
    return {**asdict(config), "table": table_fingerprint(table)}


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import botorch
    import gpytorch
    import torch

    try:
        own = version("bolt_pco64")
    except PackageNotFoundError:
        own = "unknown (source checkout)"
    return {
        "bolt_pco64": own,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "botorch": botorch.__version__,
        "gpytorch": gpytorch.__version__,
        "pandas": pd.__version__,
        "numpy": np.__version__,
    }


def write_parquet(path: Path, frame: pd.DataFrame) -> None:
    """Write ``frame`` to ``path`` atomically, without its index."""
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    atomic_write_with(
        path, lambda tmp: pq.write_table(arrow, tmp, compression=PARQUET_COMPRESSION)
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ResultStore:
    """The runs of one comparison in one output directory.

    Construction reads what the directory already holds and writes nothing;
    :meth:`create` makes the directory, after every other check has passed.

    Args:
        out: The output directory (see :func:`check_output_dir`).
        config: The runs' configuration.
        table: The table they run on.
        methods: The requested methods, in report order.
        seeds: The requested seeds.
        arguments: Recorded in ``meta.json``.
        problem: The test problem of ``table`` (its optimum and worst
            feasible value go to ``meta.json``); built from ``table`` when
            ``None``.
        lane_width: The lane width the missing runs will be made with
            (``None``: one run at a time); recorded with each run.
        registry: Where the methods are looked up (``None``:
            :func:`~bolt_pco64.bench.methods.registry.method_registry`'s).

    Raises:
        ValueError: If ``out`` holds runs of another configuration.
        LaneSettingError: If ``out`` holds runs of a method made another
            way (in lanes or one at a time) than ``lane_width`` makes them.
    """

    def __init__(
        self,
        out: Path,
        config: BenchConfig,
        table: Table,
        methods: Sequence[str],
        seeds: Sequence[int],
        arguments: dict[str, Any],
        problem: PCO | None = None,
        *,
        lane_width: int | None = None,
        registry: Mapping[str, object] | None = None,
    ) -> None:
        self.out = out
        self._problem = problem
        self.lane_width = lane_width
        self._registry = registry
        self._made_by: dict[str, str | None] = {}
        self.config = config
        self.table = table
        self.methods = list(methods)
        self.seeds = list(seeds)
        self.arguments = arguments
        self.key = config_key(config, table)
        self.selected = {RunKey(m, s) for m in self.methods for s in self.seeds}
        self.started = _now()
        self._versions: dict[str, str] | None = None
        self._done: dict[RunKey, tuple[pd.DataFrame, dict[str, str]]] = {}
        self._scan()
        # The report covers every run of the folder: a rerun of some of the
        # methods does not shrink the comparison the folder holds.
        others = sorted({k.method for k in self._done} - set(self.methods))
        #: The methods the report covers, the requested ones first, then those of
        #: earlier runs in the folder (same configuration), by name.
        self.report_methods = [*self.methods, *others]
        #: The seeds the report covers (requested and stored), ascending.
        self.report_seeds = sorted(set(self.seeds) | {k.seed for k in self._done})
        self._reported = self.selected | set(self._done)

    # -- reading ------------------------------------------------------------

    def run_path(self, method: str, seed: int) -> Path:
        """Where the run ``(method, seed)`` is stored."""
        return self.out / "runs" / f"{RunKey(method, seed).file_stem}.parquet"

    def _method(self, name: str) -> Method | None:
        """The method of ``name``, ``None`` if the registry has none."""
        try:
            return get_method(name, self._registry)
        except ValueError:
            return None

    def made_by(self, method: str) -> str | None:
        """How this store's runs of ``method`` are made (:func:`made_by`);
        ``None`` for a method not found in the registry (not run here)."""
        if method not in self._made_by:
            fn = self._method(method)
            self._made_by[method] = None if fn is None else made_by(fn, self.lane_width)
        return self._made_by[method]

    def _scan(self) -> None:
        runs = self.out / "runs"
        if not runs.is_dir():
            return
        legacy = self._legacy_lane_width()
        for p in sorted(runs.glob("*.parquet")):
            got = self._read_run(p)
            if got is None:
                continue
            _frame, meta = got
            if json.loads(meta.get("config", "{}")) != self.key:
                raise ValueError(
                    f"Expected {str(self.out)!r} to hold runs of this configuration "
                    f"{self.key}, got {p.name} with {meta.get('config')}; use another --out."
                )
            self._check_made_by(p.name, meta, legacy)
            self._done[RunKey(meta["method"], int(meta["seed"]))] = got

    def _legacy_lane_width(self) -> int | None:
        """The lane width of runs stored without one: ``meta.json``'s
        ``lane_width`` argument (``None``, one run at a time, the only way
        before lanes, when it has none)."""
        try:
            arguments = json.loads((self.out / "meta.json").read_text())["arguments"]
            width = arguments.get("lane_width")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return width if isinstance(width, int) and width >= 1 else None

    def _check_made_by(
        self, name: str, meta: dict[str, str], legacy: int | None
    ) -> None:
        """Note in ``meta`` how a stored run was made (its file says, or for a
        run stored before the store recorded it, :meth:`_legacy_lane_width`);
        refuse a run of a method asked for that was made another way than
        this store will make its runs (:class:`LaneSettingError`). The runs of
        the folder's other methods are only reported: nothing mixes there."""
        method = meta["method"]
        width_text = meta.get("lane_width")
        if width_text is None:
            stored = legacy
            meta["made_by"] = made_by(self._method(method), legacy)
        else:
            stored = None if width_text == "none" else int(width_text)
            meta.setdefault("made_by", "alone")
        want = self.made_by(method) or made_by(None, self.lane_width)
        if method in self.methods and meta["made_by"] != want:
            raise LaneSettingError(self.out, name, method, stored, self.lane_width)

    def _made_by_meta(self) -> dict[str, str]:
        """``meta.json``'s ``lanes.made_by``: how each reported method's runs
        are made (those asked for) or were made (the folder's others)."""
        out: dict[str, str] = {}
        for m in self.report_methods:
            if m in self.methods:
                way = self.made_by(m)
            else:
                ways = {
                    meta.get("made_by", "")
                    for k, (_, meta) in self._done.items()
                    if k.method == m
                }
                way = ", ".join(sorted(w for w in ways if w))
            if way:
                out[m] = way
        return out

    def _read_run(self, path: Path) -> tuple[pd.DataFrame, dict[str, str]] | None:
        """A per-run file and its metadata; ``None`` if it is not a valid one."""
        try:
            arrow = pq.read_table(path)
        except (OSError, pa.ArrowException, ValueError):
            return None
        meta = {
            k.decode(): v.decode()
            for k, v in (arrow.schema.metadata or {}).items()
            if k.decode() in _META_KEYS
        }
        frame = arrow.to_pandas()
        columns = list(record_columns(instance_of(self.table)))
        if list(frame.columns) != columns or not {"status", "method", "seed"} <= set(
            meta
        ):
            return None
        frame["method"] = frame["method"].astype(object)
        return frame, meta

    def status(self, method: str, seed: int) -> str | None:
        """``"complete"``, ``"failed"`` or ``None`` (not run yet)."""
        got = self._done.get((method, seed))
        return None if got is None else got[1].get("status")

    def todo(self) -> list[RunKey]:
        """The requested runs that are not complete (failed ones run again)."""
        return [
            RunKey(m, s)
            for m in self.methods
            for s in self.seeds
            if self.status(m, s) != "complete"
        ]

    def records(self) -> pd.DataFrame:
        """The records of the runs the report covers (the requested ones and the
        folder's earlier ones), in method then seed then iteration order."""
        order = {m: i for i, m in enumerate(self.report_methods)}
        frames = [f for k, (f, _) in self._done.items() if k in self._reported]
        if not frames:
            return empty_records(instance_of(self.table))
        all_ = pd.concat(frames, ignore_index=True)
        all_["_o"] = all_["method"].map(order)
        all_ = all_.sort_values(["_o", "seed", "iteration"], kind="stable")
        return all_.drop(columns="_o").reset_index(drop=True)

    def errors(self) -> dict[str, str]:
        """``"method/seed" -> error`` of the reported runs that failed."""
        return {
            str(k): meta.get("error", "")
            for k, (_, meta) in sorted(self._done.items())
            if k in self._reported and meta.get("status") == "failed"
        }

    def n_init(self) -> dict[str, int]:
        """``"method/seed"`` -> the initial-design size the run used, for the
        reported runs stored with it."""
        return {
            str(k): int(meta["n_init"])
            for k, (_, meta) in sorted(self._done.items())
            if k in self._reported and "n_init" in meta
        }

    def failed(self) -> set[RunKey]:
        """``(method, seed)`` of the reported runs that failed."""
        return {
            k
            for k, (_, meta) in self._done.items()
            if k in self._reported and meta.get("status") == "failed"
        }

    # -- writing ------------------------------------------------------------

    def create(self) -> None:
        """Create the directory and remove temporaries a killed writer left.

        Raises:
            OutputDirError: If the directory cannot be created.
        """
        try:
            (self.out / "runs").mkdir(parents=True, exist_ok=True)
        except OSError as err:
            where = Path(err.filename) if err.filename else self.out
            raise _dir_error(self.out, err, where) from None
        for folder in (self.out, self.out / "runs"):
            for p in folder.glob(".*.tmp"):
                with contextlib.suppress(OSError):
                    p.unlink()

    def persist(self, outcome: RunOutcome) -> None:
        """Store one finished run, then rewrite ``runs.parquet`` and ``meta.json``."""
        status = "complete" if outcome.ok else "failed"
        meta = {
            "status": status,
            "error": outcome.error or "",
            "config": json.dumps(self.key, sort_keys=True),
            "method": outcome.method,
            "seed": str(outcome.seed),
        }
        if outcome.n_init is not None:
            meta["n_init"] = str(outcome.n_init)
        meta["made_by"] = self.made_by(outcome.method) or made_by(None, self.lane_width)
        meta["lane_width"] = width_text(self.lane_width)
        arrow = pa.Table.from_pandas(outcome.records, preserve_index=False)
        arrow = arrow.replace_schema_metadata(
            {
                **(arrow.schema.metadata or {}),
                **{k: v.encode() for k, v in meta.items()},
            }
        )
        atomic_write_with(
            self.run_path(outcome.method, outcome.seed),
            lambda tmp: pq.write_table(arrow, tmp, compression=PARQUET_COMPRESSION),
        )
        self._done[RunKey(outcome.method, outcome.seed)] = (outcome.records, meta)
        self.write_records()
        self.write_meta("running")

    def write_records(self) -> pd.DataFrame:
        """Rewrite ``runs.parquet``; returns the records written."""
        records = self.records()
        write_parquet(self.out / "runs.parquet", records)
        return records

    @property
    def problem(self) -> PCO:
        """The test problem of the store's table."""
        if self._problem is None:
            self._problem = make_problem(self.table)
        return self._problem

    def write_meta(self, status: str) -> None:
        """Rewrite ``meta.json`` with ``status`` and the runs' state."""
        if self._versions is None:
            self._versions = _versions()
        meta = {
            "status": status,
            "problem": instance_of(self.table).name,
            "arguments": self.arguments,
            "config": self.key,
            "versions": self._versions,
            **self._table_meta(),
            "regret_before_first_feasible_in_summary": "optimal_value - "
            "worst_feasible_value",
            "checkpoints": checkpoints_for(self.config.budget, self.config.n_init)
            if self.config.budget is not None
            else None,
            "runs": self._runs_meta(),
            "errors": self.errors(),
            "lanes": {
                "lane_width": self.lane_width,
                "made_by": self._made_by_meta(),
            },
            "report": {
                "methods": self.report_methods,
                "seeds": self.report_seeds,
                "reference": check_reference(
                    self.arguments.get("reference"), self.report_methods
                ),
                "table": TableFacts.of(self.table).as_meta(),
            },
            "started": self.started,
            "updated": _now(),
        }
        atomic_write_text(self.out / "meta.json", json.dumps(meta, indent=2) + "\n")

    def _table_meta(self) -> dict[str, Any]:
        """``meta.json``'s ``table`` and ``cost_model``."""
        tab = self.table
        instance = instance_of(tab)
        times = TimeModel(tab)
        return {
            "table": {
                "source": portable_source(tab.source),
                "simulated": bool(tab.is_simulated),
                "rows": len(tab),
                "feasible": tab.n_feasible,
                "fingerprint": self.key["table"],
                "optimal_value": float(self.problem.optimal_value),
                "worst_feasible_value": float(self.problem.worst_feasible_value),
            },
            "cost_model": {
                "gpus": instance.num_gpus,
                "simulated": bool(tab.is_simulated),
                "startup_seconds": times.startup_seconds,
                "crash_neighbours": times.crash_neighbours,
                "model": times.describe(),
            },
        }

    def _runs_meta(self) -> dict[str, Any]:
        """``meta.json``'s ``runs``: requested, complete, failed, pending."""
        complete = sorted(
            str(k)
            for k, (_, meta) in self._done.items()
            if k in self.selected and meta.get("status") == "complete"
        )
        return {
            "requested": len(self.selected),
            "complete": complete,
            "failed": sorted(self.errors()),
            "pending": len(self.selected)
            - len(complete)
            - len(self.failed() & self.selected),
            "n_init": self.n_init(),
        }
