"""The method contract (bench/contract.py), the entry-point group and the plan."""

from __future__ import annotations

import json
import sys
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64 import PCO32, PCO64
from bolt_pco64.bench import (
    ENTRY_POINT_GROUP,
    ComparisonSpec,
    Method,
    Prediction,
    RunContext,
    RunKey,
    SingleTable,
    get_method,
    method_names,
    register_method,
    run_comparison,
)
from bolt_pco64.bench.early import prediction_prior
from bolt_pco64.bench.methods import BUILTIN_METHODS
from bolt_pco64.bench.methods.registry import METHODS, check_methods, method_registry
from bolt_pco64.bench.run import run_one
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.bench.store import ResultStore
from bolt_pco64.bo import FeasibilityClassifier, fit_gp, log_prob_feasible
from bolt_pco64.cli import main
from tests import _fixtures
from tests._synth import make_table

problem = _fixtures.problem
table_path = _fixtures.table_path
registry = _fixtures.registry


def _first_rows(ctx: RunContext) -> torch.Tensor:
    return ctx.available[: ctx.q]


class _Short(Method):
    n_init = 3

    def propose(self, ctx: RunContext) -> torch.Tensor:
        return ctx.available[: ctx.q]


def test_a_method_s_own_n_init_is_a_prefix_of_the_seed_s_shared_design(
    problem: PCO64,
) -> None:
    config = BenchConfig(budget=8, n_init=5)
    default = run_one("first", 4, problem.table, config, fn=_first_rows)
    short = run_one("short", 4, problem.table, config, fn=_Short())
    assert (default.n_init, short.n_init) == (5, 3)
    assert short.records["row"].tolist()[:3] == default.records["row"].tolist()[:3]
    # After its 3 design rows, the method proposes (lowest untried rows).
    design = set(default.records["row"].tolist()[:3])
    rest = short.records["row"].tolist()[3:]
    assert rest == sorted(r for r in range(len(problem.table)) if r not in design)[:5]


def test_n_init_beyond_the_budget_is_refused_before_anything_is_written(
    tmp_path: Path, table_path: Path, registry: dict[str, Method]
) -> None:
    register_method("long", _first_rows, n_init=9)
    with pytest.raises(
        ValueError, match=r"n_init of method .long. to be an integer in \[1, 6\]"
    ):
        run_comparison(
            ComparisonSpec(["long"], seeds=1, budget=6, n_init=2),
            table_path,
            out=tmp_path / "o",
            progress=False,
        )
    assert not (tmp_path / "o").exists()


def test_the_run_file_and_meta_record_each_run_s_n_init(
    tmp_path: Path, problem: PCO64
) -> None:
    config = BenchConfig(budget=6, n_init=4)
    store = ResultStore(tmp_path, config, problem.table, ["short", "first"], [0], {})
    store.create()
    store.persist(run_one("short", 0, problem.table, config, fn=_Short()))
    store.persist(run_one("first", 0, problem.table, config, fn=_first_rows))
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["runs"]["n_init"] == {"first/0": 4, "short/0": 3}
    file_meta = pq.read_schema(tmp_path / "runs" / "short__seed0.parquet").metadata
    assert file_meta[b"n_init"] == b"3"
    # A store reopened on the directory reads the sizes back (resume), also
    # of the runs it was not asked for: its report covers them.
    assert ResultStore(
        tmp_path, config, problem.table, ["short"], [0], {}
    ).n_init() == {"first/0": 4, "short/0": 3}


class _Spy(Method):
    def __init__(self) -> None:
        self.seen: list[tuple[float, int, int]] = []

    def propose(self, ctx: RunContext) -> torch.Tensor:
        self.seen.append((ctx.spent_fraction, ctx.budget, ctx.pending.numel()))
        return ctx.available[: ctx.q]


def test_the_context_carries_the_budget_spent_and_no_pending_rows(
    problem: PCO64,
) -> None:
    spy = _Spy()
    run_one("spy", 0, problem.table, BenchConfig(budget=8, n_init=4, q=2), fn=spy)
    assert spy.seen == [(4 / 8, 8, 0), (6 / 8, 8, 0)]


