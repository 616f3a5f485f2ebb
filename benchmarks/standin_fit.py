"""The stand-in against the published traces, before and after fitting its constants.

What it does (issue 27, point 3), on pco64's visited rows
(:func:`bolt_pco64.traces.visited_rows`: 643 configurations, exact
feasibility, exact peak memory where the run fitted, observed or exact
throughput):

1. splits the visited rows into ``--folds`` folds (seeded shuffle);
2. **before**: each stand-in variant as 2.1 shipped it (its reading with the
   2.1 constants, :data:`bolt_pco64.simulate.variants.READINGS`, calibrated
   to the card: the 2.1 table) on each held-out fold -- nothing is fitted,
   so every row is held out;
3. **after, shipped**: each variant's step-time constants fitted on the other
   folds (``memory=False``), calibrated to the card as the generator does
   (:func:`bolt_pco64.simulate.calibrate.build_model`): what 3.0 ships;
4. **after, full fit**: for each reading -- the traces' reading
   (:data:`bolt_pco64.simulate.fit.TRACE_READINGS`) and each shipped
   variant's -- its constants fitted on the other folds
   (:func:`bolt_pco64.simulate.fit.fit_variant`: memory constants, overhead
   and capacity on peaks and feasibility; step-time constants and efficiency
   on throughput) and predicted on the held-out fold
   (:func:`bolt_pco64.simulate.fit.predict`);
5. per model and fold: feasibility agreement, throughput Spearman on the rows
   that ran in both, median absolute and signed peak-memory error (GB) on the
   rows that ran (measured), median relative throughput error; writes
   ``OUT/folds.csv`` and ``OUT/summary.csv`` (mean over folds) and prints the
   summary as a Markdown table.

Run (about 10 minutes on a busy two-core machine)::

    python benchmarks/standin_fit.py --folds 5 --seed 0 --out docs/results/standin3

``--constants`` prints each variant's step-time constants fitted to every
visited row (what :data:`bolt_pco64.simulate.variants.TRACE_STEPTIME`
holds, rounded); ``--readings`` scans memory readings near the traces' one,
each fitted to every visited row, into ``OUT/readings.csv``.
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from bolt_pco64._io import atomic_write_text
from bolt_pco64.instances import get_instance
from bolt_pco64.simulate import fit
from bolt_pco64.simulate.calibrate import StandinModel, build_model
from bolt_pco64.simulate.grid import candidate_configurations
from bolt_pco64.simulate.spec import Microbatching
from bolt_pco64.simulate.variants import READINGS
from bolt_pco64.standins import STANDIN_VARIANTS
from bolt_pco64.traces import visited_rows

#: Efficiency the step-time fit starts from (stand-in 2.1's fitted value).
START_EFFICIENCY = 0.59


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


def standin_rows(model: StandinModel, rows: pd.DataFrame) -> pd.DataFrame:
    """A calibrated stand-in model's values at the visited configurations."""
    inst = model.instance
    where = {c.encoded(inst): i for i, c in enumerate(model.configs)}
    keys = [f"x_{n}" for n in inst.input_columns]
    idx = np.array([where[tuple(int(v) for v in r)] for r in rows[keys].to_numpy()])
    feasible = model.feasible[idx]
    peaks = np.array([p.max() for p in model.peaks])[idx]
    return pd.DataFrame(
        {
            "ran_successfully": feasible,
            "peak_mem": np.where(feasible, peaks, np.inf),
            "throughput_mean": np.where(
                feasible, model.estimate.throughput[idx], np.nan
            ),
        },
        index=rows.index,
    )


def steptime_constants(instance: str) -> str:
    """The step-time constants of each shipped variant fitted to every visited row."""
    inst = get_instance(instance)
    rows = visited_rows(inst)
    lines = []
    for name, v in READINGS[inst.name].items():
        fitted = fit.fit_variant(
            inst, v, rows, efficiency=START_EFFICIENCY, memory=False
        )
        values = fit.steptime_vector(
            fitted.variant.assumptions, fitted.variant.constants, fitted.efficiency
        )
        named = {
            n: float(f"{x:.4g}")
            for (n, _, _), x in zip(fit.STEPTIME_CONSTANTS, values, strict=False)
        }
        lines.append(f"{inst.name} {name}: {named}")
    return "\n".join(lines)


