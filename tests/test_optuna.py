"""The Optuna adapter (bolt_pco64.integrations.optuna): OptunaHub problem, snapping, crashes."""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

import optuna
import optunahub
import pandas as pd
import pytest
import tomllib
import torch
from optuna.distributions import IntDistribution
from optuna.trial import TrialState

from bolt_pco64 import load_table
from bolt_pco64.bench import BenchConfig, ComparisonSpec, run_comparison
from bolt_pco64.bench.contract import Method, RunContext
from bolt_pco64.bench.methods.registry import (
    ENTRY_POINT_GROUP,
    check_methods,
    get_method,
)
from bolt_pco64.bench.run import run_one
from bolt_pco64.instances import get_instance
from bolt_pco64.integrations.common import run_seconds
from bolt_pco64.integrations.optuna import (
    CONSTRAINT_NAME,
    FEASIBLE_ATTR,
    ROW_ATTR,
    ROW_PARAMS_ATTR,
    SECONDS_ATTR,
    AskTell,
    OptunaMethod,
    OptunaRandom,
    OptunaTPE,
    PCOProblem,
)
from tests import _fixtures
from tests._scripts import load_script
from tests._synth import make_table
from tests._tables import CAPACITY, PAD, hand_frame

pytestmark = _fixtures.DEFAULT_TABLES

registry = _fixtures.registry
REPO = Path(__file__).resolve().parent.parent
INPUTS = get_instance("pco64").input_columns


@pytest.fixture(autouse=True)
def _quiet_optuna() -> None:
    optuna.logging.set_verbosity(logging.ERROR)


def _hand_frame() -> pd.DataFrame:
    """Bucket levels 6/8 (a gap), ZeRO 0/3 only, cp constant.

    Canonical order A, B, G, C, D, F, E: the best (0.30) is row 4, the worst
    feasible (0.05) row 5; rows 1 (B) and 6 (E) ran out of memory.
    """
    return hand_frame()


def _params(*encoded: int) -> dict[str, int]:
    return dict(zip(INPUTS, encoded, strict=True))


A = _params(1, 0, 0, 0, 0, 6, 0, 0)
B = _params(1, 1, 0, 0, 0, 8, 2, 0)  # ZeRO 3 is index 2


@pytest.mark.slow
def test_core_package_does_not_import_optuna(core_imports: frozenset[str]) -> None:
    """In a fresh interpreter (slow: it imports every core module); the fast
    suite's check is test_deps' (an extra is imported only in its module)."""
    assert "bolt_pco64.bench" in core_imports
    assert "botorch" in core_imports  # what a core import does load
    loaded = [m for m in core_imports if m.split(".")[0] in ("optuna", "optunahub")]
    assert loaded == []


def test_follows_optunahubs_benchmark_interface() -> None:
    problem = PCOProblem(table=_hand_frame())
    assert isinstance(problem, optunahub.benchmarks.BaseProblem)
    assert isinstance(problem, optunahub.benchmarks.ConstrainedMixin)
    assert problem.directions == [optuna.study.StudyDirection.MAXIMIZE]


def test_search_space_is_the_encoded_levels_without_log_scale() -> None:
    space = PCOProblem(table=_hand_frame()).search_space
    assert list(space) == list(INPUTS)
    expected = [(1, 3), (0, 2), (0, 2), (0, 0), (0, 2), (6, 8), (0, 2), (0, 2)]
    for (name, dist), (low, high) in zip(space.items(), expected, strict=True):
        assert dist == IntDistribution(low, high, log=False, step=1), name


def test_a_combination_off_the_table_snaps_to_the_nearest_row() -> None:
    problem = PCOProblem(table=_hand_frame())
    off_table = _params(2, 1, 1, 0, 1, 7, 1, 1)  # D with bucket 7 and ZeRO index 1
    assert problem.row(off_table) == 4
    assert problem.evaluate(off_table) == 0.30
    assert problem.evaluate_constraints(off_table) == {
        CONSTRAINT_NAME: pytest.approx(49 / CAPACITY - 1)  # D's peak: 40 + 3 * 3
    }