def _context(problem: PCO64, pending: list[int], q: int = 3) -> RunContext:
    cand = problem.candidates()
    rows = torch.tensor([0, 5, 17, 30, 41, 60])
    tried = torch.zeros(cand.shape[0], dtype=torch.bool)
    tried[rows] = True
    X = cand[rows]
    return RunContext(
        problem=problem,
        candidates=cand,
        rows=rows,
        y=problem.evaluate_true(X),
        margin=problem.outcome_constraint(X),
        untried=torch.nonzero(~tried).squeeze(-1),
        q=q,
        seed=0,
        step_seed=11,
        generator=torch.Generator().manual_seed(0),
        budget=20,
        pending=torch.tensor(pending, dtype=torch.long),
    )


@pytest.mark.parametrize("name", ["random", "qlognei", "ts", "naive", "gpc_ei"])
def test_built_in_methods_never_propose_a_pending_row(
    problem: PCO64, name: str
) -> None:
    free = _context(problem, [])
    chosen = torch.as_tensor(get_method(name).propose(free))
    # Pending: the rows the method chose without them, and a few more.
    pending = [*chosen.tolist(), 1, 2, 3]
    ctx = _context(problem, pending)
    again = torch.as_tensor(get_method(name).propose(ctx)).tolist()
    assert len(again) == 3
    assert not set(again) & set(pending)
    assert set(again) <= set(ctx.untried.tolist())


class _Exposes(Method):
    """Proposes the lowest untried rows and exposes ``model`` as its GP."""

    def __init__(self, model: object) -> None:
        self.model = model
        self.calls = 0

    def propose(self, ctx: RunContext) -> torch.Tensor:
        return ctx.available[: ctx.q]

    def objective_model(self, ctx: RunContext) -> object:
        self.calls += 1
        return self.model


def test_the_default_recommend_reads_the_objective_model(problem: PCO64) -> None:
    """The default ``recommend`` asks ``objective_model`` after every
    evaluation (the harness never does): ``None`` recommends the best observed
    row, a non-model fails the run where it is re-conditioned."""
    config = BenchConfig(budget=12, n_init=8, q=2)
    none = _Exposes(None)
    plain = run_one("p", 1, problem.table, config, fn=none).records
    first_feasible = int(plain["feasible"].to_numpy().argmax())
    assert none.calls == len(plain) - first_feasible
    feasible = plain[plain["feasible"]]
    best = int(feasible.loc[feasible["throughput"].idxmax(), "row"])
    assert plain["recommended_row"].iloc[-1] == best
    broken = run_one("b", 1, problem.table, config, fn=_Exposes("not a GP"))
    assert broken.error is not None
    assert "named_parameters" in broken.error


class _Worst(Method):
    """Recommends its worst feasible evaluation, counting the questions."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def propose(self, ctx: RunContext) -> torch.Tensor:
        return ctx.available[: ctx.q]

    def recommend(self, ctx: RunContext) -> int | None:
        self.asked.append(ctx.rows.numel())
        y = torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, torch.inf))
        return int(ctx.rows[int(torch.argmin(y))])


def test_the_records_hold_the_method_s_own_recommendation(problem: PCO64) -> None:
    config = BenchConfig(budget=10, n_init=6, q=2)
    worst = _Worst()
    rec = run_one("w", 2, problem.table, config, fn=worst).records
    first = int(rec["feasible"].to_numpy().argmax())
    # Asked after every evaluation once one is feasible, with every result in.
    assert worst.asked == list(range(first + 1, len(rec) + 1))
    true = problem.evaluate_true(problem.candidates())
    for i in range(first, len(rec)):
        seen = rec.iloc[: i + 1]
        ok = seen[seen["feasible"]]
        assert rec["recommended_row"].iloc[i] == int(
            ok.loc[ok["throughput"].idxmin(), "row"]
        )
    last = int(rec["recommended_row"].iloc[-1])
    assert rec["inference_regret"].iloc[-1] == pytest.approx(
        float(problem.optimal_value) - float(true[last])
    )


def test_a_recommendation_that_is_not_a_row_fails_the_run(problem: PCO64) -> None:
    class Bad(_Worst):
        def recommend(self, ctx: RunContext) -> int | None:
            return 10**6

    out = run_one("bad", 0, problem.table, BenchConfig(budget=6, n_init=4), fn=Bad())
    assert out.error is not None
    assert "to recommend an evaluated row" in out.error


class _Predicts(Method):
    """Predicts a fixed mean and variance, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def propose(self, ctx: RunContext) -> torch.Tensor:
        return ctx.available[: ctx.q]

    def predict(self, ctx: RunContext, X: torch.Tensor) -> Prediction | None:
        self.asked.append((ctx.rows.numel(), X.shape[0]))
        ones = torch.ones(X.shape[0], dtype=torch.double)
        return Prediction(ones, ones)


