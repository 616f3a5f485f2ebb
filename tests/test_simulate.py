"""The simulated pco64 stand-in (docs/architecture.md §3): grid, figures, regeneration."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from bolt_pco64.instances import PCO64_INSTANCE, get_instance
from bolt_pco64.tables import simulate
from bolt_pco64.tables.simulate.memory import stage_memory
from bolt_pco64.tables.simulate.spec import ModelConstants, assumptions_for
from bolt_pco64.tables.table import (
    LIST_COLUMNS,
    SimulatedTableWarning,
    load_table,
    parse_float_list,
)
from tests._tables import parquet_schema

COLUMNS = PCO64_INSTANCE.columns
INPUT_COLUMNS = PCO64_INSTANCE.input_columns

SHIPPED = Path(__file__).resolve().parent.parent / "data" / "pco64_simulated.parquet"
#: The card's bounds of the raw cells (zero_stage raw 0/2/3).
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
NOISE_COLUMNS = ["throughput_mean", "throughput_std", "overall_time", "all_time_steps"]
PCO64 = get_instance("pco64")


@pytest.fixture(scope="module")
def shipped() -> pd.DataFrame:
    return pd.read_parquet(SHIPPED)


@pytest.fixture(scope="module")
def other_seed() -> pd.DataFrame:
    return simulate.make_simulated_table(seed=1)


def _four_rule_grid() -> list[tuple[int, ...]]:
    """The card's grid recounted from the four rules (raw cells, sorted)."""
    rows = []
    for dp, tp, pp, cp, sp, bucket, zero, chunks in itertools.product(
        range(1, 7), range(3), range(5), range(3), range(3), range(6, 10),
        (0, 2, 3), range(3),
    ):  # fmt: skip
        if dp + tp + pp + cp != 6 or sp > tp:
            continue
        if chunks > 0 and pp == 0:
            continue
        if zero in (2, 3) and pp > 0:
            continue
        rows.append((dp, tp, pp, cp, sp, bucket, zero, chunks))
    return sorted(rows)


def test_rows_are_the_four_rule_grid(shipped: pd.DataFrame) -> None:
    grid = _four_rule_grid()
    assert len(grid) == 780
    got = [tuple(int(v) for v in row) for row in shipped[list(INPUT_COLUMNS)].values]
    assert got == grid, "Expected the shipped rows to be the grid in canonical order"
    generated = [c.encoded(PCO64) for c in simulate.candidate_configurations(PCO64)]
    encoded = [(*r[:6], (0, 2, 3).index(r[6]), r[7]) for r in grid]
    assert generated == encoded


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
    for c, (lo, hi) in BOUNDS.items():
        got = (int(shipped[c].min()), int(shipped[c].max()))
        assert got == (lo, hi), f"Expected {c} bounds {(lo, hi)}, got {got}"


def test_card_figures(shipped: pd.DataFrame) -> None:
    ok = shipped[shipped["ran_successfully"]]
    assert len(ok) == 560, f"Expected 560 feasible rows, got {len(ok)}"
    best = ok.loc[ok["throughput_mean"].idxmax()]
    got = {c: int(best[c]) for c in INPUT_COLUMNS}
    assert got == CARD_BEST, f"Expected the card's best {CARD_BEST}, got {got}"
    assert f"{best['throughput_mean']:.5f}" == "0.27068"
    assert math.isclose(best["throughput_mean"], 0.270684453437186, rel_tol=1e-12)
    assert round(float(best["peak_mem"]), 1) == 74.2
    assert round(float(ok["peak_mem"].max()), 1) == 79.3
    assert (ok["peak_mem_normalised"] < 0).all()
    np.testing.assert_allclose(ok["peak_mem_normalised"], ok["peak_mem"] / 96 - 1)
    # No memory threshold separates the classes: the constraint is the margin.
    oom_cfgs = [
        simulate.Config(*(2 ** int(r[i]) for i in range(6)), int(r[6]), 2 ** int(r[7]))
        for r in shipped.loc[~shipped["ran_successfully"], list(INPUT_COLUMNS)].values
    ]
    model = simulate.build_model(PCO64, 0)
    peaks = {c: p.max() for c, p in zip(model.configs, model.peaks, strict=True)}
    assert min(peaks[c] for c in oom_cfgs) < ok["peak_mem"].max()


