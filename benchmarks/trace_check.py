"""External check of the harness: its random search beside the published one.

What it does (issue 27, point 4), on one problem (default pco64):

1. runs this package's ``random`` method (:mod:`bolt_pco64.bench`) with
   observation noise 0.001 and the traces' budget (110 evaluations on pco64)
   on the shipped reconstruction of the measured table, for ``--seeds``
   seeds;
2. reads the published random-search trials made on the measured table
   (:func:`bolt_pco64.traces.read_trace`): their ``simple_regret_all``
   (lowest true regret among the configurations evaluated so far) and
   ``best_obs_regret_all`` (true regret of the best *observed* one), whose
   entry ``s`` covers evaluations ``0 .. 10 + s``; at 10 evaluations, before
   the first entry, the regret is computed from the trial's candidates and
   the reconstruction's throughputs (exact for the top rows), and that
   computation is checked against every recorded entry;
3. puts the harness's ``regret`` (simple regret) beside ``simple_regret_all``
   and its ``inference_regret`` (for a model-free method: the best observed
   row's true regret) beside ``best_obs_regret_all``: median and quartiles
   at 10, 30, 60 and 110 evaluations, Mann-Whitney U and two-sample KS
   p-values (scipy);
4. writes ``RESULTS/README.md``'s table (``check.md``), ``check.csv``,
   ``harness_records.parquet`` and ``trace_records.parquet`` (per evaluation,
   zstd).

Run::

    python benchmarks/trace_check.py --seeds 40 --results docs/results/trace-check
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, mannwhitneyu

from bolt_pco64 import locations
from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.bench import ComparisonSpec, SingleTable, run_comparison
from bolt_pco64.instances import get_instance
from bolt_pco64.table import Table, load_table
from bolt_pco64.traces import read_trace

CHECKPOINTS = (10, 30, 60, 110)


def trace_records(problem: str, table: Table) -> pd.DataFrame:
    """One row per evaluation of the published random-search trials."""
    inst = get_instance(problem)
    files = [p for p in locations.trace_paths(inst) if "_random_" in p.name]
    key = {tuple(int(v) for v in x): i for i, x in enumerate(table.X.tolist())}
    tm = table.frame["throughput_mean"].to_numpy()
    out = []
    for path in files:
        trace = read_trace(path, inst)
        for trial in trace.trials:
            n = len(trial.candidates)
            first = n - len(trial.simple_regret)  # entry s covers 0 .. first + s
            best = -np.inf
            for i, (x, y, c) in enumerate(
                zip(trial.candidates.tolist(), trial.seen_y, trial.seen_c, strict=True)
            ):
                row = key[tuple(x)]
                if c != -0.2:
                    best = max(best, tm[row])
                s = i - first
                out.append(
                    {
                        "source": "trace",
                        "trial": trial.seed,
                        "iteration": i + 1,
                        "row": row,
                        "seen_y": y,
                        "seen_c": c,
                        "computed_regret": trace.optimal_value - best,
                        "regret": trial.simple_regret[s] if s >= 0 else np.nan,
                        "inference_regret": trial.best_obs_regret[s]
                        if s >= 0
                        else np.nan,
                    }
                )
    return pd.DataFrame(out)


def _stats(values: np.ndarray) -> str:
    q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    return f"{med:.4f} [{q1:.4f}, {q3:.4f}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="pco64")
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--budget", type=int, default=110)
    p.add_argument("--noise", type=float, default=0.001)
    p.add_argument("--results", type=Path, default=Path("docs/results/trace-check"))
    args = p.parse_args()
    inst = get_instance(args.problem)
    path = locations.reconstructed_table_path(inst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load_table(path, instance=inst)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            result = run_comparison(
                ComparisonSpec(
                    ["random"], seeds=args.seeds, budget=args.budget, noise=args.noise
                ),
                SingleTable(table, inst),
                out=Path(tmp) / "out",
                progress=False,
            )
        seconds = time.perf_counter() - start
    harness = result.records
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_with(
        args.results / "harness_records.parquet",
        lambda tmp: harness.to_parquet(tmp, compression="zstd", index=False),
    )
    traces = trace_records(args.problem, table)
    recorded = traces.dropna(subset=["regret"])
    agree = np.isclose(
        recorded["computed_regret"], recorded["regret"], atol=1e-12, rtol=0
    )
    traces.loc[traces["regret"].isna(), "regret"] = traces["computed_regret"]

    rows = []
    for n in CHECKPOINTS:
        h = harness[harness["iteration"] == n]
        t = traces[traces["iteration"] == n]
        for ours, theirs, what in (
            (
                "regret",
                "regret",
                "simple regret (harness `regret` / traces `simple_regret_all`)",
            ),
            (
                "inference_regret",
                "inference_regret",
                "best-observed regret (harness `inference_regret` / traces `best_obs_regret_all`)",
            ),
        ):
            a = h[ours].to_numpy(dtype=float)
            b = t[theirs].dropna().to_numpy(dtype=float)
            if len(b) == 0:
                continue
            rows.append(
                {
                    "evaluations": n,
                    "regret": what,
                    "harness_runs": len(a),
                    "trace_trials": len(b),
                    "harness": _stats(a),
                    "traces": _stats(b),
                    "mannwhitney_p": mannwhitneyu(a, b).pvalue,
                    "ks_p": ks_2samp(a, b).pvalue,
                }
            )
    check = pd.DataFrame(rows)
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.results / "check.csv", check.to_csv(index=False))
    atomic_write_with(
        args.results / "trace_records.parquet",
        lambda tmp: traces.to_parquet(tmp, compression="zstd", index=False),
    )
    lines = [
        f"Harness: `random`, {args.seeds} seeds x {args.budget} evaluations, noise "
        f"{args.noise}, on `{path.name}` ({seconds:.0f} s). Traces: "
        f"{traces['trial'].nunique()} published trials. Regret: median [quartiles].",
        "",
        "| evaluations | regret | harness | traces | Mann-Whitney p | KS p |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r['evaluations']} | {r['regret']} | {r['harness']} | {r['traces']} "
            f"| {r['mannwhitney_p']:.3f} | {r['ks_p']:.3f} |"
            for r in rows
        ),
        "",
        f"The regret computed from the traces' candidates and the reconstruction "
        f"equals the recorded `simple_regret_all` at {int(agree.sum())} of "
        f"{len(agree)} recorded entries.",
        f"Repeats in the traces: {int(traces.duplicated(['trial', 'row']).sum())} of "
        f"{len(traces)} evaluations; in the harness: "
        f"{int(harness.duplicated(['seed', 'row']).sum())} of {len(harness)}.",
    ]
    atomic_write_text(args.results / "check.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