@pytest.mark.parametrize("rule", ["none", "posterior"])
def test_predict_is_asked_after_each_proposal_only_for_the_posterior_rule(
    problem: PCO64, rule: str
) -> None:
    spy = _Predicts()
    config = BenchConfig(budget=9, n_init=5, q=2, early_stop=rule)
    out = run_one("spy", 0, problem.table, config, fn=spy)
    assert out.error is None
    assert spy.asked == ([(5, 2), (7, 2)] if rule == "posterior" else [])


def test_a_prediction_of_the_wrong_size_is_refused() -> None:
    one = torch.ones(1)
    with pytest.raises(ValueError, match="Expected a prediction of 2 means"):
        prediction_prior(Prediction(one, one), 2)
    assert prediction_prior(None, 2) == [None, None]


@dataclass
class _Counter:
    steps: int = 0


class _Stateful(Method):
    def __init__(self) -> None:
        self.made: list[_Counter] = []
        self.seen: list[_Counter] = []

    def new_state(self) -> _Counter:
        self.made.append(_Counter())
        return self.made[-1]

    def propose(self, ctx: RunContext) -> torch.Tensor:
        ctx.state.steps += 1
        self.seen.append(ctx.state)
        return ctx.available[: ctx.q]


def test_a_method_s_state_is_made_once_per_run_and_kept_across_its_steps(
    problem: PCO64,
) -> None:
    method = _Stateful()
    config = BenchConfig(budget=8, n_init=5)
    for seed in (0, 1):
        run_one("s", seed, problem.table, config, fn=method)
    assert len(method.made) == 2
    assert [c.steps for c in method.made] == [3, 3]
    assert all(s is method.made[0] for s in method.seen[:3])
    assert all(s is method.made[1] for s in method.seen[3:])


def test_a_built_in_method_refuses_a_state_it_did_not_make(problem: PCO64) -> None:
    ctx = _context(problem, [])
    ctx.state = {"models": None}
    with pytest.raises(TypeError, match=r"ConstrainedMethod.new_state\(\)"):
        get_method("qlognei").propose(ctx)


# -- the yardstick: a new method with a model of its own -------------------------


@dataclass
class _NearestState:
    best: int | None = None


class _Nearest(Method):
    """A model method that is no GP: the untried row nearest the best observed
    one; it predicts each point's nearest observation (variance: the squared
    distance) and recommends the best observed row (the default). The
    yardstick of issue 30's extension cost: a method with a model of its own,
    in one file, no edit of the package."""

    def new_state(self) -> _NearestState:
        return _NearestState()

    def propose(self, ctx: RunContext) -> torch.Tensor:
        y = torch.nan_to_num(ctx.y, nan=-torch.inf)
        ctx.state.best = int(ctx.rows[int(y.argmax())])
        d = torch.cdist(ctx.candidates[ctx.available], ctx.candidates[[ctx.state.best]])
        return ctx.available[d.squeeze(-1).argsort(stable=True)[: ctx.q]]

    def predict(self, ctx: RunContext, X: torch.Tensor) -> Prediction:
        d = torch.cdist(X, ctx.X)
        near = d.argmin(dim=-1)
        y = torch.nan_to_num(ctx.y, nan=0.0)[near]
        return Prediction(y, d.min(dim=-1).values ** 2 + 1e-6)


