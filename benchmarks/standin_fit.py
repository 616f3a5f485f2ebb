"""The stand-in against the published traces, before and after fitting its constants.

What it does, on pco64's visited rows
(:func:`bolt_pco64.tables.traces.visited_rows`: 643 configurations, exact
feasibility, exact peak memory where the run fitted, observed or exact
throughput):

1. splits the visited rows into ``--folds`` folds (seeded shuffle,
   :func:`fold_of`);
2. **before**: each stand-in variant as 2.1 shipped it (its reading with the
   2.1 constants, :data:`bolt_pco64.tables.simulate.variants.READINGS`, calibrated
   to the card: the 2.1 table) on each held-out fold -- nothing is fitted,
   so every row is held out (``_standin_models.AsShipped``);
3. **after, shipped**: each variant's step-time constants fitted on the other
   folds (``memory=False``), calibrated to the card as the generator does
   (:func:`bolt_pco64.tables.simulate.calibrate.build_model`): what 3.0 ships
   (``_standin_models.StepTimeFitted``);
4. **after, full fit**: for each reading -- the traces' reading
   (``_constants_fit.TRACE_READINGS``) and each shipped
   variant's -- its constants fitted on the other folds
   (``_constants_fit.fit_variant``: memory constants, overhead
   and capacity on peaks and feasibility; step-time constants and efficiency
   on throughput) and predicted on the held-out fold
   (``_constants_fit.predict``; ``_standin_models.FullFit``);
5. writes into ``--out`` the per-row records ``rows.parquet`` (zstd; one row
   per model x held-out visited row: ``model``, the ``fold`` it was held out
   in, the row's raw knob columns as the card names them (its key), the
   truth ``ran_successfully``, ``peak_mem`` and ``throughput_mean`` and the
   model's ``predicted_ran_successfully``, ``predicted_peak_mem`` and
   ``predicted_throughput_mean``) and the marker ``report.json``
   (``{"script": "standin_fit", "instance", "folds", "seed", "seconds":
   {"<model>": wall seconds over the folds}}``), then ``folds.csv`` and
   ``summary.csv`` from those two files alone (:func:`write_held_out`):
   per model and fold (:func:`scores`), feasibility agreement, throughput
   Spearman on the rows that ran in both, median absolute and signed
   peak-memory error (GB) on the rows that ran (measured), median relative
   throughput error; ``summary.csv`` is their mean over folds, also printed.

``--readings`` scans memory readings near the traces' one
(``_standin_readings.SCAN``), each fitted to every visited row, into the
records ``readings_rows.parquet`` (zstd; one row per reading x grid
configuration: the reading's ``pp=1``, ``pp>1``, ``zero0`` and ``vocab``,
its fitted ``capacity_gb``, the configuration's raw knob columns,
``visited``, ``card_best``, the truth ``ran_successfully`` and ``peak_mem``
where visited, and the ``predicted_peak_mem``) and the marker's
``"readings": {"instance", "seconds"}``, then ``readings.csv`` from those
records alone (``_standin_readings.write_readings``). Each of the two runs
keeps the other's part of the marker. ``--constants`` prints each variant's
step-time constants fitted to every visited row (what
:data:`bolt_pco64.tables.simulate.variants.TRACE_STEPTIME` holds, rounded).

``--report DIR`` runs nothing: it rewrites ``DIR/folds.csv`` and
``DIR/summary.csv`` from ``DIR/rows.parquet``, and ``DIR/readings.csv`` from
``DIR/readings_rows.parquet``, as far as ``DIR/report.json`` holds their
parts, and prints the files written, one per line (``benchmarks/report_results.py DIR``
calls it: the marker names this script).

Run (the held-out study about 10 minutes on a busy two-core machine)::

    python benchmarks/standin_fit.py --folds 5 --seed 0 --out docs/results/standin3
    python benchmarks/standin_fit.py --readings --out docs/results/standin3
    python benchmarks/standin_fit.py --report docs/results/standin3
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _standin_models import Predictor, knob_columns, models, steptime_constants
from _standin_readings import (
    READING_RECORDS,
    READINGS_FILE,
    SCAN,
    ScanReading,
    reading_records,
    write_readings,
)
from scipy.stats import spearmanr

from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.bench.regenerate import read_script_marker
from bolt_pco64.instances import get_instance
from bolt_pco64.tables.traces import visited_rows

#: This script's name in its folder's marker.
SCRIPT = "standin_fit"
#: The marker of this script's folder (``benchmarks/report_results.py DIR``).
REPORT_MARKER = "report.json"
#: The held-out records ``folds.csv`` and ``summary.csv`` are computed from.
RECORDS = "rows.parquet"
#: The files :func:`write_held_out` writes.
HELD_OUT_FILES = ("folds.csv", "summary.csv")
#: The columns :func:`scores` reads, of the measured rows and of a model's.
SCORED = ("ran_successfully", "peak_mem", "throughput_mean")
#: The records' name of a model's column.
PREDICTED = {c: f"predicted_{c}" for c in SCORED}


def scores(measured: pd.DataFrame, model: pd.DataFrame) -> dict[str, float]:
    """Agreement of ``model`` with ``measured`` on the same rows."""
    ran = measured["ran_successfully"].to_numpy(dtype=bool)
    pred = model["ran_successfully"].to_numpy(dtype=bool)
    both = ran & pred
    t_meas = measured["throughput_mean"].to_numpy(dtype=float)[both]
    t_model = model["throughput_mean"].to_numpy(dtype=float)[both]
    err = (
        model["peak_mem"].to_numpy(dtype=float)[ran]
        - measured["peak_mem"].to_numpy(dtype=float)[ran]
    )
    finite = np.isfinite(err)
    return {
        "rows": float(len(measured)),
        "feasibility_agreement": float((ran == pred).mean()),
        "model_runs_really_oom": float((pred & ~ran).sum()),
        "model_oom_really_ran": float((~pred & ran).sum()),
        "spearman": float(spearmanr(t_model, t_meas).statistic)
        if both.sum() > 2
        else float("nan"),
        "median_rel_throughput_error": float(np.median(np.abs(t_model / t_meas - 1.0)))
        if both.any()
        else float("nan"),
        "peak_error_median_abs_gb": float(np.median(np.abs(err[finite]))),
        "peak_error_median_gb": float(np.median(err[finite])),
        "peak_rows_model_oom": float((~finite).sum()),
    }


def fold_of(n_rows: int, folds: int, seed: int) -> np.ndarray:
    """The fold (``0 .. folds - 1``) each of ``n_rows`` rows is held out in."""
    return np.random.default_rng(seed).permutation(np.arange(n_rows) % folds)


def records(
    model: str,
    fold: int,
    measured: pd.DataFrame,
    predicted: pd.DataFrame,
    key: Sequence[str],
) -> pd.DataFrame:
    """One record per row of ``measured`` (in its order): its ``key``, its
    truth and ``predicted``'s values (module docstring).

    Raises:
        ValueError: If ``predicted`` lacks a :data:`SCORED` column or has
            another number of rows.
    """
    missing = [c for c in SCORED if c not in predicted.columns]
    if missing or len(predicted) != len(measured):
        raise ValueError(
            f"Expected model {model!r} to give {list(SCORED)} for "
            f"{len(measured)} held-out rows, got {list(predicted.columns)} for "
            f"{len(predicted)}."
        )
    out = measured[[*key, *SCORED]].reset_index(drop=True)
    out.insert(0, "fold", fold)
    out.insert(0, "model", model)
    for column, name in PREDICTED.items():
        out[name] = predicted[column].to_numpy()
    return out


@dataclass(frozen=True)
class HeldOut:
    """The held-out study's settings and wall times, as the marker keeps them."""

    instance: str
    folds: int
    seed: int
    #: Wall seconds of each model over every fold.
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scan:
    """The ``--readings`` scan's settings, as the marker keeps them."""

    instance: str
    seconds: float


