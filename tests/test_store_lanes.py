"""The result store records how each run was made (in lanes or alone) and
refuses a resume that would mix the two for a method that batches."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bolt_pco64 import PCO64
from bolt_pco64.bench import BenchConfig
from bolt_pco64.bench.methods.registry import get_method
from bolt_pco64.bench.run import run_one
from bolt_pco64.bench.store import LaneSettingError, ResultStore, made_by
from tests import _fixtures

problem = _fixtures.problem

CONFIG = BenchConfig(budget=5, n_init=5)


def _store(
    out: Path, problem: PCO64, lane_width: int | None, methods: list[str]
) -> ResultStore:
    return ResultStore(
        out, CONFIG, problem.table, methods, [0], {}, lane_width=lane_width
    )


def _fill(out: Path, problem: PCO64, lane_width: int | None) -> None:
    """A folder holding a run of random and one of qlognei (the initial
    design alone, so no model is fitted: the store reads only the files)."""
    store = _store(out, problem, lane_width, ["random", "qlognei"])
    store.create()
    plain = run_one("random", 0, problem.table, CONFIG)
    store.persist(plain)
    records = plain.records.assign(method="qlognei")
    store.persist(dataclasses.replace(plain, method="qlognei", records=records))


def test_only_a_method_that_batches_is_made_in_lanes() -> None:
    assert made_by(get_method("qlognei"), 32) == "lanes"
    assert made_by(get_method("qlognei"), 1) == "lanes"
    assert made_by(get_method("qlognei"), None) == "alone"
    assert made_by(get_method("random"), 32) == "alone"  # nothing to batch
    assert made_by(get_method("tobit_ei"), 32) == "alone"  # variational model


def test_each_run_file_and_meta_record_the_lane_setting(
    tmp_path: Path, problem: PCO64
) -> None:
    _fill(tmp_path, problem, 32)
    files = tmp_path / "runs"
    q = pq.read_schema(files / "qlognei__seed0.parquet").metadata
    r = pq.read_schema(files / "random__seed0.parquet").metadata
    assert (q[b"made_by"], q[b"lane_width"]) == (b"lanes", b"32")
    assert (r[b"made_by"], r[b"lane_width"]) == (b"alone", b"32")
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["lanes"] == {
        "lane_width": 32,
        "made_by": {"random": "alone", "qlognei": "lanes"},
    }


def test_a_resume_that_would_mix_lanes_and_single_runs_is_refused(
    tmp_path: Path, problem: PCO64
) -> None:
    lanes, alone = tmp_path / "lanes", tmp_path / "alone"
    _fill(lanes, problem, 32)
    _fill(alone, problem, None)
    with pytest.raises(LaneSettingError) as got:
        _store(lanes, problem, None, ["qlognei"])
    err = got.value
    assert (err.method, err.stored, err.requested) == ("qlognei", 32, None)
    assert "lane_width=32" in str(err)
    assert "lane_width=None" in str(err)
    cli = err.message(cli=True)
    assert "--lane-width none" in cli
    assert "Pass --lane-width 32" in cli
    assert "another --out" in cli
    with pytest.raises(LaneSettingError, match="Pass lane_width=None"):
        _store(alone, problem, 8, ["random", "qlognei"])


def test_a_method_not_asked_for_keeps_its_runs_and_how_they_were_made(
    tmp_path: Path, problem: PCO64
) -> None:
    _fill(tmp_path, problem, None)
    # Only random runs now (alone in a lane too): qlognei's single runs are
    # reported as they are, and nothing of qlognei is run in lanes.
    store = _store(tmp_path, problem, 8, ["random"])
    assert store.report_methods == ["random", "qlognei"]
    store.write_meta("complete")
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["lanes"] == {
        "lane_width": 8,
        "made_by": {"random": "alone", "qlognei": "alone"},
    }
    with pytest.raises(LaneSettingError):
        _store(tmp_path, problem, 8, ["qlognei"])


def test_provably_identical_settings_resume(tmp_path: Path, problem: PCO64) -> None:
    _fill(tmp_path, problem, 32)
    # Any lane width >= 1: a seed's records do not depend on its lane-mates.
    for width in (1, 5, 64):
        store = _store(tmp_path, problem, width, ["random", "qlognei"])
        assert store.todo() == []
    # A folder of random alone: random runs alone in lanes too.
    only_random = tmp_path / "random"
    store = _store(only_random, problem, None, ["random"])
    store.create()
    store.persist(run_one("random", 0, problem.table, CONFIG))
    assert _store(only_random, problem, 32, ["random"]).todo() == []


def _strip_lane_record(out: Path) -> None:
    """Make the folder's run files as the store wrote them before it
    recorded the lane setting."""
    for path in (out / "runs").glob("*.parquet"):
        table = pq.read_table(path)
        meta = {
            k: v
            for k, v in (table.schema.metadata or {}).items()
            if k not in (b"made_by", b"lane_width")
        }
        pq.write_table(table.replace_schema_metadata(meta), path)


def test_runs_stored_without_a_lane_record_read_meta_json_s_arguments(
    tmp_path: Path, problem: PCO64
) -> None:
    _fill(tmp_path, problem, None)
    _strip_lane_record(tmp_path)
    meta_path = tmp_path / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["lanes"]
    meta_path.write_text(json.dumps(meta))
    # No lane_width argument: the runs were made one at a time.
    assert _store(tmp_path, problem, None, ["qlognei"]).todo() == []
    with pytest.raises(LaneSettingError):
        _store(tmp_path, problem, 32, ["qlognei"])
    # The command line's lane_width argument says they were made in lanes.
    meta["arguments"] = {"lane_width": 8}
    meta_path.write_text(json.dumps(meta))
    assert _store(tmp_path, problem, 32, ["qlognei"]).todo() == []
    with pytest.raises(LaneSettingError):
        _store(tmp_path, problem, None, ["qlognei"])
