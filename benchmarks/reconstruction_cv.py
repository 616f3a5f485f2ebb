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
   predictions ``predicted_feasible``, ``predicted_feasible_probability``,
   the prediction set ``predicted_set_runs`` / ``predicted_set_fails``,
   ``predicted_throughput``, ``predicted_throughput_se``,
   ``predicted_peak_mem`` and ``predicted_peak_mem_se``; NaN probabilities,
   no set and no peak memory for the baseline) and the marker
   ``report.json`` (``{"script":
   "reconstruction_cv", "folds", "seed", "seconds": {"<instance>/<model>":
   wall seconds}}``), then the table ``cv.md`` (``RESULTS/README.md``
   quotes it) and ``cv.csv`` from those two files alone (:func:`write_cv`):
   feasibility accuracy, throughput Spearman and median relative error on
   held-out rows that ran, the median absolute peak-memory error, the
   coverage of the ±1.96 standard-error intervals and of the feasibility
   prediction set, and the probability's calibration
   (:func:`~bolt_pco64.tables.reconstruct.impute.score_predictions` of the
   records). A stopped run keeps the models it finished.

``--crash`` runs only the crash-share check of the shipped reconstructions
(``crash_check`` of the sibling module ``_reconstruction_crash.py``).

Records of instances not named by ``--instances``, and of models not named by
``--models``, are kept from the folder's ``cv_rows.parquet`` (and their
seconds from its ``report.json``), so one instance or model can be rerun
alone; the kept records must have been made with the same ``--folds`` and
``--seed``. Records are written grouped by instance (in the order first seen),
then by model (``baseline``, ``reconstruction``).

``--report DIR`` runs nothing: it rewrites ``DIR/cv.csv`` and ``DIR/cv.md``
from ``DIR/cv_rows.parquet`` and ``DIR/report.json`` and prints their paths,
one per line (``benchmarks/report_results.py DIR`` calls it: the marker names this
script).

Run::

    python benchmarks/reconstruction_cv.py --results docs/results/reconstruction
    python benchmarks/reconstruction_cv.py --instances pco16 --results docs/results/reconstruction
    python benchmarks/reconstruction_cv.py --models reconstruction --results docs/results/reconstruction
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
from _reconstruction_crash import crash_check

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
            none = np.zeros(len(Xt), dtype=bool)  # no probabilities, no set
            return Imputation(nan, mu > 0, none, none, tm, ts, nan, nan)

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


def _with_sets(kept: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Kept records made before the prediction-set columns: a model without
    probabilities has no set (both False, as it predicts now); one with
    probabilities must be rerun."""
    missing = [PREDICTED[c] for c in ("set_runs", "set_fails")]
    if kept.empty or not set(missing) - set(kept.columns):
        return kept
    probs = kept.groupby("model")["predicted_feasible_probability"]
    calibrated = sorted(
        m for m, has in probs.apply(lambda p: p.notna().any()).items() if has
    )
    if calibrated:
        raise ValueError(
            f"Expected the kept records of {str(path)!r} to give "
            f"{missing}, got none for the models {calibrated}, which give "
            "probabilities: rerun them."
        )
    out = kept.copy()
    at = out.columns.get_loc(PREDICTED["feasible_probability"]) + 1
    for i, name in enumerate(missing):
        out.insert(at + i, name, False)
    return out


def kept_records(
    results: Path,
    instances: Sequence[str],
    folds: int,
    seed: int,
    models: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, Settings]:
    """The records and seconds of ``results``'s earlier run for the instances
    not in ``instances``, and for the models not in ``models`` (``None``:
    all are rerun) of those that are (none if the folder has no records).

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
    rerun = previous["instance"].isin(list(instances))
    if models is not None:
        rerun &= previous["model"].isin(list(models))
    kept = _with_sets(previous[~rerun].reset_index(drop=True), path)
    if len(kept) and (earlier.folds, earlier.seed) != (folds, seed):
        raise ValueError(
            f"Expected the kept records of {str(path)!r} to be made with "
            f"{folds} folds and seed {seed}, got {earlier.folds} folds and seed "
            f"{earlier.seed}: rerun every instance."
        )
    keys = (
        set(zip(kept["instance"], kept["model"], strict=True)) if len(kept) else set()
    )
    seconds = {
        k: v
        for k, v in earlier.seconds.items()
        if k.split("/", 1)[0] not in instances or tuple(k.split("/", 1)) in keys
    }
    return kept, Settings(folds, seed, seconds)


def _append(
    kept: pd.DataFrame, settings: Settings, new: pd.DataFrame, key: str, seconds: float
) -> tuple[pd.DataFrame, Settings]:
    frame = new if kept.empty else pd.concat([kept, new], ignore_index=True)
    # Grouped by instance (first seen), then by model in MODELS' order.
    instance = pd.Categorical(frame["instance"], list(dict.fromkeys(frame["instance"])))
    model = frame["model"].map({m: i for i, m in enumerate(MODELS)}).fillna(len(MODELS))
    order = np.lexsort((np.arange(len(frame)), model.to_numpy(), instance.codes))
    frame = frame.iloc[order].reset_index(drop=True)
    every = {**settings.seconds, key: seconds}
    groups = dict.fromkeys(
        f"{i}/{m}" for i, m in zip(frame["instance"], frame["model"], strict=True)
    )
    ordered = {k: every[k] for k in groups if k in every}
    return frame, replace(settings, seconds={**ordered, **every})


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

    Records of instances not in ``instances``, and of models not in
    ``models``, are kept (:func:`kept_records`).
    """
    instances = list(dict.fromkeys(instances))
    kept, settings = kept_records(results, instances, folds, seed, list(models))
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
            done = {(r["instance"], r["model"]): r for r in scores(kept, settings)}
            print(done[(name, label)], flush=True)
    return text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", nargs="+", default=["pco64", "pco32", "pco16"])
    p.add_argument(
        "--models",
        nargs="+",
        choices=list(MODELS),
        default=list(MODELS),
        help="The models to rerun; the folder's records of the others are kept.",
    )
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
    models = {name: MODELS[name] for name in args.models}
    print(run(args.results, args.instances, args.folds, args.seed, models))


if __name__ == "__main__":
    main()
