"""The Ax adapter (bolt_pco64.integrations.ax): problem construction and replications."""

from __future__ import annotations

import ast
import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, get_args

import numpy as np
import pandas as pd
import pytest
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench.regenerate import REPORT_MARKER
from bolt_pco64.instances import ZERO_STAGES, get_instance
from bolt_pco64.integrations.common import get_problem
from bolt_pco64.tables.table import encode_inputs
from bolt_pco64.tables.time_model import COST_DEFAULTS, TimeModel
from tests import _fixtures
from tests._scripts import load_script
from tests._tables import frame_from, hand_frame

#: The checkout's rewrite of every report, the scripts' files included.
regenerate_all = load_script("report_results").regenerate_all

if TYPE_CHECKING:
    from ax.benchmark.benchmark_method import BenchmarkMethod
    from ax.benchmark.benchmark_problem import BenchmarkProblem
    from ax.benchmark.benchmark_result import BenchmarkResult

pytestmark = _fixtures.DEFAULT_TABLES

INPUT_COLUMNS = PCO64.instance.input_columns
REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "data" / "pco64_simulated.parquet"


def _hand_frame() -> pd.DataFrame:
    """Bucket levels 6/8 (a gap), ZeRO 0/3 only, cp constant; row 3 is the best."""
    return hand_frame()


# -- import hygiene --------------------------------------------------------------


def test_no_core_module_imports_ax() -> None:
    package = REPO / "bolt_pco64"
    for path in package.rglob("*.py"):
        if path == package / "integrations" / "ax.py":
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
def test_core_package_does_not_import_ax(core_imports: frozenset[str]) -> None:
    """In a fresh interpreter (slow: it imports every core module); the fast
    suite's checks are the one above and test_deps'."""
    assert "bolt_pco64.tables.table" in core_imports
    assert [m for m in core_imports if m == "ax" or m.startswith("ax.")] == []


def test_module_resolves_the_ax_package_not_itself() -> None:
    from bolt_pco64.integrations.ax import get_benchmark_problem

    problem = get_benchmark_problem(table=_hand_frame())
    assert type(problem).__module__ == "ax.benchmark.benchmark_problem"


# -- problem construction ------------------------------------------------------


def test_parameters_are_the_knobs_typed_by_the_table_levels() -> None:
    from ax.core.parameter import (
        ChoiceParameter,
        FixedParameter,
        ParameterType,
        RangeParameter,
    )

    from bolt_pco64.integrations.ax import get_benchmark_problem

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
    from ax.core.parameter import ChoiceParameter, ParameterType, RangeParameter

    from bolt_pco64.integrations.ax import get_benchmark_problem

    # the stand-in is no longer the default (issue 27): asked for by path
    path = REPO / "data" / f"{instance}_simulated.parquet"
    problem = get_benchmark_problem(instance, table=path)
    raw = pd.read_parquet(path)
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
    from ax.core.outcome_constraint import ComparisonOp

    from bolt_pco64.integrations.ax import (
        CONSTRAINT_NAME,
        OBJECTIVE_NAME,
        get_benchmark_problem,
    )

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
    from bolt_pco64.integrations.ax import get_benchmark_problem

    with pytest.raises(ValueError, match=match):
        get_benchmark_problem(**{"table": _hand_frame(), **kwargs})  # type: ignore[arg-type]


# -- test function, observation, runtime -------------------------------------------


def _observed(report: str, noise_std: float = 0.0) -> pd.DataFrame:
    """What the best row (arm 0_0) and a crash (arm 1_0) report under ``report``."""
    from ax.benchmark.noise import GaussianNoise

    from bolt_pco64.integrations.ax import (
        CONSTRAINT_NAME,
        OBJECTIVE_NAME,
        get_benchmark_problem,
    )

    frame = _hand_frame()
    problem = get_benchmark_problem(
        table=frame, crash_report=report, noise=GaussianNoise(noise_std=noise_std)
    )
    best = {name: int(frame.iloc[3][name]) for name in INPUT_COLUMNS}
    crash = {name: int(frame.iloc[1][name]) for name in INPUT_COLUMNS}
    rows = [
        {"metric_name": m, "arm_name": arm, "Y_true": y[i, 0].item()}
        for arm, y in (
            ("0_0", problem.test_function.evaluate_true(best)),
            ("1_0", problem.test_function.evaluate_true(crash)),
        )
        for i, m in enumerate((OBJECTIVE_NAME, CONSTRAINT_NAME))
    ]
    observed = problem.noise.add_noise(
        df=pd.DataFrame(rows),
        trial=None,
        outcome_names=[OBJECTIVE_NAME, CONSTRAINT_NAME],
        arm_weights=None,
    )
    return observed.set_index(["arm_name", "metric_name"])["mean"]


