"""Parsing and validation of a table's cells against its card (docs/architecture.md §1).

:func:`validate_frame` checks every invariant of an instance's card on a raw
frame and returns the clean one; a frame that breaks one is refused with a
single :class:`TableError` that names where it came from, the column and the
first offending row (:func:`table_error` writes that message).
:func:`parse_float_list` reads one cell of a list column without ``eval``.
:func:`validate_reconstruction_columns` checks the optional per-row columns of
a table reconstructed from published traces (:data:`RECONSTRUCTION_COLUMNS`).

:mod:`bolt_pco64.tables.table` loads a table through this module and is the public
home of :class:`TableError` and :func:`parse_float_list`; this module depends
only on :mod:`bolt_pco64.instances`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bolt_pco64 import instances
from bolt_pco64.instances import Instance

__all__ = [
    "LIST_COLUMNS",
    "MAX_LOG2",
    "RECONSTRUCTION_COLUMNS",
    "ROW_SOURCES",
    "TableError",
    "parse_float_list",
    "reconstruction_label",
    "table_error",
    "validate_frame",
    "validate_reconstruction_columns",
]

#: Columns that hold a list of numbers, published as a string such as "[1.0, 2.5]".
LIST_COLUMNS: tuple[str, ...] = ("all_time_steps", "peak_mem_per_gpu")
#: Largest log2 value an input may take (2**30 of anything is out of range).
MAX_LOG2 = 30

_FLOAT_COLUMNS = (
    "throughput_mean",
    "throughput_std",
    "peak_mem_normalised",
    "overall_time",
    "peak_mem",
)


#: The per-row columns of a table reconstructed from published traces (design
#: §7), optional in any table and validated where present: where the row's
#: values come from, the throughput's standard error, the probability that the
#: configuration runs, the trace observations behind it, whether the row's
#: existence is inferred.
RECONSTRUCTION_COLUMNS: tuple[str, ...] = (
    "source",
    "throughput_se",
    "feasible_probability",
    "n_observations",
    "inferred",
)
#: The values of a reconstruction's ``source`` column.
ROW_SOURCES: tuple[str, ...] = ("exact", "observed", "imputed")


def reconstruction_label(exact: int, observed: int, imputed: int) -> str:
    """The label a reconstruction carries in every form (design §7)."""
    return (
        "reconstructed from published traces of the measured table; "
        f"{exact} exact, {observed} observed, {imputed} imputed"
    )


class TableError(ValueError):
    """A table that breaks the card's schema or invariants (or cannot be read)."""


# --------------------------------------------------------------------------
# Parsing helpers
# --------------------------------------------------------------------------


#: Reprs that wrap a number in a list cell, e.g. ``np.float64(0.5)`` (numpy >= 2).
_NUMBER_WRAPPERS = (
    "np.float64(",
    "np.float32(",
    "np.float16(",
    "np.int64(",
    "np.int32(",
    "numpy.float64(",
    "float(",
)
#: The brackets a list cell may come in: a list, or a tuple (what pandas writes
#: for the tuples of a loaded :attr:`~bolt_pco64.tables.table.Table.frame`).
_BRACKETS = {"[": "]", "(": ")"}
#: What a list cell may look like, for error messages.
_LIST_FORMS = "'[1.0, 2.0]', '(1.0, 2.0)' or '[1. 2.]'"


def parse_float_list(value: object) -> tuple[float, ...]:
    """Parse one list cell without ``eval``.

    Accepted, so that every way pandas writes a list column reads back: a
    list, tuple or array; or a string in one of the forms ``str`` gives them
    -- a list ``"[1.0, 2.5]"``, a tuple ``"(1.0, 2.5)"`` (also ``"(1.0,)"``),
    and numpy's ``"[1.  2.5]"`` (numbers separated by white space, line
    breaks included; numpy prints 8 significant digits, so that form keeps
    only those). Numbers may be wrapped as numpy >= 2 prints its scalars
    (``np.float64(0.5)``). Missing cells (None/NaN), ``"[]"`` and ``"()"`` give
    an empty tuple. Tokens are read with :class:`float` (so ``nan`` and ``inf``
    are accepted).

    Raises:
        ValueError: If the cell is not a list of numbers: unbalanced or other
            brackets, an empty entry (``"[1.0,, 2.0]"``), a nested list, a
            non-number, or numpy's summary of a long array (``"[1. 2. ... 9.]"``),
            which has lost values.
    """
    if value is None:
        return ()
    if isinstance(value, float) and math.isnan(value):
        return ()
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            return tuple(float(v) for v in value)
        except (TypeError, ValueError):  # None, nested lists, strings, complex
            raise ValueError(
                f"expected a list of numbers, got {str(list(value))[:40]}"
            ) from None
    if not isinstance(value, str):
        raise ValueError(f"expected a list of numbers, got {type(value).__name__}")
    text = value.strip()
    if text == "" or text.lower() in {"nan", "none", "null"}:
        return ()
    if len(text) < 2 or _BRACKETS.get(text[0]) != text[-1]:
        raise ValueError(f"expected a list like {_LIST_FORMS}, got {value[:40]!r}")
    inner = text[1:-1].strip()
    if not inner:
        return ()
    if "..." in inner:
        raise ValueError(
            "expected every value, got numpy's summary of a long array ('...'), "
            f"which has lost values: {value[:40]!r}"
        )
    if "," in inner:
        tokens = inner.split(",")
        if len(tokens) > 1 and not tokens[-1].strip():
            tokens.pop()  # a trailing comma, as in a one-element tuple "(1.0,)"
    else:
        tokens = inner.split()  # numpy's str of an array, or a single number
    return tuple(_parse_number(token) for token in tokens)


