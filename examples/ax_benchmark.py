"""
Ax: a benchmark replication
===========================

Ax's own benchmark loop on pco64: one replication of Ax's default strategy.

Ax's ``benchmark_replication`` runs Ax's default generation strategy (center
point, Sobol, then BoTorch) on the problem from
:func:`bolt_pco64.integrations.ax.get_benchmark_problem`, and this script
prints, per trial, the configuration tried, whether it ran or ran out of
memory, the throughput it reported, the best feasible throughput found so far
(Ax's oracle trace: the true value, known only because the table is known) and
the simulated time at which the trial completed. After the last trial it
prints the configuration Ax recommends (Ax's best point, from its final model
and all the trials) with its true throughput.

Ax's per-trial "inference trace" is not printed: Ax computes it after the run
with the final generation strategy, so its early entries can name
configurations that were only tried later; it is not what Ax would have
recommended at that trial.

Ax's Orchestrator logs every poll at INFO through its own loggers and handler;
the replication runs with Ax's ``orchestrator_logging_level=logging.WARNING``,
so only warnings and errors reach stderr.

Needs the ``ax`` extra: ``pip install 'bolt_pco64[ax]'``.

Run: ``python examples/ax_benchmark.py [--trials 30] [--seed 0] [--table PATH]``
"""

from __future__ import annotations

import argparse
import logging
import warnings
from typing import Any

import torch

from bolt_pco64.integrations.common import TableRuns


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Ax's benchmark loop on pco64.")
    parser.add_argument("--trials", type=int, default=30, help="trials in all")
    parser.add_argument("--init", type=int, default=None,
                        help="Ax's initialization budget (default: Ax's)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--instance", default="pco64")
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()
    if args.trials < 1:
        parser.error(f"expected --trials >= 1, got {args.trials}")
    if args.init is not None and args.init < 1:
        parser.error(f"expected --init >= 1, got {args.init}")
    return args


def main() -> None:
    args = _arguments()
    warnings.filterwarnings("ignore")  # Ax and BoTorch advisories, not results
    torch.set_num_threads(1)  # GPs on tens of points: one thread beats contention
    logging.disable(logging.INFO)  # importing Ax logs one INFO line
    try:
        from ax.api.utils.generation_strategy_dispatch import (
            choose_generation_strategy,
        )
        from ax.api.utils.structs import GenerationStrategyDispatchStruct
        from ax.benchmark.benchmark import benchmark_replication
        from ax.benchmark.benchmark_method import BenchmarkMethod

        from bolt_pco64.integrations.ax import get_benchmark_problem
    finally:
        logging.disable(logging.NOTSET)

    problem = get_benchmark_problem(
        args.instance, table=args.table, num_trials=args.trials
    )
    dispatch = (
        GenerationStrategyDispatchStruct()
        if args.init is None
        else GenerationStrategyDispatchStruct(initialization_budget=args.init)
    )
    strategy = choose_generation_strategy(dispatch)
    print(
        f"problem {problem.name}: optimal {problem.optimal_value:.5f}, baseline "
        f"{problem.baseline_value:.5f}, worst feasible "
        f"{problem.worst_feasible_value:.5f}; strategy {strategy.name}"
    )
    method = BenchmarkMethod(generation_strategy=strategy)
    result = benchmark_replication(
        problem=problem,
        method=method,
        seed=args.seed,
        orchestrator_logging_level=logging.WARNING,
    )
    _report(problem, method, result)


def _report(problem: Any, method: Any, result: Any) -> None:
    """Per trial what Ax tried and what it got, then what Ax recommends."""
    from ax.benchmark.benchmark import get_best_parameters

    experiment = result.experiment
    if experiment is None:  # benchmark_replication keeps it; say so if not
        raise SystemExit("Ax returned no experiment.")
    runs = TableRuns(problem.test_function.problem)
    names = list(problem.search_space.parameters)
    print(f"configuration: {','.join(names)}")
    print(f"{'trial':>5}  {'configuration':<24} {'ran':<4} {'throughput':>10} "
          f"{'best so far':>11} {'sim time (s)':>12}")  # fmt: skip
    crashes = 0
    for i, index in enumerate(sorted(experiment.trials)):
        params = experiment.trials[index].arms[0].parameters
        outcome = runs(params)
        crashes += not outcome.ran
        config = ",".join(str(params[n]) for n in names)
        seen = f"{outcome.throughput:.5f}" if outcome.ran else "OOM"
        print(
            f"{index:>5}  {config:<24} {'yes' if outcome.ran else 'no':<4} "
            f"{seen:>10} {result.oracle_trace[i]:>11.5f} {result.cost_trace[i]:>12.0f}"
        )
    best = get_best_parameters(experiment, method.generation_strategy)
    found = result.oracle_trace[-1]
    print(
        f"{len(experiment.trials)} trials, {crashes} ran out of memory; best found "
        f"{found:.5f} of {problem.optimal_value:.5f} (regret "
        f"{problem.optimal_value - found:.5f})"
    )
    if best is None:
        print("Ax recommends no configuration (none is predicted to fit in memory).")
    else:
        outcome = runs(best)
        value = f"{outcome.throughput:.5f}" if outcome.ran else "none (it runs OOM)"
        print(
            "Ax recommends "
            f"{','.join(str(best[n]) for n in names)}: true throughput {value}"
        )


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":
    main()
