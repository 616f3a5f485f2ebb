"""Cross-validated accuracy of the reconstruction's imputation, beside the bar.

What it does (issue 27, point 1), per instance (default all three):

1. reads the visited rows of the shipped traces
   (:func:`bolt_pco64.traces.visited_rows`);
2. 5-fold cross-validation (rows shuffled with seed 0) of two imputations,
   each fitted to four folds and predicting the fifth:

   - ``baseline``: the issue's bar, a plain ``SingleTaskGP`` on the encoded
     inputs (normalised to the bounds, outcome standardised): one on the
     ``±1`` feasibility labels (runs where the mean is > 0), one on the
     throughput of the rows that ran;
   - ``reconstruction``: :class:`bolt_pco64.reconstruct.impute.Imputer`, the
     models the shipped tables are imputed with;

3. reports feasibility accuracy, throughput Spearman and median relative
   error on held-out rows that ran, the median absolute peak-memory error
   and the coverage of the ±1.96 standard-error interval (the reconstruction
   only), and writes ``RESULTS/README.md``'s table (``cv.md``) and
   ``cv.csv``. Rows of instances not named by ``--instances`` are kept from
   the folder's existing ``cv.csv``, so one instance can be rerun alone.

Run::

    python benchmarks/reconstruction_cv.py --results docs/results/reconstruction
    python benchmarks/reconstruction_cv.py --instances pco16 --results docs/results/reconstruction
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from bolt_pco64._io import atomic_write_text
from bolt_pco64.instances import get_instance
from bolt_pco64.reconstruct.impute import (
    CrossValidation,
    Fitter,
    Imputation,
    Imputer,
    _fit,
    _posterior,
    cross_validate,
    deterministic,
    encoded,
)
from bolt_pco64.traces import visited_rows


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
            return Imputation(nan, mu > 0, tm, ts, nan, nan)

        return predict

    return fitter


def reconstruction(instance_name: str) -> Fitter:
    inst = get_instance(instance_name)

    def fitter(rows: pd.DataFrame) -> Callable[[np.ndarray], Imputation]:
        return Imputer(inst).fit(rows).predict

    return fitter


def _row(instance: str, rows: int, cv: CrossValidation, seconds: float) -> dict:
    return {
        "instance": instance,
        "model": cv.name,
        "visited_rows": rows,
        "feasibility_accuracy": cv.feasibility_accuracy,
        "throughput_spearman": cv.throughput_spearman,
        "median_relative_error": cv.median_relative_error,
        "peak_mem_median_abs_error_gb": cv.peak_mem_median_abs_error,
        "coverage_95": cv.coverage_95,
        "seconds": seconds,
    }


def _write(results: Path, out: list[dict]) -> str:
    """Write ``cv.csv`` and ``cv.md`` from the rows so far; return the table."""
    results.mkdir(parents=True, exist_ok=True)
    atomic_write_text(results / "cv.csv", pd.DataFrame(out).to_csv(index=False))
    lines = [
        "| instance | model | visited rows | feasibility accuracy | throughput Spearman "
        "| median relative error | peak-memory error (median, GB) "
        "| 95 % interval coverage |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in out:
        mem = r["peak_mem_median_abs_error_gb"]
        lines.append(
            f"| {r['instance']} | {r['model']} | {r['visited_rows']} "
            f"| {100 * r['feasibility_accuracy']:.1f} % | {r['throughput_spearman']:.4f} "
            f"| {100 * r['median_relative_error']:.2f} % "
            f"| {'—' if np.isnan(mem) else f'{mem:.2f}'} "
            f"| {100 * r['coverage_95']:.1f} % |"
        )
    text = "\n".join(lines) + "\n"
    atomic_write_text(results / "cv.md", text)
    return text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", nargs="+", default=["pco64", "pco32", "pco16"])
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", type=Path, default=Path("docs/results/reconstruction"))
    args = p.parse_args()
    # Rows of instances not rerun now are kept from an earlier run's cv.csv.
    previous = args.results / "cv.csv"
    out: list[dict] = (
        [
            r
            for r in pd.read_csv(previous).to_dict("records")
            if r["instance"] not in args.instances
        ]
        if previous.is_file()
        else []
    )
    for name in args.instances:
        rows = visited_rows(name)
        for label, make in (("baseline", baseline), ("reconstruction", reconstruction)):
            start = time.perf_counter()
            cv = cross_validate(
                rows, get_instance(name), make(name), label, args.folds, args.seed
            )
            out.append(_row(name, len(rows), cv, time.perf_counter() - start))
            print(out[-1], flush=True)
            text = _write(args.results, out)  # after each model: a stopped run keeps it
    print(text)


if __name__ == "__main__":
    main()