def _parse_number(token: str) -> float:
    """One number of a list cell (possibly wrapped, as ``np.float64(0.5)``)."""
    token = token.strip()
    for wrapper in _NUMBER_WRAPPERS:
        if token.startswith(wrapper) and token.endswith(")"):
            token = token[len(wrapper) : -1].strip()
            break
    try:
        return float(token)
    except ValueError:
        raise ValueError(f"expected a number in the list, got {token[:40]!r}") from None


def table_error(
    where: str, column: str | None, row: int | None, what: str
) -> TableError:
    """A :class:`TableError` reading ``"<where>, column <c>, row <i>: <what>"``.

    The column and the row are left out where they are ``None``.
    """
    parts = [where]
    if column is not None:
        parts.append(f"column {column!r}")
    if row is not None:
        parts.append(f"row {row}")
    return TableError(": ".join([", ".join(parts), what]))


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _numeric(frame: pd.DataFrame, column: str, where: str) -> np.ndarray:
    """A column as float64, refusing cells that are not numbers."""
    series = frame[column]
    if pd.api.types.is_bool_dtype(series.dtype):
        raise table_error(
            where, column, 0, f"expected numbers, got booleans ({series.dtype})"
        )
    numbers = pd.to_numeric(series, errors="coerce")
    for dtype in (series.dtype, numbers.dtype):
        if getattr(dtype, "kind", "O") in "cmM":  # complex, timedelta, datetime
            raise table_error(where, column, 0, f"expected real numbers, got {dtype}")
    values = numbers.to_numpy(dtype=np.float64)
    bad = np.isnan(values) & ~series.isna().to_numpy()
    if bad.any():
        i = _first(bad)
        raise table_error(
            where, column, i, f"expected a number, got {series.iloc[i]!r}"
        )
    return values


def _boolean(frame: pd.DataFrame, column: str, where: str) -> np.ndarray:
    series = frame[column]
    if pd.api.types.is_bool_dtype(series.dtype) and not series.isna().any():
        return series.to_numpy(dtype=bool)
    truth = {
        "true": True,
        "1": True,
        "1.0": True,
        "false": False,
        "0": False,
        "0.0": False,
    }
    out = np.zeros(len(series), dtype=bool)
    for i, v in enumerate(series.tolist()):
        if isinstance(v, (bool, np.bool_)) or (
            isinstance(v, (int, np.integer, float, np.floating)) and v in (0, 1)
        ):
            out[i] = bool(v)
        elif isinstance(v, str) and v.strip().lower() in truth:
            out[i] = truth[v.strip().lower()]
        else:
            raise table_error(where, column, i, f"expected True or False, got {v!r}")
    return out


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def _first_bad(bad: np.ndarray) -> int | None:
    """The first row where ``bad`` holds, ``None`` if none does."""
    return _first(bad) if bad.any() else None


def _check_header(raw: pd.DataFrame, where: str, columns: tuple[str, ...]) -> None:
    """Every column of the card once, and at least one row."""
    missing = [c for c in columns if c not in raw.columns]
    if missing:
        raise table_error(
            where,
            missing[0],
            None,
            f"missing column(s) {missing}; expected {list(columns)}",
        )
    doubled = [c for c in columns if int((raw.columns == c).sum()) > 1]
    if doubled:
        raise table_error(where, doubled[0], None, "the column appears more than once")
    if len(raw) == 0:
        raise table_error(where, None, None, "the table has no rows")