def test_oom_rows(shipped: pd.DataFrame) -> None:
    oom = shipped[~shipped["ran_successfully"]]
    assert len(oom) == 220
    for c in ("throughput_mean", "throughput_std", "overall_time"):
        assert oom[c].isna().all(), f"Expected NaN {c} on OOM rows"
    assert np.isposinf(oom["peak_mem"]).all()
    assert (oom["peak_mem_normalised"] == 1.0).all()
    for c in LIST_COLUMNS:
        assert (oom[c] == "[]").all()


def _runner_estimate(steps: np.ndarray, work: float) -> tuple[float, float]:
    """The runner's estimators written out for one run (oppa's robust_stats).

    The first recorded step is a warm-up; of the others, those within 2 IQR
    of the median are kept; the rate is ``work`` over their mean and its
    standard error ``work * std / sqrt(n) / mean**2``.
    """
    timed = steps[1:]
    med = np.median(timed)
    iqr = np.quantile(timed, 0.75) - np.quantile(timed, 0.25)
    kept = timed[np.abs(timed - med) < 2 * iqr]
    m = kept.mean()
    return work / m, work * kept.std() / math.sqrt(len(kept)) / m**2


def test_lists_consistent_with_summaries(shipped: pd.DataFrame) -> None:
    ok = shipped[shipped["ran_successfully"]]
    per_sample = 512 / 64
    lengths = set()
    for _, row in ok.iterrows():
        steps = np.array(parse_float_list(row["all_time_steps"]))
        lengths.add(len(steps))
        # As the runner records them: a slower warm-up step first.
        assert steps[0] > np.median(steps[1:])
        rate, stderr = _runner_estimate(steps, per_sample)
        assert math.isclose(rate, row["throughput_mean"], rel_tol=1e-6)
        assert math.isclose(stderr, row["throughput_std"], rel_tol=1e-3)
        # overall_time: the training loop only (steps and the runner's
        # bookkeeping between them), no start-up.
        assert steps.sum() < row["overall_time"] < 1.05 * steps.sum()
        gpus = np.array(parse_float_list(row["peak_mem_per_gpu"]))
        assert len(gpus) == 64
        assert gpus.max() == row["peak_mem"]
    assert len(lengths) == 1
    assert lengths.pop() > 10
    # throughput_std is a standard error: well under a percent of the mean.
    se = ok["throughput_std"] / ok["throughput_mean"]
    assert 1e-4 < se.median() < 0.01
    # Per-GPU peaks vary by pipeline stage: the first stage holds the most.
    piped = ok[ok["log2_pp_size"] >= 2].iloc[0]
    gpus = np.array(parse_float_list(piped["peak_mem_per_gpu"]))
    stage = 64 // 2 ** int(piped["log2_pp_size"])
    assert gpus[:stage].min() > gpus[-stage:].max()


def test_metadata_and_load_table() -> None:
    meta = pq.read_schema(SHIPPED).metadata
    assert meta[b"source"] == b"simulated"
    assert meta[b"generator_version"] == simulate.GENERATOR_VERSION.encode()
    assert simulate.GENERATOR_VERSION.startswith("3.")
    assert meta[b"instance"] == b"pco64"
    assert meta[b"variant"] == b"mbs1"
    assert meta[b"seed"] == b"0"
    assert meta[b"published_best_is_top"] == b"true"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        table = load_table(SHIPPED)
    assert table.is_simulated
    assert (len(table), table.n_feasible) == (780, 560)


def test_regeneration_is_exact(shipped: pd.DataFrame, tmp_path: Path) -> None:
    out = simulate.write_simulated_table(tmp_path / "again.parquet", seed=0)
    pd.testing.assert_frame_equal(pd.read_parquet(out), shipped)
    assert parquet_schema(out) == parquet_schema(SHIPPED)


@pytest.mark.slow
def test_cli_generate_reproduces_the_shipped_file(
    tmp_path: Path, shipped: pd.DataFrame
) -> None:
    from click.testing import CliRunner

    from bolt_pco64.cli import main

    out = tmp_path / "standin.parquet"
    result = CliRunner().invoke(main, ["generate", "--out", str(out)])
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_parquet(out), shipped)
    assert parquet_schema(out) == parquet_schema(SHIPPED)


