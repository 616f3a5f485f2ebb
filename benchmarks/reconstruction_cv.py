"""Cross-validated accuracy of the reconstruction's imputation, beside the bar.

What it does, per instance (default all three):

1. reads the visited rows of the shipped traces
   (:func:`bolt_pco64.tables.traces.visited_rows`);
2. 5-fold cross-validation (rows shuffled with seed 0) of two imputations,
   each fitted to four folds and predicting the fifth
   (:func:`bolt_pco64.tables.reconstruct.impute.cross_validate`):

   - ``baseline``: the issue's bar, a plain ``SingleTaskGP`` on the encoded
     inputs (normalised to the bounds, outcome standardised): one on the
     ``±1`` feasibility labels (runs where the mean is > 0), one on the
     throughput of the rows that ran;
   - ``reconstruction``: :class:`bolt_pco64.tables.reconstruct.impute.Imputer`, the
     models the shipped tables are imputed with;

3. after each model, writes into ``--results`` the per-row records
   ``cv_rows.parquet`` (zstd; one row per instance x model x visited row:
   ``instance``, ``model``, the row's raw knob columns as the card names
   them (its key), the truth ``ran_successfully``, ``throughput_mean`` and
   ``peak_mem``, the ``fold`` it was held out in and the held-out
   predictions ``predicted_feasible``, ``predicted_throughput``,
   ``predicted_throughput_se`` and ``predicted_peak_mem``, NaN for the
   baseline) and the marker ``report.json`` (``{"script":
   "reconstruction_cv", "folds", "seed", "seconds": {"<instance>/<model>":
   wall seconds}}``), then the table ``cv.md`` (``RESULTS/README.md``
   quotes it) and ``cv.csv`` from those two files alone (:func:`write_cv`):
   feasibility accuracy, throughput Spearman and median relative error on
   held-out rows that ran, the median absolute peak-memory error and the
   coverage of the ±1.96 standard-error interval
   (:func:`~bolt_pco64.tables.reconstruct.impute.score_predictions` of the
   records). A stopped run keeps the models it finished.

Records of instances not named by ``--instances`` are kept from the folder's
``cv_rows.parquet`` (and their seconds from its ``report.json``), so one
instance can be rerun alone; the kept records must have been made with the
same ``--folds`` and ``--seed``.

``--report DIR`` runs nothing: it rewrites ``DIR/cv.csv`` and ``DIR/cv.md``
from ``DIR/cv_rows.parquet`` and ``DIR/report.json`` and prints their paths,
one per line (``benchmarks/report_results.py DIR`` calls it: the marker names this
script).

Run::

    python benchmarks/reconstruction_cv.py --results docs/results/reconstruction
    python benchmarks/reconstruction_cv.py --instances pco16 --results docs/results/reconstruction
    python benchmarks/reconstruction_cv.py --report docs/results/reconstruction
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.bench.regenerate import read_script_marker
from bolt_pco64.instances import get_instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.reconstruct.build import replay_traces as replay_files
from bolt_pco64.tables.reconstruct.build import replayed_rows
from bolt_pco64.tables.reconstruct.impute import (
    PREDICTION_COLUMNS,
    TRUTH_COLUMNS,
    CrossValidation,
    Fitter,
    Imputation,
    Imputer,
    _fit,
    _posterior,
    cross_validate,
    deterministic,
    encoded,
    score_predictions,
)
from bolt_pco64.tables.reconstruct.replay import crash_share
from bolt_pco64.tables.traces import visited_rows

#: The marker of this script's folder (``benchmarks/report_results.py DIR``).
REPORT_MARKER = "report.json"
#: The per-row records the report is computed from.
RECORDS = "cv_rows.parquet"
#: The files :func:`write_cv` writes.
CV_FILES = ("cv.csv", "cv.md")
#: The records' name of each prediction column (``fold`` keeps its own).
PREDICTED = {c: c if c == "fold" else f"predicted_{c}" for c in PREDICTION_COLUMNS}


@dataclass(frozen=True)
class Settings:
    """A run's settings and wall times, as ``report.json`` keeps them."""

    folds: int
    seed: int
    #: Wall seconds of each model's cross-validation, ``"<instance>/<model>"``.
    seconds: dict[str, float] = field(default_factory=dict)

    def marker(self) -> str:
        """The text of ``report.json``."""
        data = {"script": "reconstruction_cv", "folds": self.folds, "seed": self.seed}
        return json.dumps({**data, "seconds": self.seconds}, indent=2) + "\n"

    @classmethod
    def read(cls, path: Path) -> Settings:
        """The settings ``report.json`` at ``path`` holds."""
        data = read_script_marker(path, "reconstruction_cv")
        missing = [k for k in ("folds", "seed", "seconds") if k not in data]
        if missing or not isinstance(data["seconds"], dict):
            raise ValueError(
                f"Expected {str(path)!r} to give folds, seed and a seconds "
                f"mapping, got {data!r}."
            )
        return cls(
            folds=int(data["folds"]),
            seed=int(data["seed"]),
            seconds={str(k): float(v) for k, v in data["seconds"].items()},
        )


