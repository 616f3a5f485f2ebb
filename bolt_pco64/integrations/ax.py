"""The pco problems as Ax benchmark problems (the optional ``ax`` extra).

:func:`get_benchmark_problem` returns an Ax
:class:`~ax.benchmark.benchmark_problem.BenchmarkProblem` for an instance
served from any table of its card's schema: the table's knobs as Ax
parameters with the levels the table holds (a configuration snaps to the
nearest row, :class:`~bolt_pco64.integrations.common.problem.Parameters` on
the raw scale); ``throughput_mean`` as the objective and
``peak_mem_normalised <= 0`` as the outcome constraint; a crashed trial's
objective as ``crash_report`` says (:class:`CrashObservation`,
:data:`~bolt_pco64.integrations.common.crash.CrashReport`); the table's
optimal, worst feasible and random-baseline values; and run lengths from the
one time model (:class:`StepRuntime`), so Ax's simulated-time benchmarks see
real run lengths. Each choice, and the replication matrix behind the
defaults: ``docs/ax.md``.

The framework-neutral pieces live in :mod:`bolt_pco64.integrations.common`.
The core package never imports this module; import it as
``bolt_pco64.integrations.ax`` after ``pip install 'bolt_pco64[ax]'``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from ax.benchmark.benchmark_metric import BenchmarkMetric
from ax.benchmark.benchmark_problem import BenchmarkProblem
from ax.benchmark.benchmark_test_function import BenchmarkTestFunction
from ax.benchmark.noise import GaussianNoise, Noise
from ax.core.base_trial import BaseTrial
from ax.core.objective import Objective
from ax.core.optimization_config import OptimizationConfig
from ax.core.outcome_constraint import OutcomeConstraint
from ax.core.parameter import (
    ChoiceParameter,
    FixedParameter,
    Parameter,
    ParameterType,
    RangeParameter,
)
from ax.core.search_space import SearchSpace
from ax.core.types import TParamValue
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.transition_criterion import TrialBasedCriterion
from torch import Tensor

from bolt_pco64.instances import InputSpec, Instance
from bolt_pco64.integrations.common import (
    BASELINE_DRAWS,
    CONSTRAINT_NAME,
    DEFAULT_CRASH_REPORT,
    OBJECTIVE_NAME,
    CrashPolicy,
    CrashReport,
    Parameters,
    check_crash_report,
    expected_best_of_random_draws,
    get_problem,
    random_baseline,
    run_seconds,
)
from bolt_pco64.params import POSITIVE_INT, check_param
from bolt_pco64.problem import PCO, TableLike
from bolt_pco64.tables.time_model import COST_DEFAULTS

__all__ = [
    "BASELINE_DRAWS",
    "CONSTRAINT_NAME",
    "DEFAULT_CRASH_REPORT",
    "DEFAULT_NUM_TRIALS",
    "OBJECTIVE_NAME",
    "CrashObservation",
    "CrashReport",
    "PCOTestFunction",
    "StepRuntime",
    "count_trials_with_constraint_data",
    "expected_best_of_random_draws",
    "get_benchmark_problem",
    "search_space_from_problem",
]

#: Trials of one replication unless ``num_trials`` says otherwise.
DEFAULT_NUM_TRIALS = 40


# -- search space -------------------------------------------------------------


def _parameter(spec: InputSpec, levels: Sequence[int]) -> Parameter:
    """One Ax parameter for a knob whose table levels (raw, sorted) are ``levels``."""
    values: list[TParamValue] = [int(v) for v in levels]
    if len(values) == 1:
        return FixedParameter(spec.name, ParameterType.INT, values[0])
    contiguous = values == list(range(int(levels[0]), int(levels[-1]) + 1))
    if spec.encoding == "log2" and contiguous:
        return RangeParameter(
            spec.name, ParameterType.INT, lower=values[0], upper=values[-1]
        )
    return ChoiceParameter(
        spec.name,
        ParameterType.INT,
        values=values,
        is_ordered=True,
        sort_values=True,
    )


def search_space_from_problem(problem: PCO) -> SearchSpace:
    """The Ax search space of the knobs of ``problem``'s table.

    One parameter per input column, named after it, in ``X`` order, with the
    raw levels found in the loaded table: an integer
    :class:`~ax.core.parameter.RangeParameter` for a log2 knob whose levels are
    contiguous, an ordered integer :class:`~ax.core.parameter.ChoiceParameter`
    otherwise (``zero_stage`` takes its raw stages, e.g. 0/2/3), a
    :class:`~ax.core.parameter.FixedParameter` for a knob with one level.
    """
    levels = Parameters(problem).levels()
    return SearchSpace(
        parameters=[
            _parameter(spec, levels[spec.name]) for spec in problem.instance.inputs
        ]
    )


# -- test function, observation, runtime ---------------------------------------


@dataclass(kw_only=True)
class PCOTestFunction(BenchmarkTestFunction):
    """Ground truth of a pco table for Ax: throughput and memory margin of a row.

    ``evaluate_true(params)`` snaps ``params`` to the nearest table row and
    returns a ``2 x 1``-dim tensor: ``throughput_mean`` and
    ``peak_mem_normalised``. For a row that ran out of memory the throughput is
    a placeholder, ``crash_value`` (the problem sets the table's worst feasible
    throughput): never NaN, which would make Ax abandon the trial, and never
    counted by Ax's traces, because the constraint is violated. What a run
    *reports* for a crash is :class:`CrashObservation`'s business.

    Args:
        problem: The BoTorch problem whose table is served.
        crash_value: The placeholder throughput of a crash.
    """

    problem: PCO
    crash_value: float
    outcome_names: Sequence[str] = (OBJECTIVE_NAME, CONSTRAINT_NAME)
    _parameters: Parameters = field(init=False, repr=False)
    _values: Tensor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        table = self.problem.table
        throughput = table.column("throughput_mean")
        throughput[~table.feasible] = self.crash_value
        self._parameters = Parameters(self.problem)
        self._values = torch.stack([throughput, table.column("peak_mem_normalised")])

    def evaluate_true(self, params: Mapping[str, TParamValue]) -> Tensor:
        """``2 x 1``-dim tensor: throughput (placeholder on a crash) and margin."""
        return self._values[:, self._parameters.row(params)].clone().unsqueeze(-1)


@dataclass(kw_only=True)
class CrashObservation(Noise):
    """What a run reports to Ax; how a crash reports is ``report``.

    Wraps another :class:`~ax.benchmark.noise.Noise` (noiseless by default).
    For every arm whose ground-truth ``constraint_name`` is positive (the run
    ran out of memory):

    - ``"missing"``: the ``objective_name`` row is removed; the trial completes
      with its constraint observed and its objective missing.
    - ``"placeholder"``: the objective is reported as ``placeholder`` exactly
      (no noise); the trial completes with both metrics observed.
    - ``"failed"``: the objective is reported as NaN, so Ax's
      ``BenchmarkRunner`` marks the trial ABANDONED (Ax's failed-trial path;
      its data is not modelled).

    What a crash reports is :class:`~bolt_pco64.integrations.common.crash.CrashPolicy`'s
    :attr:`~bolt_pco64.integrations.common.crash.CrashPolicy.crash_objective` (the
    Optuna adapter's too).

    Args:
        noise: The noise added to the values a run does report.
        report: How a crash reports its objective (above;
            :data:`~bolt_pco64.integrations.common.crash.CrashReport`).
        placeholder: The objective a crash reports under ``"placeholder"``.
        objective_name: The metric a crash does not report.
        constraint_name: The metric whose positive ground truth marks a crash.
    """

    noise: Noise = field(default_factory=GaussianNoise)
    report: CrashReport = DEFAULT_CRASH_REPORT
    placeholder: float = math.nan
    objective_name: str = OBJECTIVE_NAME
    constraint_name: str = CONSTRAINT_NAME

    def __post_init__(self) -> None:
        self.report = check_crash_report(self.report, "`report`")
        if self.report == "placeholder" and not math.isfinite(self.placeholder):
            raise ValueError(
                f"Expected a finite `placeholder` for report 'placeholder', got {self.placeholder!r}."
            )
        self._policy = CrashPolicy(self.report, self.placeholder)

    def _get_noise_and_sem(
        self,
        df: pd.DataFrame,
        outcome_names: Sequence[str],
        arm_weights: Mapping[str, float] | None,
    ) -> tuple[np.ndarray, np.ndarray | float]:
        return self.noise._get_noise_and_sem(
            df=df, outcome_names=outcome_names, arm_weights=arm_weights
        )

    def add_noise(
        self,
        df: pd.DataFrame,
        trial: BaseTrial | None,
        outcome_names: Sequence[str],
        arm_weights: Mapping[str, float] | None,
    ) -> pd.DataFrame:
        """Observed data of a trial: ``df`` with noise, crashes' objective as ``report`` says."""
        crashed = (df["metric_name"] == self.constraint_name) & (df["Y_true"] > 0)
        crashed_arms = set(df.loc[crashed, "arm_name"])
        observed = self.noise.add_noise(
            df=df, trial=trial, outcome_names=outcome_names, arm_weights=arm_weights
        )
        unobserved = (observed["metric_name"] == self.objective_name) & observed[
            "arm_name"
        ].isin(crashed_arms)
        value = self._policy.crash_objective
        if value is None:  # "missing"
            return observed.loc[~unobserved].reset_index(drop=True)
        observed["mean"] = observed["mean"].astype(float)
        observed.loc[unobserved, "mean"] = value
        return observed


def count_trials_with_constraint_data(
    strategy: GenerationStrategy,
) -> GenerationStrategy:
    """A copy of ``strategy`` whose "observed trials" transitions count crashes.

    Ax's ``min_trials_observed`` transition (a ``MinTrials`` criterion with
    ``count_only_trials_with_data``) counts a completed trial only if it has
    data for *every* metric of the optimization config. Under the ``"missing"``
    crash report a crash has its constraint and no objective, so with a short
    initialization phase that criterion can wait for data that never comes.
    The copy counts every completed trial instead (in a benchmark, a completed
    trial has reported its constraint). ``strategy`` is not changed.
    """
    copy = strategy.clone_reset()
    for node in copy.nodes_by_name.values():
        for criterion in node.transition_criteria:
            if (
                isinstance(criterion, TrialBasedCriterion)
                and criterion.count_only_trials_with_data
            ):
                criterion.count_only_trials_with_data = False
    return copy


class StepRuntime:
    """Run length of a configuration in seconds, for Ax's simulated time.

    :attr:`bolt_pco64.tables.time_model.TimeModel.run_seconds` of the snapped row (a run
    or a crash), rounded to whole seconds (at least one).

    Args:
        problem: The BoTorch problem whose table is served.
        startup_seconds: The time model's start-up
            (:attr:`~bolt_pco64.tables.time_model.CostDefaults.startup_seconds`).
    """

    def __init__(
        self, problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
    ):
        seconds = run_seconds(problem, startup_seconds)
        # Whole seconds, at least one: Ax's simulated backend keeps a trial's
        # data only if (start + runtime) - start == runtime, exact for integers.
        self._seconds = seconds.round().clamp_min(1.0)
        self._parameters = Parameters(problem)

    def __call__(self, params: Mapping[str, TParamValue]) -> float:
        """Seconds one run of ``params`` takes (its one step)."""
        return float(self._seconds[self._parameters.row(params)])


# -- the problem --------------------------------------------------------------


def _constrained_config(
    observe_noise_sd: bool,
) -> tuple[list[BenchmarkMetric], OptimizationConfig]:
    """The two metrics and Ax's config: maximise throughput subject to
    ``margin <= 0``."""
    objective_metric = BenchmarkMetric(
        name=OBJECTIVE_NAME, lower_is_better=False, observe_noise_sd=observe_noise_sd
    )
    constraint_metric = BenchmarkMetric(
        name=CONSTRAINT_NAME, lower_is_better=True, observe_noise_sd=observe_noise_sd
    )
    optimization_config = OptimizationConfig(
        objective=Objective(
            expression=OBJECTIVE_NAME,
            metric_name_to_signature={OBJECTIVE_NAME: OBJECTIVE_NAME},
        ),
        outcome_constraints=[
            OutcomeConstraint(
                expression=f"{CONSTRAINT_NAME} <= 0.0",
                metric_name_to_signature={CONSTRAINT_NAME: CONSTRAINT_NAME},
            )
        ],
    )
    return [objective_metric, constraint_metric], optimization_config


def get_benchmark_problem(
    instance: str | Instance | PCO = "pco64",
    *,
    table: TableLike = None,
    num_trials: int = DEFAULT_NUM_TRIALS,
    noise: Noise | None = None,
    observe_noise_sd: bool = False,
    baseline_value: float | None = None,
    report_inference_value_as_trace: bool = False,
    startup_seconds: float = COST_DEFAULTS.startup_seconds,
    crash_report: CrashReport = DEFAULT_CRASH_REPORT,
) -> BenchmarkProblem:
    """An Ax ``BenchmarkProblem`` for a pco instance (see the module docstring).

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`, or a problem to serve as
            it is: :func:`~bolt_pco64.integrations.common.problem.get_problem`).
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources).
        num_trials: Trials of one replication, ``>= 1``.
        noise: Noise on the values a run reports (Ax's
            :class:`~ax.benchmark.noise.Noise`); noiseless by default. It is
            wrapped in :class:`CrashObservation`.
        observe_noise_sd: Whether the metrics report the noise level (``sem``);
            if False the model infers it (Ax's default for BoTorch problems).
        baseline_value: Override of the documented default baseline (the
            expected best of :data:`~bolt_pco64.integrations.common.runs.BASELINE_DRAWS`
            random rows).
        report_inference_value_as_trace: Ax's option: the optimization trace
            is the inference trace (the true value of Ax's recommended point)
            rather than the best value found so far; set it to get an inference
            trace at all.
        startup_seconds: The time model's start-up of every run and crash
            (:class:`StepRuntime`).
        crash_report: How a crashed trial reports its objective
            (:class:`CrashObservation`; ``"placeholder"``, ``"missing"`` or
            ``"failed"``); under ``"placeholder"`` it reports the
            table's worst feasible throughput.

    Returns:
        The benchmark problem, named after the instance (``"pco64"``, or
        ``"pco64_simulated"`` on the shipped stand-in).

    Raises:
        ValueError: For an unknown instance or crash report, a
            ``num_trials`` below 1, or a baseline not below the optimum.
    """
    check_param("num_trials", num_trials, POSITIVE_INT)
    crash_report = check_crash_report(crash_report)
    problem = get_problem(instance, table)
    spec = problem.instance
    optimal = float(problem.optimal_value)
    worst = float(problem.worst_feasible_value)
    if baseline_value is None:
        baseline_value = random_baseline(problem)
    if not baseline_value < optimal:
        raise ValueError(
            f"Expected `baseline_value` below the optimal value {optimal}, got "
            f"{baseline_value} (a table needs two distinct feasible throughputs)."
        )
    metrics, optimization_config = _constrained_config(observe_noise_sd)
    return BenchmarkProblem(
        name=f"{spec.name}_simulated" if problem.is_simulated else spec.name,
        optimization_config=optimization_config,
        opt_config_metrics=metrics,
        num_trials=num_trials,
        test_function=PCOTestFunction(problem=problem, crash_value=worst),
        noise=CrashObservation(
            noise=noise if noise is not None else GaussianNoise(),
            report=crash_report,
            placeholder=worst,
        ),
        optimal_value=optimal,
        baseline_value=float(baseline_value),
        worst_feasible_value=worst,
        search_space=search_space_from_problem(problem),
        report_inference_value_as_trace=report_inference_value_as_trace,
        step_runtime_function=StepRuntime(problem, startup_seconds),
    )