def test_ground_truth_of_a_run_and_of_a_crash() -> None:
    from bolt_pco64.integrations.ax import get_benchmark_problem

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
    assert y_crash[0, 0].item() == 0.05  # the worst feasible throughput, never NaN


def test_what_a_crash_reports_under_each_representation() -> None:
    from bolt_pco64.integrations.ax import CONSTRAINT_NAME, OBJECTIVE_NAME

    margin = float(_hand_frame().iloc[1]["peak_mem_normalised"])
    missing = _observed("missing")
    assert ("1_0", OBJECTIVE_NAME) not in missing.index
    assert missing[("1_0", CONSTRAINT_NAME)] == margin
    assert missing[("0_0", OBJECTIVE_NAME)] == 0.30
    placeholder = _observed("placeholder", noise_std=0.01)
    assert placeholder[("1_0", OBJECTIVE_NAME)] == 0.05  # exactly: no noise on it
    assert placeholder[("0_0", OBJECTIVE_NAME)] != 0.30  # a run's value is noisy
    assert len(placeholder) == 4
    failed = _observed("failed")
    assert math.isnan(failed[("1_0", OBJECTIVE_NAME)])
    assert failed[("1_0", CONSTRAINT_NAME)] == margin
    assert not failed.drop(("1_0", OBJECTIVE_NAME)).isna().any()


def test_the_crash_vocabulary_is_the_one_of_every_adapter() -> None:
    from bolt_pco64.integrations import common
    from bolt_pco64.integrations.ax import (
        DEFAULT_CRASH_REPORT,
        CrashReport,
        get_benchmark_problem,
    )

    assert CrashReport is common.CrashReport
    assert DEFAULT_CRASH_REPORT == common.DEFAULT_CRASH_REPORT
    with pytest.raises(ValueError, match="got 'abandoned'"):
        get_benchmark_problem(table=_hand_frame(), crash_report="abandoned")  # type: ignore[arg-type]


def test_default_representation_is_documented() -> None:
    from bolt_pco64.integrations.ax import (
        DEFAULT_CRASH_REPORT,
        CrashObservation,
        CrashReport,
        get_benchmark_problem,
    )

    assert DEFAULT_CRASH_REPORT in get_args(CrashReport)
    problem = get_benchmark_problem(table=_hand_frame())
    assert isinstance(problem.noise, CrashObservation)
    assert problem.noise.report == DEFAULT_CRASH_REPORT
    guide = (REPO / "docs" / "ax.md").read_text()  # the site's Ax page
    assert f'`crash_report="{DEFAULT_CRASH_REPORT}"` (the default)' in guide


def test_bad_crash_report_is_named() -> None:
    from bolt_pco64.integrations.ax import get_benchmark_problem

    with pytest.raises(ValueError, match="report"):
        get_benchmark_problem(table=_hand_frame(), crash_report="zero")  # type: ignore[arg-type]


def test_constraint_data_strategy_counts_completed_trials() -> None:
    from ax.benchmark.methods.modular_botorch import get_sobol_mbm_generation_strategy
    from ax.generation_strategy.transition_criterion import TrialBasedCriterion
    from botorch.models import SingleTaskGP

    from bolt_pco64.integrations.ax import count_trials_with_constraint_data

    strategy = get_sobol_mbm_generation_strategy(
        model_cls=SingleTaskGP, num_sobol_trials=3
    )
    copy = count_trials_with_constraint_data(strategy)

    def flags(s: object) -> list[bool]:
        return [
            c.count_only_trials_with_data
            for node in s.nodes_by_name.values()  # type: ignore[attr-defined]
            for c in node.transition_criteria
            if isinstance(c, TrialBasedCriterion)
        ]

    assert True in flags(strategy)  # Ax's stock "observed" criterion
    assert flags(copy)
    assert True not in flags(copy)
    assert copy is not strategy


def test_step_runtime_is_startup_plus_the_loop_and_a_crash_less() -> None:
    from bolt_pco64.integrations.ax import get_benchmark_problem

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


# -- replications -------------------------------------------------------------------