def baseline(instance_name: str) -> Fitter:
    """The bar: plain SingleTaskGPs on the encoded inputs (no log, no memory)."""
    inst = get_instance(instance_name)
    lo, hi = zip(*inst.bounds, strict=True)
    bounds = torch.tensor([lo, hi], dtype=torch.double)

    def fitter(rows: pd.DataFrame) -> Callable[[np.ndarray], Imputation]:
        X = torch.from_numpy(encoded(rows, inst))
        ran = rows["ran_successfully"].to_numpy(dtype=bool)
        with deterministic():
            feas = _fit(X, np.where(ran, 1.0, -1.0), bounds)
            tput = _fit(X[ran], rows["throughput_mean"].to_numpy()[ran], bounds)

        def predict(Xnew: np.ndarray) -> Imputation:
            Xt = torch.from_numpy(np.asarray(Xnew, dtype=np.float64))
            mu, _ = _posterior(feas, Xt)
            tm, ts = _posterior(tput, Xt)
            nan = np.full(len(Xt), np.nan)
            return Imputation(nan, mu > 0, tm, ts, nan, nan)  # no calibration

        return predict

    return fitter


def reconstruction(instance_name: str) -> Fitter:
    inst = get_instance(instance_name)

    def fitter(rows: pd.DataFrame) -> Callable[[np.ndarray], Imputation]:
        return Imputer(inst).fit(rows).predict

    return fitter


def fitted_rows(instance: str) -> pd.DataFrame:
    """The visited rows the reconstruction fits: the shipped traces' rows with
    the harness's noise replayed (:func:`~bolt_pco64.tables.reconstruct.build.replayed_rows`)."""
    inst = get_instance(instance)
    files = locations.trace_paths(inst)
    return replayed_rows(visited_rows(inst, files), inst, replay_files(inst, files))


def records(instance: str, rows: pd.DataFrame, cv: CrossValidation) -> pd.DataFrame:
    """One record per visited row of ``rows`` (in its order) for ``cv``'s model.

    Args:
        instance: The instance's name.
        rows: Its visited rows (:func:`~bolt_pco64.tables.traces.visited_rows`).
        cv: The model's cross-validation on ``rows``.
    """
    inst = get_instance(instance)
    key = [*inst.input_columns, *inst.context_columns]
    out = rows[[*key, *TRUTH_COLUMNS]].reset_index(drop=True)
    out.insert(0, "model", cv.name)
    out.insert(0, "instance", instance)
    predictions = cv.predictions[list(PREDICTED)].rename(columns=PREDICTED)
    return pd.concat([out, predictions], axis=1)


