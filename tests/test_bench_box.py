"""The harness with methods that propose points of the box (issue 13)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64 import PCO64
from bolt_pco64.bench import (
    BenchConfig,
    ComparisonSpec,
    RunContext,
    register_method,
    run_comparison,
)
from bolt_pco64.bench.proposals import resolve_proposal
from bolt_pco64.bench.run import record_columns, run_one
from bolt_pco64.cli import main
from bolt_pco64.tables.time_model import TimeModel
from tests import _fixtures

TIMING = ["fit_seconds", "acq_seconds"]


problem = _fixtures.problem


def _tried(problem: PCO64, rows: list[int]) -> torch.Tensor:
    tried = torch.zeros(len(problem.table), dtype=torch.bool)
    tried[rows] = True
    return tried


def test_points_snap_with_the_problems_lookup_and_flag_repeats(
    problem: PCO64,
) -> None:
    cand = problem.candidates()
    tried = _tried(problem, [5])
    # Row 5 itself (tried), row 9 nudged off the lattice, row 9 again (same batch).
    lo, hi = problem.bounds
    points = torch.stack(
        [cand[5], (cand[9] + 0.2).clamp(lo, hi), (cand[9] - 0.1).clamp(lo, hi)]
    )
    p = resolve_proposal(points, problem, cand, tried, 3, "m")
    assert p.snapped
    assert p.rows == problem.lookup(points).tolist() == [5, 9, 9]
    assert p.repeat == [True, False, True]
    assert torch.equal(p.points, points.to(torch.float64))
    assert not tried[9]  # the caller's tried rows are left alone


def test_rows_keep_working_and_record_their_own_inputs(problem: PCO64) -> None:
    cand = problem.candidates()
    p = resolve_proposal(
        torch.tensor([3, 7]), problem, cand, _tried(problem, []), 2, "m"
    )
    assert not p.snapped
    assert p.rows == [3, 7]
    assert p.repeat == [False, False]
    assert torch.equal(p.points, cand[[3, 7]].to(torch.float64))
    # Rows must still be distinct and untried.
    with pytest.raises(ValueError, match="untried rows"):
        resolve_proposal([3], problem, cand, _tried(problem, [3]), 1, "m")
    with pytest.raises(ValueError, match="distinct rows"):
        resolve_proposal([4, 4], problem, cand, _tried(problem, []), 2, "m")


def test_float32_points_are_accepted(problem: PCO64) -> None:
    cand = problem.candidates()
    points = cand[[2]].to(torch.float32)
    p = resolve_proposal(points, problem, cand, _tried(problem, []), 1, "m")
    assert p.rows == [2]
    assert p.points.dtype == torch.float64


@pytest.mark.parametrize(
    ("points", "match"),
    [
        (torch.zeros(2, 8, dtype=torch.double), r"1 x 8 floating tensor of points"),
        (torch.zeros(8, dtype=torch.double), r"1 x 8 floating tensor of points"),
        (torch.full((1, 8), float("nan"), dtype=torch.double), "bad point"),
        (torch.full((1, 8), 100.0, dtype=torch.double), "bad point"),
        (torch.tensor([0.0]), "integer row indices"),
    ],
)
def test_bad_points_are_refused_naming_the_method(
    problem: PCO64, points: torch.Tensor, match: str
) -> None:
    cand = problem.candidates()
    with pytest.raises(ValueError, match=match) as err:
        resolve_proposal(points, problem, cand, _tried(problem, []), 1, "mine")
    assert "'mine'" in str(err.value)


# --------------------------------------------------------------------------
# The harness with point methods
# --------------------------------------------------------------------------


table_path = _fixtures.table_path
registry = _fixtures.registry


def _sticky(ctx: RunContext) -> torch.Tensor:
    """Random points of the box, but every other step the first point again."""
    lo, hi = ctx.bounds
    u = torch.rand(ctx.q, lo.numel(), generator=ctx.generator, dtype=torch.double)
    points = lo + u * (hi - lo)
    if len(ctx.rows) % 2 == 0:
        points[0] = ctx.X[0] + 0.3 * (0.5 - u[0]).sign() * (hi > lo)
        points[0] = points[0].clamp(lo, hi)
    return points


def _check_records(rec: pd.DataFrame, problem: PCO64) -> None:
    inputs = list(problem.table.instance.input_columns)
    proposed = torch.tensor(rec[[f"proposed_{c}" for c in inputs]].to_numpy())
    # Every row is the lookup of its proposed point.
    assert rec["row"].tolist() == problem.lookup(proposed).tolist()
    assert torch.equal(
        torch.tensor(rec[inputs].to_numpy(), dtype=torch.double),
        problem.candidates()[torch.tensor(rec["row"].to_numpy())],
    )
    for _, run in rec.groupby(["method", "seed"]):
        run = run.sort_values("iteration")
        # A repeat is a row evaluated before in the same run...
        assert run["repeat"].tolist() == run["row"].duplicated().tolist()
        # ...and returns that row's first observation.
        first = run.groupby("row")["throughput"].transform("first")
        assert np.array_equal(run["throughput"], first, equal_nan=True)


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_point_methods_are_snapped_with_repeats_charged_and_counted(
    tmp_path: Path, table_path: Path, registry
) -> None:
    register_method("sticky", _sticky)
    res = run_comparison(
        ComparisonSpec(
            ["random", "sticky"], seeds=2, budget=12, n_init=4, q=2, noise="measured"
        ),
        table_path,
        out=tmp_path / "out",
        progress=False,
    )
    rec = res.records
    assert list(rec.columns) == list(record_columns(PCO64.instance))
    assert len(rec) == 2 * 2 * 12  # repeats count against the budget
    problem = PCO64(table=table_path)
    _check_records(rec, problem)
    sticky = rec[rec["method"] == "sticky"]
    assert sticky["repeat"].sum() >= 2  # every other step proposes row 0's point
    # Row methods: never a repeat, and the proposed point is the row itself.
    random = rec[rec["method"] == "random"]
    assert not random["repeat"].any()
    inputs = list(problem.table.instance.input_columns)
    assert np.array_equal(
        random[inputs].to_numpy(dtype=np.float64),
        random[[f"proposed_{c}" for c in inputs]].to_numpy(),
    )
    # A repeat is charged like any evaluation of its row.
    cost = TimeModel(problem.table).gpu_hours.numpy()
    for _, run in sticky.groupby("seed"):
        steps = np.diff(run["gpu_hours"].to_numpy(), prepend=0.0)
        assert np.allclose(steps, cost[run["row"].to_numpy()])
    # The summary counts the repeats per run.
    by_method = res.summary.set_index("method")
    per_seed = sticky.groupby("seed")["repeat"].sum()
    assert by_method.loc["sticky", "repeats_total"] == int(per_seed.sum())
    assert by_method.loc["sticky", "repeats_median"] == float(per_seed.median())
    assert by_method.loc["random", "repeats_total"] == 0
    assert "repeats per run (median)" in res.summary_markdown


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_a_point_outside_the_box_ends_only_that_run(
    tmp_path: Path, table_path: Path, registry
) -> None:
    register_method("outside", lambda ctx: ctx.bounds[1:].clone() + 1.0)
    res = run_comparison(
        ComparisonSpec(["random", "outside"], seeds=1, budget=6, n_init=4),
        table_path,
        out=tmp_path / "out",
        progress=False,
    )
    assert "bad point" in res.errors["outside/0"]
    assert len(res.records[res.records["method"] == "random"]) == 6


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_bench_runs_qlognei_box_and_mixed_from_the_command_line(
    tmp_path: Path, table_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["bench", "--methods", "qlognei,qlognei-box,qlognei-mixed"]
    # One seed, two model-based steps: each method fits and proposes twice.
    args += ["--seeds", "1", "--budget", "6", "--n-init", "4", "--q", "1"]
    args += ["--table", str(table_path), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rec = pd.read_parquet(out / "runs.parquet")
    assert set(rec["method"]) == {"qlognei", "qlognei-box", "qlognei-mixed"}
    assert len(rec) == 3 * 1 * 6
    problem = PCO64(table=table_path)
    _check_records(rec, problem)
    assert not rec.loc[rec["method"] == "qlognei", "repeat"].any()
    mixed = rec[(rec["method"] == "qlognei-mixed") & (rec["iteration"] > 4)]
    proposed = mixed[[c for c in rec.columns if c.startswith("proposed_")]]
    assert np.array_equal(proposed.to_numpy(), np.rint(proposed.to_numpy()))
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    totals = rec.groupby("method")["repeat"].sum()
    for m in ("qlognei", "qlognei-box", "qlognei-mixed"):
        assert summary.loc[m, "repeats_total"] == totals[m]
    # The same seed gives bit-identical records in another process/invocation.
    again = run_one(
        "qlognei-box", 0, problem.table, BenchConfig(budget=6, n_init=4, q=1)
    )
    assert again.ok, again.error
    box = rec[(rec["method"] == "qlognei-box") & (rec["seed"] == 0)]
    pd.testing.assert_frame_equal(
        again.records.drop(columns=TIMING).reset_index(drop=True),
        box.drop(columns=TIMING).reset_index(drop=True),
        check_dtype=False,
    )
