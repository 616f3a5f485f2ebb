"""Partial runs (bolt_pco64.tables.partial_runs): the estimate, its error and the cost after k steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bolt_pco64.tables.partial_runs import PartialRuns
from bolt_pco64.tables.table import Table, load_table
from bolt_pco64.tables.time_model import TimeModel
from tests._tables import frame_from

_CONFIGS = [(dp, 0, 0, 0, 0, 6, 0, 0) for dp in range(4)]
# Row 0: a warm-up, then alternating 1 s and 3 s steps (17 s of steps).
_ROW0 = [5.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0]


@pytest.fixture(scope="module")
def table() -> Table:
    throughput = [0.1, 0.2, None, 0.3]  # dp = 2 crashes
    frame = frame_from(_CONFIGS, throughput, overall_time=[34.0, 20.0, np.nan, 9.0])
    frame["all_time_steps"] = [str(_ROW0), str([2.0] * 5), "[]", "[]"]
    return load_table(frame)


@pytest.fixture(scope="module")
def runs(table: Table) -> PartialRuns:
    return PartialRuns(table, TimeModel(table, startup_seconds=100.0))


def test_estimate_after_k_steps_is_the_runners_rescaled_to_the_tables_unit(
    runs: PartialRuns,
) -> None:
    # Raw steps/s over all timed steps: 1 / mean(1, 3) = 0.5; the table says
    # 0.1, so every estimate of row 0 is scaled by 0.2.
    got = runs.estimate(np.zeros(4, dtype=int), np.array([2, 3, 4, 5]))
    # k=2: one timed step, too few.
    assert math.isnan(got.throughput[0])
    assert got.n_inliers[0] == 0
    # k=3: steps 1 and 3: mean 2, population std 1, n 2.
    assert got.throughput[1] == pytest.approx(0.2 / 2)
    assert got.stderr[1] == pytest.approx(0.2 * 1 / math.sqrt(2) / 4)
    # k=4: 1, 3, 1: median 1, IQR 1, so 3 (|3 - 1| >= 2) is an outlier.
    assert got.throughput[2] == pytest.approx(0.2 / 1)
    assert got.stderr[2] == pytest.approx(0.0)
    assert got.n_inliers[2] == 2
    # k=5: 1, 3, 1, 3: mean 2, std 1, n 4.
    assert got.stderr[3] == pytest.approx(0.2 * 1 / 2 / 4)
    assert not got.complete.any()


def test_all_steps_report_the_tables_own_values(
    runs: PartialRuns, table: Table
) -> None:
    got = runs.estimate(np.array([0, 0, 1]), np.array([7, 50, 5]))
    assert got.complete.all()
    assert got.throughput.tolist() == [0.1, 0.1, 0.2]
    std = table.frame["throughput_std"].to_numpy()
    assert got.stderr.tolist() == [std[0], std[0], std[1]]
    assert got.steps.tolist() == [7, 7, 5]


def test_cost_is_startup_plus_the_loop_up_to_step_k(runs: PartialRuns) -> None:
    # Row 0: loop 34 s over 17 s of steps, so 2 s of loop per second of step.
    k = np.arange(8)
    got = runs.estimate(np.zeros(8, dtype=int), k)
    cum = np.concatenate([[0.0], np.cumsum(_ROW0)])
    np.testing.assert_allclose(got.seconds, 100.0 + 2.0 * cum)
    # 64 GPUs: GPU-hours = seconds x 64 / 3600.
    np.testing.assert_allclose(got.gpu_hours, got.seconds * 64 / 3600)


def test_a_crash_has_no_estimate_and_costs_the_crash(runs: PartialRuns) -> None:
    got = runs.estimate(np.array([2, 2, 2]), np.array([0, 1, 9]))
    assert np.isnan(got.throughput).all()
    assert np.isnan(got.stderr).all()
    assert got.complete.tolist() == [False, True, True]
    assert got.seconds[0] == pytest.approx(100.0)
    crash = float(runs.time_model.run_seconds[2])
    assert got.seconds[1] == pytest.approx(crash)
    assert got.seconds[2] == pytest.approx(crash)
    assert got.steps.tolist() == [0, 0, 0]


def test_a_row_without_steps_is_one_indivisible_run(runs: PartialRuns) -> None:
    got = runs.estimate(np.array([3, 3]), np.array([0, 1]))
    assert math.isnan(got.throughput[0])
    assert got.throughput[1] == pytest.approx(0.3)
    assert got.seconds.tolist() == pytest.approx([100.0, 109.0])
    assert got.complete.tolist() == [False, True]


def test_curve_and_bad_input(runs: PartialRuns) -> None:
    curve = runs.curve(0)
    assert curve.throughput.shape == (8,)
    assert curve.complete.tolist()[-2:] == [
        False,
        True,
    ]
    with pytest.raises(ValueError, match=r"rows in 0\.\.3"):
        runs.estimate(np.array([4]), 1)
    with pytest.raises(ValueError, match="steps >= 0"):
        runs.estimate(np.array([0]), -1)
    with pytest.raises(ValueError, match="integer steps"):
        runs.estimate(np.array([0]), 1.5)


def test_every_step_is_each_rows_estimate_after_each_step(runs: PartialRuns) -> None:
    grid = runs.every_step
    # 7 steps at most (row 0): columns k = 0..7.
    assert grid.throughput.shape == (4, 8)
    for row in range(4):
        got = runs.estimate(np.full(8, row), np.arange(8))
        for name in ("throughput", "stderr", "n_inliers", "seconds", "complete"):
            np.testing.assert_array_equal(getattr(grid, name)[row], getattr(got, name))
    assert runs.every_step is grid  # built once
    with pytest.raises(ValueError, match="read-only"):
        grid.throughput[0, 0] = 1.0


def test_its_steps_are_the_time_models(table: Table) -> None:
    """A complete run's steps read from the time model (a run without early
    stop) or from the partial runs (with) are the same."""
    times = TimeModel(table)
    np.testing.assert_array_equal(PartialRuns(table, times).n_steps, times.n_steps)
    assert times.n_steps.tolist() == [7, 5, 0, 0]


def test_the_standin_needs_no_calibration() -> None:
    """On the stand-in (generator 2.1) the estimates are the runner's times the
    instance's samples per GPU per step, so the calibration changes nothing."""
    import warnings

    from bolt_pco64.tables.estimators import (
        estimate_throughput,
        step_matrix,
        work_per_step,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load_table()
    runs = PartialRuns(table)
    rows = np.flatnonzero(table.frame["ran_successfully"].to_numpy())[:50]
    T = step_matrix(table.frame["all_time_steps"].iloc[rows])
    direct = estimate_throughput(T, steps=8, scale=work_per_step(table.instance))
    got = runs.estimate(rows, 8)
    np.testing.assert_allclose(got.throughput, direct.throughput, rtol=1e-6)
    np.testing.assert_allclose(got.stderr, direct.stderr, rtol=1e-5)
