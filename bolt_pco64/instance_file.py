"""An :class:`~bolt_pco64.instances.Instance` described in a TOML file.

A user's own sweep (another cluster, model or set of knobs) is served without
an edit inside the package: describe the instance in TOML, then
``bolt-pco64 bench --instance my_cluster.toml --table my_sweep.parquet`` (or
``PCO(instance=read_instance("my_cluster.toml"), table=...)``). The file's
keys are the :class:`~bolt_pco64.instances.Instance` fields::

    name = "my8"                    # an identifier
    num_gpus = 8
    num_hosts = 1
    gpu_memory_gb = 80.0
    throughput_unit = "samples/s/gpu"   # or "steps/s" (default samples/s/gpu)

    [model]                         # every key required
    num_layers = 16
    num_attention_heads = 16
    hidden_size = 2048
    ffn_hidden_size = 8192
    batch_size = 64
    seq_length = 2048

    [[inputs]]                      # in X order; columns of KNOBS
    name = "log2_dp_size"
    low = 0                         # bounds of the encoded value
    high = 3

    [[inputs]]
    name = "zero_stage"             # ordinal over ZERO_STAGES by default
    low = 0
    high = 2

    [context]                       # columns constant over the table
    log2_cp_size = 0

    [published]                     # optional: figures of the measured table
    rows = 40
    feasible = 30
    best_value = 1.25
    best_config = [2, 1, 0, 1, 6, 0]

Optional top-level strings: ``dataset_id``, ``dataset_revision``,
``raw_csv_filename``. An input takes ``encoding`` (``"log2"`` or
``"ordinal"``) and ``levels`` (the raw values of an ordinal column). Every
error is an :class:`InstanceFileError` that names the file and the key.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bolt_pco64.instances import (
    ZERO_STAGES,
    InputSpec,
    Instance,
    ModelShape,
    PublishedFigures,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["InstanceFileError", "instance_from_dict", "read_instance"]

_TOP = (
    "name",
    "num_gpus",
    "num_hosts",
    "gpu_memory_gb",
    "throughput_unit",
    "model",
    "inputs",
    "context",
    "published",
    "dataset_id",
    "dataset_revision",
    "raw_csv_filename",
    "trace_files",
)
_MODEL = (
    "num_layers",
    "num_attention_heads",
    "hidden_size",
    "ffn_hidden_size",
    "batch_size",
    "seq_length",
)
_INPUT = ("name", "low", "high", "encoding", "levels")
_PUBLISHED = (
    "rows",
    "feasible",
    "best_value",
    "best_config",
    "best_peak_mem_gb",
    "max_feasible_peak_gb",
)


#: What a count must be.
_POSITIVE = "an integer >= 1"


class InstanceFileError(ValueError):
    """An instance description that cannot be read; the message names the
    file (or ``<dict>``) and the key."""


class _Reader:
    """Typed access to one description's values, with located errors."""

    def __init__(self, where: str) -> None:
        self.where = where

    def error(self, key: str, message: str) -> InstanceFileError:
        at = f"{self.where}: {key}: " if key else f"{self.where}: "
        return InstanceFileError(f"{at}{message}.")

    def table(self, data: Any, key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise self.error(key, f"expected a table, got {data!r}")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise self.error(
                key, f"expected keys among {list(allowed)}, got unknown {unknown}"
            )
        return dict(data)

    def get(
        self,
        data: Mapping[str, Any],
        key: str,
        where: str,
        check: Callable[[Any], bool],
        expected: str,
        default: Any = ...,
    ) -> Any:
        name = f"{where}.{key}" if where else key
        if key not in data:
            if default is ...:
                raise self.error(name, f"expected {expected}, got nothing (missing)")
            return default
        value = data[key]
        if not check(value):
            raise self.error(name, f"expected {expected}, got {value!r}")
        return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_positive_int(v: Any) -> bool:
    return _is_int(v) and v >= 1


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_int(x) for x in v)


def instance_from_dict(data: Mapping[str, Any], where: str = "<dict>") -> Instance:
    """The :class:`~bolt_pco64.instances.Instance` a parsed description states.

    Args:
        data: The description's keys (the module docstring's schema).
        where: What the description came from, for errors (a file name).

    Raises:
        InstanceFileError: If a key is missing, unknown or of the wrong type,
            or the description is inconsistent (the message names the key).
    """
    r = _Reader(where)
    top = r.table(data, "", _TOP)
    model = _model(r, top)
    raw_inputs = r.get(
        top,
        "inputs",
        "",
        lambda v: isinstance(v, list) and len(v) > 0,
        "a non-empty array of tables",
    )
    inputs = tuple(_input(r, spec, f"inputs[{k}]") for k, spec in enumerate(raw_inputs))
    context_data = r.get(
        top, "context", "", lambda v: isinstance(v, Mapping), "a table", {}
    )
    context = tuple(
        (str(k), r.get(context_data, k, "context", _is_int, "an integer"))
        for k in context_data
    )
    published = _published(r, top) if "published" in top else None
    fields = _scalar_fields(r, top)
    try:
        return Instance(
            model=model, inputs=inputs, context=context, published=published, **fields
        )
    except ValueError as err:
        raise r.error("", str(err).rstrip(".")) from None


