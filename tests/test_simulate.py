"""The simulated stand-in table (design section 3): figures, regeneration, seeds."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from bolt_pco64 import simulate
from bolt_pco64.table import (
    COLUMNS,
    INPUT_COLUMNS,
    LIST_COLUMNS,
    STANDIN_FILENAME,
    SimulatedTableWarning,
    load_table,
    parse_float_list,
)

SHIPPED = Path(__file__).resolve().parent.parent / "data" / STANDIN_FILENAME
BOUNDS = {
    "log2_dp_size": (1, 6),
    "log2_tp_size": (0, 2),
    "log2_pp_size": (0, 4),
    "log2_cp_size": (0, 2),
    "log2_sp_size": (0, 2),
    "log2_dp_bucket_size_mb": (6, 9),
    "zero_stage": (0, 3),
    "log2_num_model_chunks": (0, 2),
}
CARD_BEST = {
    "log2_dp_size": 4,
    "log2_tp_size": 2,
    "log2_pp_size": 0,
    "log2_cp_size": 0,
    "log2_sp_size": 2,
    "log2_dp_bucket_size_mb": 6,
    "zero_stage": 2,
    "log2_num_model_chunks": 0,
}
NOISE_COLUMNS = ["throughput_std", "overall_time", "all_time_steps"]


@pytest.fixture(scope="module")
def shipped() -> pd.DataFrame:
    return pd.read_parquet(SHIPPED)


@pytest.fixture(scope="module")
def regenerated() -> pd.DataFrame:
    return simulate.make_simulated_table(seed=0)


@pytest.fixture(scope="module")
def other_seed() -> pd.DataFrame:
    return simulate.make_simulated_table(seed=1)


def test_columns_and_dtypes(shipped: pd.DataFrame) -> None:
    assert list(shipped.columns) == list(COLUMNS)
    for c in (*INPUT_COLUMNS, "log2_grad_accum_steps"):
        assert shipped[c].dtype == np.int64, (
            f"Expected int64 {c}, got {shipped[c].dtype}"
        )
    assert shipped["ran_successfully"].dtype == bool
    for c in ("throughput_mean", "throughput_std", "peak_mem_normalised"):
        assert shipped[c].dtype == np.float64
    for c in ("overall_time", "peak_mem"):
        assert shipped[c].dtype == np.float64
    assert (shipped["log2_grad_accum_steps"] == 0).all()


def test_rows_feasible_and_bounds(shipped: pd.DataFrame) -> None:
    assert len(shipped) == 780, f"Expected 780 rows, got {len(shipped)}"
    n_ok = int(shipped["ran_successfully"].sum())
    assert n_ok == 560, f"Expected 560 feasible rows, got {n_ok}"
    for c, (lo, hi) in BOUNDS.items():
        got = (int(shipped[c].min()), int(shipped[c].max()))
        assert got == (lo, hi), f"Expected {c} bounds {(lo, hi)}, got {got}"
    assert set(shipped["zero_stage"]) == {0, 2, 3}
    gpus = shipped[["log2_dp_size", "log2_tp_size", "log2_pp_size", "log2_cp_size"]]
    assert (gpus.sum(axis=1) == 6).all(), "Expected dp*tp*pp*cp = 64 on every row"
    assert not shipped[list(INPUT_COLUMNS)].duplicated().any()
    assert (shipped["log2_sp_size"] <= shipped["log2_tp_size"]).all()
    chunky = shipped["log2_num_model_chunks"] > 0
    assert (shipped.loc[chunky, "log2_pp_size"] > 0).all()


def test_best_and_peaks(shipped: pd.DataFrame) -> None:
    ok = shipped[shipped["ran_successfully"]]
    best = ok.loc[ok["throughput_mean"].idxmax()]
    got = {c: int(best[c]) for c in INPUT_COLUMNS}
    assert got == CARD_BEST, f"Expected the card's best {CARD_BEST}, got {got}"
    assert f"{best['throughput_mean']:.5f}" == "0.27068"
    assert round(float(best["peak_mem"]), 1) == 74.2
    assert round(float(ok["peak_mem"].max()), 1) == 79.3
    # No memory threshold separates the classes: the constraint is the margin.
    assert (ok["peak_mem_normalised"] < 0).all()
    np.testing.assert_allclose(ok["peak_mem_normalised"], ok["peak_mem"] / 96 - 1)


def test_oom_rows(shipped: pd.DataFrame) -> None:
    oom = shipped[~shipped["ran_successfully"]]
    assert len(oom) == 220
    for c in ("throughput_mean", "throughput_std", "overall_time"):
        assert oom[c].isna().all(), f"Expected NaN {c} on OOM rows"
    assert np.isposinf(oom["peak_mem"]).all()
    assert (oom["peak_mem_normalised"] == simulate.OOM_PAD).all()
    assert simulate.OOM_PAD > 0
    for c in LIST_COLUMNS:
        assert (oom[c] == "[]").all()


def test_lists_consistent_with_summaries(shipped: pd.DataFrame) -> None:
    ok = shipped[shipped["ran_successfully"]]
    per_sample = 512 / 64
    for _, row in ok.iterrows():
        steps = np.array(parse_float_list(row["all_time_steps"]))
        assert len(steps) == simulate.N_TIMED_STEPS
        rate = per_sample / steps
        assert math.isclose(rate.mean(), row["throughput_mean"], rel_tol=1e-5)
        assert math.isclose(rate.std(ddof=1), row["throughput_std"], rel_tol=1e-3)
        assert row["overall_time"] > steps.sum()
        gpus = np.array(parse_float_list(row["peak_mem_per_gpu"]))
        assert len(gpus) == 64
        assert gpus.max() == row["peak_mem"]
    # Per-GPU peaks vary by pipeline stage: the first stage holds the most.
    piped = ok[ok["log2_pp_size"] >= 2].iloc[0]
    gpus = np.array(parse_float_list(piped["peak_mem_per_gpu"]))
    stage = 64 // 2 ** int(piped["log2_pp_size"])
    assert gpus[:stage].min() > gpus[-stage:].max()


def test_metadata_and_load_table() -> None:
    meta = pq.read_schema(SHIPPED).metadata
    assert meta[b"source"] == b"simulated"
    assert meta[b"generator_version"].decode() == simulate.GENERATOR_VERSION
    assert meta[b"seed"] == b"0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        table = load_table(SHIPPED)
    assert table.is_simulated
    assert len(table) == 780
    assert table.n_feasible == 560
    assert f"{table.frame['throughput_mean'][table.best_row]:.5f}" == "0.27068"


def test_regeneration_is_exact(
    shipped: pd.DataFrame, regenerated: pd.DataFrame, tmp_path: Path
) -> None:
    pd.testing.assert_frame_equal(shipped, regenerated)
    out = simulate.write_simulated_table(tmp_path / "again.parquet", seed=0)
    pd.testing.assert_frame_equal(pd.read_parquet(out), shipped)
    assert pq.read_schema(out).metadata == pq.read_schema(SHIPPED).metadata


def test_other_seed_changes_only_the_noise(
    regenerated: pd.DataFrame, other_seed: pd.DataFrame
) -> None:
    same = [c for c in COLUMNS if c not in NOISE_COLUMNS]
    pd.testing.assert_frame_equal(regenerated[same], other_seed[same])
    ok = regenerated["ran_successfully"].to_numpy()
    for c in NOISE_COLUMNS:
        changed = regenerated.loc[ok, c].to_numpy() != other_seed.loc[ok, c].to_numpy()
        assert changed.all(), f"Expected every feasible {c} to change with the seed"


def test_model_terms_behave() -> None:
    cal = simulate.calibrate()
    best = simulate.CARD_BEST
    # ZeRO-3 trades memory for communication.
    z3 = simulate.Config(**{**best.__dict__, "zero_stage": 3})
    assert (
        simulate.reported_peaks(z3, cal).max()
        < simulate.reported_peaks(best, cal).max()
    )
    assert (
        simulate.step_breakdown(z3, cal.compute_efficiency).dp_comm_s
        > simulate.step_breakdown(best, cal.compute_efficiency).dp_comm_s
    )
    # The bubble only exists with pipeline parallelism, and chunks shrink it.
    assert simulate.step_breakdown(best, cal.compute_efficiency).bubble_s == 0
    p1 = simulate.Config(8, 4, 2, 1, 4, 64, 2, 1)
    p4 = simulate.Config(8, 4, 2, 1, 4, 64, 2, 4)
    b1 = simulate.step_breakdown(p1, cal.compute_efficiency).bubble_s
    b4 = simulate.step_breakdown(p4, cal.compute_efficiency).bubble_s
    assert 0 < b4 < b1
    # Hidden memory: some OOM run reported less than the largest feasible peak.
    configs = simulate.candidate_configurations()
    assert len(configs) == 780
    assert best in configs
    tops = np.array([simulate.reported_peaks(c, cal).max() for c in configs])
    foot = np.array(
        [
            (simulate.reported_peaks(c, cal) + simulate.hidden_memory(c, cal)).max()
            for c in configs
        ]
    )
    feasible = foot <= cal.usable_gb
    assert tops[~feasible].min() < tops[feasible].max()


def test_bad_seed() -> None:
    with pytest.raises(TypeError, match="Expected an integer seed"):
        simulate.make_simulated_table(seed=1.5)  # type: ignore[arg-type]


def test_cli_generate(tmp_path: Path, shipped: pd.DataFrame) -> None:
    from click.testing import CliRunner

    from bolt_pco64.cli import main

    out = tmp_path / "standin.parquet"
    result = CliRunner().invoke(main, ["generate", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out)
    pd.testing.assert_frame_equal(pd.read_parquet(out), shipped)
