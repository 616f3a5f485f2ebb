"""Cost metrics (bolt_pco64.bench.report.cost): cost grids, time to target, ERT."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.bench.report.cost import (
    compare_costs,
    cost_curves,
    cost_grid,
    ert_sensitivity,
    ert_table,
    regret_on_grid,
    time_to_target,
)
from bolt_pco64.bench.report.cost.page import (
    ert_markdown,
    plot_cost,
    ratio_interval,
    sensitivity_markdown,
)

OPT = 1.0


def _run(
    method: str, seed: int, hours: list[float], regret: list[float]
) -> pd.DataFrame:
    n = len(hours)
    return pd.DataFrame(
        {
            "method": method,
            "seed": seed,
            "iteration": np.arange(1, n + 1),
            "regret": regret,
            "gpu_hours": hours,
            # Two workers: wall-clock is half the GPU-hours, in seconds.
            "sim_end_s": np.asarray(hours) * 1800.0,
        }
    )


@pytest.fixture
def records() -> pd.DataFrame:
    return pd.concat(
        [
            # a: seed 0 gets within 1 % at 3 GPU-hours; seed 1 only within 5 %.
            _run("a", 0, [1.0, 3.0, 6.0], [math.nan, 0.005, 0.0]),
            _run("a", 1, [2.0, 4.0, 10.0], [0.3, 0.04, 0.04]),
            # b: more, cheaper evaluations; seed 0 within 1 % at 5, seed 1 at 8.
            _run("b", 0, [1.0, 2.0, 5.0, 7.0], [0.5, 0.2, 0.01, 0.0]),
            _run("b", 1, [1.0, 2.0, 4.0, 8.0], [0.5, 0.5, 0.1, 0.0]),
        ],
        ignore_index=True,
    )


def test_regret_is_forward_filled_on_a_cost_grid(records: pd.DataFrame) -> None:
    grid = np.array([0.0, 1.0, 2.5, 3.0, 9.0])
    seeds, mat = regret_on_grid(
        records[records["method"] == "a"], "gpu_hours", grid, 0.9
    )
    assert seeds == [0, 1]
    # Before the first result, and at a result with no feasible run yet: fill.
    np.testing.assert_allclose(mat[0], [0.9, 0.9, 0.9, 0.005, 0.0])
    np.testing.assert_allclose(mat[1], [0.9, 0.9, 0.3, 0.3, 0.04])
    wall = regret_on_grid(
        records[records["method"] == "a"], "wall_hours", grid / 2, 0.9
    )
    np.testing.assert_allclose(wall[1], mat)


def test_the_grid_stops_where_the_first_run_stops(records: pd.DataFrame) -> None:
    grid = cost_grid(records, "gpu_hours", points=5)
    np.testing.assert_allclose(grid, [0.0, 1.5, 3.0, 4.5, 6.0])
    assert cost_grid(records, "gpu_hours", points=3, upto=2.0)[-1] == 2.0
    curves = cost_curves(records, "gpu_hours", 0.9, grid=grid)
    a = curves[curves["method"] == "a"]
    np.testing.assert_allclose(a["median"], [0.9, 0.9, 0.1525, 0.0225, 0.02])
    assert (a["low"] <= a["median"]).all()
    assert (a["median"] <= a["high"]).all()


def test_time_to_target_and_ert(records: pd.DataFrame) -> None:
    ttt = time_to_target(records, OPT, targets=(0.01, 0.05))
    a1 = ttt[(ttt["method"] == "a") & (ttt["target"] == 0.01)]
    assert a1["reached"].tolist() == [True, False]
    assert a1["cost"].tolist() == [3.0, 10.0]
    ert = ert_table(records, OPT, targets=(0.01, 0.05), resamples=200)
    row = ert[(ert["method"] == "a") & (ert["target"] == 0.01)].iloc[0]
    assert row["ert"] == pytest.approx((3.0 + 10.0) / 1)
    assert row["success_rate"] == 0.5
    assert row["median_cost"] == pytest.approx((3.0 + math.inf) / 2)
    row5 = ert[(ert["method"] == "a") & (ert["target"] == 0.05)].iloc[0]
    assert row5["ert"] == pytest.approx((3.0 + 4.0) / 2)
    assert row5["ert_low"] <= row5["ert"] <= row5["ert_high"]
    b = ert[(ert["method"] == "b") & (ert["target"] == 0.01)].iloc[0]
    assert b["ert"] == pytest.approx((5.0 + 8.0) / 2)
    assert "| a | 1% | 1/2" in ert_markdown(ert, "GPU-hours")


def test_a_budget_caps_what_counts(records: pd.DataFrame) -> None:
    ttt = time_to_target(records, OPT, targets=(0.01,), budget=6.0)
    b = ttt[ttt["method"] == "b"]
    # b's seed 1 reaches 1 % only at 8 > 6: it spent the budget, unsuccessfully.
    assert b["reached"].tolist() == [True, False]
    assert b["cost"].tolist() == [5.0, 6.0]
    none = ert_table(records[records["method"] == "a"], OPT, targets=(0.0,), budget=2.0)
    assert none["ert"].tolist() == [math.inf]


def test_paired_cost_comparison(records: pd.DataFrame) -> None:
    cmp = compare_costs(records, "b", OPT, targets=(0.01, 0.05), resamples=200)
    one = cmp[(cmp["method"] == "a") & (cmp["target"] == 0.01)].iloc[0]
    # Seed 0: a 3 < b 5 (cheaper); seed 1: a never, b at 8 (dearer).
    assert (one["pairs"], one["better"], one["worse"], one["tied"]) == (
        2,
        0.5,
        0.5,
        0.0,
    )
    assert one["p_value"] == 1.0
    assert one["ert_ratio"] == pytest.approx(13.0 / 6.5)
    assert one["ratio_low"] <= one["ert_ratio"] <= one["ratio_high"]
    with pytest.raises(ValueError, match="reference"):
        compare_costs(records, "c", OPT)


def test_bad_input_is_refused(records: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="axis"):
        cost_grid(records, "evaluations")
    with pytest.raises(ValueError, match="sim_end_s"):
        cost_grid(records.drop(columns="sim_end_s"), "wall_hours")
    with pytest.raises(ValueError, match="targets"):
        time_to_target(records, OPT, targets=(1.5,))
    with pytest.raises(ValueError, match="optimal"):
        time_to_target(records, 0.0)


def test_plot_cost_writes_a_png(records: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "cost.png"
    plot_cost(records, path, OPT, 0.1, title="t", budget_hours=5.0)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_random_search_costs_count_the_runs_until_the_target() -> None:
    from bolt_pco64.bench.report.cost import random_search_costs
    from bolt_pco64.tables.table import load_table
    from tests._tables import frame_from

    configs = [(dp, 0, 0, 0, 0, 6, 0, 0) for dp in range(4)]
    # Only dp=3 is within 1 % of the optimum; every run takes 3600 s.
    frame = frame_from(configs, [0.1, 0.2, 0.5, 1.0], overall_time=[3600.0] * 4)
    table = load_table(frame)
    costs = random_search_costs(table, 0.01, draws=4000, startup_seconds=0.0)
    per_run = table.instance.num_gpus  # one hour on every GPU
    assert set(np.unique(costs)) <= {per_run * k for k in (1, 2, 3, 4)}
    # The target row is equally likely in each position: mean 2.5 runs.
    assert costs.mean() == pytest.approx(2.5 * per_run, rel=0.05)
    # Within 60 %, the 0.5 row counts too: at most 3 runs.
    assert (
        random_search_costs(table, 0.6, draws=500, startup_seconds=0.0).max()
        == 3 * per_run
    )


def test_an_unsuccessful_seed_is_charged_its_whole_budget(
    records: pd.DataFrame,
) -> None:
    # a's seed 1 never gets within 1 %; its records end at 10 GPU-hours, but
    # with a 12 GPU-hour budget it is charged all 12 (the documented rule).
    ttt = time_to_target(records, OPT, targets=(0.01,), budget=12.0)
    a = ttt[ttt["method"] == "a"]
    assert a["cost"].tolist() == [3.0, 12.0]
    ert = ert_table(records, OPT, targets=(0.01,), budget=12.0, resamples=50)
    by = ert.set_index("method")["ert"]
    assert by["a"] == pytest.approx((3.0 + 12.0) / 1)
    assert by["b"] == pytest.approx((5.0 + 8.0) / 2)
    # Without a budget the whole run is its last result.
    assert time_to_target(records, OPT, targets=(0.01,))["cost"].tolist()[1] == 10.0


def test_a_reference_that_never_got_there_leaves_the_ratio_unbounded(
    records: pd.DataFrame,
) -> None:
    cmp = compare_costs(records, "a", OPT, targets=(0.01,), resamples=2000)
    b = cmp.iloc[0]
    # b's ERT (5 + 8) / 2 = 6.5 over a's (3 + 10) / 1 = 13.
    assert b["ert_ratio"] == pytest.approx(6.5 / 13.0)
    # a reaches 1 % on seed 0 only: a resample of seed 1 twice (p = 1/4)
    # leaves a's ERT infinite, far more than the 2.5 % lower tail.
    assert b["reference_infinite"] == pytest.approx(0.25, abs=0.04)
    assert math.isnan(b["ratio_low"])
    assert b["ratio_high"] >= b["ert_ratio"]
    assert ratio_interval(b["ert_ratio"], b["ratio_low"], b["ratio_high"]).startswith(
        "0.5 [unbounded, "
    )
    # The other way round a's ratio is bounded below (b always got there).
    other = compare_costs(records, "b", OPT, targets=(0.01,), resamples=2000).iloc[0]
    assert other["reference_infinite"] == 0.0
    assert other["ratio_low"] > 0


def test_sensitivity_table_gives_the_ratio_at_each_target(
    records: pd.DataFrame,
) -> None:
    sens = ert_sensitivity(records, "b", OPT, targets=(0.005, 0.01, 0.05))
    ratio = sens.set_index(["method", "target"])["ert_ratio"]
    # By hand: a's costs to 0.5 % are 3 and 10 (one success), b's 7 and 8.
    assert ratio[("a", 0.005)] == pytest.approx(13.0 / 7.5)
    assert ratio[("a", 0.01)] == pytest.approx(13.0 / 6.5)
    # To 5 %: a at 3 and 4, b at 5 and 8.
    assert ratio[("a", 0.05)] == pytest.approx(3.5 / 6.5)
    assert (ratio.loc["b"] == 1.0).all()
    md = sensitivity_markdown(sens, "b")
    assert "| method | 0.5% | 1% | 5% |" in md
    assert "(1/2)" in md