def _model(r: _Reader, top: Mapping[str, Any]) -> ModelShape:
    """The ``[model]`` table: every key an integer >= 1."""
    data = r.table(r.get(top, "model", "", lambda v: True, "a table"), "model", _MODEL)
    return ModelShape(
        **{k: r.get(data, k, "model", _is_positive_int, _POSITIVE) for k in _MODEL}
    )


def _published(r: _Reader, top: Mapping[str, Any]) -> PublishedFigures:
    """The optional ``[published]`` table: the card's figures."""
    pub = r.table(top["published"], "published", _PUBLISHED)
    return PublishedFigures(
        rows=r.get(pub, "rows", "published", _is_positive_int, _POSITIVE),
        feasible=r.get(pub, "feasible", "published", _is_int, "an integer"),
        best_value=float(r.get(pub, "best_value", "published", _is_number, "a number")),
        best_config=tuple(
            r.get(pub, "best_config", "published", _is_int_list, "an array of integers")
        ),
        best_peak_mem_gb=r.get(
            pub, "best_peak_mem_gb", "published", _is_number, "a number", None
        ),
        max_feasible_peak_gb=r.get(
            pub, "max_feasible_peak_gb", "published", _is_number, "a number", None
        ),
    )


def _scalar_fields(r: _Reader, top: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level keys that are not tables, checked (defaults where optional)."""
    return {
        "name": r.get(top, "name", "", _is_str, "a string"),
        "num_gpus": r.get(top, "num_gpus", "", _is_positive_int, _POSITIVE),
        "num_hosts": r.get(top, "num_hosts", "", _is_positive_int, _POSITIVE),
        "gpu_memory_gb": float(
            r.get(
                top,
                "gpu_memory_gb",
                "",
                lambda v: _is_number(v) and v > 0,
                "a number > 0",
            )
        ),
        "throughput_unit": r.get(
            top,
            "throughput_unit",
            "",
            lambda v: v in ("samples/s/gpu", "steps/s"),
            "'samples/s/gpu' or 'steps/s'",
            "samples/s/gpu",
        ),
        "dataset_id": r.get(top, "dataset_id", "", _is_str, "a string", ""),
        "dataset_revision": r.get(top, "dataset_revision", "", _is_str, "a string", ""),
        "raw_csv_filename": r.get(top, "raw_csv_filename", "", _is_str, "a string", ""),
        "trace_files": tuple(
            r.get(
                top,
                "trace_files",
                "",
                lambda v: isinstance(v, list) and all(map(_is_str, v)),
                "an array of strings",
                [],
            )
        ),
    }


def _input(r: _Reader, data: Any, where: str) -> InputSpec:
    spec = r.table(data, where, _INPUT)
    name = r.get(spec, "name", where, _is_str, "a column name")
    ordinal_default = "ordinal" if name == "zero_stage" else "log2"
    encoding = r.get(
        spec,
        "encoding",
        where,
        lambda v: v in ("log2", "ordinal"),
        "'log2' or 'ordinal'",
        ordinal_default,
    )
    levels_default = (
        list(ZERO_STAGES) if encoding == "ordinal" and name == "zero_stage" else []
    )
    levels = r.get(
        spec, "levels", where, _is_int_list, "an array of integers", levels_default
    )
    if encoding == "ordinal" and not levels:
        raise r.error(
            f"{where}.levels", "expected the raw values of an ordinal input, got none"
        )
    return InputSpec(
        name=name,
        low=r.get(spec, "low", where, _is_int, "an integer"),
        high=r.get(spec, "high", where, _is_int, "an integer"),
        encoding=encoding,
        levels=tuple(levels) if encoding == "ordinal" else (),
    )


def read_instance(path: str | os.PathLike[str]) -> Instance:
    """The :class:`~bolt_pco64.instances.Instance` described in a TOML file.

    Raises:
        FileNotFoundError: If the file does not exist.
        InstanceFileError: If it is not valid TOML (the parser's line and
            column) or breaks the schema (the key).
    """
    path = Path(path).expanduser()
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InstanceFileError(f"{path}: not valid TOML: {err}.") from None
    return instance_from_dict(data, str(path))