@dataclass(frozen=True)
class Marker:
    """``report.json``: the parts of the folder this script has written."""

    held_out: HeldOut | None = None
    scan: Scan | None = None

    def text(self) -> str:
        """The text of ``report.json``."""
        data: dict[str, Any] = {"script": SCRIPT}
        if self.held_out is not None:
            h = self.held_out
            data.update(
                instance=h.instance, folds=h.folds, seed=h.seed, seconds=h.seconds
            )
        if self.scan is not None:
            data["readings"] = {
                "instance": self.scan.instance,
                "seconds": self.scan.seconds,
            }
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def read(cls, folder: Path) -> Marker:
        """The marker of ``folder`` (empty where it has none).

        Raises:
            ValueError: If it names another script or lacks a part's fields.
        """
        path = folder / REPORT_MARKER
        if not path.is_file():
            return cls()
        data = read_script_marker(path, SCRIPT)
        held_out = scan = None
        keys = ("instance", "folds", "seed", "seconds")
        if any(k in data for k in keys):
            if not all(k in data for k in keys) or not isinstance(
                data["seconds"], dict
            ):
                raise ValueError(
                    f"Expected {str(path)!r} to give instance, folds, seed and a "
                    f"seconds mapping, got {data!r}."
                )
            held_out = HeldOut(
                str(data["instance"]),
                int(data["folds"]),
                int(data["seed"]),
                {str(k): float(v) for k, v in data["seconds"].items()},
            )
        if "readings" in data:
            part = data["readings"]
            if not isinstance(part, dict) or {"instance", "seconds"} - set(part):
                raise ValueError(
                    f"Expected {str(path)!r}'s readings to give instance and "
                    f"seconds, got {part!r}."
                )
            scan = Scan(str(part["instance"]), float(part["seconds"]))
        return cls(held_out, scan)