@pytest.mark.parametrize(
    ("crash", "state", "value"),
    [
        ("placeholder", TrialState.COMPLETE, 0.05),
        ("failed", TrialState.FAIL, None),
        ("missing", TrialState.PRUNED, None),
    ],
)
def test_a_crash_is_reported_as_asked_and_its_constraint_recorded(
    crash: str, state: TrialState, value: float | None
) -> None:
    problem = PCOProblem(table=_hand_frame(), crash_report=crash)  # type: ignore[arg-type]
    study = optuna.create_study(directions=problem.directions)
    study.enqueue_trial(A)
    study.enqueue_trial(B)
    study.optimize(problem, n_trials=2)
    ran, crashed = study.trials
    assert (ran.state, ran.value) == (TrialState.COMPLETE, 0.10)
    assert ran.constraints == {CONSTRAINT_NAME: pytest.approx(40 / CAPACITY - 1)}
    assert (crashed.state, crashed.value) == (state, value)
    assert crashed.constraints == {CONSTRAINT_NAME: PAD}
    assert crashed.user_attrs[ROW_ATTR] == 1
    assert crashed.user_attrs[ROW_PARAMS_ATTR] == B
    assert crashed.user_attrs[FEASIBLE_ATTR] is False
    # Seconds: the package's time model (integrations.common), row by row.
    seconds = run_seconds(problem.problem)
    assert ran.user_attrs[SECONDS_ATTR] == float(seconds[0])
    assert crashed.user_attrs[SECONDS_ATTR] == float(seconds[1])
    assert seconds[1] < seconds[0]  # a crash is charged less than a run
    assert study.best_trial.number == ran.number


def test_the_placeholder_can_be_chosen() -> None:
    problem = PCOProblem(table=_hand_frame(), crash_value=-1.0)
    assert problem.evaluate(B) == -1.0
    assert math.isnan(
        PCOProblem(table=_hand_frame(), crash_report="failed").evaluate(B)
    )


def test_report_serves_ask_and_tell() -> None:
    problem = PCOProblem(table=_hand_frame())
    study = optuna.create_study(directions=problem.directions)
    trial = study.ask(problem.search_space)
    row = problem.row(trial.params)
    state, value = problem.report(trial, row, 0.123, -0.5)
    study.tell(trial, value, state=state)
    (frozen,) = study.trials
    assert frozen.value == 0.123
    assert frozen.constraints == {CONSTRAINT_NAME: -0.5}
    assert frozen.user_attrs[ROW_ATTR] == row