def test_a_new_model_method_runs_with_recommendations_and_priors(
    problem: PCO64,
) -> None:
    config = BenchConfig(budget=10, n_init=4, early_stop="posterior")
    out = run_one("nearest", 3, problem.table, config, fn=_Nearest())
    assert out.error is None
    rec = out.records
    ok = rec[rec["feasible"]]
    assert rec["recommended_row"].iloc[-1] == int(
        ok.loc[ok["throughput"].idxmax(), "row"]
    )
    # Deterministic with its prior (a run of the same seed is the same run).
    again = run_one("nearest", 3, problem.table, config, fn=_Nearest()).records
    pd.testing.assert_frame_equal(
        rec.drop(columns=["fit_seconds", "acq_seconds"]),
        again.drop(columns=["fit_seconds", "acq_seconds"]),
    )


# -- run keys ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", [RunKey("qlognei", 0), RunKey("qlognei-box", 17), RunKey("a.b_c", -3)]
)
def test_a_run_key_round_trips_through_its_string(key: RunKey) -> None:
    assert RunKey.parse(str(key)) == key
    assert isinstance(RunKey.parse(str(key)).seed, int)
    assert key == (key.method, key.seed)  # a tuple, as the failed sets hold them
    assert RunKey.parse_all([str(key)]) == {(key.method, key.seed)}


@pytest.mark.parametrize("text", ["qlognei", "qlognei/", "/3", "qlognei/x", "m/1.5"])
def test_a_malformed_run_key_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="Expected a run key 'method/seed'"):
        RunKey.parse(text)


def test_the_store_names_files_and_errors_by_run_key(
    tmp_path: Path, problem: PCO64
) -> None:
    config = BenchConfig(budget=5, n_init=3)
    store = ResultStore(tmp_path, config, problem.table, ["short"], [4], {})
    key = RunKey("short", 4)
    assert store.run_path(*key).name == f"{key.file_stem}.parquet"
    assert store.todo() == [key]


def test_log_prob_feasible_refuses_a_model_that_is_not_a_crash_model(
    problem: PCO64,
) -> None:
    X, y, _ = _fixtures.observed(problem, torch.arange(10))
    gp = fit_gp(X[~y.isnan()], y[~y.isnan()], problem.bounds, 0)
    with pytest.raises(ValueError, match="fit_feasibility_classifier"):
        log_prob_feasible(gp, X)
    assert not isinstance(gp, FeasibilityClassifier)


# -- the entry-point group ----------------------------------------------------


@pytest.fixture
def plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: dict[str, Method]
) -> Iterator[str]:
    """A distribution on sys.path that declares one method in the group."""
    (tmp_path / "my_plugin.py").write_text(
        textwrap.dedent(
            """
            from bolt_pco64.bench import Method

            class Highest(Method):
                n_init = 2

                def propose(self, ctx):
                    return ctx.available[-ctx.q:].flip(0)
            """
        )
    )
    info = tmp_path / "my_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: my-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nhighest_first = my_plugin:Highest\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "highest_first"
    sys.modules.pop("my_plugin", None)


def test_an_entry_point_method_is_listed_without_being_imported(plugin: str) -> None:
    assert plugin in method_names()
    assert plugin not in METHODS
    assert "my_plugin" not in sys.modules
    assert get_method(plugin).n_init == 2


