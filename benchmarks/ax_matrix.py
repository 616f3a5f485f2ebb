"""Replication matrix of Ax's own benchmark methods on the pco problems.

Runs ``ax.benchmark.benchmark.benchmark_replication`` on
:func:`bolt_pco64.integrations.ax.get_benchmark_problem` for every
representation of a crash (``--representations``), instance, method and seed,
and writes one CSV row per replication (``--out``, default
``docs/results/ax/matrix.csv``), the records of every trial beside it
(``<stem>_trials.parquet``: ``matrix_trials.parquet``) and a per-cell
summary (``<stem>_summary.csv``).

Methods (Ax's own helpers, ``SingleTaskGP`` + ``qLogNoisyExpectedImprovement``):

- ``modular``: ``get_sobol_botorch_modular_acquisition`` with
  ``num_sobol_trials`` in ``--sobol`` (default 3, 5, 8, 10);
- ``mbm``: ``BenchmarkMethod(generation_strategy=get_sobol_mbm_generation_strategy(...))``
  at its default ``num_sobol_trials`` (5);
- ``default``: Ax's default strategy (``choose_generation_strategy``), with an
  initialization budget of ``--default-init`` trials;
- ``concurrent``: ``modular`` with 5 Sobol trials and ``max_pending_trials=4``
  (Ax's simulated backend runs four trials at once with the problem's step
  runtime); the row's ``cost_ok`` says whether every trial ran exactly its step
  runtime, at most four at a time, and ``cost_trace`` is the sorted
  completion times.

Representations (how a crashed trial reports its objective):

- ``missing``: completed, constraint observed, objective absent;
- ``missing+criterion``: the same with the adapter's
  :func:`~bolt_pco64.integrations.ax.count_trials_with_constraint_data`
  applied to the strategy (its "observed" transition counts a trial that reported
  its constraint);
- ``placeholder``: completed, objective reported as the table's worst feasible
  throughput;
- ``failed``: objective NaN, so Ax abandons the trial (its failed-trial
  path, default ``tolerated_trial_failure_rate`` 0.5);
- ``failed+tolerant``: the same with ``tolerated_trial_failure_rate=0.99``.

The names are the adapters' one crash vocabulary
(:data:`bolt_pco64.integrations.common.CrashReport`); ``failed`` was spelled
``abandoned`` (and ``abandoned+tolerant``) before: the adapter still accepts
``"abandoned"`` (with a ``DeprecationWarning``), ``--representations`` only
the current names.

Columns: ``status`` (``ok`` or the exception's class), ``trials`` (trials
created), ``completed``, ``abandoned`` (abandoned or failed trials),
``oom_share`` (crashed trials / trials, to 3 decimals), ``repeats`` (trials
whose configuration snaps to a row an earlier trial already ran), ``regret``
(optimal value minus the best feasible throughput found, as a fraction of the
optimal value, to 4 decimals; 1.0 if none was feasible), ``error_logs``
(records at ERROR or above from Ax's loggers), ``sim_time`` (the last entry of
Ax's ``cost_trace``), ``wall_s``. ``trials`` to ``regret`` (``_ax_rows.DERIVED``)
are computed from the trials' records (``_ax_rows.derive``), the other columns
are the replication's own; a replication that aborted has no records, and
its derived columns keep their defaults (0, NaN for ``oom_share`` and
``regret``).

The records (``benchmarks/_trial_records.py`` has the columns shared with
``optuna_crash.py``): one row per trial, keyed by the row's :data:`KEYS`
(``representation`` ... ``trials_requested``); ``trial`` (Ax's trial index),
``generator`` (the generation node that proposed it), ``proposed_<knob>``
(the arm's parameters), ``<knob>`` (the table row it snapped to), ``on_table``,
``oom``, ``throughput`` (the table's, NaN for a crash), ``reported`` (the
objective Ax was told: NaN where the representation tells none), ``status``
(``completed``, or ``abandoned`` for a trial Ax abandoned), ``run_seconds``
(the step runtime), ``optimal_value``, and ``sim_start``, ``sim_end`` (the
trial's start and completion on Ax's simulated clock, in seconds).

Usage::

    python benchmarks/ax_matrix.py                   # the full matrix (hours on 2 cores)
    python benchmarks/ax_matrix.py --trials 20 --jobs 2
    python benchmarks/ax_matrix.py --quick           # one cell per method, minutes
    python benchmarks/ax_matrix.py --report docs/results/ax  # rows and summaries from the records

``--report DIR`` runs nothing: it rewrites the derived columns of every
per-replication CSV ``<name>.csv`` in ``DIR`` from the records
``<name>_trials.parquet`` beside it, then each ``<name>_summary.csv`` from the
rows of ``<name>.csv`` and its parts ``<name>_<part>.csv`` beside it, and
prints the files written (``benchmarks/report_results.py DIR`` calls it: the folder's
``report.json`` names this script). A run writes its rows and summary the same
way, so ``--report`` gives them back byte for byte; ``--resume`` keeps the
rows of ``--out`` and their records, and runs only the missing cases.

This script runs the replications; ``benchmarks/_ax_rows.py`` holds the rows,
their records, the summaries and ``--report``, which need no Ax.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import multiprocessing
import os
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import _trial_records
from _ax_rows import (
    CELL,
    KEYS,
    Case,
    Row,
    _key,
    derive,
    finish,
    markdown,
    read_rows,
    records_path,
    report,
    rewrite,
    save,
    summarize,
)

if TYPE_CHECKING:
    from ax.benchmark.benchmark_problem import BenchmarkProblem
    from ax.core.experiment import Experiment

    from bolt_pco64.problem import PCO

REPO = Path(__file__).resolve().parent.parent

INSTANCES = ("pco16", "pco32", "pco64")
REPRESENTATIONS = (
    "missing",
    "missing+criterion",
    "placeholder",
    "failed",
    "failed+tolerant",
)
TOLERANT_FAILURE_RATE = 0.99


class _Count(logging.Handler):
    """Counts the records at ERROR or above."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _strategy(case: Case):
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct
    from ax.benchmark.benchmark_method import BenchmarkMethod
    from ax.benchmark.methods.modular_botorch import (
        get_sobol_botorch_modular_acquisition,
        get_sobol_mbm_generation_strategy,
    )
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.models import SingleTaskGP

    from bolt_pco64.integrations.ax import count_trials_with_constraint_data

    if case.method in ("modular", "concurrent"):
        method = get_sobol_botorch_modular_acquisition(
            model_cls=SingleTaskGP,
            acquisition_cls=qLogNoisyExpectedImprovement,
            num_sobol_trials=case.num_sobol,
        )
        strategy = method.generation_strategy
    elif case.method == "mbm":
        strategy = get_sobol_mbm_generation_strategy(
            model_cls=SingleTaskGP, acquisition_cls=qLogNoisyExpectedImprovement
        )
    elif case.method == "default":
        strategy = choose_generation_strategy(
            GenerationStrategyDispatchStruct(initialization_budget=case.num_sobol)
        )
    else:
        raise ValueError(f"Expected a known method, got {case.method!r}.")
    if case.representation == "missing+criterion":
        strategy = count_trials_with_constraint_data(strategy)
    return BenchmarkMethod(
        generation_strategy=strategy, max_pending_trials=case.max_concurrency
    )