def test_the_deprecated_constraints_func_still_answers() -> None:
    problem = PCOProblem(table=_hand_frame())
    trial = optuna.trial.create_trial(
        params=B,
        distributions=problem.search_space,
        value=0.0,
    )
    with pytest.warns(FutureWarning):
        assert list(problem.constraints_func(trial)) == [PAD]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"crash_report": "nan"}, "Expected `crash_report`"),
        ({"crash_value": math.nan}, "Expected `crash_value` to be a number"),
        ({"crash_value": "low"}, "Expected `crash_value` to be a number"),
        ({"instance": "pco8"}, "pco8"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PCOProblem(table=_hand_frame(), **kwargs)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (
            {k: v for k, v in A.items() if k != "zero_stage"},
            r"none for \['zero_stage'\]",
        ),
        ({**A, "log2_dp_size": 4}, r"log2_dp_size to be an integer in \[1, 3\]"),
        ({**A, "log2_dp_size": 1.5}, "got 1.5"),
        ({**A, "log2_dp_size": True}, "got True"),
    ],
)
def test_bad_params_are_refused(params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PCOProblem(table=_hand_frame()).evaluate(params)


@pytest.mark.parametrize(
    "sampler",
    [
        optuna.samplers.TPESampler,
        pytest.param(optuna.samplers.GPSampler, marks=pytest.mark.slow),
    ],
)
def test_a_40_trial_constrained_study_finds_a_feasible_row(sampler: type) -> None:
    """On pco64's default table (the matrix over instances and samplers:
    benchmarks/optuna_studies.py)."""
    problem = PCOProblem("pco64")
    study = optuna.create_study(directions=problem.directions, sampler=sampler(seed=0))
    study.optimize(problem, n_trials=40)
    assert len(study.trials) == 40
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert all(set(t.constraints) == {CONSTRAINT_NAME} for t in study.trials)
    frame = problem.problem.table.frame
    best = study.best_trial
    row = frame.iloc[best.user_attrs[ROW_ATTR]]
    assert bool(row["ran_successfully"])
    assert best.constraints[CONSTRAINT_NAME] <= 0
    assert best.value == row["throughput_mean"]
    assert best.user_attrs[ROW_PARAMS_ATTR]["log2_dp_size"] == row["log2_dp_size"]


# -- ask-and-tell ----------------------------------------------------------------


def _ask_tell(seed: int, steps: int) -> tuple[AskTell, list[int]]:
    """A TPE loop on the hand table from rows A and B, snapping as the harness does."""
    problem = PCOProblem(table=_hand_frame())
    loop = AskTell(problem, optuna.samplers.TPESampler(seed=seed, n_startup_trials=2))
    table = problem.problem.table.frame
    rows = [0, 1]
    loop.tell(rows, table["throughput_mean"][rows], table["peak_mem_normalised"][rows])
    for _ in range(steps):
        (row,) = problem.problem.lookup(loop.ask(1)).tolist()
        loop.tell(
            [row], [table["throughput_mean"][row]], [table["peak_mem_normalised"][row]]
        )
        rows.append(row)
    return loop, rows


def test_rows_told_without_a_trial_are_enqueued_with_their_params() -> None:
    loop, _ = _ask_tell(seed=0, steps=0)
    first, second = loop.study.trials
    assert first.params == A
    assert second.params == B
    assert (first.value, second.value) == (0.10, 0.05)
    assert second.constraints == {CONSTRAINT_NAME: PAD}
    assert loop.pending == []


def test_a_told_row_completes_the_trial_that_proposed_it() -> None:
    loop, rows = _ask_tell(seed=0, steps=6)
    trials = loop.study.trials
    assert len(trials) == len(rows) == 8
    assert [t.user_attrs[ROW_ATTR] for t in trials] == rows
    assert all(t.state == TrialState.COMPLETE for t in trials)


def test_ask_and_tell_is_deterministic_for_a_seed() -> None:
    _, rows = _ask_tell(seed=3, steps=6)
    _, again = _ask_tell(seed=3, steps=6)
    assert rows == again


@pytest.mark.parametrize("seed", [0, 1])  # seed 0: both snap to row 4; 1: rows 6, 5
def test_pending_trials_are_matched_by_row_oldest_first(seed: int) -> None:
    problem = PCOProblem(table=_hand_frame())
    loop = AskTell(problem, optuna.samplers.RandomSampler(seed=seed))
    first, second = problem.problem.lookup(loop.ask(2)).tolist()
    assert loop.pending == [first, second]
    loop.tell([second], [0.2], [-0.1])
    assert loop.pending == [first]
    told = 0 if first == second else 1
    assert loop.study.trials[told].value == 0.2
    assert loop.study.trials[1 - told].state == TrialState.RUNNING


def test_ask_tell_refuses_bad_input() -> None:
    loop = AskTell(PCOProblem(table=_hand_frame()), optuna.samplers.RandomSampler())
    with pytest.raises(ValueError, match="Expected `q` to be an integer >= 1"):
        loop.ask(0)
    with pytest.raises(ValueError, match="got 1 rows, 2 observations"):
        loop.tell([0], [0.1, 0.2], [0.0])


@pytest.mark.slow
def test_example_optuna_study(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "optuna_study.py"), "--trials", "12"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.findall(
        r"^(.+): 12 trials, (\d+) crashed, (\d+) repeated", proc.stdout, re.M
    )
    assert [name for name, _, _ in found] == [
        "TPE",
        "GP, crash_report=placeholder",
        "GP, crash_report=failed",
    ]


# -- harness methods -------------------------------------------------------------

#: The entry points that make the methods known to ``bolt-pco64 bench``
#: (``[project.entry-points."bolt_pco64.methods"]`` in pyproject.toml).
ENTRY_POINTS = {
    "optuna_tpe": "bolt_pco64.integrations.optuna:OptunaTPE",
    "optuna_gp": "bolt_pco64.integrations.optuna:OptunaGP",
    "optuna_random": "bolt_pco64.integrations.optuna:OptunaRandom",
}


@pytest.fixture
def optuna_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: dict[str, Method]
) -> None:
    """A distribution on sys.path that declares :data:`ENTRY_POINTS`."""
    info = tmp_path / "optuna_methods-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: optuna-methods\nVersion: 1.0\n"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in ENTRY_POINTS.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_the_entry_points_load_the_samplers(optuna_plugin: None) -> None:
    assert check_methods(list(ENTRY_POINTS)) == list(ENTRY_POINTS)
    assert isinstance(get_method("optuna_tpe"), OptunaTPE)
    assert get_method("optuna_gp").sampler == "gp"
    assert isinstance(get_method("optuna_random"), OptunaRandom)