def write_held_out(folder: Path) -> list[Path]:
    """Write ``folds.csv`` and ``summary.csv`` from ``folder``'s records and
    marker alone; returns their paths.

    Raises:
        ValueError: If the marker has no held-out part or the records do not
            hold each model on every fold it names.
    """
    settings = Marker.read(folder).held_out
    if settings is None:
        raise ValueError(
            f"Expected {str(folder / REPORT_MARKER)!r} to give the held-out "
            "study's instance, folds and seed, got none."
        )
    rows = pd.read_parquet(folder / RECORDS)
    expected = list(range(settings.folds))
    for model, got in rows.groupby("model", sort=False)["fold"]:
        if sorted(set(got)) != expected:
            raise ValueError(
                f"Expected the records of {model!r} in {str(folder / RECORDS)!r} "
                f"on folds {expected}, got {sorted(set(got))}."
            )
    named = {v: k for k, v in PREDICTED.items()}
    out = []
    for (model, f), group in rows.groupby(["model", "fold"], sort=False):
        measured = group[list(SCORED)]
        predicted = group[list(named)].rename(columns=named)
        out.append({"model": model, "fold": int(f), **scores(measured, predicted)})
    folds = pd.DataFrame.from_records(out)
    summary = folds.drop(columns="fold").groupby("model", sort=False).mean()
    paths = [folder / name for name in HELD_OUT_FILES]
    atomic_write_text(paths[0], folds.to_csv(index=False))
    atomic_write_text(paths[1], summary.to_csv())
    return paths


def run(
    out: Path,
    instance: str,
    folds: int,
    seed: int,
    predictors: Mapping[str, Predictor] | None = None,
    rows: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Score each model on each held-out fold and write ``out`` (module
    docstring); returns the summary.

    Args:
        out: The result folder.
        instance: The instance's name.
        folds: The number of folds.
        seed: The seed of the rows' shuffle.
        predictors: The models, by name (``None``: :func:`models`).
        rows: The measured rows (``None``: the instance's visited rows).
    """
    inst = get_instance(instance)
    earlier = Marker.read(out)  # Another script's folder fails before the fits.
    rows = visited_rows(inst) if rows is None else rows
    predictors = models(inst.name) if predictors is None else predictors
    fold = fold_of(len(rows), folds, seed)
    key = knob_columns(inst)
    frames = []
    seconds = dict.fromkeys(predictors, 0.0)
    t0 = time.perf_counter()
    for f in range(folds):
        test = fold == f
        for name, predict in predictors.items():
            start = time.perf_counter()
            predicted = predict(rows[~test], rows[test])
            seconds[name] += time.perf_counter() - start
            frames.append(records(name, f, rows[test], predicted, key))
        print(f"fold {f} done, {time.perf_counter() - t0:.0f} s", flush=True)
    marker = replace(earlier, held_out=HeldOut(inst.name, folds, seed, seconds))
    # A run stopped between the two writes leaves the earlier marker; the
    # report checks the records' folds against it.
    atomic_write_parquet(out / RECORDS, pd.concat(frames, ignore_index=True))
    atomic_write_text(out / REPORT_MARKER, marker.text())
    write_held_out(out)
    return pd.read_csv(out / HELD_OUT_FILES[1], index_col="model")


def scan_readings(
    out: Path, instance: str, scan: Sequence[ScanReading] = SCAN
) -> pd.DataFrame:
    """Fit each reading of ``scan`` and write its records, the marker's
    readings part and ``readings.csv`` into ``out``; returns the table."""
    earlier = Marker.read(out)
    start = time.perf_counter()
    rows = reading_records(instance, scan)
    seconds = time.perf_counter() - start
    marker = replace(earlier, scan=Scan(get_instance(instance).name, seconds))
    atomic_write_parquet(out / READING_RECORDS, rows)
    atomic_write_text(out / REPORT_MARKER, marker.text())
    write_readings(out)
    return pd.read_csv(out / READINGS_FILE)


def report(folder: Path) -> list[Path]:
    """Rewrite ``folder``'s reports from its records, as far as its marker
    holds their parts; runs nothing. Returns the files written.

    Raises:
        ValueError: If the marker is missing, another script's, or holds no
            part.
    """
    if not (folder / REPORT_MARKER).is_file():
        raise ValueError(
            f"Expected the marker {str(folder / REPORT_MARKER)!r}, got no such file."
        )
    marker = Marker.read(folder)
    written = []
    if marker.held_out is not None:
        written += write_held_out(folder)
    if marker.scan is not None:
        written += write_readings(folder)
    if not written:
        raise ValueError(
            f"Expected {str(folder / REPORT_MARKER)!r} to hold the held-out "
            "study or the readings scan, got neither."
        )
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="pco64")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("docs/results/standin3"))
    parser.add_argument(
        "--constants",
        action="store_true",
        help="print each variant's step-time constants fitted to all rows, and stop",
    )
    parser.add_argument(
        "--readings",
        action="store_true",
        help="scan memory readings (each fitted to all rows) into OUT/readings.csv",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="Run nothing: rewrite DIR's reports from its records and "
        "report.json, and print the files written.",
    )
    args = parser.parse_args()
    if args.report is not None:
        print("\n".join(str(path) for path in report(args.report)))
        return
    if args.readings:
        print(scan_readings(args.out, args.instance).round(3).to_string())
        return
    if args.constants:
        print(steptime_constants(args.instance))
        return
    t0 = time.perf_counter()
    summary = run(args.out, args.instance, args.folds, args.seed)
    print(summary.round(3).to_string())
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
