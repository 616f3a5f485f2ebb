"""The time model (bolt_pco64.tables.time_model): runs, crashes, partial runs, GPU-hours."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from bolt_pco64.instances import get_instance
from bolt_pco64.tables.table import Table, TableError, load_table
from bolt_pco64.tables.time_model import TimeModel, gpu_hours
from tests._tables import frame_from

#: dp = 0..5 (encoded distance = |dp difference|), dp = 3 crashes.
_CONFIGS = [(dp, 0, 0, 0, 0, 6, 0, 0) for dp in range(6)]
_STEPS = {
    0: [3.0, 1.0, 1.0],
    1: [5.0, 1.0, 1.0, 1.0],
    2: [4.0, 2.0, 2.0],
    4: [6.0, 3.0, 3.0],
    5: [2.0, 1.0, 1.0],
}
_LOOP = {0: 10.0, 1: 16.0, 2: 10.0, 4: 24.0, 5: 8.0}


def _frame(steps: dict[int, list[float]] = _STEPS) -> pd.DataFrame:
    throughput = [None if dp == 3 else 0.1 + 0.01 * dp for dp in range(6)]
    loop = [_LOOP.get(dp, np.nan) for dp in range(6)]
    frame = frame_from(_CONFIGS, throughput, overall_time=loop)
    frame["all_time_steps"] = [str(steps.get(dp, [])) for dp in range(6)]
    return frame


@pytest.fixture(scope="module")
def table() -> Table:
    return load_table(_frame())


def test_a_run_costs_startup_plus_its_loop(table: Table) -> None:
    model = TimeModel(table, startup_seconds=100.0)
    for dp, loop in _LOOP.items():
        assert float(model.run_seconds[dp]) == pytest.approx(100.0 + loop)
    assert bool(model.feasible[3]) is False


def test_a_crash_costs_startup_plus_its_neighbours_first_step(table: Table) -> None:
    # The loop's first step of each feasible row: loop x t1 / sum(t).
    first = {0: 10 * 3 / 5, 1: 16 * 5 / 8, 2: 10 * 4 / 8, 4: 24 * 6 / 12, 5: 8 * 2 / 4}
    # Two nearest of dp=3: dp 2 and 4 (distance 1).
    two = TimeModel(table, startup_seconds=50.0, crash_neighbours=2)
    assert float(two.run_seconds[3]) == pytest.approx(50.0 + (first[2] + first[4]) / 2)
    # One nearest: the tie between dp 2 and 4 goes to the earlier row.
    one = TimeModel(table, startup_seconds=50.0, crash_neighbours=1)
    assert float(one.run_seconds[3]) == pytest.approx(50.0 + first[2])
    # More neighbours than feasible rows: all five, their median.
    many = TimeModel(table, startup_seconds=0.0, crash_neighbours=50)
    assert float(many.run_seconds[3]) == pytest.approx(np.median(list(first.values())))
    assert float(many.first_step_seconds[3]) == pytest.approx(
        float(many.run_seconds[3])
    )


def test_a_crash_costs_less_than_the_runs_around_it(table: Table) -> None:
    model = TimeModel(table)
    assert float(model.run_seconds[3]) < float(model.run_seconds[model.feasible].min())
    assert float(model.run_seconds[3]) > model.startup_seconds


def test_partial_runs_spread_the_loop_over_the_steps(table: Table) -> None:
    model = TimeModel(table, startup_seconds=20.0)
    rows = torch.tensor([2, 2, 2, 2, 2])
    steps = torch.tensor([0, 1, 2, 3, 9])
    got = model.seconds_after_steps(rows, steps)
    # dp=2: loop 10 s over steps 4, 2, 2 (sum 8).
    expected = [20.0, 20.0 + 5.0, 20.0 + 7.5, 30.0, 30.0]
    np.testing.assert_allclose(got.numpy(), expected)
    assert float(got[3]) == float(model.run_seconds[2])
    np.testing.assert_allclose(model.step_seconds(2).numpy(), [5.0, 2.5, 2.5])
    # A crash: start-up before its first step, the whole crash from then on.
    crash = model.seconds_after_steps(torch.tensor([3, 3, 3]), torch.tensor([0, 1, 4]))
    whole = float(model.run_seconds[3])
    assert crash.tolist() == [20.0, whole, whole]
    assert model.step_seconds(3).numel() == 0
    hours = model.gpu_hours_after_steps(rows, 1)
    assert hours.shape == rows.shape
    assert float(hours[0]) == pytest.approx(25.0 * model.num_gpus / 3600)


def test_a_row_without_recorded_steps_is_one_indivisible_loop() -> None:
    steps = dict(_STEPS)
    steps[1] = []
    model = TimeModel(load_table(_frame(steps)), startup_seconds=10.0)
    got = model.seconds_after_steps(torch.tensor([1, 1, 1]), torch.tensor([0, 1, 2]))
    assert got.tolist() == [10.0, 26.0, 26.0]
    assert int(model.n_steps[1]) == 0
    assert float(model.first_step_seconds[1]) == 16.0


def test_gpu_hours_are_seconds_times_gpus_per_hour(table: Table) -> None:
    model = TimeModel(table)
    gpus = get_instance("pco64").num_gpus
    assert model.num_gpus == gpus
    torch.testing.assert_close(model.gpu_hours, model.run_seconds * gpus / 3600)
    assert gpu_hours(3600.0, 2) == 2.0
    with pytest.raises(ValueError, match="num_gpus"):
        gpu_hours(1.0, 0)


def test_any_instance_works() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("pco16", "pco32"):
            table = load_table(instance=name)
            model = TimeModel(table)
            assert model.num_gpus == get_instance(name).num_gpus
            assert torch.isfinite(model.run_seconds).all()
            assert (model.run_seconds >= model.startup_seconds).all()


@pytest.mark.parametrize(
    ("column", "value"),
    [("overall_time", 0.0), ("overall_time", -5.0), ("all_time_steps", "[1.0, -2.0]")],
)
def test_a_table_without_usable_run_times_is_refused(
    column: str, value: object
) -> None:
    frame = _frame()
    frame[column] = frame[column].astype(object)
    frame.loc[frame.index[4], column] = value
    table = load_table(frame)
    with pytest.raises(TableError, match=rf"column '{column}', row 4"):
        TimeModel(table)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"startup_seconds": -1.0}, "startup_seconds"),
        ({"startup_seconds": float("nan")}, "startup_seconds"),
        ({"crash_neighbours": 0}, "crash_neighbours"),
    ],
)
def test_bad_options_are_refused(table: Table, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TimeModel(table, **kwargs)


def test_bad_rows_and_steps_are_refused(table: Table) -> None:
    model = TimeModel(table)
    with pytest.raises(ValueError, match="rows"):
        model.seconds_after_steps(torch.tensor([6]), 1)
    with pytest.raises(ValueError, match="steps"):
        model.seconds_after_steps(torch.tensor([1]), -1)
