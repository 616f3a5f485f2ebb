"""The trace reader: parsing, validation and the visited rows (bolt_pco64.tables.traces)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.instances import INSTANCES, PCO16_INSTANCE, PCO64_INSTANCE
from bolt_pco64.tables import locations
from bolt_pco64.tables.traces import OOM_SLACK, TraceError, read_trace, visited_rows

# Three pco64 configurations (encoded, X order) that keep every hard rule.
A = [4, 2, 0, 0, 2, 6, 1, 0]  # the card's best
B = [4, 0, 2, 0, 0, 9, 0, 1]
C = [5, 1, 0, 0, 1, 8, 0, 0]


def _trace(
    candidates: list[list[float]],
    seen_y: list[float],
    seen_c: list[float],
    best: list[tuple[list[float], float]],
    problem: str = "pco64",
) -> dict:
    return {
        "problem": problem,
        "acq_fn": "random",
        "noise_std": 0.001,
        "no_repeats": False,
        "optimal_value": 0.270684453437186,
        "num_trials": 1,
        "trials": [
            {
                "trial": 0,
                "seed": 0,
                "candidates": candidates,
                "seen_y": seen_y,
                "seen_c": seen_c,
                "best_obs_x_all": [b[0] for b in best],
                "best_obs_true_all": [b[1] for b in best],
                "best_obs_regret_all": [0.270684453437186 - b[1] for b in best],
                "simple_regret_all": [0.0 for _ in best],
            }
        ],
    }


def _write(path: Path, content: object) -> Path:
    path.write_text(json.dumps(content))
    return path


@pytest.fixture
def good(tmp_path: Path) -> dict:
    return _trace(
        [A, B, A, C],
        [0.2705, 0.2412, 0.2709, 0.1],
        [0.25, 0.5, 0.25, OOM_SLACK],
        [(A, 0.2706), (A, 0.2706)],
    )


def test_visited_rows_merges_observations(tmp_path: Path, good: dict) -> None:
    path = _write(tmp_path / "t.json", good)
    rows = visited_rows("pco64", [path])
    assert len(rows) == 3
    enc = rows[[f"x_{c}" for c in PCO64_INSTANCE.input_columns]].to_numpy()
    assert (np.lexsort(enc.T[::-1]) == np.arange(3)).all()  # canonical order
    by = {tuple(int(v) for v in r): i for i, r in enumerate(enc)}
    a, b, c = (rows.iloc[by[tuple(x)]] for x in (A, B, C))
    assert a["zero_stage"] == 2  # raw stage of ordinal 1
    assert a["k"] == 2
    assert a["throughput_observed"] == pytest.approx((0.2705 + 0.2709) / 2)
    assert a["throughput_observed_se"] == pytest.approx(0.001 / math.sqrt(2))
    assert a["throughput_exact"] == 0.2706
    assert a["throughput_mean"] == 0.2706
    assert a["throughput_se"] == 0.0
    assert a["source"] == "exact"
    assert a["peak_mem"] == pytest.approx(96 * 0.75)
    assert b["source"] == "observed"
    assert b["throughput_mean"] == 0.2412
    assert b["throughput_se"] == pytest.approx(0.001)
    # An OOM row: exact feasibility, no throughput (seen_y is not a measurement).
    assert not c["ran_successfully"]
    assert math.isinf(c["peak_mem"])
    assert c["k"] == 0
    assert math.isnan(c["throughput_mean"])
    assert c["source"] == "exact"


def test_pco16_uses_its_own_memory_and_knobs(tmp_path: Path) -> None:
    # pco16: dp tp pp sp bucket zero chunks grad_accum; 80 GB GPUs.
    x = [4, 0, 0, 0, 8, 1, 0, 2]
    path = _write(
        tmp_path / "t.json",
        _trace([x], [0.148], [0.5], [(x, 0.1489)], problem="pco16"),
    )
    rows = visited_rows(PCO16_INSTANCE, [path])
    assert rows.loc[0, "peak_mem"] == pytest.approx(40.0)
    assert rows.loc[0, "log2_grad_accum_steps"] == 2
    assert rows.loc[0, "log2_cp_size"] == 0  # context


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: [1, 2, 3], "expected a JSON object"),
        (lambda t: {k: v for k, v in t.items() if k != "trials"}, "missing field"),
        (lambda t: {**t, "problem": "pco32"}, "expected a pco64 trace"),
        (lambda t: {**t, "noise_std": "x"}, "noise_std"),
        (lambda t: {**t, "trials": []}, "at least one trial"),
    ],
)
def test_not_a_results_file(tmp_path: Path, good: dict, mutate, message) -> None:
    path = _write(tmp_path / "t.json", mutate(good))
    with pytest.raises(TraceError, match=message) as err:
        read_trace(path, "pco64")
    assert str(path) in str(err.value)


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b"PAR1\x00garbage")
    with pytest.raises(TraceError, match="not a results file"):
        read_trace(path)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ([4, 2, 0, 0, 2, 10, 1, 0], "off the grid"),  # bucket above bounds
        ([4, 2, 0, 0, 2, 6.5, 1, 0], "off the grid"),  # not an integer
        ([3, 2, 0, 0, 2, 6, 1, 0], "GPUs"),  # 8 * 4 = 32 GPUs
        ([4, 1, 0, 1, 2, 6, 1, 0], "sp <= tp"),
        ([4, 2, 0, 0, 2, 6, 0, 1], "model chunk"),
        ([3, 2, 1, 0, 2, 6, 1, 0], "ZeRO"),
        ([4, 2, 0, 0, 2, 6, 1], "expected shape"),
    ],
)
def test_off_grid_configuration(
    tmp_path: Path, good: dict, config: list, message: str
) -> None:
    good["trials"][0]["candidates"][1] = config
    path = _write(tmp_path / "t.json", good)
    with pytest.raises(TraceError, match=message) as err:
        read_trace(path)
    assert "candidates" in str(err.value)


@pytest.mark.parametrize("slack", [0.0, 1.5, -0.1])
def test_bad_slack(tmp_path: Path, good: dict, slack: float) -> None:
    good["trials"][0]["seen_c"][1] = slack
    with pytest.raises(TraceError, match=r"seen_c\[1\]"):
        read_trace(_write(tmp_path / "t.json", good))


def test_best_observation_must_have_run(tmp_path: Path, good: dict) -> None:
    good["trials"][0]["best_obs_x_all"][0] = C  # evaluated, but OOM
    with pytest.raises(TraceError, match="never ran"):
        read_trace(_write(tmp_path / "t.json", good))


def test_length_mismatch(tmp_path: Path, good: dict) -> None:
    good["trials"][0]["seen_y"].pop()
    with pytest.raises(TraceError, match="one length"):
        read_trace(_write(tmp_path / "t.json", good))


def test_disagreeing_slack_names_configuration_and_both_files(
    tmp_path: Path, good: dict
) -> None:
    first = _write(tmp_path / "first.json", good)
    good["trials"][0]["seen_c"][1] = 0.4  # B: 0.5 in the first file
    second = _write(tmp_path / "second.json", good)
    with pytest.raises(TraceError, match="memory slack") as err:
        visited_rows("pco64", [first, second])
    text = str(err.value)
    assert str(B) in text
    assert "first.json" in text
    assert "second.json" in text


def test_disagreement_within_one_file(tmp_path: Path, good: dict) -> None:
    good["trials"][0]["seen_c"][2] = 0.3  # A: 0.25 at evaluation 0
    with pytest.raises(TraceError, match=r"memory slack of configuration \[4, 2"):
        visited_rows("pco64", [_write(tmp_path / "t.json", good)])


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_trace(tmp_path / "nope.json")


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_shipped_traces(name: str) -> None:
    """The shipped files read, and their best is the published best."""
    inst = INSTANCES[name]
    rows = visited_rows(name)
    assert len(locations.trace_paths(name)) == len(inst.trace_files)
    assert rows["ran_successfully"].any()
    fit = rows["ran_successfully"].to_numpy()
    assert (rows.loc[fit, "peak_mem"] <= inst.gpu_memory_gb).all()
    assert (rows.loc[~fit, "throughput_mean"].isna()).all()
    assert rows["throughput_exact"].max() <= inst.published.best_value


def test_shipped_pco64_best_is_the_cards() -> None:
    rows = visited_rows("pco64")
    best = rows.loc[rows["throughput_exact"].idxmax()]
    enc = [int(best[f"x_{c}"]) for c in PCO64_INSTANCE.input_columns]
    assert enc == list(PCO64_INSTANCE.published.best_config)
    assert best["throughput_exact"] == PCO64_INSTANCE.published.best_value
    assert round(best["peak_mem"], 1) == PCO64_INSTANCE.published.best_peak_mem_gb


def _encoded_rows(name: str, path: Path) -> dict[tuple[int, ...], pd.Series]:
    """The rows of a table file keyed by their encoded configuration."""
    inst = INSTANCES[name]
    frame = pd.read_parquet(path)
    names = [spec.name for spec in inst.inputs]
    return {
        tuple(
            spec.encode(int(v)) for spec, v in zip(inst.inputs, raw, strict=True)
        ): row
        for raw, (_, row) in zip(
            frame[names].itertuples(index=False, name=None),
            frame.iterrows(),
            strict=True,
        )
    }


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_every_shipped_trace_configuration_is_a_reconstruction_row(name: str) -> None:
    """Every configuration any shipped trace evaluates is a row of the shipped
    reconstruction, with the trace's feasibility and exact peak memory."""
    inst = INSTANCES[name]
    path = locations.reconstructed_table_path(name)
    assert path is not None
    rows = _encoded_rows(name, path)
    assert len(rows) == inst.published.rows
    evaluated = 0
    for trace_path in locations.trace_paths(name):
        trace = read_trace(trace_path, name)
        for trial in trace.trials:
            for x, c in zip(
                trial.candidates.tolist(), trial.seen_c.tolist(), strict=True
            ):
                key = tuple(int(v) for v in x)
                assert key in rows, (
                    f"{trace_path.name} seed {trial.seed}: {key} not a row"
                )
                row = rows[key]
                assert bool(row["ran_successfully"]) == (c != OOM_SLACK), key
                if c != OOM_SLACK:
                    assert math.isclose(
                        float(row["peak_mem"]),
                        inst.gpu_memory_gb * (1 - c),
                        rel_tol=1e-12,
                    ), key
                evaluated += 1
    assert evaluated > 0
