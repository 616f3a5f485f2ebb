"""Fuzz tests: hostile table files and hostile points.

Tables: a valid generated table is damaged (columns dropped, renamed, retyped,
cells set out of range or to NaN/inf in the wrong place, rows duplicated) and
written as CSV and parquet; empty files, random bytes and truncated or
bit-flipped parquet are tried too. Loading either succeeds or raises
``TableError``/``FileNotFoundError`` naming the file (and the column, where the
fault is in one) -- never another exception -- and never modifies the file.

Points: wrong shapes, NaN/inf, out of bounds, integer, half, bool and complex
dtypes, and non-tensor input give either the correct answer (computed here with
``nearest_rows_reference`` and the generated table) or a ``ValueError`` /
``TypeError``.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from bolt_pco64 import PCO64, TableError, load_table
from bolt_pco64.snap import nearest_rows_reference
from bolt_pco64.tables.table import LIST_COLUMNS
from tests._hypothesis import encode, examples, tables
from tests._tables import small_frame

COLUMNS = PCO64.instance.columns
INPUT_COLUMNS = PCO64.instance.input_columns

FORMATS = ("csv", "parquet")

# -- helpers: writing and loading tables ------------------------------------------


def _write(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as CSV or parquet (by suffix); parquet falls back to strings
    for object columns that pyarrow cannot store (mixed types)."""
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
        return
    try:
        frame.to_parquet(path, index=False)
    except Exception:
        safe = frame.copy()
        for c in safe.columns:
            if safe[c].dtype == object or safe[c].dtype.kind in "cmM":
                safe[c] = safe[c].astype(str)
        safe.to_parquet(path, index=False)


def _snapshot(path: Path) -> tuple[bytes, int] | None:
    if not path.is_file():
        return None
    return path.read_bytes(), path.stat().st_mtime_ns


