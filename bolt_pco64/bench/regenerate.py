"""Rewrite a result folder's summaries, tables and plots from its raw records.

A result folder keeps the per-evaluation records it was computed from, so a
reader can recompute every number without rerunning anything
(``bolt-pco64 report DIR``). :func:`regenerate` finds what kind of folder
``DIR`` is (:func:`folder_kind`) and calls that kind's function in
:data:`FOLDER_KINDS`:

- ``"comparison"``: a harness output directory (``meta.json`` with its
  ``report`` block and ``runs.parquet``, :mod:`bolt_pco64.bench.store`):
  ``summary.csv``, ``summary.md``, ``comparisons.csv``, ``regret.png`` and
  the cost report (:data:`~bolt_pco64.bench.report.cost.page.COST_REPORT_FILES`)
  are rewritten by the functions that wrote them at the end of the run, from
  ``runs.parquet`` and ``meta.json`` alone (the table is not read); then its
  sub-folders as in a collection (``docs/results/`` is a comparison that
  holds the other results);
- ``"family"``: a ``bench --problem all`` root (:data:`REPORT_MARKER` with
  ``{"combined": "family"}``): each problem's comparison, then the combined
  ``summary.csv``, ``summary.md`` and ``regret.png``
  (:func:`~bolt_pco64.bench.family.write_family_report`); a marker that also
  names a script (``{"combined": "family", "script": "prior_paired"}``) is
  also listed by :func:`script_folders`;
- ``"variants"``: a ``bench --standin all`` root (``{"combined":
  "variants"}``): each variant's comparison, then ``robustness.md`` and
  ``robustness.csv`` (:func:`~bolt_pco64.bench.variants.write_robustness`);
- ``"script"``: a folder a script of ``benchmarks/`` wrote (``{"script":
  "<name>"}``): its sub-folders are rewritten as in a collection; the
  script's own files are not, since the installed package never runs or
  imports code of a checkout: :func:`script_folders` lists them, and the
  checkout's ``benchmarks/report_results.py DIR`` rewrites them (each
  script's ``--report DIR``);
- ``"collection"``: any other folder: each sub-folder of one of these kinds,
  in name order (``docs/results/``, say).

**What is bit for bit.** The text and CSV files come out byte for byte as
the run wrote them, on any machine with the same versions of pandas, numpy
and scipy (they are functions of the stored records and of seeded bootstrap
generators). PNG files are redrawn from the same numbers, but their bytes
depend on the matplotlib and FreeType versions. Every file is written
atomically (``bolt_pco64._io``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from bolt_pco64.bench.contract import RunKey
from bolt_pco64.bench.family import FamilyPart, write_family_report
from bolt_pco64.bench.report.context import ReportContext
from bolt_pco64.bench.report.cost.page import COST_REPORT_FILES
from bolt_pco64.bench.report.facts import TableFacts
from bolt_pco64.bench.report.pages import write_report
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.bench.variants import write_robustness

__all__ = [
    "FOLDER_KINDS",
    "REPORT_MARKER",
    "FolderKind",
    "folder_kind",
    "read_comparison",
    "read_script_marker",
    "regenerate",
    "regenerate_comparison",
    "regenerate_family",
    "regenerate_variants",
    "script_folders",
]

#: The marker file of a folder whose report spans several comparisons. Its
#: JSON names a ``benchmarks/`` script (``{"script": "cost_comparison"}``) or a
#: combined report (``{"combined": "family"}`` or ``"variants"``).
REPORT_MARKER = "report.json"

#: The kinds of result folder (:data:`FOLDER_KINDS`).
FolderKind = Literal["comparison", "family", "variants", "script", "collection"]
_COMBINED: tuple[FolderKind, ...] = ("family", "variants")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(
            f"Expected {str(path)!r} to be readable JSON, got {err}"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"Expected {str(path)!r} to hold a JSON object, got {data!r}.")
    return data


def read_script_marker(path: str | os.PathLike[str], script: str) -> dict[str, Any]:
    """The :data:`REPORT_MARKER` at ``path`` of a folder ``benchmarks/<script>.py``
    wrote: its JSON object, checked to name that script.

    Raises:
        ValueError: If the file is not readable JSON, not an object, or names
            another script (or none).
    """
    p = Path(path)
    data = _read_json(p)
    if data.get("script") != script:
        raise ValueError(
            f'Expected {str(p)!r} to hold {{"script": "{script}", ...}}, got {data!r}.'
        )
    return data


def folder_kind(path: str | os.PathLike[str]) -> FolderKind:
    """What kind of result folder ``path`` is (see the module docstring)."""
    p = Path(path)
    if (p / REPORT_MARKER).is_file():
        marker = _read_json(p / REPORT_MARKER)
        combined = marker.get("combined")
        if combined is None:
            return "script"
        for kind in _COMBINED:
            if combined == kind:
                return kind
        raise ValueError(
            f"Expected {str(p / REPORT_MARKER)!r} to name a combined report of "
            f"{list(_COMBINED)}, got {combined!r}."
        )
    if (p / "meta.json").is_file():
        return "comparison"
    return "collection"


def read_comparison(
    out: str | os.PathLike[str],
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A comparison folder's records (``runs.parquet``) and ``meta.json``.

    Raises:
        ValueError: If either is missing or ``meta.json`` has no ``report``
            block (written by versions before records were kept: rerun it).
    """
    p = Path(out)
    meta = _read_json(p / "meta.json")
    if "report" not in meta:
        raise ValueError(
            f"Expected {str(p / 'meta.json')!r} to hold a 'report' block, got "
            "none: the comparison was made before its report could be "
            "regenerated; rerun it."
        )
    runs = p / "runs.parquet"
    if not runs.is_file():
        raise ValueError(f"Expected the records {str(runs)!r}, got no such file.")
    records = pd.read_parquet(runs)
    # As the store holds them in memory: method names as Python strings.
    records["method"] = records["method"].astype(object)
    return records, meta