def _tiny_frame() -> pd.DataFrame:
    """Eight rows, five of them crash: a short Sobol phase meets a crash."""
    configs = [
        (1, 0, 0, 0, 0, 6, 0, 0),
        (1, 1, 0, 0, 0, 8, 3, 0),
        (2, 0, 1, 0, 0, 6, 0, 1),
        (2, 1, 1, 0, 1, 8, 3, 1),
        (3, 2, 0, 0, 1, 6, 0, 0),
        (3, 0, 2, 0, 0, 8, 0, 2),
        (1, 2, 2, 0, 2, 8, 3, 2),
        (2, 2, 2, 0, 2, 6, 0, 2),
    ]
    return frame_from(configs, [0.10, None, None, 0.30, None, None, 0.15, None])


def _short_sobol(num_sobol_trials: int, max_pending_trials: int = 1) -> BenchmarkMethod:
    """Ax's own helper: Sobol, then BoTorch (SingleTaskGP + qLogNEI)."""
    from ax.benchmark.methods.modular_botorch import (
        get_sobol_botorch_modular_acquisition,
    )
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.models import SingleTaskGP

    method = get_sobol_botorch_modular_acquisition(
        model_cls=SingleTaskGP,
        acquisition_cls=qLogNoisyExpectedImprovement,
        num_sobol_trials=num_sobol_trials,
    )
    method.max_pending_trials = max_pending_trials
    return method


def _replicate(
    problem: BenchmarkProblem,
    method: BenchmarkMethod,
    seed: int,
    caplog: pytest.LogCaptureFixture,
) -> BenchmarkResult:
    """``benchmark_replication`` at Ax's defaults but WARNING logs; nothing at ERROR."""
    from ax.benchmark.benchmark import benchmark_replication

    ax_logger = logging.getLogger("ax")  # it does not propagate to caplog's root
    ax_logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            result = benchmark_replication(
                problem=problem,
                method=method,
                seed=seed,
                orchestrator_logging_level=logging.WARNING,
            )
    finally:
        ax_logger.removeHandler(caplog.handler)
    bad = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR or r.exc_info or "Traceback" in r.getMessage()
    ]
    assert bad == []
    assert result.experiment is not None
    return result


def _nodes(result: BenchmarkResult) -> list[str]:
    experiment = result.experiment
    assert experiment is not None
    return [
        experiment.trials[i].generator_runs[0]._generation_node_name
        for i in sorted(experiment.trials)
    ]


