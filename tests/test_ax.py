"""The Ax adapter (bolt_pco64.ax): problem construction and a full replication."""

from __future__ import annotations

import ast
import itertools
import logging
import math
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from ax.benchmark.benchmark import benchmark_replication
from ax.benchmark.benchmark_method import BenchmarkMethod
from ax.core.outcome_constraint import ComparisonOp
from ax.core.parameter import (
    ChoiceParameter,
    FixedParameter,
    ParameterType,
    RangeParameter,
)

from bolt_pco64 import PCO64
from bolt_pco64.ax import (
    CONSTRAINT_NAME,
    OBJECTIVE_NAME,
    expected_best_of_random_draws,
    get_benchmark_problem,
)
from bolt_pco64.costs import COST_DEFAULTS, TimeModel
from bolt_pco64.instances import get_instance
from bolt_pco64.table import INPUT_COLUMNS, ZERO_STAGES, encode_inputs
from tests._tables import frame_from

pytestmark = pytest.mark.filterwarnings("ignore::bolt_pco64.SimulatedTableWarning")

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "data" / "pco64_simulated.parquet"


def _hand_frame() -> pd.DataFrame:
    """Bucket levels 6/8 (a gap), ZeRO 0/3 only, cp constant; row 3 is the best."""
    configs = [
        (1, 0, 0, 0, 0, 6, 0, 0),
        (1, 1, 0, 0, 0, 8, 3, 0),
        (2, 0, 1, 0, 0, 6, 0, 1),
        (2, 1, 1, 0, 1, 8, 3, 1),
        (3, 2, 0, 0, 1, 6, 0, 0),
        (3, 0, 2, 0, 0, 8, 0, 2),
        (1, 2, 2, 0, 2, 8, 3, 2),
    ]
    throughput = [0.10, None, 0.20, 0.30, None, 0.05, 0.15]
    return frame_from(configs, throughput)


# -- import hygiene --------------------------------------------------------------


def test_no_core_module_imports_ax() -> None:
    package = REPO / "bolt_pco64"
    for path in package.rglob("*.py"):
        if path == package / "ax.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            assert not any(n == "ax" or n.startswith("ax.") for n in names), path


