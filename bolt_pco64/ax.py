"""The pco problems as Ax benchmark problems (the optional ``ax`` extra).

:func:`get_benchmark_problem` returns an Ax
:class:`~ax.benchmark.benchmark_problem.BenchmarkProblem` for an instance of the
family (``"pco16"``, ``"pco32"``, ``"pco64"``) served from any table of its
card's schema:

- **Parameters** are the table's knobs, by their column names, typed as what
  they are: an integer range where the table's levels of a log2 knob are
  contiguous, an ordered integer choice over the table's levels otherwise, and
  ``zero_stage`` an ordered choice over the raw stages (0/2/3) the table holds.
  The levels are read from the loaded table. Every configuration of this box
  snaps to the nearest table row, as in the BoTorch problem (design section 2).
- **Outcomes**: ``throughput_mean`` (the objective, maximised) and
  ``peak_mem_normalised`` with the outcome constraint
  ``peak_mem_normalised <= 0`` (the run fits in memory).
- **Crashes.** A configuration that ran out of memory has no throughput: the
  card calls it a crash, not a bad value. Its trial *completes* and reports its
  constraint metric (the table's positive pad: the run told us it did not fit)
  and **no** objective. Ax's model learns the constraint from every trial and
  the objective only from runs that ran; Ax treats the arm as evaluated (it
  is not suggested again), nothing is abandoned, so a replication does not hit
  Ax's ``tolerated_trial_failure_rate``. This is done by
  :class:`CrashObservation`, the problem's ``noise``: the observation process
  of a real run. Ax's oracle (the noiseless ground truth it uses to score
  traces) instead sees the crash's constraint together with a placeholder
  objective, the table's worst feasible throughput (Ax's own
  ``worst_feasible_value`` convention); since the constraint is violated, Ax's
  traces never count that number: best-point and inference traces count only
  configurations that ran. A NaN objective would instead make Ax's
  ``BenchmarkRunner`` abandon the trial and drop its constraint observation.
- ``optimal_value`` is the table's best feasible throughput;
  ``worst_feasible_value`` its lowest; ``baseline_value`` (by default) the
  expected best feasible throughput among :data:`BASELINE_DRAWS` table rows
  drawn uniformly without replacement, a draw with no feasible row counting as
  the worst feasible throughput (computed exactly from the table, see
  :func:`expected_best_of_random_draws`).
- ``step_runtime_function`` is :class:`StepRuntime`: a run's seconds under
  the one time model (:class:`~bolt_pco64.costs.TimeModel`, the harness's:
  start-up plus ``overall_time``; a crash start-up plus the step in which
  memory ran out), so Ax's simulated-time benchmarks see real run lengths.

The core package never imports this module; import it as ``bolt_pco64.ax``
after ``pip install 'bolt_pco64[ax]'``.
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
from torch import Tensor

from bolt_pco64.costs import COST_DEFAULTS, TimeModel
from bolt_pco64.instances import InputSpec, Instance, get_instance
from bolt_pco64.problem import PCO, TableLike, problem_class

__all__ = [
    "BASELINE_DRAWS",
    "CONSTRAINT_NAME",
    "DEFAULT_NUM_TRIALS",
    "OBJECTIVE_NAME",
    "CrashObservation",
    "PCOTestFunction",
    "StepRuntime",
    "expected_best_of_random_draws",
    "get_benchmark_problem",
    "search_space_from_problem",
]

#: The objective metric (maximised): the card's column.
OBJECTIVE_NAME = "throughput_mean"
#: The constraint metric: the card's column; feasible iff ``<= 0``.
CONSTRAINT_NAME = "peak_mem_normalised"
#: Number of random table rows whose expected best defines ``baseline_value``.
BASELINE_DRAWS = 5
#: Trials of one replication unless ``num_trials`` says otherwise.
DEFAULT_NUM_TRIALS = 40


# -- the problem's inputs ------------------------------------------------------


def _input_specs(problem: PCO) -> tuple[InputSpec, ...]:
    """The input columns of ``problem``, in the order of its ``X``."""
    return problem.instance.inputs


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
    frame = problem.table.frame
    return SearchSpace(
        parameters=[
            _parameter(spec, sorted({int(v) for v in frame[spec.name]}))
            for spec in _input_specs(problem)
        ]
    )


# -- test function, observation, runtime ---------------------------------------


class _Rows:
    """Snapping of Ax parameterizations to table rows of a BoTorch problem."""

    def __init__(self, problem: PCO) -> None:
        self.problem = problem
        self.specs = _input_specs(problem)

    def __call__(self, params: Mapping[str, TParamValue]) -> int:
        """The canonical row index that one parameterization snaps to."""
        missing = [s.name for s in self.specs if s.name not in params]
        if missing:
            raise ValueError(
                f"Expected a value for every knob, got none for {missing} in {dict(params)}."
            )
        x = [float(spec.encode(int(params[spec.name]))) for spec in self.specs]  # type: ignore[arg-type]
        return int(self.problem.lookup(torch.tensor([x], dtype=torch.float64))[0])


@dataclass(kw_only=True)
class PCOTestFunction(BenchmarkTestFunction):
    """Ground truth of a pco table for Ax: throughput and memory margin of a row.

    ``evaluate_true(params)`` snaps ``params`` to the nearest table row and
    returns a ``2 x 1``-dim tensor: ``throughput_mean`` and
    ``peak_mem_normalised``. For a row that ran out of memory the throughput is
    a placeholder, ``crash_value`` (the problem sets the table's worst feasible
    throughput): never NaN, which would make Ax abandon the trial, and never
    counted by Ax's traces, because the constraint is violated; observed runs
    do not see it at all (:class:`CrashObservation` drops it).

    Args:
        problem: The BoTorch problem whose table is served.
        crash_value: The placeholder throughput of a crash.
    """

    problem: PCO
    crash_value: float
    outcome_names: Sequence[str] = (OBJECTIVE_NAME, CONSTRAINT_NAME)
    _rows: _Rows = field(init=False, repr=False)
    _values: Tensor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        table = self.problem.table
        throughput = table.column("throughput_mean")
        throughput[~table.feasible] = self.crash_value
        self._rows = _Rows(self.problem)
        self._values = torch.stack([throughput, table.column("peak_mem_normalised")])

    def evaluate_true(self, params: Mapping[str, TParamValue]) -> Tensor:
        """``2 x 1``-dim tensor: throughput (placeholder on a crash) and margin."""
        return self._values[:, self._rows(params)].clone().unsqueeze(-1)


@dataclass(kw_only=True)
class CrashObservation(Noise):
    """What a run reports: a crash reports its constraint and no objective.

    Wraps another :class:`~ax.benchmark.noise.Noise` (noiseless by default) and,
    for every arm whose ground-truth ``constraint_name`` is positive (the run
    ran out of memory), removes the ``objective_name`` row from the observed
    data. The trial then completes with its constraint observed and its
    objective missing, instead of being abandoned over a NaN.

    Args:
        noise: The noise added to the values a run does report.
        objective_name: The metric a crash does not report.
        constraint_name: The metric whose positive ground truth marks a crash.
    """

    noise: Noise = field(default_factory=GaussianNoise)
    objective_name: str = OBJECTIVE_NAME
    constraint_name: str = CONSTRAINT_NAME

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
        """Observed data of a trial: ``df`` with noise, crashes' objective removed."""
        crashed = (df["metric_name"] == self.constraint_name) & (df["Y_true"] > 0)
        crashed_arms = set(df.loc[crashed, "arm_name"])
        observed = self.noise.add_noise(
            df=df, trial=trial, outcome_names=outcome_names, arm_weights=arm_weights
        )
        unobserved = (observed["metric_name"] == self.objective_name) & observed[
            "arm_name"
        ].isin(crashed_arms)
        return observed.loc[~unobserved].reset_index(drop=True)