@pytest.mark.filterwarnings("ignore")  # Ax's and BoTorch's advisories; logs are checked
def test_short_sobol_phase_survives_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    """Ax's helper with 3 Sobol trials, one of them a crash, reaches BoTorch."""
    from bolt_pco64.integrations.ax import get_benchmark_problem

    problem = get_benchmark_problem(table=_tiny_frame(), num_trials=4)
    result = _replicate(problem, _short_sobol(3), seed=0, caplog=caplog)
    assert result.experiment is not None
    statuses = [t.status.name for t in result.experiment.trials.values()]
    assert statuses == ["COMPLETED"] * 4
    nodes = _nodes(result)
    assert ["Sobol" in n for n in nodes] == [True, True, True, False]
    assert "BoTorch" in nodes[-1]
    assert not all(result.is_feasible_trace[:3])  # a Sobol trial crashed


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_a_missing_objective_needs_the_adapters_criterion(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ax 1.3's stock "observed" transition waits for a crash's objective; the
    adapter's :func:`count_trials_with_constraint_data` lets it through."""
    from ax.benchmark.benchmark import benchmark_replication
    from ax.benchmark.benchmark_method import BenchmarkMethod
    from ax.orchestration.orchestrator import OrchestratorInternalError

    from bolt_pco64.integrations.ax import (
        count_trials_with_constraint_data,
        get_benchmark_problem,
    )

    problem = get_benchmark_problem(
        table=_tiny_frame(), num_trials=4, crash_report="missing"
    )
    with pytest.raises(OrchestratorInternalError, match="requires more data"):
        benchmark_replication(
            problem=problem,
            method=_short_sobol(3),
            seed=0,
            orchestrator_logging_level=logging.WARNING,
        )
    strategy = count_trials_with_constraint_data(_short_sobol(3).generation_strategy)
    result = _replicate(
        problem, BenchmarkMethod(generation_strategy=strategy), seed=0, caplog=caplog
    )
    assert len(_nodes(result)) == 4
    assert "BoTorch" in _nodes(result)[-1]
    assert not all(result.is_feasible_trace[:3])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_the_reported_abort_case_completes_and_agrees_with_the_table(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 16's case (pco64 stand-in, 5 Sobol trials, seed 1): it completes,
    and the traces, the model's data and the simulated time follow the table."""
    from bolt_pco64.integrations.ax import (
        CONSTRAINT_NAME,
        OBJECTIVE_NAME,
        get_benchmark_problem,
    )

    n_trials = 7
    problem = get_benchmark_problem(table=STANDIN, num_trials=n_trials)
    result = _replicate(problem, _short_sobol(5), seed=1, caplog=caplog)
    experiment = result.experiment
    assert experiment is not None
    trials = [experiment.trials[i] for i in sorted(experiment.trials)]
    assert [t.status.name for t in trials] == ["COMPLETED"] * n_trials
    assert "BoTorch" in _nodes(result)[-1]

    snapped = _snapped_rows([t.arms[0].parameters for t in trials])
    ran = snapped["ran_successfully"].astype(bool).tolist()
    assert not all(ran[:5])  # a Sobol trial crashed: the case that aborted

    # Best feasible throughput so far, from the table alone.
    best, expected = problem.worst_feasible_value, []
    for value, ok in zip(snapped["throughput_mean"], ran, strict=True):
        if ok:
            best = max(best, float(value))
        expected.append(best)
    assert result.oracle_trace == pytest.approx(expected, rel=1e-12)
    assert result.is_feasible_trace == ran

    # What the model saw: the constraint of every trial; a run's throughput, and
    # for a crash the placeholder (the worst feasible throughput).
    data = experiment.lookup_data().df.set_index(["trial_index", "metric_name"])
    for t, ok, row in zip(trials, ran, snapped.itertuples(), strict=True):
        assert data.loc[(t.index, CONSTRAINT_NAME), "mean"] == row.peak_mem_normalised
        seen = data.loc[(t.index, OBJECTIVE_NAME), "mean"]
        assert seen == (row.throughput_mean if ok else problem.worst_feasible_value)

    f = PCO64(table=STANDIN)
    rows = f.lookup(
        torch.from_numpy(encode_inputs(snapped[list(INPUT_COLUMNS)]))
    ).numpy()
    seconds = TimeModel(f.table).run_seconds.numpy()[rows]
    assert result.cost_trace == pytest.approx(
        np.cumsum(np.maximum(1.0, np.round(seconds))).tolist()
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_four_concurrent_trials_take_their_step_runtimes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ax's simulated backend, four trials at once: every trial runs its step
    runtime, at most four overlap, and the cost trace is the completion times."""
    from bolt_pco64.integrations.ax import get_benchmark_problem

    problem = get_benchmark_problem("pco32", num_trials=8)
    result = _replicate(problem, _short_sobol(4, max_pending_trials=4), 0, caplog)
    experiment = result.experiment
    assert experiment is not None
    runtime = problem.step_runtime_function
    assert runtime is not None
    spans = []
    for trial in experiment.trials.values():
        assert trial.status.name == "COMPLETED"
        assert trial.time_run_started is not None
        assert trial.time_completed is not None
        start = trial.time_run_started.timestamp()
        end = trial.time_completed.timestamp()
        assert end - start == runtime(trial.arms[0].parameters)
        spans.append((start, end))
    assert len(spans) == 8
    assert result.cost_trace == sorted({end for _, end in spans})
    overlap = [sum(s <= t < e for s, e in spans) for t, _ in spans]
    assert max(overlap) == 4  # the Sobol trials run at once
    assert result.cost_trace[-1] < sum(e - s for s, e in spans)  # time was saved


@pytest.mark.slow
def test_example_prints_a_table_and_keeps_stderr_short(tmp_path: Path) -> None:
    """examples/ax_benchmark.py: Ax's INFO logs do not reach stderr."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "ax_benchmark.py"),
         "--trials", "5", "--init", "3"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stderr.splitlines()) <= 5, proc.stderr[:2000]
    out = proc.stdout
    assert out.startswith("problem ")
    trials = re.findall(r"^\s+(\d+)\s+\S+\s+(yes|no)\s", out, flags=re.M)
    assert [int(i) for i, _ in trials] == list(range(5))
    summary = re.search(r"^5 trials, (\d+) ran out of memory", out, flags=re.M)
    assert summary is not None
    assert int(summary.group(1)) == sum(ran == "no" for _, ran in trials)
    assert re.search(r"^Ax recommends \S+: true throughput ", out, flags=re.M)
    assert "inference" not in out  # Ax's after-the-fact trace is not shown


def _snapped_rows(params: list[Mapping[str, object]]) -> pd.DataFrame:
    """The stand-in's rows that parameterizations snap to, via the BoTorch problem."""
    f = PCO64(table=STANDIN)
    x = torch.from_numpy(encode_inputs(pd.DataFrame([dict(p) for p in params])))
    return f.table.frame.iloc[f.lookup(x).tolist()].reset_index(drop=True)


# -- benchmarks/ax_matrix.py: per-trial records ----------------------------------

#: How the tiny matrix's two replications report a crash.
TINY_REPRESENTATIONS = ("failed", "placeholder")
#: Trials of a tiny replication: all of them Sobol trials (no model fits).
TINY_TRIALS = 6


@pytest.fixture(scope="module")
def ax_matrix() -> ModuleType:
    """benchmarks/ax_matrix.py as a module."""
    return load_script("ax_matrix")


@pytest.fixture(scope="module")
def tiny_matrix(
    ax_matrix: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, bytes]:
    """Two Sobol-only replications on pco64 (seed 0, crashes reported as
    ``failed`` and as ``placeholder``) and an aborted one, saved as the
    script saves them as it goes, then finished as it finishes.

    Returns:
        The per-replication CSV, and its bytes as saved before finishing.
    """
    out = tmp_path_factory.mktemp("ax_matrix") / "compare.csv"
    results = [
        ax_matrix.run_case(
            ax_matrix.Case(rep, "pco64", "modular", TINY_TRIALS, 0, 1, TINY_TRIALS)
        )
        for rep in TINY_REPRESENTATIONS
    ]
    aborted = ax_matrix.Row(
        "missing", "pco64", "modular", 3, 1, 1, 15, status="OrchestratorInternalError"
    )
    rows = [row for row, _ in results] + [aborted]
    ax_matrix.save(out, rows, [r for _, records in results for r in records])
    saved = out.read_bytes()
    ax_matrix.finish(out)
    return out, saved


def _table_rows(records: pd.DataFrame, instance: str) -> pd.DataFrame:
    """``records`` with the table row each ran (its feasibility, throughput and
    position), found by its knob columns in the default table."""
    frame = get_problem(instance).table.frame
    knobs = list(get_instance(instance).input_columns)
    table = frame[[*knobs, "ran_successfully", "throughput_mean"]].assign(
        position=range(len(frame))
    )
    ran = records[knobs].notna().all(axis=1)
    merged = (
        records[ran]
        .astype({k: "int64" for k in knobs})
        .merge(table, on=knobs, how="left", validate="many_to_one", indicator=True)
    )
    assert (merged["_merge"] == "both").all(), "a record names no table row"
    return merged.drop(columns="_merge")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_ax_matrix_keeps_the_trial_records_its_rows_come_from(
    ax_matrix: ModuleType, tiny_matrix: tuple[Path, bytes]
) -> None:
    out, _ = tiny_matrix
    rows = pd.read_csv(out)
    records = pd.read_parquet(out.with_name("compare_trials.parquet"))
    merged = _table_rows(records, "pco64")
    assert len(merged) == len(records)  # every trial ran a row
    knobs = list(get_instance("pco64").input_columns)
    frame = get_problem("pco64").table.frame
    feasible = frame["ran_successfully"].astype(bool)
    optimum = float(frame.loc[feasible, "throughput_mean"].max())
    worst = float(frame.loc[feasible, "throughput_mean"].min())
    configurations = set(frame[knobs].itertuples(index=False, name=None))

    ran = merged["ran_successfully"].astype(bool)
    assert merged["oom"].tolist() == (~ran).tolist()
    assert merged["oom"].any()  # the tiny run exercises the crash paths
    assert merged.loc[ran, "throughput"].to_numpy() == pytest.approx(
        merged.loc[ran, "throughput_mean"].to_numpy(), rel=1e-12
    )
    assert merged.loc[~ran, "throughput"].isna().all()
    proposed = records[[f"proposed_{k}" for k in knobs]].itertuples(
        index=False, name=None
    )
    assert records["on_table"].tolist() == [p in configurations for p in proposed]
    assert merged["optimal_value"].to_numpy() == pytest.approx(optimum, rel=1e-12)

    for row in rows.itertuples():
        key = {k: getattr(row, k) for k in ax_matrix.KEYS}
        mine = merged.loc[
            (merged[list(key)] == pd.Series(key)).all(axis=1)
        ].sort_values("trial")
        if row.status != "ok":  # aborted: no records, no figures
            assert mine.empty
            assert (row.trials, row.completed, row.repeats) == (0, 0, 0)
            assert math.isnan(row.oom_share)
            assert math.isnan(row.regret)
            continue
        crashed = ~mine["ran_successfully"].astype(bool)
        assert row.trials == len(mine) == TINY_TRIALS
        assert mine["trial"].tolist() == list(range(TINY_TRIALS))
        assert row.completed == (mine["status"] == "completed").sum()
        assert row.abandoned == (mine["status"] == "abandoned").sum()
        assert row.oom_share == pytest.approx(crashed.mean(), abs=5e-4)
        assert row.repeats == mine.duplicated(knobs).sum()
        best = float(mine.loc[~crashed, "throughput_mean"].max())
        assert row.regret == pytest.approx((optimum - best) / optimum, abs=5e-5)
        # What Ax was told: the throughput of a run; for a crash, nothing (an
        # abandoned trial) or the placeholder.
        told = mine["reported"].to_numpy()
        assert told[~crashed] == pytest.approx(
            mine.loc[~crashed, "throughput_mean"].to_numpy(), rel=1e-12
        )
        if row.representation == "failed":
            assert mine["status"].tolist() == [
                "abandoned" if c else "completed" for c in crashed
            ]
            assert np.isnan(told[crashed]).all()
        else:
            assert (mine["status"] == "completed").all()
            assert told[crashed] == pytest.approx(worst, rel=1e-12)
        # One trial at a time on Ax's simulated clock, each its step runtime.
        seconds = TimeModel(get_problem("pco64").table).run_seconds.numpy()
        expected = np.maximum(1.0, np.round(seconds[mine["position"].to_numpy()]))
        assert mine["run_seconds"].to_numpy() == pytest.approx(expected)
        spans = (mine["sim_end"] - mine["sim_start"]).to_numpy()
        assert spans == pytest.approx(expected)
        assert mine["sim_start"].iloc[1:].tolist() == mine["sim_end"].iloc[:-1].tolist()
        assert row.sim_time == pytest.approx(mine["sim_end"].max())
        assert mine["generator"].str.contains("Sobol").all()


def test_ax_matrix_report_rewrites_the_rows_and_summary_byte_for_byte(
    tiny_matrix: tuple[Path, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows a run writes as it goes are those its records give, and
    ``bolt-pco64 report`` rewrites them and the summary from the records."""
    out, saved = tiny_matrix
    assert out.read_bytes() == saved
    folder = tmp_path / "ax"
    shutil.copytree(out.parent, folder)
    (folder / REPORT_MARKER).write_text(json.dumps({"script": "ax_matrix"}))
    rows = pd.read_csv(folder / "compare.csv", dtype=str, keep_default_na=False)
    rows[["trials", "completed", "repeats"]] = "99"
    rows[["oom_share", "regret"]] = "0.5"
    rows.to_csv(folder / "compare.csv", index=False)
    (folder / "compare_summary.csv").write_text("stale\n")
    monkeypatch.chdir(REPO)
    written = regenerate_all(folder)
    assert sorted(p.name for p in written) == ["compare.csv", "compare_summary.csv"]
    for name in ("compare.csv", "compare_summary.csv"):
        assert (folder / name).read_bytes() == (out.parent / name).read_bytes(), name


@pytest.mark.parametrize("damage", ["missing", "corrupt", "a replication's gone"])
def test_ax_matrix_report_names_bad_records(
    ax_matrix: ModuleType,
    tiny_matrix: tuple[Path, bytes],
    tmp_path: Path,
    damage: str,
) -> None:
    out, _ = tiny_matrix
    folder = tmp_path / "ax"
    shutil.copytree(out.parent, folder)
    records = folder / "compare_trials.parquet"
    if damage == "missing":
        records.unlink()
    elif damage == "corrupt":
        records.write_bytes(b"PAR1 not a parquet file PAR1")
    else:
        kept = pd.read_parquet(records)
        kept[kept["representation"] != "failed"].to_parquet(records)
    with pytest.raises(ValueError, match=re.escape(str(records))):
        ax_matrix.report(folder)


def test_a_missing_record_file_reaches_bolt_pco64_report_by_name(
    tiny_matrix: tuple[Path, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = tiny_matrix
    folder = tmp_path / "ax"
    shutil.copytree(out.parent, folder)
    (folder / REPORT_MARKER).write_text(json.dumps({"script": "ax_matrix"}))
    (folder / "compare_trials.parquet").unlink()
    monkeypatch.chdir(REPO)
    with pytest.raises(ValueError, match=r"records '.*compare_trials\.parquet'"):
        regenerate_all(folder)