def regenerate_comparison(out: str | os.PathLike[str]) -> list[Path]:
    """Rewrite a comparison folder's report from its records; returns the files.

    Raises:
        ValueError: If the folder's records or ``meta.json`` are missing or
            incomplete (:func:`read_comparison`).
    """
    return _rewrite_comparison(Path(out))[0]


def _config(meta: dict[str, Any]) -> BenchConfig:
    key = {k: v for k, v in meta["config"].items() if k != "table"}
    return BenchConfig(**key)


def _rewrite_comparison(
    out: Path,
) -> tuple[list[Path], pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """:func:`regenerate_comparison`, also returning the summary, the records
    and ``meta.json``."""
    p = Path(out)
    records, meta = read_comparison(p)
    report = meta["report"]
    ctx = ReportContext(
        out=p,
        records=records,
        facts=TableFacts.from_meta(report["table"]),
        optimal_value=float(meta["table"]["optimal_value"]),
        worst_feasible_value=float(meta["table"]["worst_feasible_value"]),
        methods=list(report["methods"]),
        seeds=list(report["seeds"]),
        config=_config(meta),
        failed=RunKey.parse_all(meta["runs"]["failed"]),
        fingerprint=str(meta["config"]["table"]),
        reference=report["reference"],
    )
    summary, _ = write_report(ctx)
    names = ["summary.csv", "summary.md", "comparisons.csv", "regret.png"]
    written = [p / n for n in (*names, *COST_REPORT_FILES) if (p / n).exists()]
    return written, summary, records, meta


def _marked_parts(out: Path, key: str) -> list[str]:
    names = _read_json(out / REPORT_MARKER).get(key)
    if not isinstance(names, list) or not names:
        raise ValueError(
            f"Expected {str(out / REPORT_MARKER)!r} to list its {key}, got {names!r}."
        )
    return [str(n) for n in names]


def regenerate_family(out: str | os.PathLike[str]) -> list[Path]:
    """Rewrite a ``bench --problem all`` root: each problem's comparison, then
    the combined report; returns the files."""
    p = Path(out)
    written: list[Path] = []
    parts = {}
    meta: dict[str, Any] = {}
    for name in _marked_parts(p, "problems"):
        files, summary, records, meta = _rewrite_comparison(p / name)
        written += files
        parts[name] = FamilyPart(
            summary,
            records,
            TableFacts.from_meta(meta["report"]["table"]),
            float(meta["table"]["optimal_value"]),
            float(meta["table"]["worst_feasible_value"]),
        )
    report = meta["report"]
    _, _, plot = write_family_report(
        p, parts, _config(meta), report["methods"], report["seeds"]
    )
    return [*written, p / "summary.csv", p / "summary.md", plot]


def regenerate_variants(out: str | os.PathLike[str]) -> list[Path]:
    """Rewrite a ``bench --standin all`` root: each variant's comparison, then
    ``robustness.md`` and ``robustness.csv``; returns the files."""
    p = Path(out)
    marker = _read_json(p / REPORT_MARKER)
    written: list[Path] = []
    variants = {}
    meta: dict[str, Any] = {}
    for name in _marked_parts(p, "variants"):
        files, _, records, meta = _rewrite_comparison(p / name)
        written += files
        variants[name] = (records, meta)
    budget = _config(meta).budget
    if budget is None:
        raise ValueError(f"Expected variants on an evaluation budget in {str(p)!r}.")
    write_robustness(
        p, str(marker.get("problem")), variants, meta["report"]["methods"], budget
    )
    return [*written, p / "robustness.md", p / "robustness.csv"]


def script_folders(out: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The folders under ``out`` (``out`` included) whose marker names a script
    of ``benchmarks/``, with that script's name, in the order :func:`regenerate`
    walks them: the files those scripts wrote are left to
    ``benchmarks/report_results.py``.

    Raises:
        ValueError: If a marker names no script by a valid name.
    """
    p = Path(out)
    found: list[tuple[Path, str]] = []
    kind = folder_kind(p)
    if kind in ("script", "family") and "script" in _read_json(p / REPORT_MARKER):
        found.append((p, _script_name(p)))
    if kind in ("script", "collection", "comparison"):
        for sub in sorted(q for q in p.iterdir() if q.is_dir()):
            found += script_folders(sub)
    return found


def _script_name(p: Path) -> str:
    marker = _read_json(p / REPORT_MARKER)
    script = marker.get("script")
    if not isinstance(script, str) or not script.isidentifier():
        raise ValueError(
            f"Expected {str(p / REPORT_MARKER)!r} to name a script "
            f'({{"script": "<name>"}}), got {marker!r}.'
        )
    return script


def _regenerate_script(out: Path) -> list[Path]:
    """A script's folder: its sub-folders (the script's own files are left to
    ``benchmarks/report_results.py``, :func:`script_folders`)."""
    _script_name(out)
    return _regenerate_collection(out)


def _regenerate_collection(out: str | os.PathLike[str]) -> list[Path]:
    p = Path(out)
    written: list[Path] = []
    for sub in sorted(q for q in p.iterdir() if q.is_dir()):
        kind = folder_kind(sub)
        if kind != "collection" or any(sub.iterdir()):
            written += FOLDER_KINDS[kind](sub)
    return written


def _regenerate_comparison_and_below(out: Path) -> list[Path]:
    return [*regenerate_comparison(out), *_regenerate_collection(out)]


#: What rewrites each kind of folder (:func:`folder_kind`).
FOLDER_KINDS: dict[FolderKind, Callable[[Path], list[Path]]] = {
    "comparison": _regenerate_comparison_and_below,
    "family": regenerate_family,
    "variants": regenerate_variants,
    "script": _regenerate_script,
    "collection": _regenerate_collection,
}


def regenerate(out: str | os.PathLike[str]) -> list[Path]:
    """Rewrite every summary, table and plot under ``out`` from its records,
    with the package's code alone (the files of ``benchmarks/`` scripts are
    left as they are: :func:`~bolt_pco64.bench.regenerate.script_folders`).

    Returns:
        The files written.

    Raises:
        ValueError: If ``out`` is not a directory, or a folder's records are
            missing or incomplete.
    """
    p = Path(out)
    if not p.is_dir():
        raise ValueError(f"Expected a result folder, got {str(p)!r} (not a directory).")
    return FOLDER_KINDS[folder_kind(p)](p)
