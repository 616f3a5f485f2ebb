"""Table loading and validation (docs/architecture.md §1)."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from bolt_pco64.instances import PCO64_INSTANCE
from bolt_pco64.tables import locations as locations_module
from bolt_pco64.tables import standins as standins_module
from bolt_pco64.tables import table as table_module
from bolt_pco64.tables.locations import data_home
from bolt_pco64.tables.simulate.registry import (
    refresh_standin_registry,
    standin_fingerprint_entry,
)
from bolt_pco64.tables.table import (
    SimulatedTableWarning,
    TableError,
    decode_inputs,
    load_table,
    parse_float_list,
)
from tests._tables import frame_from, small_frame

COLUMNS = PCO64_INSTANCE.columns
INPUT_COLUMNS = PCO64_INSTANCE.input_columns


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), os.stat(path).st_mtime_ns


# -- formats and canonical order ---------------------------------------------------


def test_parquet_csv_and_dataframe_give_the_same_table(
    frame: pd.DataFrame, csv_path: Path, parquet_path: Path
) -> None:
    from_frame = load_table(frame)
    from_csv = load_table(csv_path)
    from_parquet = load_table(parquet_path)
    pd.testing.assert_frame_equal(from_frame.frame, from_csv.frame)
    pd.testing.assert_frame_equal(from_frame.frame, from_parquet.frame)
    assert torch.equal(from_csv.X, from_parquet.X)
    assert list(from_csv.frame.columns) == list(COLUMNS)


def test_rows_are_in_canonical_order_whatever_the_file_order(
    frame: pd.DataFrame,
) -> None:
    shuffled = frame.sample(frac=1.0, random_state=7)
    a, b = load_table(frame), load_table(shuffled)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    keys = [tuple(r) for r in a.X.tolist()]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_encoding_maps_zero_stage_to_its_ordinal() -> None:
    configs = [(1, 0, 0, 0, 0, 6, stage, 0) for stage in (3, 0, 2)]
    table = load_table(frame_from(configs, [0.1, 0.2, 0.3]))
    assert table.X[:, 6].tolist() == [0.0, 1.0, 2.0]
    assert table.frame["zero_stage"].tolist() == [0, 2, 3]
    assert table.X.shape == (3, 8)
    assert table.X.dtype == torch.float64


def test_list_columns_are_parsed_into_floats(frame: pd.DataFrame) -> None:
    table = load_table(frame)
    for cell in table.frame["all_time_steps"]:
        assert isinstance(cell, tuple)
        assert all(isinstance(v, float) for v in cell)
    # Each row's steps as its string said, row for row.
    inputs = list(PCO64_INSTANCE.input_columns)
    written = frame.set_index(inputs)["all_time_steps"]
    for key, cell in table.frame.set_index(inputs)["all_time_steps"].items():
        assert list(cell) == json.loads(written[key])
    feasible = table.frame[table.frame["ran_successfully"]]
    assert all(len(c) == 3 for c in feasible["all_time_steps"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1.0, 2.5]", (1.0, 2.5)),
        ("[]", ()),
        ("", ()),
        ("[np.float64(0.25), 3]", (0.25, 3.0)),
        ("[nan, inf]", (float("nan"), float("inf"))),
        ("(1.0, 2.5)", (1.0, 2.5)),
        ("(0.5,)", (0.5,)),
        ("()", ()),
        ("(np.float64(0.25), np.float32(0.5))", (0.25, 0.5)),
        ("[ 1.   2.5\n  3. ]", (1.0, 2.5, 3.0)),
        ("[3.15690750e+01 -inf]", (31.569075, float("-inf"))),
        ("[7]", (7.0,)),
    ],
)
def test_parse_float_list(text: str, expected: tuple[float, ...]) -> None:
    got = parse_float_list(text)
    np.testing.assert_array_equal(np.array(got), np.array(expected))


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').getcwd()",
        "[1, 'a']",
        "[1, [2]]",
        "{1: 2}",
        "(1.0, 2.0",
        "[1.0, 2.0)",
        "[1.0,, 2.0]",
        "[1. 2. ... 9.]",
        "((1.0, 2.0),)",
        "1.0, 2.0",
        "(__import__('os'),)",
    ],
)
def test_parse_float_list_refuses_code_and_garbage(text: str) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_float_list(text)


def test_decode_inputs_gives_raw_units() -> None:
    raw = decode_inputs([4, 2, 0, 0, 2, 6, 1, 0])
    assert raw == {
        "dp": 16,
        "tp": 4,
        "pp": 1,
        "cp": 1,
        "sp": 4,
        "bucket_mb": 64,
        "zero_stage": 2,
        "chunks": 1,
    }


def test_any_row_count_is_accepted() -> None:
    one = load_table(frame_from([(1, 0, 0, 0, 0, 6, 0, 0)], [0.2]))
    assert one.frame["throughput_mean"].tolist() == [0.2]
    raw = small_frame(seed=3, n=200)
    big = load_table(raw)
    # Every row kept, each with its own throughput (rows are reordered).
    inputs = list(PCO64_INSTANCE.input_columns)
    kept = big.frame.set_index(inputs)["throughput_mean"]
    given = raw.set_index(inputs)["throughput_mean"]
    assert len(kept) == 200
    pd.testing.assert_series_equal(kept.sort_index(), given.sort_index())


def test_extra_columns_are_dropped(frame: pd.DataFrame) -> None:
    table = load_table(frame.assign(note="x"))
    assert list(table.frame.columns) == list(COLUMNS)


def test_table_file_is_never_written(csv_path: Path, parquet_path: Path) -> None:
    before = {p: _snapshot(p) for p in (csv_path, parquet_path)}
    for p in (csv_path, parquet_path):
        load_table(p)
    assert {p: _snapshot(p) for p in (csv_path, parquet_path)} == before
    assert sorted(os.listdir(csv_path.parent)) == sorted(
        [csv_path.name, parquet_path.name]
    )


# -- validation: one TableError naming file, column and first offending row ---------


def _broken(frame: pd.DataFrame, column: str, row: int, value: object) -> pd.DataFrame:
    out = frame.copy()
    if out[column].dtype != object:
        out[column] = out[column].astype(object)
    out.at[row, column] = value
    return out


def _first_feasible(frame: pd.DataFrame) -> int:
    return int(np.flatnonzero(frame["ran_successfully"].to_numpy())[0])


def _first_oom(frame: pd.DataFrame) -> int:
    return int(np.flatnonzero(~frame["ran_successfully"].to_numpy())[0])


BROKEN_CASES = {
    "non-integer input": lambda f: (
        _broken(f, "log2_tp_size", 5, 1.5),
        "log2_tp_size",
        5,
    ),
    "negative input": lambda f: (_broken(f, "log2_pp_size", 6, -1), "log2_pp_size", 6),
    "huge input": lambda f: (_broken(f, "log2_dp_size", 2, 99), "log2_dp_size", 2),
    "NaN input": lambda f: (_broken(f, "log2_cp_size", 3, np.nan), "log2_cp_size", 3),
    "text input": lambda f: (_broken(f, "log2_sp_size", 4, "two"), "log2_sp_size", 4),
    "zero stage 1": lambda f: (_broken(f, "zero_stage", 7, 1), "zero_stage", 7),
    "context varies": lambda f: (
        _broken(f, "log2_grad_accum_steps", 9, 1),
        "log2_grad_accum_steps",
        9,
    ),
    "feasible without throughput": lambda f: (
        _broken(f, "throughput_mean", _first_feasible(f), np.nan),
        "throughput_mean",
        _first_feasible(f),
    ),
    "OOM with throughput": lambda f: (
        _broken(f, "throughput_mean", _first_oom(f), 0.2),
        "throughput_mean",
        _first_oom(f),
    ),
    "OOM with finite peak": lambda f: (
        _broken(f, "peak_mem", _first_oom(f), 50.0),
        "peak_mem",
        _first_oom(f),
    ),
    "feasible with positive margin": lambda f: (
        _broken(f, "peak_mem_normalised", _first_feasible(f), 0.1),
        "peak_mem_normalised",
        _first_feasible(f),
    ),
    "OOM with negative margin": lambda f: (
        _broken(f, "peak_mem_normalised", _first_oom(f), -0.1),
        "peak_mem_normalised",
        _first_oom(f),
    ),
    "OOM with time": lambda f: (
        _broken(f, "overall_time", _first_oom(f), 10.0),
        "overall_time",
        _first_oom(f),
    ),
    "unparsable list": lambda f: (
        _broken(f, "all_time_steps", 11, "[1, x]"),
        "all_time_steps",
        11,
    ),
    "label not boolean": lambda f: (
        _broken(f, "ran_successfully", 12, "maybe"),
        "ran_successfully",
        12,
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN_CASES))
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_broken_table_names_file_column_and_row(
    case: str, suffix: str, frame: pd.DataFrame, tmp_path: Path
) -> None:
    broken, column, row = BROKEN_CASES[case](frame)
    if suffix == ".parquet":
        # Text where parquet needs one type, missing values kept missing
        # (``astype(str)`` writes them as "nan" before pandas 3).
        broken = broken.assign(
            **{
                c: broken[c].astype(str).where(broken[c].notna())
                for c in broken.columns
                if broken[c].dtype == object
            }
        )
    path = _write(broken, tmp_path / f"t{suffix}")
    with pytest.raises(TableError) as info:
        load_table(path)
    message = str(info.value)
    assert str(path) in message
    assert repr(column) in message
    assert f"row {row}" in message


def test_missing_column_is_named(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = _write(frame.drop(columns=["peak_mem"]), tmp_path / "t.csv")
    with pytest.raises(TableError, match=r"column 'peak_mem'.*missing"):
        load_table(path)


def test_duplicate_configuration_names_both_rows(frame: pd.DataFrame) -> None:
    dup = pd.concat([frame, frame.iloc[[4]]], ignore_index=True)
    with pytest.raises(
        TableError, match=rf"row {len(frame)}: duplicate configuration .*same as row 4"
    ):
        load_table(dup)


def test_no_feasible_row_is_refused(frame: pd.DataFrame) -> None:
    configs = [tuple(r) for r in frame[list(INPUT_COLUMNS)].itertuples(index=False)][:3]
    with pytest.raises(TableError, match="at least one feasible row"):
        load_table(frame_from(configs, [None, None, None]))


def test_different_pads_are_refused(frame: pd.DataFrame) -> None:
    oom = np.flatnonzero(~frame["ran_successfully"].to_numpy())
    broken = frame.copy()
    broken.loc[oom[1], "peak_mem_normalised"] = 0.75
    with pytest.raises(TableError, match=rf"'peak_mem_normalised', row {oom[1]}.*pad"):
        load_table(broken)


def test_empty_table_is_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(TableError, match="no rows"):
        load_table(frame.iloc[:0])


@pytest.mark.parametrize(
    "content", [b"", b"\x00\x01garbage\xff" * 10, b"PAR1 not really parquet"]
)
def test_unreadable_file_is_a_table_error_naming_it(
    content: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    with pytest.raises(TableError, match=str(path)):
        load_table(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.parquet"):
        load_table(tmp_path / "nope.parquet")


def test_directory_is_a_table_error(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="directory"):
        load_table(tmp_path)


def test_wrong_source_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Expected a path"):
        load_table(42)  # type: ignore[arg-type]


# -- where the table comes from -----------------------------------------------------


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake shipped stand-in, labelled simulated, and a fresh warning state."""
    path = tmp_path / "shipped" / "pco64_simulated.parquet"
    path.parent.mkdir()
    table = pa.Table.from_pandas(small_frame(seed=5), preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"source": b"simulated"}), path)
    monkeypatch.setattr(
        locations_module, "bundled_table_path", lambda instance="pco64": path
    )
    monkeypatch.setattr(locations_module, "checkout_data_dir", lambda: None)
    table_module.reset_simulated_warnings()
    return path


