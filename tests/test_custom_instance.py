"""A user's own instance (docs/architecture.md §4): one :class:`Instance`,
described in Python or TOML, is served by the problem, the loaders, the
harness and the command line with no edit inside the package; and every
per-instance mapping of the package derives from ``INSTANCES``."""

from __future__ import annotations

import json
import math
import pickle
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64 import PCO, PROBLEMS, load_table, problem_class
from bolt_pco64.cli import main
from bolt_pco64.instance_file import (
    InstanceFileError,
    instance_from_dict,
    read_instance,
)
from bolt_pco64.instances import (
    INSTANCES,
    KNOBS,
    ZERO_STAGES,
    InputSpec,
    Instance,
    ModelShape,
)
from bolt_pco64.tables.estimators import THROUGHPUT_UNITS, work_per_step
from bolt_pco64.tables.reconstruct.grid import full_grid
from bolt_pco64.tables.simulate.grid import grid_configurations
from bolt_pco64.tables.standins import STANDIN_VARIANTS
from tests._tables import frame_from

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

#: A made-up 8-GPU cluster: 2 hosts of 4 GPUs of 40 GB; gradient accumulation
#: searched, sequence and context parallelism fixed.
MY8 = Instance(
    name="my8",
    num_gpus=8,
    num_hosts=2,
    gpu_memory_gb=40.0,
    model=ModelShape(16, 16, 2048, 8192, 64, 2048),
    inputs=(
        InputSpec("log2_dp_size", 0, 3),
        InputSpec("log2_tp_size", 0, 2),
        InputSpec("log2_pp_size", 0, 2),
        InputSpec("log2_dp_bucket_size_mb", 6, 7),
        InputSpec("zero_stage", 0, 2, "ordinal", ZERO_STAGES),
        InputSpec("log2_num_model_chunks", 0, 1),
        InputSpec("log2_grad_accum_steps", 0, 1),
    ),
    context=(("log2_cp_size", 0), ("log2_sp_size", 0)),
    throughput_unit="steps/s",
)

MY8_TOML = """
name = "my8"
num_gpus = 8
num_hosts = 2
gpu_memory_gb = 40.0
throughput_unit = "steps/s"

[model]
num_layers = 16
num_attention_heads = 16
hidden_size = 2048
ffn_hidden_size = 8192
batch_size = 64
seq_length = 2048

[[inputs]]
name = "log2_dp_size"
low = 0
high = 3

[[inputs]]
name = "log2_tp_size"
low = 0
high = 2

[[inputs]]
name = "log2_pp_size"
low = 0
high = 2

[[inputs]]
name = "log2_dp_bucket_size_mb"
low = 6
high = 7

[[inputs]]
name = "zero_stage"
low = 0
high = 2

[[inputs]]
name = "log2_num_model_chunks"
low = 0
high = 1

[[inputs]]
name = "log2_grad_accum_steps"
low = 0
high = 1

[context]
log2_cp_size = 0
log2_sp_size = 0
"""


def _made_up_sweep() -> tuple[pd.DataFrame, list[tuple[int, ...]], list[float | None]]:
    """The grid of :data:`MY8` with a made-up throughput and memory: more data
    parallelism is faster and heavier; above 40 GB the run is out of memory."""
    configs, throughput, peaks = [], [], []
    for x in MY8.grid():
        s = MY8.raw_sizes(x)
        peak = 12.0 + 6.0 * s["dp"] / s["pp"] + 2.0 * s["zero_stage"] - s["chunks"]
        fast = 0.1 * s["dp"] + 0.02 * s["tp"] + 0.01 * s["grad_accum_steps"]
        configs.append(
            tuple(spec.decode(v) for spec, v in zip(MY8.inputs, x, strict=True))
        )
        throughput.append(None if peak > MY8.gpu_memory_gb else fast)
        peaks.append(peak)
    frame = frame_from(
        configs, throughput, peaks, capacity=MY8.gpu_memory_gb, instance=MY8
    )
    return frame, configs, throughput


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("my8") / "my8_sweep.parquet"
    _made_up_sweep()[0].to_parquet(path)
    return path


@pytest.fixture(scope="module")
def toml_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("my8toml") / "my_cluster.toml"
    path.write_text(MY8_TOML, encoding="utf-8")
    return path


# -- the description ---------------------------------------------------------


def test_toml_description_reads_as_the_python_one(toml_file: Path) -> None:
    assert read_instance(toml_file) == MY8


@pytest.mark.parametrize(
    ("edit", "located"),
    [
        (
            lambda d: d.pop("num_gpus"),
            "num_gpus: expected an integer >= 1, got nothing",
        ),
        (lambda d: d["model"].update(num_layers="16"), "model.num_layers: expected"),
        (
            lambda d: d["inputs"][1].update(low="x"),
            "inputs[1].low: expected an integer",
        ),
        (
            lambda d: d["inputs"][0].update(name="log2_foo"),
            "'log2_foo' is not a known knob",
        ),
        (
            lambda d: d.update(num_hosts=3),
            "num_gpus (8) must be a multiple of num_hosts",
        ),
        (lambda d: d.update(colour="red"), "unknown ['colour']"),
        (lambda d: d.update(throughput_unit="tokens/s"), "throughput_unit: expected"),
        (lambda d: d["inputs"][4].update(high=3), "'zero_stage' needs a level"),
    ],
)
def test_a_bad_description_is_refused_naming_the_key(edit, located: str) -> None:
    data = tomllib.loads(MY8_TOML)
    edit(data)
    with pytest.raises(InstanceFileError, match=r"my_cluster\.toml") as err:
        instance_from_dict(data, "my_cluster.toml")
    assert located in str(err.value)