def reading_scan(instance: str) -> pd.DataFrame:
    """Memory readings near the traces' one, each fitted to every visited row.

    Per reading: the median absolute peak error (GB) on the rows that ran,
    the feasibility agreement at the fitted capacity, the configurations of
    the whole grid under that capacity and the rank of the card's best among
    them (a card-calibrated cut needs it within the published feasible count).
    """
    inst = get_instance(instance)
    rows = visited_rows(inst)
    ran = rows["ran_successfully"].to_numpy(dtype=bool)
    grid = candidate_configurations(inst)
    where = {c.encoded(inst): i for i, c in enumerate(grid)}
    keys = [f"x_{n}" for n in inst.input_columns]
    idx = np.array([where[tuple(int(v) for v in r)] for r in rows[keys].to_numpy()])
    best = where[tuple(inst.published.best_config)]
    start = fit.TRACE_READINGS[inst.name]
    out = []
    for unpiped, piped, zero0, vocab in itertools.product(
        (
            Microbatching("count", 1),
            Microbatching("count", 2),
            Microbatching("size", 1),
        ),
        (
            Microbatching("per_stage", 2),
            Microbatching("per_stage", 4),
            Microbatching("count", 16),
            Microbatching("count", 32),
        ),
        ("distributed", "zero1"),
        (32000, 151936),
    ):
        a = replace(
            start.assumptions,
            micro_unpipelined=unpiped,
            micro_pipelined=piped,
            zero0=zero0,
            vocab_size=vocab,
        )
        reading = replace(start, assumptions=a)
        basis = fit.memory_basis(inst, reading, grid)
        visited = fit.MemoryBasis(basis.base[idx], basis.terms[idx], basis.spread[idx])
        k, overhead, cap = fit.fit_memory(
            visited, rows["peak_mem"].to_numpy(dtype=float), ran, reading.constants
        )
        peak = fit.predict_peak(basis, fit.theta_of(k), overhead)
        err = peak[idx][ran] - rows["peak_mem"].to_numpy(dtype=float)[ran]
        out.append(
            {
                "pp=1": unpiped.describe(),
                "pp>1": piped.describe(),
                "zero0": zero0,
                "vocab": vocab,
                "peak_error_median_abs_gb": float(np.median(np.abs(err))),
                "feasibility_agreement": float(((peak[idx] <= cap) == ran).mean()),
                "capacity_gb": cap,
                "grid_under_capacity": int((peak <= cap).sum()),
                "best_rank": int((peak < peak[best]).sum()) + 1,
            }
        )
    return pd.DataFrame.from_records(out)


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
    args = parser.parse_args()
    if args.readings:
        scan = reading_scan(args.instance)
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "readings.csv", scan.to_csv(index=False))
        print(scan.round(3).to_string())
        return
    if args.constants:
        print(steptime_constants(args.instance))
        return
    inst = get_instance(args.instance)
    rows = visited_rows(inst)
    rng = np.random.default_rng(args.seed)
    fold = rng.permutation(np.arange(len(rows)) % args.folds)
    readings = {"traces": fit.TRACE_READINGS[inst.name]}
    readings.update(READINGS[inst.name])
    records = []
    t0 = time.perf_counter()
    before = {
        v: standin_rows(build_model(inst, 0, READINGS[inst.name][v]), rows)
        for v in STANDIN_VARIANTS[inst.name]
    }
    for f in range(args.folds):
        test = fold == f
        for v, values in before.items():
            records.append(
                {
                    "model": f"2.1 {v} (as shipped)",
                    "fold": f,
                    **scores(rows[test], values[test]),
                }
            )
        for name, v in READINGS[inst.name].items():
            fitted = fit.fit_variant(
                inst, v, rows[~test], efficiency=START_EFFICIENCY, memory=False
            )
            model = build_model(inst, 0, fitted.variant)
            records.append(
                {
                    "model": f"3.0 {name} (step time fitted, card-calibrated)",
                    "fold": f,
                    **scores(rows[test], standin_rows(model, rows[test])),
                }
            )
        for name, reading in readings.items():
            fitted = fit.fit_variant(
                inst, reading, rows[~test], efficiency=START_EFFICIENCY
            )
            pred = fit.predict(inst, fitted, rows[test])
            records.append(
                {
                    "model": f"3.0 fit, {name} reading",
                    "fold": f,
                    **scores(rows[test], pred),
                }
            )
        print(f"fold {f} done, {time.perf_counter() - t0:.0f} s", flush=True)
    folds = pd.DataFrame.from_records(records)
    summary = folds.drop(columns="fold").groupby("model", sort=False).mean()
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "folds.csv", folds.to_csv(index=False))
    atomic_write_text(args.out / "summary.csv", summary.to_csv())
    print(summary.round(3).to_string())
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
