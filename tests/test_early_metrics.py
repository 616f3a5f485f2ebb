"""Early-termination metrics (benchmarks/_early_metrics.py, _early_outcomes.py) on tiny
hand-made records; every expected value is worked out by hand in the test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.tables.table import Table, load_table
from bolt_pco64.tables.time_model import TimeModel
from tests._scripts import load_script
from tests._tables import frame_from

_metrics = load_script("_early_metrics")
_outcomes = load_script("_early_outcomes")
early_stop_summary = _metrics.early_stop_summary
paired_ert = _metrics.paired_ert
optimum_outcomes = _outcomes.optimum_outcomes
paired_outcomes = _outcomes.paired_outcomes

_CONFIGS = [(dp, 0, 0, 0, 0, 6, 0, 0) for dp in range(4)]


@pytest.fixture(scope="module")
def table() -> Table:
    # Rows 0 and 1 are within 1 % of the optimum (1.0); row 3 crashes.
    frame = frame_from(_CONFIGS, [1.0, 0.995, 0.5, None], overall_time=[900.0] * 4)
    return load_table(frame)


def _records(rows, stopped, charged, seed=0, method="m") -> pd.DataFrame:
    n = len(rows)
    return pd.DataFrame(
        {
            "method": [method] * n,
            "seed": [seed] * n,
            "iteration": np.arange(1, n + 1),
            "row": rows,
            "feasible": [r != 3 for r in rows],
            "stopped": stopped,
            "run_gpu_hours": charged,
            "gpu_hours": np.cumsum(charged),
        }
    )


def test_saved_hours_and_wrongly_stopped_runs(table: Table) -> None:
    full = TimeModel(table).gpu_hours.numpy()
    recs = pd.concat(
        [
            # Seed 0: row 2 stopped (not near-optimal), row 1 stopped (wrongly).
            _records(
                [2, 1, 0, 3], [True, True, False, False], [1.0, 2.0, full[0], full[3]]
            ),
            # Seed 1: row 0 completes, row 2 completes.
            _records([0, 2], [False, False], [full[0], full[2]], seed=1),
        ]
    )
    got = early_stop_summary(recs, table).iloc[0]
    assert got["seeds"] == 2
    assert got["evaluations"] == 6
    assert got["stopped"] == 2
    assert got["gpu_hours_saved"] == pytest.approx(full[2] - 1.0 + full[1] - 2.0)
    charged = 3.0 + 2 * full[0] + full[3] + full[2]
    assert got["gpu_hours"] == pytest.approx(charged)
    assert got["saved_share"] == pytest.approx(
        got["gpu_hours_saved"] / (charged + got["gpu_hours_saved"])
    )
    # Near-optimal runs proposed: row 1 (seed 0), row 0 twice; one stopped.
    assert got["near_optimal"] == 3
    assert got["wrongly_stopped"] == 1
    assert got["wrong_rate"] == pytest.approx(1 / 3)
    assert got["wrong_low"] < 1 / 3 < got["wrong_high"]
    # Seed 0's row 1 was stopped before any near-optimal run completed (row 0
    # came after it); seed 1's row 0 completed first of all.
    assert got["near_optimal_open"] == 3
    assert got["wrongly_stopped_open"] == 1


def test_stops_after_the_target_was_found_are_told_apart(table: Table) -> None:
    # Row 0 completes, then row 1 (also near-optimal) is stopped.
    recs = _records([0, 1, 2], [False, True, True], [1.0, 1.0, 1.0])
    got = early_stop_summary(recs, table).iloc[0]
    assert got["wrongly_stopped"] == 1
    assert got["near_optimal"] == 2
    assert got["near_optimal_open"] == 1
    assert got["wrongly_stopped_open"] == 0
    assert got["wrong_open_rate"] == 0.0


def test_none_stopped_still_has_an_informative_interval(table: Table) -> None:
    recs = _records([0, 1, 0, 1], [False] * 4, [1.0] * 4)
    got = early_stop_summary(recs, table).iloc[0]
    assert got["wrongly_stopped"] == 0
    assert got["wrong_low"] == 0.0
    assert 0.3 < got["wrong_high"] < 1.0  # 4 runs cannot rule out much


def _ert_records(costs: list[float], seeds: list[int]) -> pd.DataFrame:
    """One run per seed that reaches the optimum after spending ``cost``."""
    parts = []
    for cost, seed in zip(costs, seeds, strict=True):
        parts.append(
            pd.DataFrame(
                {
                    "method": ["qlognei"] * 2,
                    "seed": [seed] * 2,
                    "iteration": [1, 2],
                    "regret": [0.5, 0.0],
                    "gpu_hours": [cost / 2, cost],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def test_ert_with_and_without_early_stop_paired_by_seed() -> None:
    recs = {
        "none": _ert_records([10.0, 20.0], [0, 1]),
        "posterior": _ert_records([5.0, 8.0], [0, 1]),
    }
    ert, cmp = paired_ert(recs, optimal_value=1.0)
    by = ert.set_index("method")["ert"]
    assert by["qlognei [none]"] == pytest.approx(15.0)
    assert by["qlognei [posterior]"] == pytest.approx(6.5)
    row = cmp.iloc[0]
    assert row["setting"] == "posterior"
    assert row["reference"] == "qlognei [none]"
    assert row["ert_ratio"] == pytest.approx(6.5 / 15.0)
    assert row["better"] == 1.0
    with pytest.raises(ValueError, match="reference setting"):
        paired_ert(recs, optimal_value=1.0, reference="percentile")


def test_records_without_early_stop_columns_are_refused(table: Table) -> None:
    recs = _records([0], [False], [1.0]).drop(columns=["stopped"])
    with pytest.raises(ValueError, match="stopped"):
        early_stop_summary(recs, table)


# -- the optimum, found or stopped (benchmarks/_early_outcomes.py) ----------
#
# The table above: row 0 is the optimum (1.0), row 1 near it (0.995), row 2
# at 0.5 (the worst feasible), row 3 crashes. Regret as the records hold it:
# 1.0 minus the best fully measured (not stopped) feasible row, NaN before one.


def _outcome_records(
    rows: list[int], stopped: list[bool], regret: list[float], seed: int, method="m"
) -> pd.DataFrame:
    recs = _records(rows, stopped, [1.0] * len(rows), seed=seed, method=method)
    return recs.assign(regret=regret)


def _four_seeds(method: str = "m") -> pd.DataFrame:
    nan = float("nan")
    return pd.concat(
        [
            # found the optimum after row 2: regret 0.5 then 0
            _outcome_records([2, 0], [False, False], [0.5, 0.0], 0, method),
            # started the optimum and stopped it; ended on row 1
            _outcome_records(
                [0, 1, 2], [True, False, False], [nan, 0.005, 0.005], 1, method
            ),
            # never proposed the optimum
            _outcome_records([3, 2], [False, False], [nan, 0.5], 2, method),
            # only a crash: regret counts as optimum - worst feasible = 0.5
            _outcome_records([3], [False], [nan], 3, method),
        ],
        ignore_index=True,
    )


def test_found_optimum_regret0_and_end_of_budget_regret(table: Table) -> None:
    got = optimum_outcomes(_four_seeds(), table).iloc[0]
    assert got["seeds"] == 4
    assert (got["found"], got["found_rate"]) == (1, 0.25)
    assert (got["regret0"], got["regret0_rate"]) == (1, 0.25)
    # Clopper-Pearson for 1 of 4 at 95 %: the lower end is 1 - 0.975 ** (1/4)
    assert got["found_low"] == pytest.approx(1 - 0.975**0.25)
    assert got["found_low"] < 0.25 < got["found_high"] < 1.0
    # end-of-budget regrets 0, 0.005, 0.5, 0.5: median (0.005 + 0.5) / 2
    assert got["final_regret"] == pytest.approx(0.2525)
    assert got["final_regret_low"] <= got["final_regret"] <= got["final_regret_high"]
    assert got["final_regret_low"] >= 0.0
    assert got["final_regret_high"] <= 0.5
    # seeds 0 and 1 started the optimum; seed 1 stopped it and never measured it
    assert got["started_optimum"] == 2
    assert (got["stopped_optimum"], got["stopped_optimum_rate"]) == (1, 0.5)
    assert got["optimum_stops"] == 1
    # 1 of 2: the exact interval's ends are 1 - 0.975 ** (1/2) and 0.975 ** (1/2)
    assert got["stopped_optimum_low"] == pytest.approx(1 - 0.975**0.5)
    assert got["stopped_optimum_high"] == pytest.approx(0.975**0.5)


def test_an_optimum_stopped_then_measured_fully_counts_as_found(table: Table) -> None:
    recs = _outcome_records(
        [0, 2, 0], [True, False, False], [float("nan"), 0.5, 0.0], 0
    )
    got = optimum_outcomes(recs, table).iloc[0]
    assert (got["found"], got["stopped_optimum"], got["optimum_stops"]) == (1, 0, 1)
    assert got["stopped_optimum_rate"] == 0.0


def test_outcomes_leave_out_results_beyond_the_budget(table: Table) -> None:
    # the optimum comes in after 2 GPU-hours: on a 1.5 GPU-hour budget it
    # does not count, and the regret is the first result's
    recs = _outcome_records([2, 0], [False, False], [0.5, 0.0], 0)
    assert recs["gpu_hours"].tolist() == [1.0, 2.0]
    got = optimum_outcomes(recs, table, budget_hours=1.5).iloc[0]
    assert (got["found"], got["regret0"], got["started_optimum"]) == (0, 0, 0)
    assert got["final_regret"] == pytest.approx(0.5)
    # no run started the optimum: no rate, no interval
    assert np.isnan(got["stopped_optimum_rate"])
    assert np.isnan(got["stopped_optimum_low"])


def test_outcomes_per_method_and_refusals(table: Table) -> None:
    recs = pd.concat([_four_seeds("a"), _four_seeds("b").query("seed == 0")])
    got = optimum_outcomes(recs, table).set_index("method")
    assert got.loc["a", "seeds"] == 4
    assert (got.loc["b", "seeds"], got.loc["b", "found_rate"]) == (1, 1.0)
    with pytest.raises(ValueError, match="regret"):
        optimum_outcomes(recs.drop(columns=["regret"]), table)
    with pytest.raises(ValueError, match="stopped"):
        optimum_outcomes(recs.drop(columns=["stopped"]), table)


def test_settings_paired_by_seed(table: Table) -> None:
    nan = float("nan")
    none = pd.concat(
        [
            _outcome_records([2, 0], [False, False], [0.5, 0.0], 0),
            _outcome_records([1, 0], [False, False], [0.005, 0.0], 1),
            _outcome_records([2, 1], [False, False], [0.5, 0.005], 2),
        ]
    )
    stop = pd.concat(
        [
            # the optimum stopped: lost, regret 0.5 instead of 0
            _outcome_records([2, 0], [False, True], [0.5, 0.5], 0),
            # the optimum stopped: lost, regret 0.005 instead of 0
            _outcome_records([1, 0], [False, True], [0.005, 0.005], 1),
            # cheaper stops let it reach the optimum: gained, 0 instead of 0.005
            _outcome_records([2, 1, 0], [True, False, False], [nan, 0.005, 0.0], 2),
        ]
    )
    got = paired_outcomes({"none": none, "posterior": stop}, table).iloc[0]
    assert (got["method"], got["setting"], got["reference"]) == (
        "m",
        "posterior",
        "none",
    )
    assert got["pairs"] == 3
    # differences +0.5, +0.005, -0.005: median +0.005
    assert got["regret_difference"] == pytest.approx(0.005)
    assert got["difference_low"] <= got["regret_difference"] <= got["difference_high"]
    assert (got["better"], got["tied"], got["worse"]) == (1, 0, 2)
    assert 0.0 < got["p_value"] <= 1.0
    assert (got["lost"], got["gained"]) == (2, 1)
    # exact McNemar: 2 of 3 discordant seeds, two-sided binomial p = 1
    assert got["mcnemar_p"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="reference setting"):
        paired_outcomes({"posterior": stop}, table)


def test_all_discordant_seeds_one_way_give_a_small_mcnemar_p(table: Table) -> None:
    none = pd.concat(
        [_outcome_records([0], [False], [0.0], s) for s in range(6)], ignore_index=True
    )
    stop = pd.concat(
        [_outcome_records([0], [True], [float("nan")], s) for s in range(6)],
        ignore_index=True,
    )
    got = paired_outcomes({"none": none, "posterior": stop}, table).iloc[0]
    assert (got["lost"], got["gained"], got["worse"]) == (6, 0, 6)
    # two-sided: 2 x 0.5 ** 6
    assert got["mcnemar_p"] == pytest.approx(2 * 0.5**6)
    # every stopped run ended with no feasible result: regret 0.5 each
    assert got["regret_difference"] == pytest.approx(0.5)