@pytest.mark.slow
def test_other_seed_changes_only_the_measurements(
    shipped: pd.DataFrame, other_seed: pd.DataFrame
) -> None:
    same = [c for c in COLUMNS if c not in NOISE_COLUMNS]
    pd.testing.assert_frame_equal(shipped[same], other_seed[same])
    ok = shipped["ran_successfully"].to_numpy()
    for c in NOISE_COLUMNS[1:]:
        changed = shipped.loc[ok, c].to_numpy() != other_seed.loc[ok, c].to_numpy()
        assert changed.all(), f"Expected every feasible {c} to change with the seed"
    # The mean is measured too; the card's configuration keeps its published value.
    changed = (
        shipped.loc[ok, "throughput_mean"] != other_seed.loc[ok, "throughput_mean"]
    )
    assert changed.mean() > 0.99
    row = (shipped[list(INPUT_COLUMNS)] == pd.Series(CARD_BEST)).all(axis=1)
    assert math.isclose(
        float(other_seed.loc[row, "throughput_mean"].iloc[0]), 0.270684453437186
    )


def test_zero_sharding_spans_dp_times_cp() -> None:
    a, k = assumptions_for(PCO64), ModelConstants()

    def static(cfg: simulate.Config) -> float:
        return stage_memory(PCO64, a, k, cfg, 0).static

    z2 = simulate.Config(16, 4, 1, 1, 4, 64, 2, 1)
    z2_cp = simulate.Config(4, 4, 1, 4, 4, 64, 2, 1)  # same dp * cp = 16
    z2_half = simulate.Config(8, 4, 1, 2, 4, 64, 2, 1)
    assert static(z2) == static(z2_cp) == static(z2_half)
    # ZeRO-2 shards gradients and optimizer state, ZeRO-3 the weights as well.
    z0 = simulate.Config(16, 4, 1, 1, 4, 64, 0, 1)
    z3 = simulate.Config(16, 4, 1, 1, 4, 64, 3, 1)
    assert static(z3) < static(z2) < static(z0)
    params = static(z3)  # ZeRO-3 holds 16 / N bytes per parameter, N = 16
    assert math.isclose(static(z2), params * (2 + 14 / 16), rel_tol=1e-12)
    assert math.isclose(static(z0), 16 * params, rel_tol=1e-12)


def test_time_terms_behave() -> None:
    a, k = assumptions_for(PCO64), ModelConstants()

    def step(cfg: simulate.Config) -> simulate.StepBreakdown:
        return simulate.step_breakdown(PCO64, a, k, cfg, 0.5)

    best = simulate.Config(16, 4, 1, 1, 4, 64, 2, 1)
    z3 = simulate.Config(16, 4, 1, 1, 4, 64, 3, 1)
    assert step(z3).dp_comm_s > step(best).dp_comm_s
    assert step(best).bubble_s == 0 == step(best).pp_p2p_s
    # Interleaving shrinks the bubble and pays more point-to-point traffic.
    p1 = simulate.Config(2, 4, 8, 1, 4, 64, 0, 1)
    p4 = simulate.Config(2, 4, 8, 1, 4, 64, 0, 4)
    assert 0 < step(p4).bubble_s < step(p1).bubble_s
    assert step(p4).pp_p2p_s == pytest.approx(4 * step(p1).pp_p2p_s)
    # Full recomputation runs the forward again.
    sel = simulate.step_breakdown(
        PCO64,
        simulate.Assumptions(**{**a.__dict__, "recompute": "selective"}),
        k,
        best,
        0.5,
    )
    assert step(best).compute_s > sel.compute_s


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="Expected an integer seed"):
        simulate.make_simulated_table(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Expected a non-negative seed"):
        simulate.make_simulated_table(seed=-1)
    with pytest.raises(ValueError, match="Expected an instance name"):
        simulate.make_simulated_table(instance="pco128")


def test_metadata_names_the_fitted_step_time_constants() -> None:
    """3.0: a pco64 file records the traces-fitted constants of its variant."""
    from bolt_pco64.tables.simulate.variants import READINGS, VARIANTS

    meta = pq.read_schema(SHIPPED).metadata
    v = VARIANTS["pco64"]["mbs1"]
    assert v != READINGS["pco64"]["mbs1"]
    hw = v.assumptions.hardware
    assert float(meta[b"assumptions.hardware.inter_bus_gbs"]) == hw.inter_bus_gbs
    assert float(meta[b"assumptions.hardware.intra_bus_gbs"]) == hw.intra_bus_gbs
    assert float(meta[b"constants.rho_tp"]) == v.constants.rho_tp
