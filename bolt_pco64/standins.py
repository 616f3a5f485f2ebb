"""Recognising the simulated stand-in by its content (docs/architecture.md §1).

**The stand-in keeps its label in any form.** A table is simulated if it is the
shipped stand-in, if its parquet metadata says ``source=simulated``, or if its
:func:`content_fingerprint` is registered in the package data file
``bolt_pco64/standin_fingerprints.json`` (:func:`standin_registry`) -- so a
DataFrame read from the stand-in, a CSV export, a re-saved parquet or a renamed
copy are all labelled simulated (:attr:`bolt_pco64.table.Table.is_simulated`,
``str(table.source)``, the warning). The fingerprint covers what the
generator's noise seed does not change: the encoded inputs in canonical order,
``ran_successfully`` and ``peak_mem`` rounded to :data:`FINGERPRINT_DECIMALS`
decimals (not the throughputs).

This module sits below :mod:`bolt_pco64.table`: it works on a table's content
(:class:`TableContent`), never on the ``Table`` class. Registering a new
stand-in, which needs a loaded table, is :mod:`bolt_pco64.simulate.registry`'s
job.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
from torch import Tensor

from bolt_pco64.instances import Instance

__all__ = [
    "FINGERPRINT_DECIMALS",
    "STANDIN_REGISTRY",
    "TableContent",
    "content_fingerprint",
    "standin_registry",
]

#: Package data file of the registered stand-in fingerprints.
STANDIN_REGISTRY = "standin_fingerprints.json"
#: Decimals of ``peak_mem`` (GB) that enter :func:`content_fingerprint`.
FINGERPRINT_DECIMALS = 3


class TableContent(Protocol):
    """What :func:`content_fingerprint` reads of a table (a validated
    :class:`~bolt_pco64.table.Table` has it all).

    Attributes:
        instance: The table's instance.
        X: Encoded inputs in canonical order, an ``N x d``-dim tensor.
        frame: The validated rows in canonical order (``ran_successfully`` and
            ``peak_mem`` are read).
    """

    @property
    def instance(self) -> Instance: ...

    @property
    def X(self) -> Tensor: ...

    @property
    def frame(self) -> pd.DataFrame: ...


def content_fingerprint(table: TableContent) -> str:
    """A hash of the table's content that the stand-in's noise seed leaves alone.

    SHA-256 (hex) of the input column names, the encoded inputs in canonical
    order (int64), ``ran_successfully`` and ``peak_mem`` rounded to
    :data:`FINGERPRINT_DECIMALS` decimals (``inf`` for OOM rows), all
    little-endian. The file's format, name, row order and metadata do not enter
    it, nor do the throughputs, times and their spread (they change with the
    generator's noise seed).
    """
    digest = hashlib.sha256()
    digest.update(json.dumps(list(table.instance.input_columns)).encode())
    digest.update(table.X.numpy().astype("<i8").tobytes())
    digest.update(table.frame["ran_successfully"].to_numpy(dtype="u1").tobytes())
    peak = table.frame["peak_mem"].to_numpy(dtype=np.float64)
    digest.update(np.round(peak, FINGERPRINT_DECIMALS).astype("<f8").tobytes())
    return digest.hexdigest()


def _registry_path() -> Path:
    return Path(__file__).resolve().parent / STANDIN_REGISTRY


@functools.cache
def standin_registry() -> dict[str, dict[str, str]]:
    """The registered stand-in fingerprints: ``fingerprint -> entry``.

    Each entry has ``instance`` (e.g. ``"pco64"``), ``generator_version`` and
    ``file``. Read once per process from the package data file
    ``standin_fingerprints.json``; empty if the file is missing.
    """
    path = _registry_path()
    if not path.is_file():
        return {}
    registry = json.loads(path.read_text(encoding="utf-8"))
    return dict(registry["fingerprints"])