def _declared_methods() -> dict[str, str]:
    """The methods ``pyproject.toml`` declares in :data:`ENTRY_POINT_GROUP`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return dict(project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {}))


def test_pyproject_declares_what_it_loads() -> None:
    assert _declared_methods() == ENTRY_POINTS


def test_the_installed_package_declares_the_methods() -> None:
    """The installed metadata (what ``get_method`` reads) holds the declared
    entry points: a missing or stale one fails, it is never skipped."""
    installed = {
        ep.name: ep.value
        for ep in metadata.distribution("bolt_pco64").entry_points
        if ep.group == ENTRY_POINT_GROUP
    }
    assert installed == _declared_methods(), (
        "the installed metadata differs from pyproject.toml: reinstall the "
        "package (pip install -e .)"
    )
    assert check_methods(list(installed)) == list(installed)


def test_a_harness_run_starts_from_the_shared_design_and_is_deterministic() -> None:
    table = load_table(make_table(capacity=80.0))
    config = BenchConfig(budget=16, n_init=6)
    runs = [run_one("optuna_tpe", 0, table, config, fn=OptunaTPE()) for _ in range(2)]
    baseline = run_one("random", 0, table, config)
    first = runs[0].records
    assert runs[0].ok
    assert len(first) == 16
    assert first["row"].tolist()[:6] == baseline.records["row"].tolist()[:6]
    pd.testing.assert_frame_equal(
        first.drop(columns=["fit_seconds", "acq_seconds"]),
        runs[1].records.drop(columns=["fit_seconds", "acq_seconds"]),
    )
    # A repeat is a row evaluated earlier in the run, and only that.
    seen: set[int] = set()
    for row, repeat in zip(first["row"], first["repeat"], strict=True):
        assert repeat == (row in seen)
        seen.add(row)


class _KeepsStudy(OptunaTPE):
    """``optuna_tpe`` that keeps a handle on its run's study."""

    studies: list[optuna.Study]

    def propose(self, ctx: RunContext) -> torch.Tensor:
        points = super().propose(ctx)
        self.studies.append(ctx.state["optuna"].bridge.proposer.study)
        return points


def test_the_study_holds_each_evaluation_once_as_evaluated() -> None:
    table = load_table(make_table(capacity=80.0))
    method = _KeepsStudy(crash_report="failed")
    method.studies = []
    outcome = run_one(
        "optuna_tpe", 1, table, BenchConfig(budget=14, n_init=5), fn=method
    )
    assert outcome.ok
    records = outcome.records
    trials = method.studies[-1].trials
    # The last step told the first 13 evaluations and asked the 14th.
    assert [t.user_attrs[ROW_ATTR] for t in trials[:13]] == records["row"].tolist()[:13]
    assert [t.state == TrialState.FAIL for t in trials[:13]] == (
        ~records["feasible"]
    ).tolist()[:13]
    assert trials[13].state == TrialState.RUNNING
    assert {t.number for t in trials[:5]} == set(range(5))  # the enqueued design


