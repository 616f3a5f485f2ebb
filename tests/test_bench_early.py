"""Early termination in the harness (bolt_pco64.bench.early): --early-stop on the clock."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64.bench import BenchConfig, ComparisonSpec, run_comparison
from bolt_pco64.bench.run import run_one
from bolt_pco64.bo.early_stop import Evidence, PosteriorStop, StepEstimates
from bolt_pco64.cli import main
from bolt_pco64.tables.partial_runs import PartialRuns
from bolt_pco64.tables.table import Table, load_table
from bolt_pco64.tables.time_model import TimeModel
from tests._synth import make_table

TIMING = ["fit_seconds", "acq_seconds"]
STEPS = 12


def _stepped() -> pd.DataFrame:
    """The synthetic table with a warm-up and 12 noisy steps per feasible row."""
    frame = make_table(capacity=80.0)
    rng = np.random.default_rng(0)
    steps = []
    for ok, thr in zip(
        frame["ran_successfully"], frame["throughput_mean"], strict=True
    ):
        base = 1.0 / thr if ok else 0.0
        times = [2 * base, *(base * (1 + 0.01 * rng.standard_normal(STEPS)))]
        steps.append(str(times) if ok else "[]")
    frame["all_time_steps"] = steps
    return frame


@pytest.fixture(scope="module")
def table() -> Table:
    return load_table(_stepped())


@pytest.fixture(scope="module")
def partial(table: Table) -> PartialRuns:
    return PartialRuns(table)


def test_a_stopped_run_is_charged_and_reports_its_steps(
    table: Table, partial: PartialRuns
) -> None:
    config = BenchConfig(budget=30, n_init=4, early_stop="posterior")
    out = run_one("random", 0, table, config)
    assert out.ok, out.traceback
    rec = out.records
    stopped = rec[rec["stopped"]]
    assert len(stopped) >= 3
    rows = torch.tensor(stopped["row"].to_numpy())
    k = torch.tensor(stopped["steps_run"].to_numpy())
    assert bool(((k >= 1) & (k < STEPS + 1)).all())
    # Charged start-up plus the steps it ran; ends that much after its start.
    times = TimeModel(table)
    np.testing.assert_allclose(
        stopped["run_gpu_hours"], times.gpu_hours_after_steps(rows, k).numpy()
    )
    np.testing.assert_allclose(
        stopped["sim_end_s"] - stopped["sim_start_s"],
        times.seconds_after_steps(rows, k).numpy(),
    )
    assert (stopped["run_gpu_hours"].to_numpy() < times.gpu_hours[rows].numpy()).all()
    # Reports its partial estimate, not the table's value.
    np.testing.assert_array_equal(
        stopped["throughput"], partial.estimate(rows.numpy(), k.numpy()).throughput
    )
    # Complete runs ran every step; crashes none.
    done = rec[~rec["stopped"]]
    feasible = done["feasible"].to_numpy()
    assert (done["steps_run"][feasible] == STEPS + 1).all()
    assert (done["steps_run"][~feasible] == 0).all()
    # A stopped run is not "found": best_feasible reads complete runs only.
    true = table.frame["throughput_mean"].to_numpy()
    found = np.where(rec["feasible"] & ~rec["stopped"], true[rec["row"]], -np.inf)
    best = np.maximum.accumulate(found)
    np.testing.assert_allclose(
        rec["best_feasible"], np.where(np.isfinite(best), best, np.nan)
    )


def test_without_early_stop_every_run_completes(table: Table) -> None:
    rec = run_one("random", 0, table, BenchConfig(budget=20, n_init=4)).records
    assert not rec["stopped"].any()
    assert set(rec["steps_run"]) <= {0, STEPS + 1}
    np.testing.assert_array_equal(
        rec["run_gpu_hours"], TimeModel(table).gpu_hours[rec["row"]].numpy()
    )


@pytest.mark.parametrize("workers", [1, 3])
def test_each_stop_is_the_rules_first_firing_given_the_results_in_before_it(
    table: Table, partial: PartialRuns, workers: int
) -> None:
    """Replays the posterior rule (flat prior: random has no model) after every
    step of every run, from the results that came in before that step ended."""
    config = BenchConfig(budget=36, n_init=4, workers=workers, early_stop="posterior")
    rec = run_one("random", 3, table, config).records
    assert rec["stopped"].sum() >= 3
    rule = PosteriorStop()
    ends, obs = rec["sim_end_s"].to_numpy(), rec["throughput"].to_numpy()
    for _, r in rec[rec["feasible"]].iterrows():
        ks = np.arange(1, STEPS + 1)
        est = partial.estimate(np.full(ks.size, r["row"]), ks)
        fired = []
        for j, k in enumerate(ks):
            t = r["sim_start_s"] + partial.estimate(np.array([r["row"]]), k).seconds[0]
            before = obs[(ends < t) & ~np.isnan(obs)]
            ev = Evidence(incumbent=float(before.max()) if before.size else None)
            one = StepEstimates(k, est.throughput[j], est.stderr[j], est.n_inliers[j])
            fired.append(bool(rule.stops(one, ev)))
        first = int(np.argmax(fired)) + 1 if any(fired) else None
        assert first == (r["steps_run"] if r["stopped"] else None)


def test_percentile_stops_below_the_median_of_the_runs_at_the_step(
    table: Table, partial: PartialRuns
) -> None:
    config = BenchConfig(budget=40, n_init=4, early_stop="percentile")
    rec = run_one("random", 2, table, config).records
    stopped = rec[rec["stopped"]]
    assert len(stopped) >= 3
    # Ax's min_progression (6 steps) and min_curves (5 completed runs first).
    assert (stopped["steps_run"] >= 6).all()
    complete = (rec["feasible"] & ~rec["stopped"]).cumsum()
    assert (complete[rec["stopped"]] >= 5).all()
    for i, r in stopped.iterrows():
        k = int(r["steps_run"])
        before = rec.loc[: i - 1]
        before = before[before["feasible"] & (before["steps_run"] >= k)]
        peers = partial.estimate(before["row"].to_numpy(), k).throughput
        values = np.append(peers, r["throughput"])
        assert r["throughput"] < np.percentile(values, 50)


@pytest.mark.slow
def test_posterior_with_a_model_method_is_deterministic(table: Table) -> None:
    config = BenchConfig(budget=16, n_init=4, workers=2, early_stop="posterior")
    a = run_one("qlognei", 1, table, config)
    b = run_one("qlognei", 1, table, config)
    assert a.ok, a.traceback
    assert a.records["stopped"].any()
    pd.testing.assert_frame_equal(
        a.records.drop(columns=TIMING), b.records.drop(columns=TIMING), check_exact=True
    )


@pytest.mark.slow
def test_jobs_and_resume_are_bit_identical_with_early_stop(
    tmp_path: Path, table: Table
) -> None:
    path = tmp_path / "stepped.parquet"
    _stepped().to_parquet(path, index=False)
    spec = ComparisonSpec(
        ["random", "qlognei"],
        seeds=[0, 1],
        budget_hours=40.0,
        workers=2,
        n_init=4,
        early_stop="posterior",
    )
    one = run_comparison(spec, path, out=tmp_path / "one", progress=False)
    two = run_comparison(spec, path, out=tmp_path / "two", jobs=2, progress=False)
    again = run_comparison(spec, path, out=tmp_path / "one", progress=False)
    assert again.ran == []
    expected = one.records.drop(columns=TIMING)
    assert expected["stopped"].any()
    for other in (two, again):
        pd.testing.assert_frame_equal(
            other.records.drop(columns=TIMING), expected, check_exact=True
        )
    # Another policy is another configuration: resume refuses to mix them.
    with pytest.raises(ValueError, match="configuration"):
        run_comparison(
            replace(spec, early_stop="percentile"),
            path,
            out=tmp_path / "one",
            progress=False,
        )


def test_bad_policy_is_refused() -> None:
    result = CliRunner().invoke(main, ["bench", "--early-stop", "sometimes"])
    assert result.exit_code != 0
    assert "'--early-stop'" in result.output
    with pytest.raises(ValueError, match="early_stop"):
        BenchConfig(early_stop="sometimes")
