"""The framework-neutral pieces of the adapters (bolt_pco64.integrations.common).

Nothing here imports Ax or Optuna.
"""

from __future__ import annotations

import ast
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bolt_pco64 import PCO16, PCO64
from bolt_pco64.bench import BenchConfig
from bolt_pco64.bench.run import run_one
from bolt_pco64.integrations.common import (
    CRASH_REPORTS,
    AskTellBridge,
    BridgeMethod,
    CrashPolicy,
    Evaluation,
    Parameters,
    TableRuns,
    check_crash_report,
    expected_best_of_random_draws,
    get_problem,
    knob_levels,
    random_baseline,
    run_seconds,
)
from bolt_pco64.tables.time_model import TimeModel
from tests import _fixtures
from tests._tables import hand_frame, small_frame

pytestmark = _fixtures.DEFAULT_TABLES

REPO = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("ax", "optuna")
INPUT_COLUMNS = PCO64.instance.input_columns


def _hand_frame() -> pd.DataFrame:
    """Bucket levels 6/8 (a gap), ZeRO 0/3 only, cp constant; rows 1 and 4 crash."""
    return hand_frame(overall_time=[10.0, 0.0, 30.0, 40.0, 0.0, 60.0, 70.0])


def _assignments(frame: pd.DataFrame) -> list[dict[str, int]]:
    return [
        {c: int(frame.iloc[i][c]) for c in INPUT_COLUMNS} for i in range(len(frame))
    ]


# -- no framework ---------------------------------------------------------------


def test_common_modules_import_no_framework() -> None:
    package = REPO / "bolt_pco64" / "integrations"
    paths = [package / "__init__.py", *sorted((package / "common").glob("*.py"))]
    assert len(paths) > 2
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            roots = {n.split(".")[0] for n in names}
            assert not roots & set(FRAMEWORKS), (path, names)


@pytest.mark.slow
def test_importing_common_loads_no_framework() -> None:
    code = (
        "import sys, bolt_pco64.integrations.common\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# -- levels and rows ---------------------------------------------------------------


def test_knob_levels_are_the_raw_levels_the_table_holds() -> None:
    levels = knob_levels(PCO64(table=_hand_frame()))
    assert list(levels) == list(INPUT_COLUMNS)
    assert levels["log2_dp_size"] == (1, 2, 3)
    assert levels["log2_dp_bucket_size_mb"] == (6, 8)  # a gap stays a gap
    assert levels["zero_stage"] == (0, 3)  # raw stages, not ordinal codes
    assert levels["log2_cp_size"] == (0,)


def test_knob_levels_of_another_instance_follow_its_inputs() -> None:
    frame = small_frame(seed=1, n=12, instance="pco16")
    problem = PCO16(table=frame)
    levels = knob_levels(problem)
    assert list(levels) == list(problem.instance.input_columns)
    for name, values in levels.items():
        assert values == tuple(sorted({int(v) for v in frame[name]}))


def test_every_row_is_found_from_its_own_assignment() -> None:
    frame = small_frame(seed=3, n=30)  # shuffled: not in canonical order
    problem = PCO64(table=frame)
    rows = Parameters(problem).row
    canonical = problem.table.frame
    for params in _assignments(frame):
        row = rows(params)
        assert {c: int(canonical.iloc[row][c]) for c in INPUT_COLUMNS} == params
    # Values may arrive as floats or numpy integers; extra keys are ignored.
    first = _assignments(frame)[0]
    loose = {
        k: np.int64(v) if k.startswith("log2") else float(v) for k, v in first.items()
    }
    assert rows({**loose, "note": "x"}) == rows(first)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"log2_dp_size": None}, "every knob.*log2_dp_size"),
        ({"log2_tp_size": 1.5}, "integer value for knob 'log2_tp_size'"),
        ({"log2_tp_size": True}, "integer value for knob 'log2_tp_size'"),
        ({"log2_tp_size": "1"}, "integer value for knob 'log2_tp_size'"),
        ({"zero_stage": 1}, r"\[0, 2, 3\] for knob 'zero_stage', got 1"),
    ],
)
def test_bad_assignments_are_named(change: dict[str, object], match: str) -> None:
    rows = Parameters(PCO64(table=_hand_frame())).row
    params: dict[str, object] = dict(_assignments(_hand_frame())[0])
    for key, value in change.items():
        if value is None:
            del params[key]
        else:
            params[key] = value
    with pytest.raises(ValueError, match=match):
        rows(params)


# -- run lengths and outcomes -------------------------------------------------------


def test_run_outcomes_and_seconds_follow_the_time_model() -> None:
    frame = _hand_frame()
    problem = PCO64(table=frame)
    startup = 100.0
    runs = TableRuns(problem, startup_seconds=startup)
    model = TimeModel(problem.table, startup)
    for i, params in enumerate(_assignments(frame)):
        outcome = runs(params)
        assert outcome.ran == (i not in (1, 4))
        assert outcome.seconds == float(model.run_seconds[outcome.row])
        if outcome.ran:
            # A run: the start-up plus its training loop (the table's overall_time).
            assert outcome.seconds == startup + frame.iloc[i]["overall_time"]
            assert outcome.throughput == frame.iloc[i]["throughput_mean"]
            assert outcome.margin < 0
        else:
            # A crash: the start-up plus the step in which memory ran out.
            assert outcome.seconds > startup
            assert math.isnan(outcome.throughput)
            assert outcome.margin > 0
    loops = run_seconds(problem, 0.0)[problem.table.feasible]
    assert sorted(loops.tolist()) == sorted(
        frame.loc[frame["ran_successfully"], "overall_time"].tolist()
    )