@pytest.mark.slow
def test_optuna_methods_get_paired_comparisons(
    optuna_plugin: None, tmp_path: Path
) -> None:
    result = run_comparison(
        ComparisonSpec(
            ["random", *ENTRY_POINTS], seeds=2, budget=14, n_init=10, reference="random"
        ),
        make_table(capacity=80.0),
        out=tmp_path / "o",
        progress=False,
    )
    assert result.errors == {}
    comparisons = pd.read_csv(tmp_path / "o" / "comparisons.csv")
    paired = comparisons[comparisons["measure"] == "regret"]
    assert set(paired["method"]) == set(ENTRY_POINTS)
    assert set(paired["reference"]) == {"random"}
    assert (paired["pairs"] == 2).all()


def test_bad_method_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="Expected `sampler`"):
        OptunaMethod("cmaes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Expected `crash_report`"):
        OptunaMethod("tpe", crash_report="nan")  # type: ignore[arg-type]


def test_ask_and_tell_creates_its_study_quietly(capfd: pytest.CaptureFixture[str]):
    """A harness run creates a study per run: Optuna's INFO line about it is
    held back, and Optuna's own log level is left as it was."""
    logger = logging.getLogger("optuna")
    before = logger.level
    AskTell(PCOProblem(table=_hand_frame()), optuna.samplers.RandomSampler(seed=0))
    assert "A new study created" not in capfd.readouterr().err
    assert logger.level == before


# -- benchmarks/optuna_crash.py: per-trial records -------------------------------

#: The tiny studies: (crash report, off-table behaviour), TPE, seeds 0 and 1.
TINY_STUDIES = (("failed", "snap"), ("missing", "reject"))
TINY_TRIALS, TINY_INIT, TINY_CAP = 6, 3, 300


@pytest.fixture(scope="module")
def optuna_crash() -> ModuleType:
    """benchmarks/optuna_crash.py as a module."""
    return load_script("optuna_crash")


