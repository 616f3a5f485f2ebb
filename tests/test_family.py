"""The pco family (docs/architecture.md §4): PCO16, PCO32 and PCO64 share one
implementation, each reads its own instance's schema and sources."""

from __future__ import annotations

import functools
import math
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from botorch.utils.testing import (
    BaseTestProblemTestCaseMixIn,
    BotorchTestCase,
    ConstrainedTestProblemTestCaseMixin,
    SyntheticTestFunctionTestCaseMixin,
)
from hypothesis import given
from hypothesis import strategies as st

from bolt_pco64 import (
    INSTANCES,
    PCO,
    PCO16,
    PCO32,
    PCO64,
    PROBLEMS,
    ReconstructedTableWarning,
    SimulatedTableWarning,
    TableError,
    load_table,
    problem_class,
)
from bolt_pco64.instances import get_instance
from bolt_pco64.snap import nearest_rows_reference
from bolt_pco64.tables import locations as locations_module
from bolt_pco64.tables import table as table_module
from bolt_pco64.tables.standins import standin_registry
from bolt_pco64.tables.table import decode_inputs
from tests._hypothesis import encode, examples, tables
from tests._tables import CAPACITY, PAD, frame_from, small_frame

NAMES = ("pco16", "pco32", "pco64")
CHECKOUT_DATA = Path(__file__).resolve().parent.parent / "data"


class TestFamilyBoTorchMixins(
    BotorchTestCase,
    BaseTestProblemTestCaseMixIn,
    SyntheticTestFunctionTestCaseMixin,
    ConstrainedTestProblemTestCaseMixin,
):
    """BoTorch's own test mixins on all three classes, on small synthetic tables
    of each instance's schema (built when a test runs)."""

    @functools.cached_property
    def functions(self) -> list[PCO]:  # type: ignore[override]
        return [
            cls(table=small_frame(seed=k, instance=name), negate=bool(k % 2))
            for k, (name, cls) in enumerate(PROBLEMS.items())
        ] + [PCO16(table=small_frame(seed=7, instance="pco16"), noise_std=0.01)]