def test_run_seconds_refuses_a_bad_startup() -> None:
    with pytest.raises(ValueError, match="startup"):
        run_seconds(PCO64(table=_hand_frame()), -1.0)


# -- baseline -------------------------------------------------------------------------


def _brute_best(values: list[float], feasible: list[bool], k: int) -> float:
    worst = min(v for v, f in zip(values, feasible, strict=True) if f)
    draws = list(itertools.combinations(range(len(values)), k))
    return float(
        np.mean([max([values[i] for i in d if feasible[i]] or [worst]) for d in draws])
    )


@pytest.mark.parametrize("k", [1, 2, 5, 7, 9])
def test_expected_best_is_the_mean_over_all_draws(k: int) -> None:
    values = [0.3, math.nan, 0.1, 0.2, math.nan, 0.05, 0.15]
    feasible = [not math.isnan(v) for v in values]
    expected = _brute_best(values, feasible, min(k, len(values)))
    assert expected_best_of_random_draws(values, feasible, k) == pytest.approx(expected)


def test_expected_best_with_few_feasible_rows() -> None:
    # Two draws out of two feasible and five crashes: none feasible in 10 of 21.
    only_crashes = expected_best_of_random_draws(
        [1.0, 2.0, *[math.nan] * 5], [True, True, *[False] * 5], draws=2
    )
    assert only_crashes == pytest.approx((10 * 1.0 + 5 * 1.0 + 6 * 2.0) / 21)


