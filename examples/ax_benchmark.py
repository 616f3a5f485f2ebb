"""Ax's own benchmark loop on pco64: one replication of Ax's default strategy.

Ax's ``benchmark_replication`` runs Ax's default generation strategy (center
point, Sobol, then BoTorch) on the problem from
:func:`bolt_pco64.ax.get_benchmark_problem`, with every option at Ax's default,
and this script prints, per trial, the configuration tried, whether it ran, the
optimization trace (best feasible throughput so far), the inference trace (the
true throughput of the configuration Ax recommends; Ax scores it as the worst
feasible throughput at a trial that crashed) and the simulated time.

Needs the ``ax`` extra: ``pip install 'bolt_pco64[ax]'``.

Run: ``python examples/ax_benchmark.py [--trials 30] [--seed 0] [--table PATH]``
"""

from __future__ import annotations

import argparse
import logging
import warnings

import torch
from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
from ax.api.utils.structs import GenerationStrategyDispatchStruct
from ax.benchmark.benchmark import benchmark_replication
from ax.benchmark.benchmark_method import BenchmarkMethod

from bolt_pco64.ax import OBJECTIVE_NAME, get_benchmark_problem


def main() -> None:
    parser = argparse.ArgumentParser(description="Ax's benchmark loop on pco64.")
    parser.add_argument("--trials", type=int, default=30, help="trials in all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--instance", default="pco64")
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()
    if args.trials < 1:
        parser.error(f"expected --trials >= 1, got {args.trials}")

    warnings.filterwarnings("ignore")  # Ax and BoTorch advisories, not results
    logging.getLogger("ax").setLevel(logging.WARNING)  # Ax logs every poll at INFO
    torch.set_num_threads(1)  # GPs on tens of points: one thread beats contention

    problem = get_benchmark_problem(
        args.instance,
        table=args.table,
        num_trials=args.trials,
        report_inference_value_as_trace=True,
    )
    strategy = choose_generation_strategy(GenerationStrategyDispatchStruct())
    print(
        f"problem {problem.name}: optimal {problem.optimal_value:.5f}, baseline "
        f"{problem.baseline_value:.5f}, worst feasible "
        f"{problem.worst_feasible_value:.5f}; strategy {strategy.name}"
    )
    result = benchmark_replication(
        problem=problem,
        method=BenchmarkMethod(generation_strategy=strategy),
        seed=args.seed,
    )

    experiment = result.experiment
    assert experiment is not None  # benchmark_replication always keeps it
    data = experiment.lookup_data().df
    ran = set(data.loc[data["metric_name"] == OBJECTIVE_NAME, "trial_index"])
    names = list(problem.search_space.parameters)
    print(f"configuration: {','.join(names)}")
    print(f"{'trial':>5}  {'configuration':<24} {'ran':<5} {'best so far':>11} "
          f"{'inference':>9} {'time (s)':>9}")  # fmt: skip
    for i, index in enumerate(sorted(experiment.trials)):
        params = experiment.trials[index].arms[0].parameters
        config = ",".join(str(params[n]) for n in names)
        print(
            f"{index:>5}  {config:<24} {index in ran!s:<5} "
            f"{result.oracle_trace[i]:>11.5f} {result.inference_trace[i]:>9.5f} "
            f"{result.cost_trace[i]:>9.0f}"
        )
    crashes = len(experiment.trials) - len(ran)
    print(
        f"{len(experiment.trials)} trials, {crashes} ran out of memory; best found "
        f"{result.oracle_trace[-1]:.5f} of {problem.optimal_value:.5f}; Ax score of the "
        "inference trace "
        f"{result.score_trace[-1]:.1f}"
    )


if __name__ == "__main__":
    main()