def _load(path: Path, *, names: tuple[str, ...] | None = None, must_fail: bool = False):
    """Load ``path``; return the table or the (allowed) error after checking it.

    ``names``: if loading fails, the message must name one of these (a column).
    Any exception other than TableError/FileNotFoundError propagates (fails).
    """
    before = _snapshot(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = load_table(path)
    except (TableError, FileNotFoundError) as err:
        msg = str(err)
        assert path.name in msg, msg
        if names is not None:
            assert any(repr(n) in msg for n in names), (names, msg)
        outcome = err
    else:
        assert not must_fail, f"{path.name} loaded but should have been refused"
        outcome = table
    assert _snapshot(path) == before, "the input file was modified"
    return outcome


# -- table mutations --------------------------------------------------------------

_HOSTILE_CELLS = [
    math.nan,
    math.inf,
    -math.inf,
    -1,
    31,
    0.5,
    1e300,
    -1e-300,
    "",
    "abc",
    "1,2",
    "[1.0, 2",
    "[nan, inf]",
    "None",
    True,
    None,
    "\x00",
    "1e5",
    2**63,
]


@st.composite
def mutations(draw):
    """(description, mutate, must_fail, names, harmless).

    ``mutate(frame)`` returns the damaged frame (None: not applicable);
    ``names``: columns an error must name; ``harmless``: a successful load must
    give the original configurations.
    """
    kind = draw(
        st.sampled_from(
            ["drop", "rename", "retype", "cell", "range", "nan", "duplicate"]
        )
    )
    column = draw(st.sampled_from(COLUMNS))
    row = draw(st.integers(0, 10**6))
    if kind == "drop":
        return kind, lambda f: f.drop(columns=[column]), True, (column,), False
    if kind == "rename":
        new = draw(st.sampled_from([column.upper(), column + " ", "x_" + column]))
        return kind, lambda f: f.rename(columns={column: new}), True, (column,), False
    if kind == "retype":
        to = draw(st.sampled_from(["str", "float", "object", "bool", "category"]))

        def retype(f: pd.DataFrame) -> pd.DataFrame:
            f = f.copy()
            if to == "category":
                f[column] = f[column].astype(str).astype("category")
            elif to == "object":
                f[column] = f[column].astype(object)
            else:
                f[column] = f[column].astype(
                    {"str": str, "float": float, "bool": bool}[to]
                )
            return f

        return f"retype {to}", retype, False, (column,), True
    if kind == "cell":
        value = draw(st.sampled_from(_HOSTILE_CELLS))

        def set_cell(f: pd.DataFrame) -> pd.DataFrame:
            f = f.copy()
            f[column] = f[column].astype(object)
            f.iloc[row % len(f), f.columns.get_loc(column)] = value
            return f

        # An input changed to another valid value may duplicate a configuration;
        # a flipped ran_successfully shows up in the output columns it contradicts.
        names = (column, "(inputs)")
        if column == "ran_successfully":
            names = COLUMNS
        return f"cell {value!r}", set_cell, False, names, False
    if kind == "range":
        column = draw(st.sampled_from(INPUT_COLUMNS))
        bad = draw(
            st.sampled_from([1, 4, -1, 2.5])
            if column == "zero_stage"
            else st.sampled_from([-1, 31, 0.25, 1e9])
        )

        def out_of_range(f: pd.DataFrame) -> pd.DataFrame:
            f = f.copy()
            f[column] = f[column].astype(float)
            f.iloc[row % len(f), f.columns.get_loc(column)] = bad
            return f

        return f"range {bad}", out_of_range, True, (column,), False
    if kind == "nan":
        # A value that contradicts the row's ran_successfully (or the schema).
        col = draw(
            st.sampled_from(
                [
                    *INPUT_COLUMNS,
                    "log2_grad_accum_steps",
                    "throughput_mean",
                    "throughput_std",
                    "overall_time",
                    "peak_mem",
                    "peak_mem_normalised",
                ]
            )
        )
        value = draw(st.sampled_from([math.nan, math.inf, -math.inf, "finite"]))

        def contradict(f: pd.DataFrame) -> pd.DataFrame | None:
            f = f.copy()
            ok = f["ran_successfully"].to_numpy(dtype=bool)
            if col in INPUT_COLUMNS or col == "log2_grad_accum_steps":
                rows, v = np.arange(len(f)), 0.25 if value == "finite" else value
            elif value == "finite":  # a finite value on an OOM row (pad must be > 0)
                rows, v = (
                    np.flatnonzero(~ok),
                    -0.25 if col == "peak_mem_normalised" else 0.25,
                )
            else:  # NaN/inf on a feasible row
                rows, v = np.flatnonzero(ok), value
            if len(rows) == 0:
                return None
            f[col] = f[col].astype(float)
            f.iloc[rows[row % len(rows)], f.columns.get_loc(col)] = v
            return f

        return f"contradict {col}={value}", contradict, True, (col,), False

    # duplicate a row (same configuration, possibly other outputs)
    def duplicate(f: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([f, f.iloc[[row % len(f)]]], ignore_index=True)

    return "duplicate", duplicate, True, ("(inputs)",), False


@examples(60)
@given(
    data=tables(min_rows=2, max_rows=12),
    mutation=mutations(),
    fmt=st.sampled_from(FORMATS),
)
def test_fuzzed_tables_load_or_name_the_fault(
    tmp_path_factory, data, mutation, fmt
) -> None:
    frame = data[0]
    what, mutate, must_fail, names, harmless = mutation
    try:
        damaged = mutate(frame)
    except (TypeError, ValueError):  # pandas cannot make this retype
        return
    if damaged is None:
        return
    path = tmp_path_factory.mktemp("fuzz") / f"table.{fmt}"
    _write(damaged, path)
    outcome = _load(path, names=names, must_fail=must_fail)
    if harmless and not isinstance(outcome, Exception):
        # what loads must be the undamaged table (only harmless changes pass)
        want = sorted(
            encode(tuple(int(v) for v in r))
            for r in frame[list(INPUT_COLUMNS)].to_numpy()
        )
        assert outcome.X.tolist() == [list(r) for r in want], what


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("column", COLUMNS)
def test_every_dropped_column_is_named(tmp_path: Path, fmt: str, column: str) -> None:
    path = tmp_path / f"t.{fmt}"
    _write(small_frame(seed=0).drop(columns=[column]), path)
    _load(path, names=(column,), must_fail=True)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("column", [c for c in COLUMNS if c not in LIST_COLUMNS])
def test_every_numeric_column_refuses_text(
    tmp_path: Path, fmt: str, column: str
) -> None:
    frame = small_frame(seed=0)
    frame[column] = frame[column].astype(object)
    frame.iloc[3, frame.columns.get_loc(column)] = "twelve"
    path = tmp_path / f"t.{fmt}"
    _write(frame, path)
    _load(path, names=(column,), must_fail=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_and_header_only_files(tmp_path: Path, fmt: str) -> None:
    empty = tmp_path / f"empty.{fmt}"
    empty.write_bytes(b"")
    _load(empty, must_fail=True)
    header = tmp_path / f"header.{fmt}"
    _write(small_frame(seed=0).iloc[:0], header)
    _load(header, must_fail=True)


def test_missing_path_and_directory(tmp_path: Path) -> None:
    err = _load(tmp_path / "nope.parquet", must_fail=True)
    assert isinstance(err, FileNotFoundError)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    err = _load(folder, must_fail=True)
    assert isinstance(err, TableError)


@examples(40)
@given(
    blob=st.binary(max_size=2048),
    name=st.sampled_from(["t.csv", "t.parquet", "t.pq", "t", "t.txt"]),
    magic=st.booleans(),
)
def test_random_bytes_are_refused(
    tmp_path_factory, blob: bytes, name: str, magic: bool
) -> None:
    path = tmp_path_factory.mktemp("bytes") / name
    path.write_bytes((b"PAR1" + blob + b"PAR1") if magic else blob)
    _load(path, must_fail=True)


@pytest.fixture(scope="module")
def parquet_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("pq") / "good.parquet"
    small_frame(seed=0).to_parquet(path, index=False)
    return path.read_bytes()


@examples(40)
@given(
    cut=st.floats(0, 1, exclude_max=True),
    flips=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), max_size=3
    ),
)
def test_truncated_and_corrupted_parquet(
    tmp_path_factory, parquet_bytes, cut, flips
) -> None:
    data = bytearray(parquet_bytes)
    for where, xor in flips:
        data[int(where * len(data))] ^= xor
    folder = tmp_path_factory.mktemp("pq")
    truncated = folder / "truncated.parquet"
    truncated.write_bytes(bytes(data[: int(cut * len(data))]))
    _load(truncated)
    flipped = folder / "flipped.parquet"
    flipped.write_bytes(bytes(data))
    _load(flipped)


def test_read_only_file_is_read_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "ro.parquet"
    small_frame(seed=0).to_parquet(path, index=False)
    os.chmod(path, 0o444)
    try:
        table = _load(path)
        assert not isinstance(table, Exception)
    finally:
        os.chmod(path, 0o644)


# -- fuzzed points ----------------------------------------------------------------

_FRAME = small_frame(seed=4, n=30)


@functools.cache
def _problem() -> PCO64:
    """The problem under fuzz, built at the first test that needs it (not at
    collection); the tests never change it."""
    return PCO64(table=_FRAME)


_ROWS = torch.tensor(
    sorted(
        encode(tuple(int(v) for v in r)) for r in _FRAME[list(INPUT_COLUMNS)].to_numpy()
    ),
    dtype=torch.float64,
)
_BY_CONFIG = {
    encode(tuple(int(v) for v in r[:8])): r[8]
    for r in _FRAME[[*INPUT_COLUMNS, "throughput_mean"]].itertuples(index=False)
}
_THROUGHPUT = torch.tensor(
    [_BY_CONFIG[tuple(r)] for r in _ROWS.tolist()], dtype=torch.float64
)
_LOW, _HIGH = _ROWS.min(dim=0).values, _ROWS.max(dim=0).values

_DTYPES = [
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
    torch.complex128,
]
_VALUES = st.one_of(
    st.integers(-2, 10).map(float),
    st.integers(-4, 20).map(lambda v: v / 2),
    st.floats(-3, 12, allow_nan=False, allow_infinity=False),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -0.0, 5e-324]),
)


