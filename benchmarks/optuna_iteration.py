"""Time a harness iteration of ``optuna_gp`` at 40 observations against ``qlognei``.

A harness iteration is one proposal step of a run (``bolt_pco64.bench.run``):
for ``optuna_gp`` telling the previous evaluation to the study and asking
Optuna's ``GPSampler`` for the next trial (its GP fit and acquisition
optimisation), for ``qlognei`` fitting the constrained GPs (warm-started) and
scoring the untried candidates. Each method runs ``--seeds`` runs of 41
evaluations (10 of them the shared initial design) on the table, as the
harness does (one torch thread); the iteration that proposes the 41st
evaluation sees 40 observations. Its wall time is the record's
``fit_seconds + acq_seconds``. The script prints it per seed, the medians
and their ratio, and the median over the steps at 36-40 observations as a
steadier figure.

Run: ``python benchmarks/optuna_iteration.py [--seeds 3] [--table PATH]``
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import optuna

from bolt_pco64 import load_table
from bolt_pco64.bench import BenchConfig
from bolt_pco64.bench.run import run_one
from bolt_pco64.integrations.optuna import OptunaGP

OBSERVATIONS = 40


def step_seconds(method: str, seed: int, table: object) -> list[float]:
    """Seconds of the steps at 36..40 observations of one run (last: 40)."""
    fn = OptunaGP() if method == "optuna_gp" else None
    config = BenchConfig(budget=OBSERVATIONS + 1, n_init=10)
    outcome = run_one(method, seed, table, config, fn=fn)  # type: ignore[arg-type]
    if not outcome.ok:
        raise RuntimeError(f"{method} seed {seed}: {outcome.error}")
    rec = outcome.records
    seconds = (rec["fit_seconds"] + rec["acq_seconds"]).tolist()
    # Record i (0-based) was proposed by the step that had seen i evaluations.
    return seconds[OBSERVATIONS - 4 : OBSERVATIONS + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--table", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    table = load_table(args.table)
    print(f"table: {table.source}")
    at_40: dict[str, list[float]] = {}
    near_40: dict[str, list[float]] = {}
    for method in ("qlognei", "optuna_gp"):
        for seed in range(args.seeds):
            steps = step_seconds(method, seed, table)
            at_40.setdefault(method, []).append(steps[-1])
            near_40.setdefault(method, []).extend(steps)
            print(
                f"{method:10} seed {seed}: {steps[-1]:.3f} s at {OBSERVATIONS} "
                f"observations (36-40: {', '.join(f'{s:.3f}' for s in steps)})",
                flush=True,
            )
    med = {m: statistics.median(v) for m, v in at_40.items()}
    near = {m: statistics.median(v) for m, v in near_40.items()}
    print(
        f"median at {OBSERVATIONS} observations: qlognei {med['qlognei']:.3f} s, "
        f"optuna_gp {med['optuna_gp']:.3f} s, ratio "
        f"{med['optuna_gp'] / med['qlognei']:.2f}"
    )
    print(
        f"median at 36-40 observations: qlognei {near['qlognei']:.3f} s, "
        f"optuna_gp {near['optuna_gp']:.3f} s, ratio "
        f"{near['optuna_gp'] / near['qlognei']:.2f}"
    )


if __name__ == "__main__":
    main()