@pytest.fixture(scope="module")
def tiny_studies(
    optuna_crash: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Four TPE studies on pco64 of 6 runs each, saved as the script saves
    them; the summary's path (``<name>.csv``)."""
    optuna.logging.set_verbosity(logging.ERROR)  # as the script runs them
    out = tmp_path_factory.mktemp("optuna_crash") / "tiny.csv"
    studies, records = [], []
    for crash, off_table in TINY_STUDIES:
        kind = optuna_crash.RejectOffTable if off_table == "reject" else PCOProblem
        problem = kind("pco64", crash_report=crash)
        for seed in (0, 1):
            study, trials = optuna_crash.run(
                problem, "tpe", seed, TINY_TRIALS, TINY_INIT, TINY_CAP
            )
            studies.append(study)
            records += trials
    optuna_crash.save(out, studies, records)
    return out


@pytest.mark.slow
def test_optuna_crash_keeps_the_trial_records_its_runs_come_from(
    optuna_crash: ModuleType, tiny_studies: Path
) -> None:
    runs = pd.read_csv(tiny_studies.with_name("tiny_runs.csv"))
    records = pd.read_parquet(tiny_studies.with_name("tiny_trials.parquet"))
    problem = PCOProblem("pco64")
    frame = problem.problem.table.frame
    feasible = frame["ran_successfully"].astype(bool)
    optimum = float(frame.loc[feasible, "throughput_mean"].max())
    configurations = set(frame[list(INPUTS)].itertuples(index=False, name=None))
    seconds = run_seconds(problem.problem).numpy()
    proposed = records[[f"proposed_{k}" for k in INPUTS]].itertuples(
        index=False, name=None
    )
    assert records["on_table"].tolist() == [p in configurations for p in proposed]
    assert records["optimal_value"].to_numpy() == pytest.approx(optimum, rel=1e-12)
    assert len(runs) == 2 * len(TINY_STUDIES)

    for run in runs.itertuples():
        key = {k: getattr(run, k) for k in optuna_crash.KEYS}
        mine = records.loc[(records[list(key)] == pd.Series(key)).all(axis=1)]
        mine = mine.sort_values("trial").reset_index(drop=True)
        assert run.trials == len(mine)
        assert mine["trial"].tolist() == list(range(len(mine)))
        assert mine["generator"].tolist() == ["enqueued"] * TINY_INIT + ["tpe"] * (
            len(mine) - TINY_INIT
        )
        assert mine["on_table"].iloc[:TINY_INIT].all()
        # A suggestion `reject` refused ran nothing and cost nothing.
        refused = mine[list(INPUTS)].isna().all(axis=1)
        if run.off_table == "reject":
            assert refused.tolist() == (~mine["on_table"]).tolist()
            gone = mine[refused]
            assert gone["oom"].isna().all()
            assert gone["throughput"].isna().all()
            assert (gone["run_seconds"] == 0).all()
            assert (gone["status"] == "completed").all()
            assert gone["reported"].to_numpy() == pytest.approx(problem.crash_value)
        else:
            assert not refused.any()
        ran = mine[~refused].astype({k: "int64" for k in INPUTS})
        merged = ran.merge(
            frame[list(INPUTS)].assign(
                position=range(len(frame)),
                ok=feasible.to_numpy(),
                true=frame["throughput_mean"].to_numpy(),
            ),
            on=list(INPUTS),
            how="left",
            validate="many_to_one",
        )
        assert merged["position"].notna().all()  # every row run is a table row
        ok = merged["ok"].astype(bool)
        assert merged["oom"].tolist() == (~ok).tolist()
        assert merged.loc[ok, "throughput"].to_numpy() == pytest.approx(
            merged.loc[ok, "true"].to_numpy(), rel=1e-12
        )
        assert merged["run_seconds"].to_numpy() == pytest.approx(
            seconds[merged["position"].to_numpy()], rel=1e-12
        )
        # How the crash was reported: a FAIL or PRUNED trial told nothing.
        told = "failed" if run.crash == "failed" else "pruned"
        assert merged["status"].tolist() == ["completed" if o else told for o in ok]
        assert merged.loc[~ok, "reported"].isna().all()
        assert merged.loc[ok, "reported"].to_numpy() == pytest.approx(
            merged.loc[ok, "true"].to_numpy(), rel=1e-12
        )
        # The run's figures, from the table.
        assert run.runs == len(merged) == TINY_TRIALS
        assert run.oom_share == pytest.approx((~ok).mean(), rel=1e-12)
        assert run.repeats == merged.duplicated(list(INPUTS)).sum()
        best = merged["true"].where(ok).cummax().ffill().to_numpy()
        half = TINY_TRIALS // 2 - 1
        assert run.regret_half == pytest.approx(optimum - best[half], abs=1e-12)
        assert run.regret == pytest.approx(optimum - best[-1], abs=1e-12)


def test_optuna_crash_report_rewrites_runs_and_summary_byte_for_byte(
    optuna_crash: ModuleType, tiny_studies: Path, tmp_path: Path
) -> None:
    """--report (which ``bolt-pco64 report`` runs: test_regenerate's test of
    the committed folder) gives a run's per-run CSV and summary back from the
    records and the seconds alone."""
    folder = tmp_path / "optuna"
    shutil.copytree(tiny_studies.parent, folder)
    runs = pd.read_csv(folder / "tiny_runs.csv", dtype=str)
    runs[["trials", "runs", "repeats"]] = "99"
    runs[["oom_share", "regret_half", "regret"]] = "0.5"
    runs.to_csv(folder / "tiny_runs.csv", index=False)
    (folder / "tiny.csv").write_text("stale\n")
    written = optuna_crash.report(folder)
    assert sorted(p.name for p in written) == ["tiny.csv", "tiny_runs.csv"]
    for name in ("tiny.csv", "tiny_runs.csv"):
        assert (folder / name).read_bytes() == (tiny_studies.parent / name).read_bytes()


@pytest.mark.parametrize("damage", ["missing", "corrupt", "a study's gone"])
def test_optuna_crash_report_names_bad_records(
    optuna_crash: ModuleType, tiny_studies: Path, tmp_path: Path, damage: str
) -> None:
    folder = tmp_path / "optuna"
    shutil.copytree(tiny_studies.parent, folder)
    records = folder / "tiny_trials.parquet"
    if damage == "missing":
        records.unlink()
    elif damage == "corrupt":
        records.write_bytes(records.read_bytes()[:100])
    else:
        kept = pd.read_parquet(records)
        kept[kept["seed"] != 1].to_parquet(records)
    with pytest.raises(ValueError, match=re.escape(str(records.name))):
        optuna_crash.report(folder)