@st.composite
def tensors(draw):
    batch = draw(st.lists(st.integers(0, 4), max_size=3))
    last = draw(st.sampled_from([8, 8, 8, 8, 0, 1, 7, 9]))
    shape = (*batch, last)
    n = int(np.prod(shape))
    in_box = draw(st.booleans())
    if in_box:  # mostly valid points, to exercise the answers
        lo, hi = _LOW.repeat(max(n // 8, 1)), _HIGH.repeat(max(n // 8, 1))
        vals = [
            draw(st.floats(float(lo[i % len(lo)]), float(hi[i % len(hi)])))
            if draw(st.booleans())
            else float(draw(st.integers(int(lo[i % len(lo)]), int(hi[i % len(hi)]))))
            for i in range(n)
        ]
    else:
        vals = draw(st.lists(_VALUES, min_size=n, max_size=n))
    dtype = draw(st.sampled_from(_DTYPES))
    x = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype.is_floating_point or dtype.is_complex:
            return x.to(dtype)
        # integer/bool casts of NaN/inf are undefined: replace them first
        return torch.nan_to_num(x, nan=0.0, posinf=100.0, neginf=-100.0).to(dtype)


def _expected(X: torch.Tensor):
    """The correct outcome: (values, rows) or None when X must be refused."""
    if X.dtype == torch.bool or X.is_complex():
        return None
    if X.ndim == 0 or X.shape[-1] != 8:
        return None
    x = X.to(torch.float64).reshape(-1, 8)
    if x.numel() and not bool(torch.isfinite(x).all()):
        return None
    if x.numel() and not bool(((x >= _LOW) & (x <= _HIGH)).all()):
        return None
    rows = nearest_rows_reference(x, _ROWS).reshape(X.shape[:-1])
    dtype = X.dtype if X.is_floating_point() else torch.float64
    return _THROUGHPUT[rows].to(dtype), rows


def _check_point_api(X: object, expected) -> None:
    """Every evaluation (``f(X)``, ``evaluate_true``, the slack, the
    constraint) and ``lookup`` answer any real point of the bounds, or refuse
    with a ValueError/TypeError that says why."""
    calls = {
        "forward": lambda: _problem()(X),
        "evaluate_true": lambda: _problem().evaluate_true(X),
        "lookup": lambda: _problem().lookup(X),
        "slack": lambda: _problem().evaluate_slack_true(X),
        "constraint": lambda: _problem().outcome_constraint(X),
    }
    for name, call in calls.items():
        if expected is None:
            with pytest.raises((ValueError, TypeError)) as info:
                call()
            assert str(info.value), name
            continue
        values, rows = expected
        got = call()
        if name == "lookup":
            assert got.dtype == torch.int64
            assert torch.equal(got, rows), name
        elif name in ("forward", "evaluate_true"):
            assert got.shape == values.shape, name
            assert got.dtype == values.dtype, name
            torch.testing.assert_close(got, values, rtol=0, atol=0, equal_nan=True)
        else:
            want = values.shape + ((1,) if name == "slack" else ())
            assert got.shape == want, name
            assert got.dtype == values.dtype, name


@examples(80)
@given(X=tensors())
def test_fuzzed_points_answer_correctly_or_refuse(X: torch.Tensor) -> None:
    _check_point_api(X, _expected(X))


@pytest.mark.parametrize(
    "X",
    [
        None,
        3.0,
        "12345678",
        [1.0] * 8,
        [[2, 1, 1, 0, 1, 6, 0, 1]],
        np.array([[2.0, 1, 1, 0, 1, 6, 0, 1]]),
        np.array([[2, 1, 1, 0, 1, 6, 0, 1]], dtype=np.int64),
        {"log2_dp_size": 1},
        pd.DataFrame(np.zeros((1, 8))),
    ],
    ids=lambda v: type(v).__name__,
)
def test_non_tensor_points_are_a_type_error(X: object) -> None:
    _check_point_api(X, None)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        _problem()(X)


def test_integer_tensor_of_a_configuration_is_answered() -> None:
    for dtype in (torch.int64, torch.int32, torch.int16, torch.uint8):
        X = _ROWS.to(dtype)
        got = _problem()(X)
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, _THROUGHPUT, rtol=0, atol=0, equal_nan=True)
