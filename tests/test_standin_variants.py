"""Stand-in variants (issue 23): each meets the card, is labelled and reachable."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.instances import get_instance
from bolt_pco64.tables.simulate import Config
from bolt_pco64.tables.simulate.spec import Microbatching
from bolt_pco64.tables.simulate.variants import VARIANTS
from bolt_pco64.tables.standins import (
    STANDIN_VARIANTS,
    check_variant,
    content_fingerprint,
    standin_filename,
    standin_registry,
)
from bolt_pco64.tables.table import SimulatedTableWarning, Table, load_table
from tests._tables import parquet_schema

DATA = Path(__file__).resolve().parent.parent / "data"
#: Published figures (the card; bolt-bench 0.2.0), written out rather than read
#: back: rows, feasible, best value, best peak, largest feasible peak.
PUBLISHED = {
    "pco64": (780, 560, 0.270684453437186, 74.2, 79.3),
    "pco32": (379, 339, 0.469575911560675, None, None),
    "pco16": (919, 632, 0.1489374720046964, None, None),
}
SHIPPED = [(i, v) for i in sorted(STANDIN_VARIANTS) for v in STANDIN_VARIANTS[i]]


def _load(instance: str, variant: str) -> Table:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        return load_table(f"standin:{variant}", instance=instance)


def test_every_instance_ships_several_named_variants() -> None:
    assert len(STANDIN_VARIANTS["pco64"]) >= 3
    for instance, names in STANDIN_VARIANTS.items():
        assert list(VARIANTS[instance]) == list(names), instance
        assert len(set(names)) == len(names)
        inst = get_instance(instance)
        # The default keeps the instance's plain file name; the others their own.
        assert standin_filename(inst) == f"{instance}_simulated.parquet"
        assert check_variant(inst) == names[0]
        files = {standin_filename(inst, v) for v in names}
        assert len(files) == len(names)


@pytest.mark.parametrize(("instance", "variant"), SHIPPED)
def test_variant_meets_the_published_figures(instance: str, variant: str) -> None:
    inst = get_instance(instance)
    rows, feasible, best_value, best_peak, max_peak = PUBLISHED[instance]
    table = _load(instance, variant)
    assert table.source.path.name == standin_filename(inst, variant)
    assert table.is_simulated
    assert (len(table), table.n_feasible) == (rows, feasible)
    best = table.best_row
    assert tuple(int(v) for v in table.X[best]) == inst.published.best_config
    value = float(table.frame["throughput_mean"].iloc[best])
    assert math.isclose(value, best_value, rel_tol=1e-12)
    # Strictly the best row.
    ok = table.frame["ran_successfully"].to_numpy()
    tm = table.frame["throughput_mean"].to_numpy()
    assert int((tm[ok] == tm[ok].max()).sum()) == 1
    peaks = table.frame["peak_mem"].to_numpy()
    if best_peak is not None:
        assert round(float(peaks[best]), 1) == best_peak
        assert round(float(peaks[ok].max()), 1) == max_peak
    assert (peaks[ok] < inst.gpu_memory_gb).all()
    meta = table.metadata
    assert meta["source"] == "simulated"
    assert meta["variant"] == variant
    assert meta["instance"] == instance
    assert float(meta["calibration.overhead_gb"]) >= 0.0
    entry = standin_registry()[content_fingerprint(table)]
    assert (entry["instance"], entry["variant"]) == (instance, variant)
    assert entry["generator_version"] == meta["generator_version"]


def _feasible_share(instance: str, variant: str, pipelined: bool) -> float:
    frame = _load(instance, variant).frame
    rows = frame[(frame["log2_pp_size"] > 0) == pipelined]
    return float(rows["ran_successfully"].mean())


def test_pco64_variants_put_the_boundary_in_different_places() -> None:
    default, perrank, zero1 = STANDIN_VARIANTS["pco64"]
    tables = {v: _load("pco64", v) for v in (default, perrank, zero1)}
    feasible = {v: t.feasible.numpy() for v, t in tables.items()}
    assert not np.array_equal(feasible[default], feasible[perrank])
    assert not np.array_equal(feasible[default], feasible[zero1])
    assert not np.array_equal(feasible[perrank], feasible[zero1])
    # Per-rank batches: almost every pp = 1 configuration runs out of memory,
    # most pipelined ones fit; the default reading fits about half at pp = 1.
    assert _feasible_share("pco64", perrank, pipelined=False) < 0.25
    assert _feasible_share("pco64", perrank, pipelined=True) > 0.8
    assert _feasible_share("pco64", default, pipelined=False) > 0.4
    # A sharded ZeRO-0 lets ZeRO-0 run without a pipeline; the default never does.
    for variant, runs in ((default, False), (zero1, True)):
        frame = tables[variant].frame
        z0 = frame[(frame["log2_pp_size"] == 0) & (frame["zero_stage"] == 0)]
        assert bool(z0["ran_successfully"].any()) is runs, variant


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="Expected a stand-in variant of"):
        _load("pco64", "nope")
    with pytest.raises(ValueError, match="Expected a stand-in variant of"):
        check_variant(get_instance("pco16"), "mbs1")


def test_cli_generate_refuses_an_unknown_variant(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bolt_pco64.cli import main

    out = tmp_path / "x.parquet"
    result = CliRunner().invoke(
        main, ["generate", "--variant", "nope", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "--variant" in result.output
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("instance", "variant"),
    [(i, v) for i, v in SHIPPED if v != STANDIN_VARIANTS[i][0]],
)
def test_cli_generate_reproduces_each_variant(
    instance: str, variant: str, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from bolt_pco64.cli import main

    shipped = DATA / standin_filename(get_instance(instance), variant)
    out = tmp_path / "x.parquet"
    result = CliRunner().invoke(
        main,
        ["generate", "--problem", instance, "--variant", variant, "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(shipped))
    assert parquet_schema(out) == parquet_schema(shipped)


def test_microbatching_rules() -> None:
    cfg = Config(dp=8, tp=4, pp=2, cp=1, sp=1, bucket_mb=64, zero_stage=0, chunks=1)
    # 64 sequences per rank.
    assert Microbatching("size", 1).split(64, cfg) == (64, 1)
    assert Microbatching("size", 4).split(64, cfg) == (16, 4)
    assert Microbatching("count", 2).split(64, cfg) == (2, 32)
    assert Microbatching("per_stage", 4).split(64, cfg) == (8, 8)
    # A count is capped at one sequence per micro-batch.
    assert Microbatching("count", 128).split(64, cfg) == (64, 1)
    accum = Config(16, 1, 1, 1, 1, 64, 0, 1, grad_accum_steps=4)
    assert Microbatching("accumulation").split(32, accum) == (4, 8)
