"""Early-termination metrics (bolt_pco64.bench.earlymetrics) on tiny hand-made records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.bench.earlymetrics import early_stop_summary, paired_ert
from bolt_pco64.costs import TimeModel
from bolt_pco64.table import Table, load_table
from tests._tables import frame_from

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
