"""External check of the harness: its random search beside the published one.

What it does, on one problem (default pco64):

1. runs this package's ``random`` method (:mod:`bolt_pco64.bench`) with
   observation noise 0.001 and the traces' budget (110 evaluations on pco64)
   on the shipped reconstruction of the measured table, for ``--seeds``
   seeds;
2. reads the published random-search trials made on the measured table
   (:func:`bolt_pco64.tables.traces.read_trace`): their ``simple_regret_all``
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
4. writes into ``--results`` the per-evaluation records
   ``harness_records.parquet`` and ``trace_records.parquet`` (zstd), the
   marker ``report.json`` (``{"script": "trace_check", "problem", "seeds",
   "budget", "noise", "table", "seconds"}``: the run's settings, the table
   file's name and the measured wall time of the harness run), then the
   table ``check.md`` (``RESULTS/README.md`` quotes it) and ``check.csv``
   from those three files alone (:func:`write_check`).

``--report DIR`` runs nothing: it rewrites ``DIR/check.csv`` and
``DIR/check.md`` from ``DIR``'s two record files and ``DIR/report.json``
and prints their paths, one per line (``benchmarks/report_results.py DIR`` calls it:
the marker names this script).

Which trace entries were recorded. In ``trace_records.parquet`` the
``regret`` of an evaluation before a trial's first recorded entry is the
computed one (:func:`trace_records`), so ``regret`` alone does not tell a
recorded entry from a filled one; ``inference_regret`` does: it is the
trace's ``best_obs_regret_all`` entry, left NaN where there is none, and
:func:`~bolt_pco64.tables.traces.read_trace` accepts only finite
``best_obs_regret_all`` of the length of ``simple_regret_all``. So an
evaluation's ``simple_regret_all`` entry was recorded exactly where its
``inference_regret`` is not NaN, and the report counts the agreement of the
computed regret with the recorded one there, from the records as shipped,
without reading the traces or the table again.

Run::

    python benchmarks/trace_check.py --seeds 40 --results docs/results/trace-check
    python benchmarks/trace_check.py --report docs/results/trace-check
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, mannwhitneyu

from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.bench import ComparisonSpec, SingleTable, run_comparison
from bolt_pco64.bench.regenerate import read_script_marker
from bolt_pco64.instances import get_instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.table import Table, load_table
from bolt_pco64.tables.traces import OOM_SLACK, read_trace

CHECKPOINTS = (10, 30, 60, 110)
#: The marker of this script's folder (``benchmarks/report_results.py DIR``).
REPORT_MARKER = "report.json"
#: The per-evaluation records the report is computed from.
HARNESS_RECORDS = "harness_records.parquet"
TRACE_RECORDS = "trace_records.parquet"
#: The files :func:`write_check` writes.
CHECK_FILES = ("check.csv", "check.md")
#: Each compared regret: the harness's column, the traces' column, its label.
REGRETS = (
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
)


@dataclass(frozen=True)
class Settings:
    """A run's settings and wall time, as ``report.json`` keeps them."""

    problem: str
    seeds: int
    budget: int
    noise: float
    table: str  #: the table file's name
    seconds: float  #: measured wall time of the harness run

    def marker(self) -> str:
        """The text of ``report.json``."""
        return json.dumps({"script": "trace_check", **asdict(self)}, indent=2) + "\n"

    @classmethod
    def read(cls, path: Path) -> Settings:
        """The settings ``report.json`` at ``path`` holds."""
        data = read_script_marker(path, "trace_check")
        missing = [f.name for f in fields(cls) if f.name not in data]
        if missing:
            raise ValueError(f"Expected {str(path)!r} to give {missing}, got {data!r}.")
        return cls(
            problem=str(data["problem"]),
            seeds=int(data["seeds"]),
            budget=int(data["budget"]),
            noise=float(data["noise"]),
            table=str(data["table"]),
            seconds=float(data["seconds"]),
        )