def _sim_check(experiment, runtime, max_concurrency: int, cost_trace) -> str:
    """``"yes"`` if every trial ran its step runtime, at most ``max_concurrency``
    at once, and ``cost_trace`` is the sorted distinct completion times."""
    intervals = []
    for trial in experiment.trials.values():
        start = trial.time_run_started.timestamp()
        end = trial.time_completed.timestamp()
        if end - start != runtime(trial.arms[0].parameters):
            return "no: a trial did not run its step runtime"
        intervals.append((start, end))
    ends = sorted({e for _, e in intervals})
    if [float(c) for c in cost_trace] != ends:
        return "no: cost_trace is not the completion times"
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    running, most = 0, 0
    for _, step in events:  # an end sorts before a start at the same time
        running += step
        most = max(most, running)
    if most > max_concurrency:
        return f"no: {most} trials ran at once"
    return f"yes (at most {most} at once)"


def run_case(case: Case) -> tuple[Row, list[dict[str, object]]]:
    """One replication, never raising: failures are the row's ``status``.

    Returns:
        The row and its trials' records (none if the replication aborted).
    """
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    from ax.benchmark.benchmark import benchmark_replication

    from bolt_pco64.integrations.ax import get_benchmark_problem
    from bolt_pco64.integrations.common import get_problem

    representation = case.representation.split("+")[0]
    table_problem = get_problem(case.instance)
    problem = get_benchmark_problem(
        table_problem, num_trials=case.trials, crash_report=representation
    )
    row = Row(**{f.name: getattr(case, f.name) for f in fields(Case) if f.name != "trials"},
              trials_requested=case.trials)  # fmt: skip
    counter = _Count()
    ax_logger = logging.getLogger("ax")
    ax_logger.addHandler(counter)
    start = time.perf_counter()
    try:
        tolerated = (
            TOLERANT_FAILURE_RATE if case.representation.endswith("+tolerant") else 0.5
        )
        result = benchmark_replication(
            problem=problem,
            method=_strategy(case),
            seed=case.seed,
            orchestrator_logging_level=logging.WARNING,
            tolerated_trial_failure_rate=tolerated,
        )
        row.status = "ok"
    except Exception as exc:
        row.status = type(exc).__name__
        row.error = " ".join(str(exc).split())[:160]
        result = None
        if not type(exc).__module__.startswith("ax."):
            traceback.print_exc(file=sys.stderr)
    finally:
        ax_logger.removeHandler(counter)
    row.wall_s = round(time.perf_counter() - start, 1)
    row.error_logs = counter.count
    if result is None or result.experiment is None:
        return row, []
    records = trial_records(row, result.experiment, table_problem, problem)
    derive(row, _trial_records.frame(records, KEYS))
    row.sim_time = float(result.cost_trace[-1])
    row.cost_ok = _sim_check(
        result.experiment,
        problem.step_runtime_function,
        case.max_concurrency,
        result.cost_trace,
    )
    return row, records