def test_source_order(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, csv_path: Path
) -> None:
    # 4. nothing else: the stand-in, labelled simulated
    with pytest.warns(SimulatedTableWarning, match="SIMULATED"):
        t = load_table()
    assert (t.source.kind, t.source.path, t.is_simulated) == (
        "simulated",
        stand_in,
        True,
    )
    # 3. a measured table in the data home wins over the stand-in
    home = tmp_path / "home"
    home.mkdir()
    measured = _write(small_frame(seed=8), home / "pco64.parquet")
    monkeypatch.setenv("BOLT_PCO64_HOME", str(home))
    t = load_table()
    assert (t.source.kind, t.source.path, t.is_simulated) == (
        "measured",
        measured,
        False,
    )
    # 2. the environment variable wins over the measured table
    monkeypatch.setenv("BOLT_PCO64_TABLE", str(csv_path))
    t = load_table()
    assert (t.source.kind, t.source.path) == ("environment", csv_path)
    # 1. the argument wins over everything
    other = _write(small_frame(seed=9), tmp_path / "other.parquet")
    t = load_table(other)
    assert (t.source.kind, t.source.path) == ("argument", other)
    assert str(other) in str(t.source)


def test_checkout_measured_table_comes_before_data_home(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout_data"
    checkout.mkdir()
    in_checkout = _write(small_frame(seed=10), checkout / "pco64.parquet")
    home = tmp_path / "home2"
    home.mkdir()
    _write(small_frame(seed=11), home / "pco64.parquet")
    monkeypatch.setenv("BOLT_PCO64_HOME", str(home))
    monkeypatch.setattr(locations_module, "checkout_data_dir", lambda: checkout)
    assert load_table().source.path == in_checkout


def test_stand_in_warning_is_issued_once_per_process(stand_in: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_table()
        load_table()
        load_table(stand_in)
    assert [type(w.message) for w in caught] == [SimulatedTableWarning]


def test_env_table_missing_file_is_file_not_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BOLT_PCO64_TABLE", str(tmp_path / "gone.csv"))
    with pytest.raises(FileNotFoundError, match=r"gone\.csv"):
        load_table()


def test_data_home_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BOLT_PCO64_HOME", str(tmp_path / "env"))
    assert data_home(tmp_path / "arg") == tmp_path / "arg"
    assert data_home() == tmp_path / "env"
    monkeypatch.delenv("BOLT_PCO64_HOME")
    assert "bolt_pco64" in str(data_home())


# -- the stand-in keeps its label in any form (issue 8.5) ---------------------------


SHIPPED_STANDIN = (
    Path(__file__).resolve().parent.parent / "data" / PCO64_INSTANCE.standin_filename
)


def _strip_metadata(path: Path, out: Path) -> Path:
    """Re-save a parquet file with no key-value metadata at all."""
    pq.write_table(pq.read_table(path).replace_schema_metadata(None), out)
    return out


def _forms(src: Path, tmp_path: Path) -> dict[str, object]:
    """What a user may do with a stand-in file: each yields a load_table source."""
    frame = pd.read_parquet(src)
    renamed = tmp_path / "home" / "pco64.parquet"
    renamed.parent.mkdir()
    _strip_metadata(src, renamed)
    return {
        "DataFrame from read_parquet": frame,
        "CSV export": _write(frame, tmp_path / "export.csv"),
        "re-saved parquet": _strip_metadata(src, tmp_path / "resaved.parquet"),
        "renamed to the measured name": None,  # found in the data home below
    }


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty stand-in registry in a temporary folder, and a fresh warning state."""
    path = tmp_path / "registry" / "standin_fingerprints.json"
    monkeypatch.setattr(standins_module, "_registry_path", lambda: path)
    table_module.reset_simulated_warnings()
    standins_module.standin_registry.cache_clear()
    yield path
    standins_module.standin_registry.cache_clear()


def _write_standin(frame: pd.DataFrame, path: Path) -> Path:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = {b"source": b"simulated", b"generator_version": b"9.9"}
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def test_registered_stand_in_is_simulated_in_every_form(
    registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _write_standin(small_frame(seed=21), tmp_path / "fake_simulated.parquet")
    forms = _forms(src, tmp_path)
    assert not load_table(forms["re-saved parquet"]).is_simulated  # not yet registered
    refresh_standin_registry(src)
    entry = json.loads(registry.read_text())["fingerprints"]
    assert [v["generator_version"] for v in entry.values()] == ["9.9"]
    monkeypatch.setenv("BOLT_PCO64_HOME", str(tmp_path / "home"))
    for form, source in forms.items():
        table_module.reset_simulated_warnings()
        with pytest.warns(SimulatedTableWarning):
            table = load_table(source)
        assert table.is_simulated, form
        assert "SIMULATED" in str(table.source), form
    assert table.source.kind == "measured"  # the renamed copy, found as measured


def test_fingerprint_ignores_throughput_but_not_memory_or_configurations(
    frame: pd.DataFrame,
) -> None:
    base = load_table(frame).fingerprint
    ok = frame["ran_successfully"].to_numpy()
    reseeded = frame.copy()  # what another noise seed changes
    reseeded.loc[ok, "throughput_mean"] *= 1.01
    reseeded.loc[ok, "throughput_std"] *= 2.0
    reseeded.loc[ok, "overall_time"] += 3.0
    assert load_table(reseeded).fingerprint == base
    assert load_table(frame.sample(frac=1.0, random_state=3)).fingerprint == base
    memory = frame.copy()
    i = int(np.flatnonzero(ok)[0])
    memory.loc[i, "peak_mem"] += 0.01
    memory.loc[i, "peak_mem_normalised"] = memory.loc[i, "peak_mem"] / 96 - 1
    assert load_table(memory).fingerprint != base
    assert load_table(frame.iloc[1:]).fingerprint != base


def test_unregistered_table_without_metadata_is_not_simulated(
    registry: Path, parquet_path: Path
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = load_table(parquet_path)
    assert not table.is_simulated
    assert "SIMULATED" not in str(table.source)


def test_registry_entry_refuses_a_file_not_labelled_simulated(
    parquet_path: Path,
) -> None:
    with pytest.raises(ValueError, match="source=simulated"):
        standin_fingerprint_entry(parquet_path)


def test_shipped_stand_in_is_registered_and_recognised_in_every_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails after the stand-in is regenerated until the registry is refreshed
    (see the module docstring of bolt_pco64.tables.simulate.registry)."""
    ((fingerprint, entry),) = standin_fingerprint_entry(SHIPPED_STANDIN).items()
    registered = standins_module.standin_registry()
    assert fingerprint in registered, "refresh_standin_registry(...) was not run"
    assert registered[fingerprint]["instance"] == entry["instance"] == "pco64"
    monkeypatch.setenv("BOLT_PCO64_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(locations_module, "checkout_data_dir", lambda: None)
    for form, source in _forms(SHIPPED_STANDIN, tmp_path).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            table = load_table(source)
        assert table.is_simulated, form
        assert table.fingerprint == fingerprint, form


# -- every export of a loaded table loads back, labelled as it was (issue 21.1) -----


def _as_lists(frame: pd.DataFrame) -> pd.DataFrame:
    from bolt_pco64.tables.table import LIST_COLUMNS

    return frame.assign(**{c: frame[c].map(list) for c in LIST_COLUMNS})


def _exports(src: Path, tmp_path: Path) -> dict[str, object]:
    """Every documented way to export a table, as a load_table source.

    ``src`` is a table file; its loaded frame holds the list columns as tuples,
    which pandas writes to CSV as "(1.0, 2.0)"; read back from parquet they are
    numpy arrays, which pandas writes as numpy prints them ("[1. 2.]").
    """
    frame = load_table(src).frame
    raw = pd.read_parquet(src)
    frame_pq = tmp_path / "frame.parquet"
    frame.to_parquet(frame_pq)
    arrays = pd.read_parquet(frame_pq)
    assert isinstance(arrays["all_time_steps"].iloc[0], np.ndarray)
    written: dict[str, object] = {
        "frame (DataFrame)": frame,
        "frame to parquet": frame_pq,
    }
    for name, out in {
        "frame to CSV": frame,
        "frame with list cells to CSV": _as_lists(frame),
        "frame via parquet (arrays) to CSV": arrays,
        "raw parquet to CSV": raw,
    }.items():
        path = tmp_path / (
            name.replace(" ", "_").replace("(", "").replace(")", "") + ".csv"
        )
        out.to_csv(path)  # with the index, as a user would
        written[name] = path
    no_index = tmp_path / "frame_no_index.csv"
    frame.to_csv(no_index, index=False)
    written["frame to CSV without index"] = no_index
    resaved = tmp_path / "raw_resaved.parquet"
    raw.to_parquet(resaved)
    written["raw parquet re-saved"] = resaved
    return written


@pytest.mark.parametrize("registered", [True, False], ids=["stand-in", "measured"])
def test_every_export_of_a_table_loads_back_labelled_as_it_was(
    registered: bool, registry: Path, tmp_path: Path
) -> None:
    src = tmp_path / "src.parquet"
    small_frame(seed=4).to_parquet(src, index=False)
    if registered:
        _write_standin(small_frame(seed=4), src)
        refresh_standin_registry(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        original = load_table(src)
        assert original.is_simulated == registered
        for form, source in _exports(src, tmp_path).items():
            table = load_table(source)
            assert table.is_simulated == registered, form
            assert table.fingerprint == original.fingerprint, form
            if "arrays" in form:  # numpy prints 8 significant digits
                for column in ("all_time_steps", "peak_mem_per_gpu"):
                    for got, want in zip(
                        table.frame[column], original.frame[column], strict=True
                    ):
                        np.testing.assert_allclose(got, want, rtol=1e-7)
                rest = table.frame.drop(columns=["all_time_steps", "peak_mem_per_gpu"])
                pd.testing.assert_frame_equal(
                    rest,
                    original.frame.drop(columns=["all_time_steps", "peak_mem_per_gpu"]),
                )
            else:
                pd.testing.assert_frame_equal(table.frame, original.frame, obj=form)


def test_shipped_stand_in_round_trips_through_csv_as_a_problem(
    tmp_path: Path,
) -> None:
    """The issue's steps: ``load_table().frame.to_csv`` then ``PCO64(table=...)``."""
    from bolt_pco64 import PCO64

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        original = PCO64(table=SHIPPED_STANDIN)
        path = tmp_path / "t.csv"
        original.table.frame.to_csv(path)
        copy = PCO64(table=path)
    assert copy.is_simulated
    assert "SIMULATED" in str(copy.table.source)
    pd.testing.assert_frame_equal(copy.table.frame, original.table.frame)
    assert copy.optimal_value == original.optimal_value


CORRUPT_CELLS = {
    "unbalanced tuple": "(1.0, 2.0",
    "mismatched brackets": "[1.0, 2.0)",
    "empty entry": "(1.0,, 2.0)",
    "numpy summary": "[1. 2. ... 9.]",
    "nested tuple": "((1.0, 2.0),)",
    "text": "(1.0, 'a')",
    "code": "(__import__('os'),)",
}


@pytest.mark.parametrize("column", ["all_time_steps", "peak_mem_per_gpu"])
@pytest.mark.parametrize("case", sorted(CORRUPT_CELLS))
def test_corrupted_list_cell_of_an_export_names_file_column_and_row(
    case: str, column: str, frame: pd.DataFrame, tmp_path: Path
) -> None:
    exported = load_table(frame).frame  # tuples, written as "(1.0, 2.0)"
    row = 5
    path = _write(
        _broken(exported, column, row, CORRUPT_CELLS[case]), tmp_path / "t.csv"
    )
    with pytest.raises(TableError) as info:
        load_table(path)
    message = str(info.value)
    assert str(path) in message
    assert repr(column) in message
    assert f"row {row}" in message
