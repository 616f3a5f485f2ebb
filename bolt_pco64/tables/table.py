"""Loading and validation of an instance's table (docs/architecture.md §1, §4).

A table has the 17 columns of its instance's card (:mod:`bolt_pco64.instances` says
which are inputs, in ``X`` order, and which are context). Rows are put in *canonical
order* (ascending lexicographic order of the encoded inputs), so that a file's own row
order never changes any result. Every invariant of the card is checked on load (by
:mod:`bolt_pco64.tables.validation`); a table that breaks one is refused with a single
:class:`~bolt_pco64.tables.validation.TableError` that names the file, the column and the first
offending row.

Where an instance's table comes from, first match wins (see :func:`load_table`;
``pco64`` in the names below stands for the instance's name):

1. the ``source`` argument (a path or a :class:`pandas.DataFrame`);
2. the instance's environment variable ``BOLT_PCO64_TABLE``
   (:attr:`~bolt_pco64.instances.Instance.env_table`; a path);
3. the measured table: ``data/pco64.parquet`` in a source checkout, or
   ``pco64.parquet`` in :func:`~bolt_pco64.tables.locations.data_home` (where
   ``bolt-pco64 fetch`` puts it; ``BOLT_PCO64_HOME`` is the data home of every
   instance; :mod:`bolt_pco64.tables.locations` says where each file is looked for);
4. the instance's shipped **reconstruction** from the published traces of the
   measured table, ``pco64_reconstructed.parquet`` (design §7), with a
   :class:`ReconstructedTableWarning` once per process and instance;
5. the instance's shipped, **simulated** stand-in ``pco64_simulated.parquet``,
   with a :class:`SimulatedTableWarning` once per process and instance.

A table file is only ever read, never written to.

**The stand-in keeps its label in any form**: a table is simulated if it is the
shipped stand-in, if its parquet metadata says ``source=simulated``, or if its
content fingerprint is registered (:mod:`bolt_pco64.tables.standins`), so a
DataFrame, a CSV export, a re-saved parquet or a renamed copy of the stand-in
are all labelled simulated (:attr:`Table.is_simulated`, ``str(table.source)``,
the warning).

**So does a reconstruction**: a table is reconstructed if it has the per-row
``source`` column (:data:`~bolt_pco64.tables.validation.RECONSTRUCTION_COLUMNS`, kept
in :attr:`Table.frame` and validated), if its parquet metadata says
``source=reconstructed``, or if its fingerprint is registered
(:mod:`bolt_pco64.tables.reconstruct.registry`); ``str(table.source)`` then carries
"reconstructed from published traces of the measured table; N exact, M
observed, K imputed", and :class:`ReconstructedTableWarning` is issued.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch import Tensor

from bolt_pco64 import instances
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.reconstruct.registry import reconstruction_registry
from bolt_pco64.tables.standins import (
    STANDIN_PREFIX,
    content_fingerprint,
    standin_registry,
)
from bolt_pco64.tables.validation import (
    LIST_COLUMNS,
    ROW_SOURCES,
    TableError,
    parse_float_list,
    reconstruction_label,
    table_error,
    validate_frame,
    validate_reconstruction_columns,
)

# MAX_LOG2 stays importable from here (bolt_pco64.snap names it).
from bolt_pco64.tables.validation import MAX_LOG2 as MAX_LOG2

#: Options for ``pd.read_csv`` so that a float written by ``to_csv`` reads back
#: bit for bit: pandas < 3's default parser can be 1 ulp off, so it is asked for
#: "round_trip"; pandas 3 parses round-trip by default and deprecates the option.
_CSV_READ_OPTIONS: dict[str, str] = (
    {"float_precision": "round_trip"}
    if int(pd.__version__.split(".", 1)[0]) < 3
    else {}
)

__all__ = [
    "LIST_COLUMNS",
    "InstanceLike",
    "ReconstructedTableWarning",
    "SimulatedTableWarning",
    "Table",
    "TableError",
    "TableSource",
    "decode_inputs",
    "encode_inputs",
    "load_table",
    "parse_float_list",
    "read_table_file",
    "reset_simulated_warnings",
]


#: What ``instance=`` arguments accept: a name (``"pco16"``) or an Instance.
InstanceLike = str | Instance

SourceKind = Literal[
    "argument", "dataframe", "environment", "measured", "reconstructed", "simulated"
]


class SimulatedTableWarning(UserWarning):
    """Issued (once per process) when the simulated stand-in table is served."""


class ReconstructedTableWarning(UserWarning):
    """Issued (once per process and instance) when a table reconstructed from
    the published traces is served (design §7)."""


@dataclass(frozen=True)
class TableSource:
    """Where a table came from.

    Attributes:
        kind: ``"argument"`` (a path passed in), ``"dataframe"`` (a DataFrame
            passed in), ``"environment"`` (the instance's ``BOLT_PCO64_TABLE``),
            ``"measured"``
            (the measured table found in a checkout or the data home),
            ``"reconstructed"`` (the shipped reconstruction) or
            ``"simulated"`` (the shipped stand-in).
        path: The file read, or ``None`` for a DataFrame.
        simulated: Whether the table is the simulated stand-in, whichever way
            it was found: the shipped file, parquet metadata
            ``source=simulated``, or a registered
            :func:`~bolt_pco64.tables.standins.content_fingerprint`.
        reconstruction: The reconstruction's label (``"reconstructed from
            published traces of the measured table; N exact, M observed, K
            imputed"``) whichever way it was recognised, else ``""``.
    """

    kind: SourceKind
    path: Path | None
    simulated: bool = False
    reconstruction: str = ""

    @property
    def reconstructed(self) -> bool:
        """Whether the table is a reconstruction from the published traces."""
        return bool(self.reconstruction)

    def __str__(self) -> str:
        where = str(self.path) if self.path is not None else "<DataFrame>"
        label = " [SIMULATED stand-in, not measured data]" if self.simulated else ""
        if self.reconstruction:
            label += f" [{self.reconstruction}]"
        return f"{self.kind}: {where}{label}"


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------


def encode_inputs(
    frame: pd.DataFrame, instance: InstanceLike = DEFAULT_INSTANCE
) -> np.ndarray:
    """Encoded inputs of ``frame`` as an ``N x d`` float64 array (``d`` inputs).

    log2 columns are used as they are; an ordinal column (``zero_stage`` 0/2/3)
    becomes the position of its raw value in the column's levels (0/1/2).
    """
    inst = instances.get_instance(instance)
    columns = list(inst.input_columns)
    raw = frame.loc[:, columns].to_numpy(dtype=np.float64, copy=True)
    for k, spec in enumerate(inst.inputs):
        if spec.encoding == "ordinal":
            levels = np.asarray(spec.levels, dtype=np.float64)
            order = np.argsort(levels)
            raw[:, k] = order[np.searchsorted(levels[order], raw[:, k])]
    return raw


def decode_inputs(
    X: Tensor | np.ndarray | Sequence[float], instance: InstanceLike = DEFAULT_INSTANCE
) -> dict[str, int]:
    """Raw units of one encoded configuration (a length-``d`` vector).

    Returns a dict in input order: sizes for the log2 columns (``dp``, ``tp``,
    ``pp``, ``cp``, ``sp``, ``bucket_mb``, ``chunks``, ``grad_accum_steps``,
    as far as the instance has them as inputs) and the raw ``zero_stage``
    (0/2/3).

    Raises:
        ValueError: If ``X`` has the wrong length or an ordinal is out of range.
    """
    inst = instances.get_instance(instance)
    x = [float(v) for v in (X.tolist() if hasattr(X, "tolist") else X)]
    if len(x) != inst.dim:
        raise ValueError(f"Expected {inst.dim} encoded inputs, got {len(x)}.")
    out: dict[str, int] = {}
    for spec, value in zip(inst.inputs, x, strict=True):
        short = instances.KNOBS[spec.name]
        if spec.encoding == "ordinal":
            k = round(value)
            if not 0 <= k < len(spec.levels):
                raise ValueError(
                    f"Expected a {spec.name} ordinal in 0..{len(spec.levels) - 1}, "
                    f"got {value}."
                )
            out[short] = spec.levels[k]
        else:
            out[short] = 2 ** round(value)
    return out


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


def read_table_file(path: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """Read a parquet or CSV table file and its key-value metadata (unvalidated).

    The format is told by content (parquet's ``PAR1`` magic) or the suffix.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        TableError: If the file is empty, a directory, or cannot be parsed.
    """
    if not path.exists():
        raise FileNotFoundError(f"table file not found: {path}")
    if path.is_dir():
        raise TableError(f"table {path}: expected a file, got a directory")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as err:
        raise TableError(f"table {path}: cannot be read ({err})") from err
    if not magic:
        raise TableError(f"table {path}: the file is empty")
    try:
        if magic == b"PAR1" or path.suffix.lower() in {".parquet", ".pq"}:
            table = pq.read_table(path)
            # Corrupt data (e.g. invalid UTF-8 in a string column) would
            # otherwise surface later, lazily, as a bare ArrowException.
            table.validate(full=True)
            meta = {
                k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
                for k, v in (table.schema.metadata or {}).items()
                if k != b"pandas"
            }
            # The pandas metadata (index, dtypes) is not needed, and a corrupt
            # one would fail inside pyarrow's conversion with arbitrary errors.
            return table.to_pandas(ignore_metadata=True), meta
        return pd.read_csv(path, **_CSV_READ_OPTIONS), {}
    except (
        pa.ArrowException,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        UnicodeDecodeError,
        ValueError,
        OSError,
    ) as err:
        raise TableError(
            f"table {path}: unreadable ({type(err).__name__}: {err})"
        ) from err


#: Instances whose stand-in warning this process has issued.
_WARNED: set[str] = set()
#: Instances whose reconstruction warning this process has issued.
_WARNED_RECONSTRUCTED: set[str] = set()


def reset_simulated_warnings() -> None:
    """Forget which instances' stand-in and reconstruction warnings this
    process has issued, so the next one served warns again (for tests, and
    long-lived processes that want the reminder again)."""
    _WARNED.clear()
    _WARNED_RECONSTRUCTED.clear()


def _warn_reconstructed(table: Table) -> None:
    name = table.instance.name
    if name in _WARNED_RECONSTRUCTED:
        return
    _WARNED_RECONSTRUCTED.add(name)
    where = table.source.path or "a DataFrame"
    warnings.warn(
        f"bolt_pco64 is serving the {name} table {table.source.reconstruction} "
        f"({where}); imputed rows and the columns "
        f"{table.metadata.get('modelled_columns', 'no trace gives')} are modelled. "
        f"Run `bolt-pco64 fetch` or pass table=... to use the measured table.",
        ReconstructedTableWarning,
        stacklevel=4,
    )


def _warn_simulated(table: Table) -> None:
    from bolt_pco64._stack import external_stacklevel

    name = table.instance.name
    if name in _WARNED:
        return
    _WARNED.add(name)
    where = table.source.path or "a DataFrame"
    warnings.warn(
        f"bolt_pco64 is serving a SIMULATED stand-in table ({where}): its numbers "
        f"come from an analytic model, not from the measured {name} sweep. Run "
        f"`bolt-pco64 fetch --problem {name}` or pass table=... to use the "
        "measured table.",
        SimulatedTableWarning,
        stacklevel=external_stacklevel(),
    )


class Table:
    """A validated table of one instance, in canonical order.

    Args:
        frame: The raw table (extra columns other than a reconstruction's
            per-row columns are dropped).
        source: Where it came from.
        metadata: The parquet file's key-value metadata, if any.
        instance: The instance (name or :class:`~bolt_pco64.instances.Instance`)
            whose schema the table must follow.

    Attributes:
        instance: The :class:`~bolt_pco64.instances.Instance`.
        frame: The card's 17 columns in ``instance.columns`` order, rows in
            canonical order (index ``0..N-1``); inputs as int64,
            ``ran_successfully`` as bool, the list columns as tuples of floats;
            then, for a reconstruction, its per-row
            :data:`~bolt_pco64.tables.validation.RECONSTRUCTION_COLUMNS` (validated;
            other extra columns are dropped).
        X: Encoded inputs, an ``N x d``-dim float64 tensor (CPU), ``d`` inputs.
        source: Where the table came from (:class:`TableSource`), with
            ``simulated`` set if the content is a registered stand-in's.
        metadata: The parquet file's key-value metadata (empty for CSV/DataFrame).
        fingerprint: :func:`~bolt_pco64.tables.standins.content_fingerprint` of the table.

    Raises:
        TableError: If the table breaks the instance's schema or invariants.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        source: TableSource,
        metadata: dict[str, str] | None = None,
        instance: InstanceLike = DEFAULT_INSTANCE,
    ) -> None:
        self.instance: Instance = instances.get_instance(instance)
        name = self.instance.name
        where = f"{name} table " + (
            str(source.path) if source.path is not None else "<DataFrame>"
        )
        self.metadata: dict[str, str] = dict(metadata or {})
        labelled = self.metadata.get("instance")
        if labelled is not None and labelled != name:
            raise table_error(
                where,
                None,
                None,
                f"expected a {name} table, got one labelled {labelled!r}",
            )
        clean = validate_frame(frame, where, self.instance)
        extra = validate_reconstruction_columns(
            frame, where, clean["ran_successfully"].to_numpy(dtype=bool)
        )
        if extra is not None:
            clean = pd.concat([clean, extra], axis=1)
        encoded = encode_inputs(clean, self.instance)
        order = np.lexsort(encoded.T[::-1])
        self.frame: pd.DataFrame = clean.iloc[order].reset_index(drop=True)
        self.X: Tensor = torch.from_numpy(np.ascontiguousarray(encoded[order]))
        self.fingerprint: str = content_fingerprint(self)
        simulated = (
            source.simulated
            or self.metadata.get("source") == "simulated"
            or self.fingerprint in standin_registry()
        )
        self.source: TableSource = replace(
            source, simulated=simulated, reconstruction=self._reconstruction_label()
        )

    def _reconstruction_label(self) -> str:
        """The reconstruction label, if this table is recognised as one."""
        if "source" in self.frame.columns:
            counts = self.frame["source"].value_counts()
            return reconstruction_label(*(int(counts.get(s, 0)) for s in ROW_SOURCES))
        entry = reconstruction_registry().get(self.fingerprint)
        if entry is None and self.metadata.get("source") == "reconstructed":
            entry = {s: self.metadata.get(f"counts.{s}", "?") for s in ROW_SOURCES}
        if entry is None:
            return ""
        return reconstruction_label(*(entry[s] for s in ROW_SOURCES))

    def __repr__(self) -> str:
        return (
            f"Table(rows={len(self)}, feasible={self.n_feasible}, source={self.source})"
        )

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def is_simulated(self) -> bool:
        """Whether this is the simulated stand-in rather than measured data."""
        return self.source.simulated

    @property
    def is_reconstructed(self) -> bool:
        """Whether this is a reconstruction from the published traces (design §7)."""
        return self.source.reconstructed

    @property
    def feasible(self) -> Tensor:
        """``N``-dim bool tensor: ``ran_successfully``."""
        return torch.from_numpy(
            self.frame["ran_successfully"].to_numpy(dtype=bool, copy=True)
        )

    @property
    def n_feasible(self) -> int:
        return int(self.frame["ran_successfully"].sum())

    def column(self, name: str, dtype: torch.dtype = torch.double) -> Tensor:
        """A numeric column as an ``N``-dim tensor in canonical order."""
        if name not in self.frame.columns or name in LIST_COLUMNS:
            numeric = [c for c in self.frame.columns if c not in LIST_COLUMNS]
            raise KeyError(f"Expected a numeric column of {numeric}, got {name!r}.")
        return torch.tensor(
            self.frame[name].to_numpy(dtype=np.float64, copy=True), dtype=dtype
        )

    @property
    def bounds(self) -> Tensor:
        """``2 x d``-dim tensor of the per-column min/max of the encoded inputs."""
        return torch.stack([self.X.min(dim=0).values, self.X.max(dim=0).values])

    @property
    def best_row(self) -> int:
        """Canonical index of the best feasible row (the earliest on a tie)."""
        tm = self.frame["throughput_mean"].to_numpy(dtype=np.float64)
        return int(np.nanargmax(np.where(self.frame["ran_successfully"], tm, -np.inf)))

    @property
    def worst_feasible_row(self) -> int:
        """Canonical index of the lowest feasible throughput (earliest on a tie)."""
        tm = self.frame["throughput_mean"].to_numpy(dtype=np.float64)
        return int(np.argmin(np.where(self.frame["ran_successfully"], tm, np.inf)))


def _from_path(path: Path, kind: SourceKind, instance: Instance) -> Table:
    frame, meta = read_table_file(path)
    source = TableSource(kind, path.resolve(), kind == "simulated")
    return Table(frame, source, meta, instance)


def load_table(
    source: str | os.PathLike[str] | pd.DataFrame | Table | None = None,
    *,
    instance: InstanceLike = DEFAULT_INSTANCE,
) -> Table:
    """Load and validate an instance's table.

    Args:
        source: A path to a parquet file or to the raw CSV export (the
            instance's ``raw_csv_filename``, e.g. ``data_64depth-64gpus.csv``),
            ``"standin:<variant>"`` for a shipped stand-in variant
            (:data:`bolt_pco64.tables.standins.STANDIN_VARIANTS`, e.g.
            ``"standin:mbs1"``),
            a DataFrame with the card's columns,
            an already loaded :class:`Table` of ``instance`` (returned as is), or
            ``None`` to search the instance's environment variable
            (``BOLT_PCO64_TABLE``), then its measured table, then its shipped
            reconstruction, then its shipped simulated stand-in (see the
            module docstring).
        instance: The instance, ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`).

    Returns:
        The validated :class:`Table` in canonical order; a simulated one issues
        a :class:`SimulatedTableWarning`, a reconstructed one a
        :class:`ReconstructedTableWarning` (each once per process and
        instance).

    Raises:
        FileNotFoundError: If a named file does not exist.
        TableError: If the table cannot be read or breaks the schema.
        TypeError: If ``source`` is of another type.
        ValueError: If ``instance`` is unknown, a given :class:`Table` is
            another instance's, or the instance ships no such stand-in variant.
    """
    inst = instances.get_instance(instance)
    if isinstance(source, Table):
        if source.instance != inst:
            raise ValueError(
                f"Expected a {inst.name} table, got a {source.instance.name} table."
            )
        return source
    table = _load(source, inst)
    if table.is_simulated:
        _warn_simulated(table)
    if table.is_reconstructed:
        _warn_reconstructed(table)
    return table


def _load(
    source: str | os.PathLike[str] | pd.DataFrame | None, inst: Instance
) -> Table:
    if isinstance(source, pd.DataFrame):
        return Table(source, TableSource("dataframe", None), None, inst)
    if isinstance(source, str) and source.startswith(STANDIN_PREFIX):
        variant = source.removeprefix(STANDIN_PREFIX)
        return _from_path(
            locations.bundled_table_path(inst, variant), "simulated", inst
        )
    if source is not None:
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(
                f"Expected a path, a pandas DataFrame or None, got {type(source).__name__}."
            )
        return _from_path(Path(source).expanduser(), "argument", inst)
    env = os.environ.get(inst.env_table)
    if env:
        return _from_path(Path(env).expanduser(), "environment", inst)
    for path in locations.measured_table_paths(inst):
        if path.is_file():
            return _from_path(path, "measured", inst)
    reconstructed = locations.reconstructed_table_path(inst)
    if reconstructed is not None:
        return _from_path(reconstructed, "reconstructed", inst)
    if not inst.standin_variants:
        raise FileNotFoundError(
            f"Expected a table of {inst.name} (the package ships none for it): "
            f"pass its file or DataFrame, or set {inst.env_table}."
        )
    return _from_path(locations.bundled_table_path(inst), "simulated", inst)