def test_random_baseline_of_a_table() -> None:
    frame = _hand_frame()
    values = [0.10, math.nan, 0.20, 0.30, math.nan, 0.05, 0.15]
    feasible = [not math.isnan(v) for v in values]
    assert random_baseline(PCO64(table=frame), 3) == pytest.approx(
        _brute_best(values, feasible, 3)
    )


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([1.0], [True], 0), "draws"),
        (([1.0], [True], 1.5), "draws"),
        (([1.0, 2.0], [True], 1), "as many feasibility flags"),
        (([1.0], [False], 1), "at least one feasible"),
    ],
)
def test_expected_best_refuses_bad_input(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        expected_best_of_random_draws(*args)


# -- the problem factory and the two scales ---------------------------------------


def test_get_problem_builds_once_and_serves_a_problem_as_it_is() -> None:
    problem = get_problem("pco16", small_frame(seed=1, n=12, instance="pco16"))
    assert isinstance(problem, PCO16)
    assert get_problem(problem) is problem
    with pytest.raises(ValueError, match="Expected no `table` with a problem"):
        get_problem(problem, _hand_frame())
    with pytest.raises(ValueError, match="pco8"):
        get_problem("pco8")


@pytest.mark.parametrize("scale", ["raw", "encoded"])
def test_every_row_is_named_and_found_on_either_scale(scale: str) -> None:
    frame = _hand_frame()
    problem = PCO64(table=frame)
    parameters = Parameters(problem, scale)  # type: ignore[arg-type]
    raw = Parameters(problem)
    assert parameters.names == tuple(INPUT_COLUMNS)
    for row in range(len(frame)):
        params = parameters.of_row(row)
        assert parameters.row(params) == row
        assert parameters.encode(params) == problem.candidates()[row].tolist()
        # The two scales differ only in the ordinal ZeRO stage.
        stage = raw.of_row(row)["zero_stage"]
        expected = stage if scale == "raw" else (0, 2, 3).index(stage)
        assert params["zero_stage"] == expected
    zero = parameters.levels()["zero_stage"]
    assert zero == ((0, 3) if scale == "raw" else (0, 2))


def test_the_encoded_scale_refuses_values_outside_the_bounds() -> None:
    parameters = Parameters(PCO64(table=_hand_frame()), "encoded")
    params = {**parameters.of_row(0), "zero_stage": 3}  # a raw stage, not an index
    with pytest.raises(ValueError, match=r"zero_stage to be an integer in \[0, 2\]"):
        parameters.row(params)
    with pytest.raises(ValueError, match="Expected `scale`"):
        Parameters(PCO64(table=_hand_frame()), "log")  # type: ignore[arg-type]


# -- one crash vocabulary -------------------------------------------------------------


def test_crash_reports_are_one_vocabulary() -> None:
    assert CRASH_REPORTS == ("placeholder", "missing", "failed")
    for report in CRASH_REPORTS:
        assert check_crash_report(report) == report
    for old in ("abandoned", "fail", "pruned"):
        with pytest.raises(ValueError, match=f"got {old!r}"):
            check_crash_report(old)
    with pytest.raises(ValueError, match="Expected `crash_report` to be one of"):
        check_crash_report("nan")


def test_the_crash_policy_says_what_a_crash_reports() -> None:
    problem = PCO64(table=_hand_frame())
    crash = Evaluation(row=1, ran=False, throughput=math.nan, margin=0.5, seconds=1.0)
    run = Evaluation(row=0, ran=True, throughput=0.1, margin=-0.5, seconds=1.0)
    placeholder = CrashPolicy.for_problem(problem)
    assert placeholder.placeholder == float(problem.worst_feasible_value)
    assert placeholder.objective(crash) == placeholder.placeholder
    assert CrashPolicy.for_problem(problem, "missing").objective(crash) is None
    assert math.isnan(CrashPolicy.for_problem(problem, "failed").objective(crash))  # type: ignore[arg-type]
    for report in CRASH_REPORTS:
        assert CrashPolicy.for_problem(problem, report).objective(run) == 0.1
    with pytest.raises(ValueError, match="Expected `crash_value` to be a number"):
        CrashPolicy("placeholder", math.nan)
    with pytest.raises(ValueError, match="got 'pruned'"):
        CrashPolicy("pruned", 0.0)  # type: ignore[arg-type]


# -- the ask-and-tell bridge, driven by a hand-written framework ------------------------


class _RandomProposer:
    """A toy framework: uniform random configurations over the raw levels.

    What a new adapter writes (:class:`~bolt_pco64.integrations.common.Proposer`):
    a trial handle (here its number), a proposal, an adopted configuration,
    and what it is told (as the crash policy says).
    """

    def __init__(self, parameters: Parameters, policy: CrashPolicy, seed: int) -> None:
        self.levels = parameters.levels()
        self.policy = policy
        self.rng = np.random.default_rng(seed)
        self.trials: list[dict[str, int]] = []
        self.told: dict[int, tuple[float | None, float]] = {}

    def propose(self) -> tuple[int, dict[str, int]]:
        params = {k: int(self.rng.choice(v)) for k, v in self.levels.items()}
        return self.adopt(params), params

    def adopt(self, params: dict[str, int]) -> int:
        self.trials.append(dict(params))
        return len(self.trials) - 1

    def observe(self, trial: int, outcome: Evaluation) -> None:
        assert trial not in self.told
        self.told[trial] = (self.policy.objective(outcome), outcome.margin)


def _bridge(
    seed: int, report: str = "placeholder"
) -> tuple[AskTellBridge, _RandomProposer]:
    problem = PCO64(table=_hand_frame())
    runs = TableRuns(problem)
    policy = CrashPolicy.for_problem(problem, report)  # type: ignore[arg-type]
    proposer = _RandomProposer(runs.parameters, policy, seed)
    return AskTellBridge(runs, proposer), proposer


def test_a_hand_written_framework_drives_the_bridge() -> None:
    bridge, proposer = _bridge(seed=0, report="missing")
    # An initial design chosen elsewhere: adopted as trials of their own.
    for row in (0, 1):
        bridge.tell(bridge.parameters.of_row(row), bridge.runs.of_row(row))
    assert proposer.trials == [bridge.parameters.of_row(0), bridge.parameters.of_row(1)]
    margins = bridge.parameters.problem.table.frame["peak_mem_normalised"]
    assert proposer.told[0] == (0.10, margins.iloc[0])
    assert proposer.told[1][0] is None  # row 1 crashed: "missing"
    # Asked configurations complete their own trials when told, oldest first.
    asked = [bridge.ask() for _ in range(3)]
    rows = [bridge.parameters.row(p) for p in asked]
    assert bridge.pending == rows
    for params in reversed(asked):
        bridge.tell(params, bridge.runs(params))
    assert bridge.pending == []
    assert sorted(proposer.told) == [0, 1, 2, 3, 4]
    for k, params in enumerate(asked, start=2):
        outcome = bridge.runs(params)
        assert proposer.trials[k] == params
        expected = outcome.throughput if outcome.ran else None
        assert proposer.told[k][0] == expected


class _RandomMethod(BridgeMethod):
    """The toy framework as a harness method: the whole adapter."""

    def bridge(self, problem: PCO64, seed: int) -> AskTellBridge:
        runs = TableRuns(problem)
        policy = CrashPolicy.for_problem(problem, self.crash_report)
        return AskTellBridge(runs, _RandomProposer(runs.parameters, policy, seed))


def test_a_bridge_method_runs_in_the_harness_deterministically() -> None:
    table = PCO64(table=small_frame(seed=2, n=40)).table
    config = BenchConfig(budget=12, n_init=4)
    first, again = (
        run_one("toy", 0, table, config, fn=_RandomMethod()) for _ in range(2)
    )
    design = run_one("random", 0, table, config)
    assert first.ok, first.error
    assert len(first.records) == 12
    assert first.records["row"].tolist()[:4] == design.records["row"].tolist()[:4]
    assert first.records["row"].tolist() == again.records["row"].tolist()
    with pytest.raises(ValueError, match="Expected `crash_report`"):
        _RandomMethod("nan")  # type: ignore[arg-type]