@pytest.mark.usefixtures("unrendered_figures")
def test_an_entry_point_method_appears_in_bench_help_and_runs(
    plugin: str, tmp_path: Path, table_path: Path
) -> None:
    runner = CliRunner()
    help_text = runner.invoke(main, ["bench", "--help"]).output
    assert plugin in " ".join(help_text.split())
    out = tmp_path / "o"
    result = runner.invoke(
        main,
        ["bench", "--methods", f"random,{plugin}", "--seeds", "1", "--budget", "5",
         "--n-init", "3", "--table", str(table_path), "--out", str(out),
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rec = pd.read_parquet(out / "runs.parquet")
    mine = rec[rec["method"] == plugin]["row"].tolist()
    n_rows = len(make_table(capacity=80.0))
    # 2 design rows (its own n_init), then the highest untried rows.
    assert mine[2:] == [n_rows - 1, n_rows - 2, n_rows - 3]


def test_unknown_methods_are_refused_with_the_known_names(plugin: str) -> None:
    with pytest.raises(ValueError, match=plugin):
        get_method("no_such_method")


def test_looking_an_entry_point_up_changes_no_global_registry(plugin: str) -> None:
    found = method_registry()
    method = found[plugin]
    assert found[plugin] is method  # loaded once into that mapping
    assert get_method(plugin).n_init == 2
    assert plugin not in METHODS
    assert list(METHODS) == list(BUILTIN_METHODS)


def test_the_package_registries_are_read_only() -> None:
    with pytest.raises(TypeError):
        METHODS["mine"] = _Short()  # type: ignore[index]
    with pytest.raises(TypeError):
        BUILTIN_METHODS["mine"] = _Short()  # type: ignore[index]


def test_a_registry_is_injected_where_a_method_is_looked_up(
    problem: PCO64,
) -> None:
    mine = {"mine": _first_rows}
    assert method_names(mine) == ["mine"]
    assert check_methods(["mine"], mine) == ["mine"]
    with pytest.raises(ValueError, match="'mine' more than once"):
        check_methods(["mine", "mine"], mine)
    config = BenchConfig(budget=6, n_init=3)
    run = run_one("mine", 0, problem.table, config, registry=mine)
    assert run.error is None
    assert len(run.records) == 6
    assert "mine" not in method_names()
    # A built-in name is unknown to a registry that lacks it.
    with pytest.raises(ValueError, match=r"Expected a method in \['mine'\]"):
        run_one("random", 0, problem.table, config, registry=mine)


def test_a_registered_method_with_a_bad_n_init_is_refused(registry: object) -> None:
    with pytest.raises(ValueError, match="Expected n_init of method 'bad' to be an"):
        register_method("bad", _first_rows, n_init=0)
    assert "bad" not in METHODS


# -- the instance-neutral API ------------------------------------------------


def test_a_comparison_validates_the_table_by_the_named_problem(
    tmp_path: Path, table_path: Path
) -> None:
    with pytest.raises(ValueError, match="pco32"):
        run_comparison(
            ComparisonSpec(["random"], seeds=1, budget=4, n_init=2),
            SingleTable(PCO64(table=table_path).table, "pco32"),
            out=tmp_path / "o",
            progress=False,
        )
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_a_comparison_runs_the_named_problem(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_comparison(
            ComparisonSpec(["random"], seeds=1, budget=3, n_init=2),
            SingleTable(None, "pco32"),
            out=tmp_path,
            progress=False,
        )
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["problem"] == "pco32"
    assert meta["arguments"]["problem"] == "pco32"
    assert result.table is not None
    assert result.table.instance is PCO32.instance
    assert list(result.records.columns[4:12]) == list(PCO32.instance.input_columns)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("bolt_pco64", "INPUT_COLUMNS"),
        ("bolt_pco64", "COLUMNS"),
        ("bolt_pco64", "PCO64OutcomeConstraint"),
        ("bolt_pco64.tables.fetch", "HF_REPO_ID"),
        ("bolt_pco64.tables.table", "ENV_TABLE"),
        ("bolt_pco64.tables.time_model", "run_seconds"),
        ("bolt_pco64.tables.time_model", "run_gpu_hours"),
        ("bolt_pco64.bench", "RECORD_COLUMNS"),
        ("bolt_pco64.bench", "DEFAULT_METHODS"),
        ("bolt_pco64.bench.run", "cost_per_row"),
        ("bolt_pco64.bench.problems", "cost_per_row"),
    ],
)
def test_removed_pco64_only_names_are_gone(module: str, name: str) -> None:
    """The never-released 0.x aliases were removed, not kept behind a warning."""
    import importlib

    mod = importlib.import_module(module)
    assert name not in getattr(mod, "__all__", ())
    with pytest.raises(AttributeError, match=name):
        getattr(mod, name)