def _integer_columns(
    raw: pd.DataFrame, where: str, inst: Instance
) -> dict[str, np.ndarray]:
    """The inputs and the context as int64: integers, on their levels (or log2
    values in ``[0, MAX_LOG2]``)."""
    levels = {spec.name: spec.levels for spec in inst.inputs if spec.levels}
    ints = {}
    for column in (*inst.input_columns, *inst.context_columns):
        v = _numeric(raw, column, where)
        if (i := _first_bad(~np.isfinite(v))) is not None:
            raise table_error(
                where, column, i, f"expected a finite integer, got {v[i]}"
            )
        if (i := _first_bad(v != np.round(v))) is not None:
            raise table_error(where, column, i, f"expected an integer, got {v[i]}")
        if column in levels:
            allowed = list(levels[column])
            if (i := _first_bad(~np.isin(v, allowed))) is not None:
                what = f"expected one of {allowed}, got {v[i]:g}"
                raise table_error(where, column, i, what)
        elif (i := _first_bad((v < 0) | (v > MAX_LOG2))) is not None:
            what = f"expected a log2 value in [0, {MAX_LOG2}], got {v[i]:g}"
            raise table_error(where, column, i, what)
        ints[column] = v.astype(np.int64)
    return ints


def _check_context(ints: dict[str, np.ndarray], where: str, inst: Instance) -> None:
    """A context column is one constant (it is not searched)."""
    for column in inst.context_columns:
        context = ints[column]
        if (i := _first_bad(context != context[0])) is None:
            continue
        others = sorted(
            other.name
            for other in instances.INSTANCES.values()
            if column in other.input_columns
        )
        hint = f" (it is an input of {', '.join(others)})" if others else ""
        raise table_error(
            where,
            column,
            i,
            f"expected a constant (context of {inst.name}, not an input), got "
            f"{context[i]} after {context[0]}{hint}",
        )


def _check_unique_inputs(
    ints: dict[str, np.ndarray], where: str, inst: Instance
) -> None:
    """No configuration twice."""
    inputs = pd.DataFrame({c: ints[c] for c in inst.input_columns})

    if (i := _first_bad(inputs.duplicated(keep="first").to_numpy())) is not None:
        first = _first((inputs == inputs.iloc[i]).all(axis=1).to_numpy())
        what = (
            f"duplicate configuration {inputs.iloc[i].tolist()} (same as row {first})"
        )
        raise table_error(where, "(inputs)", i, what)


def _check_outputs(
    feasible: np.ndarray, floats: dict[str, np.ndarray], where: str
) -> None:
    """The outputs of a feasible row are finite, those of an OOM row absent
    (one shared positive pad of ``peak_mem_normalised``)."""

    def check(column: str, ok: np.ndarray, expected: str) -> None:
        if (i := _first_bad(~ok)) is not None:
            state = "feasible" if feasible[i] else "infeasible (OOM)"
            raise table_error(
                where,
                column,
                i,
                f"expected {expected} for a {state} row (ran_successfully="
                f"{bool(feasible[i])}), got {floats[column][i]}",
            )

    tm, ts, ot, pm, pn = (
        floats[c]
        for c in (
            "throughput_mean",
            "throughput_std",
            "overall_time",
            "peak_mem",
            "peak_mem_normalised",
        )
    )
    ok = feasible
    check(
        "throughput_mean", np.where(ok, np.isfinite(tm), np.isnan(tm)), "finite / NaN"
    )
    check(
        "throughput_std",
        np.where(ok, np.isfinite(ts) & (ts >= 0), np.isnan(ts)),
        "finite >= 0 / NaN",
    )
    check("overall_time", np.where(ok, np.isfinite(ot), np.isnan(ot)), "finite / NaN")
    check("peak_mem", np.where(ok, np.isfinite(pm), np.isposinf(pm)), "finite / inf")
    check(
        "peak_mem_normalised",
        np.where(ok, np.isfinite(pn) & (pn < 0), np.isfinite(pn) & (pn > 0)),
        "a finite value < 0 / a finite positive pad",
    )
    if not feasible.any():
        raise table_error(
            where,
            "ran_successfully",
            None,
            "expected at least one feasible row, got none",
        )
    if (~feasible).any():
        pad = pn[~feasible][0]
        check(
            "peak_mem_normalised",
            np.where(~feasible, pn == pad, True),
            f"the same pad {pad} as the first OOM row",
        )


