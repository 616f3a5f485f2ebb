"""A constrained Optuna study on every instance's default table, per sampler.

The matrix behind ``tests/test_optuna.py``'s slice (pco64, TPE): for each
instance and sampler, one study of ``--trials`` trials on the OptunaHub
problem (:class:`bolt_pco64.integrations.optuna.PCOProblem`), seeded. The
script prints, per study, its seconds, how many trials completed, and the
best trial's row, throughput and constraint; it exits 1 when a study's best
trial is not a feasible row of the table (what the test asserts on its slice).

Run: ``python benchmarks/optuna_studies.py [--trials 40] [--seed 0]``
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings

import optuna
from optuna.trial import TrialState

from bolt_pco64.instances import INSTANCES
from bolt_pco64.integrations.optuna import CONSTRAINT_NAME, ROW_ATTR, PCOProblem

#: The samplers of the matrix.
SAMPLERS = {"tpe": optuna.samplers.TPESampler, "gp": optuna.samplers.GPSampler}


def study(instance: str, sampler: str, trials: int, seed: int) -> tuple[str, bool]:
    """One study; its line of the report and whether its best row is feasible."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the default table's notice
        problem = PCOProblem(instance)
    start = time.perf_counter()
    run = optuna.create_study(
        directions=problem.directions, sampler=SAMPLERS[sampler](seed=seed)
    )
    run.optimize(problem, n_trials=trials)
    seconds = time.perf_counter() - start
    complete = sum(t.state == TrialState.COMPLETE for t in run.trials)
    best = run.best_trial
    row = problem.problem.table.frame.iloc[best.user_attrs[ROW_ATTR]]
    constraint = best.constraints[CONSTRAINT_NAME]
    ok = bool(row["ran_successfully"]) and constraint <= 0
    line = (
        f"{instance:6} {sampler:4} {seconds:7.1f} s  {complete}/{trials} complete  "
        f"best row {best.user_attrs[ROW_ATTR]} throughput {best.value:.4g} "
        f"constraint {constraint:.3g}{'' if ok else '  NOT FEASIBLE'}"
    )
    return line, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(logging.ERROR)
    failed = 0
    for instance in INSTANCES:
        for sampler in SAMPLERS:
            line, ok = study(instance, sampler, args.trials, args.seed)
            print(line, flush=True)
            failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
