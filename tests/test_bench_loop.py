"""What the runs on one table share (bolt_pco64.bench.loop.TableParts)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.bench import BenchConfig, loop
from bolt_pco64.bench.loop import table_parts
from bolt_pco64.bench.run import run_one
from bolt_pco64.tables.table import Table, load_table
from tests._synth import make_table

TIMING = ["fit_seconds", "acq_seconds"]


class _Counting:
    """Wraps a class and counts its instances."""

    def __init__(self, cls: type) -> None:
        self.cls, self.built = cls, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.built += 1
        return self.cls(*args, **kwargs)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, _Counting]:
    """The time models and partial runs the loop builds, counted."""
    out = {
        name: _Counting(getattr(loop, name)) for name in ("TimeModel", "PartialRuns")
    }
    for name, wrapper in out.items():
        monkeypatch.setattr(loop, name, wrapper)
    return out


def test_a_run_without_early_stop_builds_no_partial_runs(
    counted: dict[str, _Counting],
) -> None:
    table = load_table(make_table())
    for seed in (0, 1):
        assert run_one("random", seed, table, BenchConfig(budget=8, n_init=4)).ok
    assert counted["PartialRuns"].built == 0
    assert counted["TimeModel"].built == 1


def test_runs_on_one_table_build_its_parts_once(
    counted: dict[str, _Counting],
) -> None:
    table = load_table(make_table())
    config = BenchConfig(budget=8, n_init=4, early_stop="percentile")
    for seed in (0, 1, 2):
        assert run_one("random", seed, table, config).ok
    assert counted["PartialRuns"].built == 1
    assert counted["TimeModel"].built == 1
    # Another table object (even of the same content) has its own parts.
    assert run_one("random", 0, load_table(make_table()), config).ok
    assert counted["PartialRuns"].built == 2


def test_parts_go_with_their_table() -> None:
    table = load_table(make_table())
    parts = weakref.ref(table_parts(table))
    assert table_parts(table) is parts()
    kept = weakref.ref(table)
    del table
    gc.collect()
    assert kept() is None  # the parts do not keep the table alive
    assert parts() is None


def _three_steps() -> pd.DataFrame:
    """A table whose runs record three steps: a check (after step 1 or 2)
    sees too few timed steps for an estimate, so no policy stops a run."""
    frame = make_table()
    steps = {True: "[5.0, 1.0, 1.0]", False: "[]"}
    frame["all_time_steps"] = frame["ran_successfully"].map(steps)
    return frame


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["posterior", "percentile"])
def test_a_policy_that_stops_nothing_gives_the_records_of_none(policy: str) -> None:
    table: Table = load_table(_three_steps())
    assert np.isnan(table_parts(table).partial.every_step.throughput[:, :3]).all()
    for method in ("random", "qlognei"):
        runs = {
            stop: run_one(
                method, 0, table, BenchConfig(budget=10, n_init=4, early_stop=stop)
            )
            for stop in ("none", policy)
        }
        assert all(r.ok for r in runs.values())
        pd.testing.assert_frame_equal(
            runs["none"].records.drop(columns=TIMING),
            runs[policy].records.drop(columns=TIMING),
        )
