"""The harness on the simulated clock: workers, pending rows, GPU-hour budgets."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64.bench import BenchConfig, ComparisonSpec, RunContext, run_comparison
from bolt_pco64.bench.protocol import PROTOCOL_DEFAULTS
from bolt_pco64.bench.run import run_one
from bolt_pco64.bench.spec import DEFAULT_BUDGET
from bolt_pco64.cli import main
from bolt_pco64.tables.table import Table, load_table
from tests import _fixtures
from tests._synth import make_table

table_path = _fixtures.table_path
TIMING = ["fit_seconds", "acq_seconds"]


@pytest.fixture(scope="module")
def table() -> Table:
    return load_table(make_table(capacity=80.0))


def _overlap(run: pd.DataFrame) -> int:
    """The most evaluations in flight at once."""
    events = sorted(
        [(t, 1) for t in run["sim_start_s"]] + [(t, -1) for t in run["sim_end_s"]],
        key=lambda e: (e[0], e[1]),
    )
    level = most = 0
    for _, step in events:
        level += step
        most = max(most, level)
    return most


def test_workers_run_at_once_and_results_come_in_order(table: Table) -> None:
    seen: list[tuple[list[int], list[int]]] = []

    def spy(ctx: RunContext) -> torch.Tensor:
        seen.append((ctx.rows.tolist(), ctx.pending.tolist()))
        return ctx.available[: ctx.q]

    config = BenchConfig(budget=14, n_init=4, workers=3)
    out = run_one("spy", 0, table, config, fn=spy)
    assert out.ok, out.traceback
    rec = out.records
    assert len(rec) == 14
    assert rec["iteration"].tolist() == list(range(1, 15))
    assert set(rec["worker"]) == {0, 1, 2}
    assert _overlap(rec) == 3
    assert (np.diff(rec["sim_end_s"].to_numpy()) >= 0).all()
    np.testing.assert_allclose(
        rec["sim_end_s"] - rec["sim_start_s"],
        rec["run_gpu_hours"] * 3600 / table.instance.num_gpus,
    )
    # Two workers are busy whenever the method is asked (after the design):
    # their rows are pending, not among the results, and never proposed again.
    for rows, pending in seen:
        assert len(pending) == 2
        assert not set(pending) & set(rows)
    assert rec["row"].nunique() == 14


def test_a_gpu_hour_budget_starts_runs_until_it_is_spent(table: Table) -> None:
    config = BenchConfig(budget=None, budget_hours=60.0, n_init=4, workers=2)
    rec = run_one("random", 1, table, config).records
    starts = rec["sim_start_s"].to_numpy()
    hours, t0, t1 = (
        rec[c].to_numpy() for c in ("run_gpu_hours", "sim_start_s", "sim_end_s")
    )

    def consumed(t: float) -> float:
        share = np.clip((t - t0) / (t1 - t0), 0.0, 1.0)
        return float((hours * share).sum())

    # Every run started below the budget; the runs that crossed it finished.
    assert all(consumed(t) < 60.0 for t in starts)
    assert consumed(float(t1.max())) >= 60.0
    np.testing.assert_allclose(rec["gpu_hours"].iloc[-1], hours.sum())
    np.testing.assert_allclose(
        rec["gpu_hours"].to_numpy(), [consumed(t) for t in t1], rtol=1e-9
    )


def test_the_clock_is_deterministic(table: Table) -> None:
    config = BenchConfig(budget=None, budget_hours=40.0, n_init=4, workers=3)
    a = run_one("qlognei", 2, table, config).records.drop(columns=TIMING)
    b = run_one("qlognei", 2, table, config).records.drop(columns=TIMING)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("method", ["eipu", "ei_cool"])
def test_cost_aware_methods_run_on_the_clock(table: Table, method: str) -> None:
    config = BenchConfig(budget=None, budget_hours=40.0, n_init=4, workers=2)
    out = run_one(method, 0, table, config)
    assert out.ok, out.traceback
    assert len(out.records) > 4
    assert out.records["row"].nunique() == len(out.records)


@pytest.mark.slow
def test_workers_and_jobs_give_identical_records_and_resume(
    tmp_path: Path, table_path: Path
) -> None:
    spec = ComparisonSpec(
        ["random", "qlognei"], seeds=[0, 1], budget_hours=40.0, workers=2, n_init=4
    )
    one = run_comparison(spec, table_path, out=tmp_path / "one", progress=False)
    two = run_comparison(spec, table_path, out=tmp_path / "two", jobs=2, progress=False)
    again = run_comparison(spec, table_path, out=tmp_path / "one", progress=False)
    assert again.ran == []
    expected = one.records.drop(columns=TIMING)
    for other in (two, again):
        pd.testing.assert_frame_equal(
            other.records.drop(columns=TIMING), expected, check_exact=True
        )
    # The cost report: every method's time to target, and its plot.
    ert = pd.read_csv(tmp_path / "one" / "cost_ert.csv")
    assert sorted(set(ert["method"])) == ["qlognei", "random"]
    assert set(ert["runs"]) == {2}
    summary = (tmp_path / "one" / "cost_summary.md").read_text()
    assert all(f"| {m} |" in summary for m in ("random", "qlognei")), summary
    assert min(_fixtures.png_size(tmp_path / "one" / "cost.png")) >= 100


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--budget", "5", "--budget-hours", "10"], "--budget"),
        (["--budget-hours", "0"], "'--budget-hours'"),
        (["--budget-hours", "-3"], "'--budget-hours'"),
        (["--workers", "0"], "'--workers'"),
        (["--budget-hours", "10", "--problem", "all"], "--budget-hours"),
        (["--bad-times"], "--table (run times): "),
    ],
)
def test_bad_clock_input_is_one_line_before_anything_is_written(
    tmp_path: Path, table_path: Path, extra: list[str], expected: str
) -> None:
    table = table_path
    bad_times = "--bad-times" in extra
    if bad_times:
        frame = make_table(capacity=80.0)
        frame.loc[frame["ran_successfully"].idxmax(), "overall_time"] = 0.0
        table = tmp_path / "bad.parquet"
        frame.to_parquet(table, index=False)
        extra = []
    args = ["bench", "--methods", "random", "--seeds", "1", "--n-init", "2"]
    args += ["--out", str(tmp_path / "out"), "--no-progress"]
    if "all" not in extra:
        args += ["--table", str(table)]
    before = _tree(tmp_path)
    result = CliRunner().invoke(main, args + extra)
    assert result.exit_code != 0, result.output
    assert expected in result.output
    if bad_times:
        assert "overall_time" in result.output
    errors = [line for line in result.output.splitlines() if "Error" in line]
    assert len(errors) == 1, result.output
    assert _tree(tmp_path) == before
    assert not os.path.exists(tmp_path / "out")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"budget": 5, "budget_hours": 2.0}, "one of budget"),
        ({"budget": None, "budget_hours": 0.0}, "budget_hours"),
        ({"budget": None, "budget_hours": float("nan")}, "budget_hours"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_configs_are_refused(kwargs: dict, match: str) -> None:
    # Neither: the default budget, the protocol's.
    assert BenchConfig(budget=None).budget == DEFAULT_BUDGET == PROTOCOL_DEFAULTS.budget
    with pytest.raises(ValueError, match=match):
        BenchConfig(**kwargs)