def trace_records(problem: str, table: Table) -> pd.DataFrame:
    """One row per evaluation of the published random-search trials.

    ``regret`` is the trace's ``simple_regret_all`` entry where it has one,
    else ``computed_regret`` (from the candidates and ``table``);
    ``inference_regret`` is its ``best_obs_regret_all`` entry, NaN where it
    has none.
    """
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
                if c != OOM_SLACK:
                    best = max(best, tm[row])
                s = i - first
                computed = trace.optimal_value - best
                out.append(
                    {
                        "source": "trace",
                        "trial": trial.seed,
                        "iteration": i + 1,
                        "row": row,
                        "seen_y": y,
                        "seen_c": c,
                        "computed_regret": computed,
                        "regret": trial.simple_regret[s] if s >= 0 else computed,
                        "inference_regret": trial.best_obs_regret[s]
                        if s >= 0
                        else np.nan,
                    }
                )
    return pd.DataFrame(out)


def _stats(values: np.ndarray) -> str:
    q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    return f"{med:.4f} [{q1:.4f}, {q3:.4f}]"


def write_check(
    results: Path, harness: pd.DataFrame, traces: pd.DataFrame, settings: Settings
) -> list[str]:
    """Write ``results/check.csv`` and ``results/check.md``; returns the lines
    of ``check.md``.

    Args:
        results: The folder.
        harness: The harness's records (``harness_records.parquet``).
        traces: The traces' records (``trace_records.parquet``, as
            :func:`trace_records` makes them).
        settings: The run's settings (``report.json``).
    """
    # Recorded entries: those with a best_obs_regret_all entry (module docstring).
    recorded = traces[traces["inference_regret"].notna()]
    agree = np.isclose(
        recorded["computed_regret"], recorded["regret"], atol=1e-12, rtol=0
    )
    rows = []
    for n in CHECKPOINTS:
        h = harness[harness["iteration"] == n]
        t = traces[traces["iteration"] == n]
        for ours, theirs, what in REGRETS:
            a = h[ours].to_numpy(dtype=float)
            b = t[theirs].dropna().to_numpy(dtype=float)
            if len(a) == 0 or len(b) == 0:
                continue  # a checkpoint past the harness's budget, or no trace
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
    csv_path, md_path = (results / name for name in CHECK_FILES)
    atomic_write_text(csv_path, pd.DataFrame(rows).to_csv(index=False))
    lines = [
        f"Harness: `random`, {settings.seeds} seeds x {settings.budget} evaluations, "
        f"noise {settings.noise}, on `{settings.table}` ({settings.seconds:.0f} s). "
        f"Traces: {traces['trial'].nunique()} published trials. "
        "Regret: median [quartiles].",
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
    atomic_write_text(md_path, "\n".join(lines) + "\n")
    return lines


def report(results: Path) -> list[Path]:
    """Rewrite ``results``'s ``check.csv`` and ``check.md`` from its records
    and ``report.json``; runs nothing. Returns the files written."""
    settings = Settings.read(results / REPORT_MARKER)
    harness = pd.read_parquet(results / HARNESS_RECORDS)
    traces = pd.read_parquet(results / TRACE_RECORDS)
    write_check(results, harness, traces, settings)
    return [results / name for name in CHECK_FILES]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="pco64")
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--budget", type=int, default=110)
    p.add_argument("--noise", type=float, default=0.001)
    p.add_argument("--results", type=Path, default=Path("docs/results/trace-check"))
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="Run nothing: rewrite DIR/check.csv and DIR/check.md from DIR's "
        "records and report.json, and print the files written.",
    )
    args = p.parse_args()
    if args.report is not None:
        print("\n".join(str(path) for path in report(args.report)))
        return
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
    settings = Settings(
        args.problem, args.seeds, args.budget, args.noise, path.name, seconds
    )
    harness = result.records
    traces = trace_records(args.problem, table)
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_parquet(args.results / HARNESS_RECORDS, harness)
    atomic_write_parquet(args.results / TRACE_RECORDS, traces)
    atomic_write_text(args.results / REPORT_MARKER, settings.marker())
    print("\n".join(write_check(args.results, harness, traces, settings)))


if __name__ == "__main__":
    main()