class StepRuntime:
    """Run length of a configuration in seconds, for Ax's simulated time.

    :attr:`bolt_pco64.costs.TimeModel.run_seconds` of the snapped row (a run
    or a crash), rounded to whole seconds (at least one).

    Args:
        problem: The BoTorch problem whose table is served.
        startup_seconds: The time model's start-up
            (:attr:`~bolt_pco64.costs.CostDefaults.startup_seconds`).
    """

    def __init__(
        self, problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
    ):
        seconds = TimeModel(problem.table, startup_seconds).run_seconds
        # Whole seconds, at least one: Ax's simulated backend keeps a trial's
        # data only if (start + runtime) - start == runtime, exact for integers.
        self._seconds = seconds.round().clamp_min(1.0)
        self._rows = _Rows(problem)

    def __call__(self, params: Mapping[str, TParamValue]) -> float:
        """Seconds one run of ``params`` takes (its one step)."""
        return float(self._seconds[self._rows(params)])


# -- baseline -----------------------------------------------------------------


def expected_best_of_random_draws(
    values: Sequence[float], feasible: Sequence[bool], draws: int = BASELINE_DRAWS
) -> float:
    """Expected best feasible value among ``draws`` rows drawn without replacement.

    Every row is equally likely; a draw without a feasible row counts as the
    worst feasible value. Computed exactly: with ``N`` rows, ``F`` feasible and
    their values sorted ascending ``v_1 <= ... <= v_F``, the best is at most
    ``v_j`` with probability ``C(N - F + j, k) / C(N, k)`` (``k`` the number of
    draws, at most ``N``).

    Args:
        values: ``N`` values (ignored where infeasible).
        feasible: ``N`` flags.
        draws: Rows drawn, ``>= 1``.

    Raises:
        ValueError: If ``draws < 1``, the lengths differ or no row is feasible.
    """
    if draws < 1:
        raise ValueError(f"Expected `draws` >= 1, got {draws}.")
    if len(values) != len(feasible):
        raise ValueError(
            f"Expected as many feasibility flags as values, got {len(feasible)} and {len(values)}."
        )
    ok = sorted(float(v) for v, f in zip(values, feasible, strict=True) if f)
    if not ok:
        raise ValueError("Expected at least one feasible row, got none.")
    n, k = len(values), min(draws, len(values))
    total = math.comb(n, k)
    below = n - len(ok)
    expected, previous = 0.0, 0.0
    for j, value in enumerate(ok, start=1):
        cdf = math.comb(below + j, k) / total
        expected += value * (cdf - previous)
        previous = cdf
    return expected