def trial_records(
    row: Row, experiment: Experiment, table_problem: PCO, problem: BenchmarkProblem
) -> list[dict[str, object]]:
    """One record per trial of ``experiment`` (``_trial_records``' columns,
    ``sim_start`` and ``sim_end`` on Ax's simulated clock), keyed by ``row``."""
    from bolt_pco64.integrations.ax import OBJECTIVE_NAME
    from bolt_pco64.integrations.common import Parameters

    parameters = Parameters(table_problem)
    feasible = table_problem.table.feasible
    throughput = table_problem.table.frame["throughput_mean"]
    data = experiment.lookup_data().df
    told = data[data["metric_name"] == OBJECTIVE_NAME]
    reported = dict(
        zip(told["trial_index"].tolist(), told["mean"].tolist(), strict=True)
    )
    optimal = float(problem.optimal_value)
    key = dict(zip(KEYS, _key(row), strict=True))
    records = []
    for index in sorted(experiment.trials):
        trial = experiment.trials[index]
        params = trial.arms[0].parameters
        r = parameters.row(params)
        ran = bool(feasible[r])
        started, completed = trial.time_run_started, trial.time_completed
        records.append(
            {
                **key,
                "trial": int(index),
                # Ax keeps the node's name private; "" if it ever goes.
                "generator": getattr(
                    trial.generator_runs[0], "_generation_node_name", ""
                ),
                **_trial_records.configuration(parameters, params, r),
                "oom": not ran,
                "throughput": float(throughput.iloc[r]) if ran else math.nan,
                "reported": float(reported.get(index, math.nan)),
                "status": _trial_records.status_name(trial.status.name),
                "run_seconds": float(problem.step_runtime_function(params)),
                "optimal_value": optimal,
                "sim_start": started.timestamp() if started else math.nan,
                "sim_end": completed.timestamp() if completed else math.nan,
            }
        )
    return records