def scores(records: pd.DataFrame, settings: Settings) -> list[dict[str, Any]]:
    """The rows of ``cv.csv``: one per instance and model, in the records'
    order, scored from the records alone."""
    named = {v: k for k, v in PREDICTED.items()}
    out = []
    for (instance, model), group in records.groupby(["instance", "model"], sort=False):
        key = f"{instance}/{model}"
        if key not in settings.seconds:
            raise ValueError(
                f"Expected report.json's seconds to give {key!r}, got "
                f"{sorted(settings.seconds)}."
            )
        cv = score_predictions(
            str(model), group, group[list(named)].rename(columns=named)
        )
        out.append(
            {
                "instance": instance,
                "model": cv.name,
                "visited_rows": len(group),
                "feasibility_accuracy": cv.feasibility_accuracy,
                "throughput_spearman": cv.throughput_spearman,
                "median_relative_error": cv.median_relative_error,
                "peak_mem_median_abs_error_gb": cv.peak_mem_median_abs_error,
                "coverage_95": cv.coverage_95,
                "peak_mem_coverage_95": cv.peak_mem_coverage_95,
                "feasibility_coverage_95": cv.feasibility_coverage_95,
                "feasibility_brier": cv.feasibility_brier,
                "feasibility_accuracy_at_count": cv.feasibility_accuracy_at_count,
                "feasibility_mean_probability": cv.feasibility_mean_probability,
                "share_ran": float(group["ran_successfully"].mean()),
                "seconds": settings.seconds[key],
            }
        )
    return out