@pytest.mark.slow
def test_core_package_does_not_import_ax() -> None:
    code = (
        "import sys, bolt_pco64, bolt_pco64.problem, bolt_pco64.table\n"
        "loaded = sorted(m for m in sys.modules if m == 'ax' or m.startswith('ax.'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_module_resolves_the_ax_package_not_itself() -> None:
    problem = get_benchmark_problem(table=_hand_frame())
    assert type(problem).__module__ == "ax.benchmark.benchmark_problem"


# -- problem construction ------------------------------------------------------


def test_parameters_are_the_knobs_typed_by_the_table_levels() -> None:
    problem = get_benchmark_problem(table=_hand_frame(), num_trials=7)
    params = problem.search_space.parameters
    assert list(params) == list(INPUT_COLUMNS)
    dp = params["log2_dp_size"]
    assert isinstance(dp, RangeParameter)
    assert dp.parameter_type == ParameterType.INT
    assert (dp.lower, dp.upper) == (1, 3)
    bucket = params["log2_dp_bucket_size_mb"]  # levels 6 and 8: not contiguous
    assert isinstance(bucket, ChoiceParameter)
    assert bucket.is_ordered
    assert bucket.values == [6, 8]
    zero = params["zero_stage"]  # raw stages, only those in the table
    assert isinstance(zero, ChoiceParameter)
    assert zero.is_ordered
    assert zero.parameter_type == ParameterType.INT
    assert zero.values == [0, 3]
    cp = params["log2_cp_size"]
    assert isinstance(cp, FixedParameter)
    assert cp.value == 0
    assert problem.num_trials == 7


@pytest.mark.parametrize("instance", ["pco16", "pco32", "pco64"])
def test_standin_levels_and_optimum_are_read_from_the_table(instance: str) -> None:
    problem = get_benchmark_problem(instance)
    raw = pd.read_parquet(REPO / "data" / f"{instance}_simulated.parquet")
    assert list(problem.search_space.parameters) == list(
        get_instance(instance).input_columns
    )
    for name, param in problem.search_space.parameters.items():
        levels = sorted(int(v) for v in raw[name].unique())
        if isinstance(param, RangeParameter):
            assert param.parameter_type == ParameterType.INT
            assert list(range(int(param.lower), int(param.upper) + 1)) == levels
        else:
            assert isinstance(param, ChoiceParameter)
            assert param.values == levels
    assert problem.search_space.parameters["zero_stage"].values == list(ZERO_STAGES)
    feasible = raw["ran_successfully"].astype(bool)
    assert problem.optimal_value == raw.loc[feasible, "throughput_mean"].max()
    assert problem.worst_feasible_value == raw.loc[feasible, "throughput_mean"].min()
    assert problem.name == f"{instance}_simulated"


def test_objective_constraint_and_reference_values() -> None:
    frame = _hand_frame()
    problem = get_benchmark_problem(table=frame)
    config = problem.optimization_config
    assert config.objective.metric_names == [OBJECTIVE_NAME]
    assert not config.objective.minimize
    (constraint,) = config.outcome_constraints
    assert constraint.metric_names == [CONSTRAINT_NAME]
    assert constraint.op == ComparisonOp.LEQ
    assert float(constraint.bound) == 0.0
    assert not constraint.relative
    assert problem.optimal_value == 0.30
    assert problem.worst_feasible_value == 0.05
    assert problem.worst_feasible_value < problem.baseline_value < 0.30


def test_baseline_is_the_expected_best_of_random_draws() -> None:
    values = [0.3, math.nan, 0.1, 0.2, math.nan, 0.05, 0.15]
    feasible = [not math.isnan(v) for v in values]
    worst = min(v for v, f in zip(values, feasible, strict=True) if f)
    draws = list(itertools.combinations(range(len(values)), 5))
    brute = np.mean(
        [max([values[i] for i in d if feasible[i]] or [worst]) for d in draws]
    )
    assert expected_best_of_random_draws(values, feasible) == pytest.approx(brute)
    # Two draws out of two feasible and five crashes: none feasible in 10 of 21.
    only_crashes = expected_best_of_random_draws(
        [1.0, 2.0, *[math.nan] * 5], [True, True, *[False] * 5], draws=2
    )
    assert only_crashes == pytest.approx((10 * 1.0 + 5 * 1.0 + 6 * 2.0) / 21)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"instance": "pco17"}, "instance name"),
        ({"num_trials": 0}, "num_trials"),
        ({"num_trials": 2.5}, "num_trials"),
        ({"baseline_value": 0.5}, "baseline_value"),
        ({"startup_seconds": -1.0}, "startup_seconds"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        get_benchmark_problem(**{"table": _hand_frame(), **kwargs})  # type: ignore[arg-type]


def test_baseline_draws_must_be_positive() -> None:
    with pytest.raises(ValueError, match="draws"):
        expected_best_of_random_draws([1.0], [True], draws=0)


# -- test function, observation, runtime -------------------------------------------


def test_ground_truth_and_what_a_crash_reports() -> None:
    frame = _hand_frame()
    problem = get_benchmark_problem(table=frame)
    best = {name: int(frame.iloc[3][name]) for name in INPUT_COLUMNS}
    crash = {name: int(frame.iloc[1][name]) for name in INPUT_COLUMNS}
    y_best = problem.test_function.evaluate_true(best)
    assert tuple(y_best.shape) == (2, 1)
    assert y_best[0, 0].item() == 0.30
    assert y_best[1, 0].item() == frame.iloc[3]["peak_mem_normalised"] < 0
    y_crash = problem.test_function.evaluate_true(crash)
    assert y_crash[1, 0].item() == frame.iloc[1]["peak_mem_normalised"] > 0
    assert y_crash[0, 0].item() == problem.worst_feasible_value  # never NaN

    rows = [
        {"metric_name": m, "arm_name": arm, "Y_true": y[i, 0].item()}
        for arm, y in (("0_0", y_best), ("1_0", y_crash))
        for i, m in enumerate((OBJECTIVE_NAME, CONSTRAINT_NAME))
    ]
    observed = problem.noise.add_noise(
        df=pd.DataFrame(rows),
        trial=None,
        outcome_names=[OBJECTIVE_NAME, CONSTRAINT_NAME],
        arm_weights=None,
    )
    seen = set(zip(observed["arm_name"], observed["metric_name"], strict=True))
    assert seen == {
        ("0_0", OBJECTIVE_NAME),
        ("0_0", CONSTRAINT_NAME),
        ("1_0", CONSTRAINT_NAME),
    }
    assert not observed["mean"].isna().any()


def test_step_runtime_is_startup_plus_the_loop_and_a_crash_less() -> None:
    frame = _hand_frame()
    problem = get_benchmark_problem(table=frame)
    runtime = problem.step_runtime_function
    assert runtime is not None
    feasible = frame["ran_successfully"].to_numpy(dtype=bool)
    times = frame["overall_time"].to_numpy(dtype=float)
    startup = COST_DEFAULTS.startup_seconds
    for i in range(len(frame)):
        params = {name: int(frame.iloc[i][name]) for name in INPUT_COLUMNS}
        if feasible[i]:
            assert runtime(params) == max(1.0, round(startup + times[i]))
        else:
            assert startup <= runtime(params) < startup + times[feasible].min()


def test_step_runtime_charges_what_the_harness_charges() -> None:
    """Ax's run lengths and the harness's GPU-hours follow one cost policy."""
    from bolt_pco64.bench.run import cost_per_row

    frame = _hand_frame()
    runtime = get_benchmark_problem(table=frame).step_runtime_function
    assert runtime is not None
    problem = PCO64(table=frame)
    hours = cost_per_row(problem.table)
    table_frame = problem.table.frame
    assert not table_frame["ran_successfully"].all()
    for i in range(len(table_frame)):
        params = {name: int(table_frame.iloc[i][name]) for name in INPUT_COLUMNS}
        seconds = float(hours[i]) * 3600 / problem.instance.num_gpus
        assert runtime(params) == max(1.0, round(seconds))


# -- a replication ---------------------------------------------------------------


N_TRIALS = 40
N_SOBOL = 32


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")  # Ax's and BoTorch's advisories; logs are checked
def test_replication_survives_crashes_and_traces_agree_with_table(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from ax.adapter.registry import Generators
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct

    problem = get_benchmark_problem(num_trials=N_TRIALS)
    # Ax's default strategy (center, Sobol, then BoTorch), with a Sobol budget
    # that keeps the test short; every argument of the replication is Ax's default.
    strategy = choose_generation_strategy(
        GenerationStrategyDispatchStruct(initialization_budget=N_SOBOL)
    )
    ax_logger = logging.getLogger("ax")  # it does not propagate to caplog's root
    ax_logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.DEBUG):
            result = benchmark_replication(
                problem=problem,
                method=BenchmarkMethod(generation_strategy=strategy),
                seed=0,
            )
    finally:
        ax_logger.removeHandler(caplog.handler)

    assert any(r.name.startswith("ax.") for r in caplog.records)  # Ax was heard
    bad = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR or r.exc_info or "Traceback" in r.getMessage()
    ]
    assert bad == []

    experiment = result.experiment
    assert experiment is not None
    trials = [experiment.trials[i] for i in sorted(experiment.trials)]
    assert len(trials) == N_TRIALS
    assert {t.status.name for t in trials} == {"COMPLETED"}
    nodes = [t.generator_runs[0]._generation_node_name for t in trials]
    assert nodes[-1] == "MBM"

    snapped = _snapped_rows([t.arms[0].parameters for t in trials])
    ran = snapped["ran_successfully"].astype(bool).tolist()
    assert 0 < ran.count(False) < N_TRIALS  # crashes among the trials

    data = experiment.lookup_data().df
    observed = set(zip(data["trial_index"], data["metric_name"], strict=True))
    for t, ok in zip(trials, ran, strict=True):
        assert (t.index, CONSTRAINT_NAME) in observed
        assert ((t.index, OBJECTIVE_NAME) in observed) == ok

    # Best feasible throughput so far, from the table alone.
    best, expected = problem.worst_feasible_value, []
    for value, ok in zip(snapped["throughput_mean"], ran, strict=True):
        if ok:
            best = max(best, float(value))
        expected.append(best)
    assert result.oracle_trace == pytest.approx(expected, rel=1e-12)
    assert result.is_feasible_trace == ran
    f = PCO64(table=STANDIN)
    rows = f.lookup(
        torch.from_numpy(encode_inputs(snapped[list(INPUT_COLUMNS)]))
    ).numpy()
    seconds = TimeModel(f.table).run_seconds.numpy()[rows]
    assert result.cost_trace == pytest.approx(
        np.cumsum(np.maximum(1.0, np.round(seconds))).tolist()
    )

    # The model's data: the constraint from every trial, throughput from runs only.
    adapter = Generators.BOTORCH_MODULAR(
        experiment=experiment, data=experiment.lookup_data()
    )
    sizes = {
        name: len(ds.X)
        for ds in adapter.generator.surrogate.training_data
        for name in ds.outcome_names
    }
    assert sizes == {OBJECTIVE_NAME: ran.count(True), CONSTRAINT_NAME: N_TRIALS}


def _snapped_rows(params: list[Mapping[str, object]]) -> pd.DataFrame:
    """The stand-in's rows that parameterizations snap to, via the BoTorch problem."""
    f = PCO64(table=STANDIN)
    x = torch.from_numpy(encode_inputs(pd.DataFrame([dict(p) for p in params])))
    return f.table.frame.iloc[f.lookup(x).tolist()].reset_index(drop=True)
