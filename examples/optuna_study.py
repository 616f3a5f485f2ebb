"""
Optuna: samplers and crashes
============================

Optuna's samplers on a pco problem, through OptunaHub's benchmark interface.

First the three lines: a problem of :mod:`bolt_pco64.integrations.optuna` is the objective
of ``study.optimize``. Every trial records the memory constraint
(``trial.set_constraint``), so Optuna's TPE sampler is already constrained.

Then the crash-aware comparison: the GP sampler, whose constraint model
learns where runs crash, on the same problem with the two crash
representations: ``placeholder`` (the default: a crash completes with a
placeholder objective and its positive constraint) and ``failed`` (a NaN
objective, so a FAIL trial that no sampler learns from). Each study starts
from the same enqueued table rows; the script prints what each study spent on
crashes and repeats, and its best feasible configuration.

Needs the ``optuna`` extra: ``pip install 'bolt_pco64[optuna]'``.

Run: ``python examples/optuna_study.py [--trials 40] [--seed 0] [--instance pco64] [--table PATH]``
"""

from __future__ import annotations

import argparse
import logging
import warnings

import optuna
import torch

from bolt_pco64.integrations.optuna import (
    FEASIBLE_ATTR,
    ROW_ATTR,
    ROW_PARAMS_ATTR,
    PCOProblem,
)


def summary(study: optuna.Study, problem: PCOProblem) -> str:
    """Crashes, repeated rows and the best feasible throughput of a study."""
    rows = [t.user_attrs[ROW_ATTR] for t in study.trials]
    crashes = sum(not t.user_attrs[FEASIBLE_ATTR] for t in study.trials)
    best = study.best_trial
    gap = float(problem.problem.optimal_value) - best.value
    return (
        f"{len(rows)} trials, {crashes} crashed, {len(rows) - len(set(rows))} "
        f"repeated a row; best {best.value:.5f} (regret {gap:.5f}) at "
        f"{best.user_attrs[ROW_PARAMS_ATTR]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Optuna's samplers on a pco problem.")
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--n-init", type=int, default=10, help="enqueued table rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--instance", default="pco64")
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()
    if not 1 <= args.n_init <= args.trials:
        parser.error(f"expected 1 <= --n-init <= --trials, got {args.n_init}")
    warnings.filterwarnings("ignore")  # the stand-in's notice, Optuna advisories
    optuna.logging.set_verbosity(logging.ERROR)
    torch.set_num_threads(1)

    # The three lines: a pco problem is an Optuna objective.
    problem = PCOProblem(args.instance, table=args.table)
    study = optuna.create_study(
        directions=problem.directions,
        sampler=optuna.samplers.TPESampler(seed=args.seed),
    )
    study.optimize(problem, n_trials=args.trials)
    print(f"{problem!r}, optimal {float(problem.problem.optimal_value):.5f}")
    print(f"TPE: {summary(study, problem)}")

    # Crash-aware: the GP sampler with each crash representation, from the
    # same table rows (a seeded draw, as the harness's initial design).
    g = torch.Generator().manual_seed(args.seed)
    start = torch.randperm(len(problem.problem.table), generator=g)[: args.n_init]
    for crash in ("placeholder", "failed"):
        problem = PCOProblem(args.instance, table=args.table, crash_report=crash)
        study = optuna.create_study(
            directions=problem.directions,
            sampler=optuna.samplers.GPSampler(seed=args.seed),
        )
        for row in start.tolist():
            study.enqueue_trial(problem.row_params(row))
        study.optimize(problem, n_trials=args.trials)
        print(f"GP, crash_report={crash}: {summary(study, problem)}")


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":
    main()