def _list_columns(raw: pd.DataFrame, where: str) -> dict[str, list[tuple[float, ...]]]:
    """The list columns parsed into tuples of floats (:func:`parse_float_list`)."""
    lists = {}
    for column in LIST_COLUMNS:
        parsed = []
        for i, cell in enumerate(raw[column].tolist()):
            try:
                parsed.append(parse_float_list(cell))
            except ValueError as err:
                raise table_error(where, column, i, str(err)) from None
        lists[column] = parsed
    return lists


def validate_frame(raw: pd.DataFrame, where: str, inst: Instance) -> pd.DataFrame:
    """Check every invariant of docs/architecture.md §1 and return a clean frame.

    The returned frame has exactly the instance's 17 columns in
    :attr:`~bolt_pco64.instances.Instance.columns` order (extra columns are
    dropped), integer inputs and context, boolean ``ran_successfully``, float
    outputs and the list columns parsed into tuples of floats; rows are still
    in file order.
    """
    _check_header(raw, where, inst.columns)
    raw = raw.reset_index(drop=True)
    ints = _integer_columns(raw, where, inst)
    _check_context(ints, where, inst)
    feasible = _boolean(raw, "ran_successfully", where)
    floats = {column: _numeric(raw, column, where) for column in _FLOAT_COLUMNS}
    _check_unique_inputs(ints, where, inst)
    _check_outputs(feasible, floats, where)
    cells: dict[str, object] = {
        **ints,
        "ran_successfully": feasible,
        **floats,
        **_list_columns(raw, where),
    }
    frame = pd.DataFrame({c: cells[c] for c in inst.columns})
    for column in LIST_COLUMNS:
        frame[column] = frame[column].astype(object)
    return frame


def validate_reconstruction_columns(
    raw: pd.DataFrame, where: str, feasible: np.ndarray
) -> pd.DataFrame | None:
    """Check a reconstruction's per-row columns, if ``raw`` has any.

    Returns ``None`` if ``raw`` has none of :data:`RECONSTRUCTION_COLUMNS`,
    else all of them, clean (rows in ``raw``'s order): ``source`` one of
    :data:`ROW_SOURCES`; ``throughput_se`` 0 for an exact row that ran,
    finite ``>= 0`` for any row that ran, NaN for one that did not;
    ``feasible_probability`` in ``[0, 1]``; ``n_observations`` an integer
    ``>= 0``, 0 where imputed; ``inferred`` a boolean, false where a trace
    observed the row. ``feasible`` is the clean ``ran_successfully``.
    """
    present = [c for c in RECONSTRUCTION_COLUMNS if c in raw.columns]
    if not present:
        return None
    missing = [c for c in RECONSTRUCTION_COLUMNS if c not in raw.columns]
    if missing:
        raise table_error(
            where,
            missing[0],
            None,
            f"missing column(s) {missing}: a reconstruction has all of "
            f"{list(RECONSTRUCTION_COLUMNS)}",
        )
    raw = raw.reset_index(drop=True)
    source = raw["source"].astype(object).to_numpy()
    if (i := _first_bad(~np.isin(source, ROW_SOURCES))) is not None:
        what = f"expected one of {list(ROW_SOURCES)}, got {source[i]!r}"
        raise table_error(where, "source", i, what)
    source = source.astype(str)
    se = _numeric(raw, "throughput_se", where)
    ok = np.where(feasible, np.isfinite(se) & (se >= 0), np.isnan(se))
    ok &= ~(feasible & (source == "exact")) | (se == 0)
    if (i := _first_bad(~ok)) is not None:
        what = (
            "expected 0 for an exact row that ran, a finite value >= 0 for "
            f"another row that ran, NaN for one that did not; got {se[i]}"
        )
        raise table_error(where, "throughput_se", i, what)
    prob = _numeric(raw, "feasible_probability", where)
    if (i := _first_bad(~((prob >= 0) & (prob <= 1)))) is not None:
        what = f"expected a value in [0, 1], got {prob[i]}"
        raise table_error(where, "feasible_probability", i, what)
    k = _numeric(raw, "n_observations", where)
    bad = ~np.isfinite(k) | (k < 0) | (k != np.round(k))
    if (i := _first_bad(bad | ((source == "imputed") & (k != 0)))) is not None:
        what = f"expected an integer >= 0 (0 where imputed), got {k[i]}"
        raise table_error(where, "n_observations", i, what)
    inferred = _boolean(raw, "inferred", where)
    if (i := _first_bad(inferred & (source != "imputed"))) is not None:
        what = f"expected False for a row a trace observed ({source[i]})"
        raise table_error(where, "inferred", i, what)
    return pd.DataFrame(
        {
            "source": source,
            "throughput_se": se,
            "feasible_probability": prob,
            "n_observations": k.astype(np.int64),
            "inferred": inferred,
        }
    )