def test_problem_classes_are_one_implementation_bound_to_each_instance() -> None:
    assert [problem_class(n) for n in NAMES] == [PCO16, PCO32, PCO64]
    assert sorted(PROBLEMS) == sorted(INSTANCES) == list(NAMES)
    for name in NAMES:
        cls = problem_class(name)
        assert issubclass(cls, PCO)
        f = cls(table=small_frame(seed=1, instance=name))
        assert f.table.instance is INSTANCES[name]
        assert f.candidates().shape[-1] == cls.dim == len(cls._bounds)
    with pytest.raises(TypeError, match="Expected `instance`"):
        PCO()
    with pytest.raises(ValueError, match="instance name"):
        problem_class("pco128")


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes_state_the_published_table(name: str) -> None:
    """The class attributes (published figures) are what the default table
    recomputes from its rows: bounds, optimizer, optimum. The default is the
    shipped reconstruction (issue 27), whose best row is the published one."""
    cls = problem_class(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        warnings.simplefilter("ignore", ReconstructedTableWarning)
        f = cls()
    assert cls._bounds == [tuple(b) for b in f.bounds.T.tolist()]
    assert cls._optimizers == [tuple(f.optimizers[0].tolist())]
    assert math.isclose(cls._optimal_value, f.optimal_value, rel_tol=1e-12)


def test_pco64_s_optimizer_is_the_card_s_configuration() -> None:
    """The card: dp 16, tp 4, pp 1, cp 1, sp 4, bucket 64 MB, ZeRO 2, 1 chunk,
    throughput 0.27068 (to 5 digits)."""
    (best,) = PCO64._optimizers
    assert decode_inputs(torch.tensor(best), "pco64") == {
        "dp": 16, "tp": 4, "pp": 1, "cp": 1, "sp": 4, "bucket_mb": 64,
        "zero_stage": 2, "chunks": 1,
    }  # fmt: skip
    assert round(PCO64._optimal_value, 5) == 0.27068


def test_pco16_searches_grad_accumulation_and_fixes_context_parallelism() -> None:
    # two configurations that differ only in gradient accumulation (raw zero 2)
    configs = [(2, 1, 0, 0, 6, 2, 0, 0), (2, 1, 0, 0, 6, 2, 0, 3)]
    f = PCO16(table=frame_from(configs, [0.1, 0.3], instance="pco16"))
    C = f.candidates()
    assert C.tolist() == [[2, 1, 0, 0, 6, 1, 0, 0], [2, 1, 0, 0, 6, 1, 0, 3]]
    assert f(C).tolist() == [0.1, 0.3]
    assert f.optimizers.tolist() == [[2, 1, 0, 0, 6, 1, 0, 3]]
    assert "log2_cp_size" not in f.table.frame.columns[:8]
    assert decode_inputs(C[1], "pco16") == {
        "dp": 4,
        "tp": 2,
        "pp": 1,
        "sp": 1,
        "bucket_mb": 64,
        "zero_stage": 2,
        "chunks": 1,
        "grad_accum_steps": 8,
    }
    X = C[:1].clone()
    X[0, 7] = 3.5
    with pytest.raises(ValueError, match=r"X\[0, 7\].*log2_grad_accum_steps"):
        f(X)


def test_a_table_of_another_instance_is_refused_naming_the_column() -> None:
    pco64_frame = small_frame(seed=2)
    pco16_frame = small_frame(seed=2, instance="pco16")
    with pytest.raises(TableError, match=r"pco16 table.*'log2_cp_size'.*input of"):
        PCO16(table=pco64_frame)
    with pytest.raises(TableError, match=r"pco64 table.*'log2_grad_accum_steps'"):
        PCO64(table=pco16_frame)
    with pytest.raises(ValueError, match="Expected a pco32 table, got a pco64 table"):
        PCO32(table=load_table(pco64_frame))


def test_parquet_labelled_with_another_instance_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.Table.from_pandas(small_frame(seed=3), preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"instance": b"pco32"}), path)
    with pytest.raises(TableError, match="expected a pco64 table, got one labelled"):
        load_table(path)
    assert load_table(path, instance="pco32").instance.name == "pco32"


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fake shipped stand-ins of every instance and a fresh warning state."""
    paths = {}
    for k, name in enumerate(NAMES):
        path = tmp_path / "shipped" / f"{name}_simulated.parquet"
        path.parent.mkdir(exist_ok=True)
        table = pa.Table.from_pandas(
            small_frame(seed=30 + k, instance=name), preserve_index=False
        )
        pq.write_table(table.replace_schema_metadata({b"source": b"simulated"}), path)
        paths[name] = path
    monkeypatch.setattr(
        locations_module,
        "bundled_table_path",
        lambda instance="pco64": paths[get_instance(instance).name],
    )
    monkeypatch.setattr(locations_module, "checkout_data_dir", lambda: None)
    table_module.reset_simulated_warnings()
    return paths


def test_each_instance_reads_its_own_sources(
    stand_ins: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("BOLT_PCO64_HOME", str(home))
    # 4. each instance's own stand-in, each warned about once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in NAMES:
            for _ in range(2):
                f = problem_class(name)()
                assert (f.table.source.kind, f.table.source.path) == (
                    "simulated",
                    stand_ins[name],
                )
    assert [type(w.message) for w in caught] == [SimulatedTableWarning] * 3
    assert [n for n in NAMES if any(n in str(w.message) for w in caught)] == list(NAMES)
    # 3. a measured pco16 table in the data home serves PCO16 only
    measured = home / "pco16.parquet"
    small_frame(seed=40, instance="pco16").to_parquet(measured)
    assert PCO16().table.source.path == measured
    assert PCO32().table.source.kind == "simulated"
    # 2. each instance's own environment variable
    env32 = tmp_path / "mine32.csv"
    small_frame(seed=41, instance="pco32").to_csv(env32, index=False)
    monkeypatch.setenv("BOLT_PCO32_TABLE", str(env32))
    assert (PCO32().table.source.kind, PCO32().table.source.path) == (
        "environment",
        env32,
    )
    assert PCO64().table.source.kind == "simulated"
    assert PCO16().table.source.kind == "measured"


@pytest.mark.parametrize("name", NAMES)
def test_shipped_stand_in_is_registered_and_labelled(name: str) -> None:
    """Each shipped stand-in loads as its instance, labelled simulated, and its
    fingerprint is registered (refresh the registry after regenerating it: see
    bolt_pco64.tables.simulate.registry). pco16/pco32 are skipped until their files exist."""
    path = CHECKOUT_DATA / f"{name}_simulated.parquet"
    if not path.is_file():
        if name == "pco64":
            pytest.fail(f"{path} is missing")
        pytest.skip(f"{path.name} not generated yet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        table = load_table(pd.read_parquet(path), instance=name)
    assert table.is_simulated
    entry = standin_registry().get(table.fingerprint)
    assert entry is not None, f"run refresh_standin_registry('{path}')"
    assert entry["instance"] == name


def test_moving_a_pco16_problem_keeps_values_exact() -> None:
    f = PCO16(table=small_frame(seed=9, instance="pco16"))
    truth = f(f.candidates())
    f.to(torch.float32)
    assert torch.equal(f(f.candidates().double()).nan_to_num(), truth.nan_to_num())


@examples(15)
@given(
    name=st.sampled_from(["pco16", "pco32"]),
    data=st.data(),
    frac=st.lists(st.floats(0, 1), min_size=8, max_size=8),
)
def test_any_table_of_an_instance_schema_is_served_exactly(name, data, frac) -> None:
    """Expectations computed here from the generated configurations."""
    frame, configs, tps, mems = data.draw(tables(instance=name))
    order = sorted(range(len(configs)), key=lambda i: encode(configs[i], name))
    rows = torch.tensor([encode(configs[i], name) for i in order], dtype=torch.double)
    thr = torch.tensor(
        [math.nan if tps[i] is None else tps[i] for i in order], dtype=torch.double
    )
    margin = torch.tensor(
        [PAD if tps[i] is None else mems[i] / CAPACITY - 1 for i in order],
        dtype=torch.double,
    )
    f = problem_class(name)(table=frame)
    assert torch.equal(f.candidates(), rows)
    torch.testing.assert_close(f(rows), thr, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(f.outcome_constraint(rows), margin)
    low, high = rows.min(dim=0).values, rows.max(dim=0).values
    x = low + torch.tensor(frac, dtype=torch.double) * (high - low)
    idx = nearest_rows_reference(x.unsqueeze(0), rows)
    assert f.lookup(x).item() == idx.item()
    torch.testing.assert_close(f(x), thr[idx][0], rtol=0, atol=0, equal_nan=True)


def test_the_family_cost_label_names_each_kind_of_clock() -> None:
    from bolt_pco64.bench.family import family_cost_label
    from bolt_pco64.bench.report.facts import TableFacts

    def facts(simulated: bool, kind: str) -> TableFacts:
        return TableFacts(
            "pco", simulated, "t.parquet", kind, "model", kind == "reconstructed"
        )

    recon, standin = facts(False, "reconstructed"), facts(True, "simulated")
    measured = facts(False, "measured")
    assert family_cost_label({"a": recon, "b": recon}) == "modelled GPU-hours"
    assert family_cost_label({"a": standin}) == "simulated GPU-hours"
    assert family_cost_label({"a": measured, "b": measured}) == "GPU-hours"
    mixed = {"a": standin, "b": recon, "c": recon, "d": measured}
    assert family_cost_label(mixed) == "GPU-hours (simulated on a; modelled on b, c)"