def test_invalid_toml_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "my8"\nnum_gpus = = 8\n', encoding="utf-8")
    with pytest.raises(
        InstanceFileError, match=r"broken\.toml: not valid TOML.*line 2"
    ):
        read_instance(path)


# -- served with no edit inside the package -----------------------------------


def test_problem_serves_the_made_up_instance(sweep: Path) -> None:
    _, configs, throughput = _made_up_sweep()
    f = PCO(instance=MY8, table=sweep)
    assert type(f) is problem_class(MY8)
    assert f.instance == MY8
    assert f.dim == MY8.dim
    assert f.discrete_inds == list(range(MY8.dim))
    assert problem_class(MY8) is problem_class(MY8)
    feasible = [t for t in throughput if t is not None]
    assert math.isclose(f.optimal_value, max(feasible), rel_tol=1e-12)
    X = torch.tensor(
        [
            [spec.encode(v) for spec, v in zip(MY8.inputs, c, strict=True)]
            for c in configs
        ],
        dtype=torch.double,
    )
    values = f.evaluate_true(X)
    for v, t in zip(values.tolist(), throughput, strict=True):
        if t is None:
            assert math.isnan(v)
        else:
            assert math.isclose(v, t, rel_tol=1e-12)
    assert (f.is_feasible(X) == torch.tensor([t is not None for t in throughput])).all()
    again = pickle.loads(pickle.dumps(f))  # a built class pickles by its instance
    assert type(again) is type(f)
    torch.testing.assert_close(again.evaluate_true(X), values, equal_nan=True)
    with pytest.raises(ValueError, match="Expected `instance` to be None or pco64"):
        PROBLEMS["pco64"](instance=MY8, table=sweep)


def test_loaders_serve_the_made_up_instance(sweep: Path, monkeypatch) -> None:
    table = load_table(sweep, instance=MY8)
    assert table.instance == MY8
    assert len(table) == len(MY8.grid())
    assert work_per_step(MY8) == 1.0  # its unit, steps/s
    monkeypatch.delenv(MY8.env_table, raising=False)
    with pytest.raises(FileNotFoundError, match="BOLT_MY8_TABLE"):
        load_table(None, instance=MY8)
    monkeypatch.setenv(MY8.env_table, str(sweep))
    assert load_table(None, instance=MY8).source.kind == "environment"


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_harness_runs_on_the_made_up_instance(sweep: Path, tmp_path: Path) -> None:
    from bolt_pco64.bench import ComparisonSpec, SingleTable, run_comparison

    spec = ComparisonSpec(["random", "qlognei"], seeds=1, budget=8, n_init=4)
    result = run_comparison(
        spec, SingleTable(sweep, MY8), out=tmp_path / "out", progress=False
    )
    assert not result.errors
    assert result.table is not None
    assert result.table.instance == MY8
    assert set(result.records["method"]) == {"random", "qlognei"}
    feasible = [t for t in _made_up_sweep()[2] if t is not None]
    assert result.records["best_feasible"].max() <= max(feasible) + 1e-12
    meta = json.loads((result.out / "meta.json").read_text())
    assert meta["arguments"]["problem"] == MY8.name


@pytest.mark.usefixtures("unrendered_figures")
def test_cli_benches_and_inspects_the_made_up_instance(
    sweep: Path, toml_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "--instance",
            str(toml_file),
            "--table",
            str(sweep),
            "--methods",
            "random",
            "--seeds",
            "1",
            "--budget",
            "6",
            "--n-init",
            "3",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["arguments"]["problem"] == "my8"
    info = CliRunner().invoke(
        main, ["info", "--instance", str(toml_file), "--table", str(sweep)]
    )
    assert info.exit_code == 0, info.output
    assert "my8 (8 GPUs" in info.output
    assert "published figures: none" in info.output


def test_cli_refuses_a_bad_instance_file_naming_it(tmp_path: Path, sweep: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(MY8_TOML.replace("num_hosts = 2", "num_hosts = 3"))
    result = CliRunner().invoke(
        main, ["bench", "--instance", str(bad), "--table", str(sweep)]
    )
    assert result.exit_code == 2
    assert "--instance" in result.output
    assert "bad.toml" in result.output
    assert "num_hosts" in result.output


# -- one description: the rest derives from it --------------------------------


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_stand_in_and_reconstruction_grids_are_the_instance_grid(name: str) -> None:
    inst = INSTANCES[name]
    encoded = [c.encoded(inst) for c in grid_configurations(inst)]
    assert encoded == [tuple(x) for x in full_grid(inst).tolist()]
    assert all(inst.rule_violation(x) is None for x in encoded)


def test_per_instance_mappings_derive_from_the_instances() -> None:
    assert list(PROBLEMS) == list(INSTANCES)
    for name, inst in INSTANCES.items():
        assert PROBLEMS[name].instance is inst
        assert STANDIN_VARIANTS[name] == inst.standin_variants
        assert THROUGHPUT_UNITS[name] == inst.throughput_unit
        assert set(inst.input_columns) | set(inst.context_columns) <= set(KNOBS)