# -- the problem --------------------------------------------------------------


def get_benchmark_problem(
    instance: str | Instance = "pco64",
    *,
    table: TableLike = None,
    num_trials: int = DEFAULT_NUM_TRIALS,
    noise: Noise | None = None,
    observe_noise_sd: bool = False,
    baseline_value: float | None = None,
    report_inference_value_as_trace: bool = False,
    startup_seconds: float = COST_DEFAULTS.startup_seconds,
) -> BenchmarkProblem:
    """An Ax ``BenchmarkProblem`` for a pco instance (see the module docstring).

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`).
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources).
        num_trials: Trials of one replication, ``>= 1``.
        noise: Noise on the values a run reports (Ax's
            :class:`~ax.benchmark.noise.Noise`); noiseless by default. It is
            wrapped in :class:`CrashObservation`.
        observe_noise_sd: Whether the metrics report the noise level (``sem``);
            if False the model infers it (Ax's default for BoTorch problems).
        baseline_value: Override of the documented default baseline (the
            expected best of :data:`BASELINE_DRAWS` random rows).
        report_inference_value_as_trace: Ax's option: the optimization trace
            is the inference trace (the true value of Ax's recommended point)
            rather than the best value found so far; set it to get an inference
            trace at all.
        startup_seconds: The time model's start-up of every run and crash
            (:class:`StepRuntime`).

    Returns:
        The benchmark problem, named after the instance (``"pco64"``, or
        ``"pco64_simulated"`` on the shipped stand-in).

    Raises:
        ValueError: For an unknown instance, a
            ``num_trials`` below 1, or a baseline not below the optimum.
    """
    if (
        isinstance(num_trials, bool)
        or not isinstance(num_trials, int)
        or num_trials < 1
    ):
        raise ValueError(
            f"Expected `num_trials` to be an int >= 1, got {num_trials!r}."
        )
    spec = get_instance(instance)
    problem = problem_class(spec)(table=table)
    frame = problem.table.frame
    optimal = float(problem.optimal_value)
    worst = float(problem.worst_feasible_value)
    if baseline_value is None:
        baseline_value = expected_best_of_random_draws(
            frame["throughput_mean"].tolist(), frame["ran_successfully"].tolist()
        )
    if not baseline_value < optimal:
        raise ValueError(
            f"Expected `baseline_value` below the optimal value {optimal}, got "
            f"{baseline_value} (a table needs two distinct feasible throughputs)."
        )
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
    return BenchmarkProblem(
        name=f"{spec.name}_simulated" if problem.is_simulated else spec.name,
        optimization_config=optimization_config,
        opt_config_metrics=[objective_metric, constraint_metric],
        num_trials=num_trials,
        test_function=PCOTestFunction(problem=problem, crash_value=worst),
        noise=CrashObservation(noise=noise if noise is not None else GaussianNoise()),
        optimal_value=optimal,
        baseline_value=float(baseline_value),
        worst_feasible_value=worst,
        search_space=search_space_from_problem(problem),
        report_inference_value_as_trace=report_inference_value_as_trace,
        step_runtime_function=StepRuntime(problem, startup_seconds),
    )