def cases(args: argparse.Namespace) -> Iterator[Case]:
    seeds = range(args.seeds)
    for rep, instance in itertools.product(args.representations, args.instances):
        for n_sobol, seed in itertools.product(args.sobol, seeds):
            trials = (
                args.trials if args.after_sobol is None else n_sobol + args.after_sobol
            )
            yield Case(rep, instance, "modular", n_sobol, seed, 1, trials)
        for seed in range(min(args.seeds, args.other_seeds)):
            yield Case(rep, instance, "mbm", 5, seed, 1, args.trials)
            yield Case(
                rep, instance, "default", args.default_init, seed, 1, args.trials
            )
            yield Case(rep, instance, "concurrent", 5, seed, 4, args.trials)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--other-seeds", type=int, default=2,
                        help="seeds of the mbm/default/concurrent cells")  # fmt: skip
    parser.add_argument("--after-sobol", type=int, default=None,
                        help="modular cells run num_sobol + this many trials "
                        "(default: --trials)")  # fmt: skip
    parser.add_argument("--sobol", type=int, nargs="+", default=[3, 5, 8, 10])
    parser.add_argument("--default-init", type=int, default=10)
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES))
    parser.add_argument("--representations", nargs="+", default=list(REPRESENTATIONS),
                        choices=REPRESENTATIONS)  # fmt: skip
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="pco64, seed 0, num_sobol 5, 12 trials")  # fmt: skip
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows of --out and run only the missing cases")  # fmt: skip
    parser.add_argument("--out", type=Path, default=REPO / "docs/results/ax/matrix.csv")
    parser.add_argument("--summarize", type=Path, nargs="+", default=None,
                        help="run nothing: print the summary of these CSVs")  # fmt: skip
    parser.add_argument("--by", nargs="+", default=list(CELL),
                        help="fields that group the --summarize table")  # fmt: skip
    parser.add_argument("--report", type=Path, default=None,
                        help="run nothing: rewrite DIR's *_summary.csv from its rows")  # fmt: skip
    args = parser.parse_args()
    if args.report is not None:
        print("\n".join(str(p) for p in report(args.report)))
        return
    if args.summarize:
        rows = [row for path in args.summarize for row in read_rows(path)]
        print(markdown(summarize(rows, args.by)))
        return
    if args.quick:
        args.instances, args.seeds, args.other_seeds = ["pco64"], 1, 1
        args.sobol, args.trials = [5], 12
    todo = list(cases(args))
    results: list[Row] = []
    records: list[dict[str, object]] = []
    if args.resume and args.out.is_file():
        results = rewrite(args.out)
        seen = {_key(r) for r in results}
        todo = [c for c in todo if _key(c) not in seen]
        records = _trial_records.read(records_path(args.out), KEYS).to_dict("records")
    print(f"{len(todo)} replications, {args.trials} trials each, {args.jobs} jobs",
          flush=True)  # fmt: skip
    with multiprocessing.get_context("spawn").Pool(
        args.jobs, maxtasksperchild=4
    ) as pool:
        for row, trials in pool.imap(run_case, todo):
            results.append(row)
            records += trials
            print(f"{row.representation:<19} {row.instance} {row.method:<10} "
                  f"sobol={row.num_sobol:<2} seed={row.seed} {row.status:<28} "
                  f"trials={row.trials:<2} oom={row.oom_share} rep={row.repeats} "
                  f"regret={row.regret} err={row.error_logs} {row.wall_s}s",
                  flush=True)  # fmt: skip
            save(args.out, results, records)
    print(markdown(finish(args.out)))


if __name__ == "__main__":
    main()