def write_cv(results: Path, records: pd.DataFrame, settings: Settings) -> str:
    """Write ``results/cv.csv`` and ``results/cv.md`` from the records and
    the settings; returns the text of ``cv.md``."""
    out = scores(records, settings)
    csv_path, md_path = (results / name for name in CV_FILES)
    atomic_write_text(csv_path, pd.DataFrame(out).to_csv(index=False))
    lines = [
        "| instance | model | visited rows | feasibility accuracy | throughput Spearman "
        "| median relative error | peak-memory error (median, GB) "
        "| 95 % interval coverage: throughput | peak memory | feasibility "
        "| mean P(runs) / share that ran | Brier | feasibility accuracy at the "
        "count |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def pct(v: float) -> str:
        return "—" if np.isnan(v) else f"{100 * v:.1f} %"

    for r in out:
        mem = r["peak_mem_median_abs_error_gb"]
        mp = r["feasibility_mean_probability"]
        b = r["feasibility_brier"]
        brier = "—" if np.isnan(b) else f"{b:.4f}"
        lines.append(
            f"| {r['instance']} | {r['model']} | {r['visited_rows']} "
            f"| {100 * r['feasibility_accuracy']:.1f} % | {r['throughput_spearman']:.4f} "
            f"| {100 * r['median_relative_error']:.2f} % "
            f"| {'—' if np.isnan(mem) else f'{mem:.2f}'} "
            f"| {pct(r['coverage_95'])} | {pct(r['peak_mem_coverage_95'])} "
            f"| {pct(r['feasibility_coverage_95'])} "
            f"| {'—' if np.isnan(mp) else f'{mp:.3f}'} / {r['share_ran']:.3f} "
            f"| {brier} | {pct(r['feasibility_accuracy_at_count'])} |"
        )
    text = "\n".join(lines) + "\n"
    atomic_write_text(md_path, text)
    return text


def report(results: Path) -> list[Path]:
    """Rewrite ``results``'s ``cv.csv`` and ``cv.md`` from its records and
    ``report.json``; runs nothing. Returns the files written."""
    settings = Settings.read(results / REPORT_MARKER)
    write_cv(results, pd.read_parquet(results / RECORDS), settings)
    return [results / name for name in CV_FILES]


def save(results: Path, kept: pd.DataFrame, settings: Settings) -> str:
    """Write ``report.json`` and the records, then ``cv.csv`` and ``cv.md``
    from those two files (:func:`report`); returns the text of ``cv.md``.

    The marker goes first: a run stopped between the two leaves it with the
    seconds of a model the records lack, which the report ignores.
    """
    atomic_write_text(results / REPORT_MARKER, settings.marker())
    atomic_write_parquet(results / RECORDS, kept)
    report(results)
    return (results / CV_FILES[1]).read_text()


def kept_records(
    results: Path, instances: Sequence[str], folds: int, seed: int
) -> tuple[pd.DataFrame, Settings]:
    """The records and seconds of ``results``'s earlier run for the instances
    not in ``instances`` (none if the folder has no records).

    Raises:
        ValueError: If records are kept that were made with other ``folds``
            or ``seed``, or the folder's ``cv.csv`` names instances not
            rerun now but has no records to keep them from.
    """
    path, marker = results / RECORDS, results / REPORT_MARKER
    if not path.is_file():
        summary = results / CV_FILES[0]
        lost = (
            sorted(set(pd.read_csv(summary)["instance"]) - set(instances))
            if summary.is_file()
            else []
        )
        if lost:
            raise ValueError(
                f"Expected {str(path)!r} to keep the rows of {lost} (in "
                f"{str(summary)!r}, not rerun now), got no such file: rerun "
                "them too."
            )
        return pd.DataFrame(), Settings(folds, seed)
    earlier = Settings.read(marker)
    previous = pd.read_parquet(path)
    kept = previous[~previous["instance"].isin(list(instances))].reset_index(drop=True)
    if len(kept) and (earlier.folds, earlier.seed) != (folds, seed):
        raise ValueError(
            f"Expected the kept records of {str(path)!r} to be made with "
            f"{folds} folds and seed {seed}, got {earlier.folds} folds and seed "
            f"{earlier.seed}: rerun every instance."
        )
    seconds = {
        k: v for k, v in earlier.seconds.items() if k.split("/", 1)[0] not in instances
    }
    return kept, Settings(folds, seed, seconds)


def _append(
    kept: pd.DataFrame, settings: Settings, new: pd.DataFrame, key: str, seconds: float
) -> tuple[pd.DataFrame, Settings]:
    frame = new if kept.empty else pd.concat([kept, new], ignore_index=True)
    return frame, replace(settings, seconds={**settings.seconds, key: seconds})


#: The models cross-validated, in order: name -> the fitter of an instance.
MODELS: dict[str, Callable[[str], Fitter]] = {
    "baseline": baseline,
    "reconstruction": reconstruction,
}


def run(
    results: Path,
    instances: Sequence[str],
    folds: int,
    seed: int,
    models: Mapping[str, Callable[[str], Fitter]] = MODELS,
) -> str:
    """Cross-validate each of ``models`` on each instance's visited rows and
    write ``results`` after each (module docstring); returns ``cv.md``'s text.

    Records of instances not in ``instances`` are kept (:func:`kept_records`).
    """
    instances = list(dict.fromkeys(instances))
    kept, settings = kept_records(results, instances, folds, seed)
    text = ""
    for name in instances:
        rows = fitted_rows(name)
        for label, make in models.items():
            start = time.perf_counter()
            cv = cross_validate(
                rows, get_instance(name), make(name), label, folds, seed
            )
            seconds = time.perf_counter() - start
            kept, settings = _append(
                kept, settings, records(name, rows, cv), f"{name}/{label}", seconds
            )
            # After each model: a stopped run keeps what it measured.
            text = save(results, kept, settings)
            print(scores(kept, settings)[-1], flush=True)
    return text


#: Replicate publications of the crash check: 10-trial random searches with
#: fresh seeds (from :data:`CRASH_FIRST_SEED`, disjoint from the published 0-9).
CRASH_REPLICATES = 1000
CRASH_FIRST_SEED = 1000
CRASH_FILES = ("crash_rows.parquet", "crash.csv", "crash.md", "grid_rows.csv")


def crash_check(results: Path, instances: Sequence[str]) -> str:
    """Random search's crash share on each shipped reconstruction, beside the
    published one, and each row's grid rule; writes
    :data:`CRASH_FILES` (the last: per instance and row, the knob columns, the
    :data:`~bolt_pco64.tables.reconstruct.grid.GRID_REASONS` key that put it in the
    grid, its ``source`` and whether it runs).

    The harness's draws are replayed (:func:`~bolt_pco64.tables.reconstruct.replay.crash_share`):
    with the published seeds (the same rows as the published trace), and for
    :data:`CRASH_REPLICATES` fresh 10-trial runs, whose 2.5-97.5 % quantiles
    are the interval the published share is compared with.
    """
    from bolt_pco64.tables.table import load_table
    from bolt_pco64.tables.traces import read_trace

    recs, summary, grids = [], [], []
    for name in instances:
        inst = get_instance(name)
        path = Path(locations.reconstructed_table_path(inst))
        table = load_table(path, instance=name)
        ok = table.frame["ran_successfully"].to_numpy(dtype=bool)
        raw = pd.read_parquet(path)
        grid = raw[[*inst.input_columns, "grid_rule", "source", "ran_successfully"]]
        grids.append(grid.assign(instance=name, row=np.arange(len(raw))))
        for path in locations.trace_paths(inst):
            trace = read_trace(path, inst)
            if trace.method != "random":
                continue
            seeds = [t.seed for t in trace.trials]
            n = len(trace.trials[0].candidates)
            published = float(
                np.mean(np.concatenate([~t.feasible for t in trace.trials]))
            )
            same = crash_share(ok, seeds, 10, n - 10)
            shares = []
            for r in range(CRASH_REPLICATES):
                first = CRASH_FIRST_SEED + r * len(seeds)
                fresh = range(first, first + len(seeds))
                shares.append(crash_share(ok, fresh, 10, n - 10))
                recs.append(
                    {
                        "instance": name,
                        "replicate": r,
                        "first_seed": first,
                        "trials": len(seeds),
                        "evaluations": n,
                        "crash_share": shares[-1],
                    }
                )
            lo, hi = np.quantile(shares, [0.025, 0.975])
            lo99, hi99 = np.quantile(shares, [0.005, 0.995])
            tail = float(np.mean(np.asarray(shares) <= published))
            summary.append(
                {
                    "instance": name,
                    "rows": len(ok),
                    "feasible": int(ok.sum()),
                    "table_crash_share": float(np.mean(~ok)),
                    "published_crash_share": published,
                    "replayed_published_seeds": same,
                    "replicate_mean": float(np.mean(shares)),
                    "interval_low": float(lo),
                    "interval_high": float(hi),
                    "interval99_low": float(lo99),
                    "interval99_high": float(hi99),
                    "p_two_sided": float(min(1.0, 2 * min(tail, 1 - tail + 1e-12))),
                }
            )
    atomic_write_parquet(results / CRASH_FILES[0], pd.DataFrame(recs))
    atomic_write_text(
        results / CRASH_FILES[1], pd.DataFrame(summary).to_csv(index=False)
    )
    lines = [
        "| instance | rows / feasible | crash share of the table | published random "
        "search | replayed, published seeds | replayed, fresh seeds: mean "
        "[95 % interval] | 99 % interval | two-sided p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['instance']} | {r['rows']} / {r['feasible']} "
            f"| {100 * r['table_crash_share']:.1f} % "
            f"| {100 * r['published_crash_share']:.1f} % "
            f"| {100 * r['replayed_published_seeds']:.1f} % "
            f"| {100 * r['replicate_mean']:.1f} % [{100 * r['interval_low']:.1f}, "
            f"{100 * r['interval_high']:.1f}] % "
            f"| [{100 * r['interval99_low']:.1f}, {100 * r['interval99_high']:.1f}] % "
            f"| {r['p_two_sided']:.3f} |"
        )
    text = "\n".join(lines) + "\n"
    atomic_write_text(results / CRASH_FILES[2], text)
    grid_rows = pd.concat(grids, ignore_index=True)
    first = ["instance", "row", "grid_rule", "source", "ran_successfully"]
    grid_rows = grid_rows[first + [c for c in grid_rows.columns if c not in first]]
    atomic_write_text(results / CRASH_FILES[3], grid_rows.to_csv(index=False))
    return text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", nargs="+", default=["pco64", "pco32", "pco16"])
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", type=Path, default=Path("docs/results/reconstruction"))
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="Run nothing: rewrite DIR/cv.csv and DIR/cv.md from DIR's records "
        "and report.json, and print the files written.",
    )
    p.add_argument(
        "--crash",
        action="store_true",
        help="Run only the crash-share check of the shipped reconstructions "
        "(crash_rows.parquet, crash.csv, crash.md in --results).",
    )
    args = p.parse_args()
    if args.crash:
        print(crash_check(args.results, args.instances))
        return
    if args.report is not None:
        print("\n".join(str(path) for path in report(args.report)))
        return
    print(run(args.results, args.instances, args.folds, args.seed))


if __name__ == "__main__":
    main()
