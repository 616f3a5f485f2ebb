"""The fit of the stand-in's constants to measured rows (benchmarks/_constants_fit.py).

Tiny slices only: the fit on the traces' 643 rows is benchmarks/standin_fit.py.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.instances import get_instance
from bolt_pco64.tables.simulate.grid import candidate_configurations
from bolt_pco64.tables.simulate.memory import peak_spread, rank_stage, stage_arrays
from bolt_pco64.tables.simulate.spec import Config
from bolt_pco64.tables.simulate.variants import READINGS, Variant
from tests._scripts import load_script

INST = get_instance("pco64")
fit = load_script("_constants_fit")


def _rows(configs: list[Config]) -> pd.DataFrame:
    cells = [c.raw_cells() for c in configs]
    return pd.DataFrame(cells)


def _slice(n: int, seed: int) -> list[Config]:
    grid = candidate_configurations(INST)
    rng = np.random.default_rng(seed)
    return [grid[i] for i in rng.choice(len(grid), size=n, replace=False)]


def _peaks(configs: list[Config], variant: Variant, overhead: float) -> np.ndarray:
    """Reported peaks along the generator's own path (stage_arrays, spread)."""
    out = []
    for c in configs:
        st, dy = stage_arrays(INST, variant.assumptions, variant.constants, c)
        s = 1.0 + peak_spread(c, variant.constants)
        stages = rank_stage(c)
        out.append(
            max((st[j] + dy[j] + overhead) * s[stages == j].max() for j in range(c.pp))
        )
    return np.array(out)


def test_memory_fit_recovers_known_constants() -> None:
    reading = fit.TRACE_READINGS["pco64"]
    truth = replace(
        reading,
        constants=replace(
            reading.constants,
            working_set_layers=0.5,
            logits_bytes=2.0,
            overlap_comm_factor=3.0,
            allgather_bucket_elements=2e8,
            retained_logits_bytes=1.0,
        ),
    )
    configs = _slice(60, 1)
    peak = _peaks(configs, truth, overhead=3.0)
    basis = fit.memory_basis(INST, reading, configs)
    ran = np.ones(len(configs), dtype=bool)
    k, overhead, cap = fit.fit_memory(basis, peak, ran, reading.constants)
    # The fitted model reproduces the peaks it was fitted to ...
    pred = fit.predict_peak(basis, fit.theta_of(k), overhead)
    np.testing.assert_allclose(pred, peak, rtol=3e-3)
    # ... and every run that reported a peak fits under the capacity.
    assert cap >= peak.max()
    assert overhead == pytest.approx(3.0, abs=0.2)


def test_memory_fit_moves_capacity_between_the_classes() -> None:
    reading = fit.TRACE_READINGS["pco64"]
    configs = _slice(80, 2)
    peak = _peaks(configs, reading, overhead=2.0)
    cut = float(np.median(peak))
    ran = peak <= cut
    basis = fit.memory_basis(INST, reading, configs)
    k, overhead, cap = fit.fit_memory(
        basis, np.where(ran, peak, np.inf), ran, reading.constants
    )
    pred = fit.predict_peak(basis, fit.theta_of(k), overhead)
    assert ((pred <= cap) == ran).mean() >= 0.95


def test_steptime_fit_reproduces_throughputs() -> None:
    v = READINGS["pco64"]["mbs1"]
    configs = _slice(15, 3)
    true_k = replace(v.constants, rho_tp=0.6, gemm_half_dim=150.0)
    measured = fit.model_throughput(INST, v.assumptions, true_k, configs, 0.5)
    a, k, eff = fit.fit_steptime(
        INST, v.assumptions, v.constants, configs, measured, 0.6
    )
    got = fit.model_throughput(INST, a, k, configs, eff)
    np.testing.assert_allclose(got, measured, rtol=0.03)
    before = fit.model_throughput(INST, v.assumptions, v.constants, configs, 0.6)
    assert (
        np.abs(np.log(got / measured)).mean() < np.abs(np.log(before / measured)).mean()
    )


def test_fit_variant_needs_a_run_and_predict_keeps_rows() -> None:
    configs = _slice(6, 4)
    rows = _rows(configs)
    rows["ran_successfully"] = False
    rows["peak_mem"] = np.inf
    rows["throughput_mean"] = np.nan
    with pytest.raises(ValueError, match="some ran"):
        fit.fit_variant(INST, fit.TRACE_READINGS["pco64"], rows)
    fitted = fit.FittedConstants(fit.TRACE_READINGS["pco64"], 2.0, 80.0, 0.5)
    out = fit.predict(INST, fitted, rows)
    assert list(out.index) == list(rows.index)
    assert set(out.columns) == {"ran_successfully", "peak_mem", "throughput_mean"}
    assert (
        out["throughput_mean"].isna().to_numpy().tolist()
        == (~out["ran_successfully"]).tolist()
    )
