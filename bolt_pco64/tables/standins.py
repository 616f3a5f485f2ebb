"""Recognising the simulated stand-in by its content (docs/architecture.md §1).

**The stand-in keeps its label in any form.** A table is simulated if it is the
shipped stand-in, if its parquet metadata says ``source=simulated``, or if its
:func:`content_fingerprint` is registered in the package data file
``bolt_pco64/tables/standin_fingerprints.json`` (:func:`standin_registry`) -- so a
DataFrame read from the stand-in, a CSV export, a re-saved parquet or a renamed
copy are all labelled simulated (:attr:`bolt_pco64.tables.table.Table.is_simulated`,
``str(table.source)``, the warning). The fingerprint covers what the
generator's noise seed does not change: the encoded inputs in canonical order,
``ran_successfully`` and ``peak_mem`` rounded to :data:`FINGERPRINT_DECIMALS`
decimals (not the throughputs).

**Variants.** An instance's stand-in ships in one or more *variants*, each a
reading of the job that the card cannot rule out (the instance's
:attr:`~bolt_pco64.instances.Instance.standin_variants`, by name
:data:`STANDIN_VARIANTS`; the first is the default, in
``<instance>_simulated.parquet``; the others in
``<instance>_simulated_<variant>.parquet``, :func:`standin_filename`).
:mod:`bolt_pco64.tables.simulate.variants` says what each reads; here are only their
names, so that a table source ``"standin:<variant>"`` resolves without the
generator.

This module sits below :mod:`bolt_pco64.tables.table`: it works on a table's content
(:class:`TableContent`), never on the ``Table`` class. Registering a new
stand-in, which needs a loaded table, is :mod:`bolt_pco64.tables.simulate.registry`'s
job.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

import numpy as np

from bolt_pco64.instances import INSTANCES, Instance

if TYPE_CHECKING:
    import pandas as pd
    from torch import Tensor

__all__ = [
    "FINGERPRINT_DECIMALS",
    "STANDIN_PREFIX",
    "STANDIN_REGISTRY",
    "STANDIN_VARIANTS",
    "TableContent",
    "check_variant",
    "content_fingerprint",
    "default_variant",
    "standin_filename",
    "standin_registry",
]

#: Package data file of the registered stand-in fingerprints.
STANDIN_REGISTRY = "standin_fingerprints.json"
#: Decimals of ``peak_mem`` (GB) that enter :func:`content_fingerprint`.
FINGERPRINT_DECIMALS = 3
#: A table source ``"standin:<variant>"`` names a shipped stand-in variant.
STANDIN_PREFIX = "standin:"
#: The shipped stand-in variants of each instance, by name; the first is the
#: default (derived: each instance's ``standin_variants``).
STANDIN_VARIANTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {name: inst.standin_variants for name, inst in INSTANCES.items()}
)


def check_variant(instance: Instance, variant: str | None = None) -> str:
    """``variant``, or the instance's default variant for ``None``.

    Raises:
        ValueError: If the instance ships no such variant.
    """
    names = instance.standin_variants
    if variant is None and names:
        return names[0]
    if variant not in names:
        raise ValueError(
            f"Expected a stand-in variant of {list(names)} for {instance.name}, "
            f"got {variant!r}."
        )
    return variant


def default_variant(instance: Instance) -> str:
    """The variant the instance's stand-in ships by default."""
    return check_variant(instance, None)


def standin_filename(instance: Instance, variant: str | None = None) -> str:
    """File name of a shipped stand-in variant (the default: ``pco64_simulated.parquet``).

    Raises:
        ValueError: If the instance ships no such variant.
    """
    return instance.standin_variant_filename(check_variant(instance, variant))


class TableContent(Protocol):
    """What :func:`content_fingerprint` reads of a table (a validated
    :class:`~bolt_pco64.tables.table.Table` has it all).

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
def standin_registry() -> Mapping[str, dict[str, str]]:
    """The registered stand-in fingerprints (read-only): ``fingerprint -> entry``.

    Each entry has ``instance`` (e.g. ``"pco64"``), ``generator_version`` and
    ``file``; entries from generator 2.1 on also name the ``variant``. Read
    once per process from the package data file ``standin_fingerprints.json``
    (the one mapping every caller shares, so none may change it); empty if
    the file is missing.
    """
    path = _registry_path()
    if not path.is_file():
        return MappingProxyType({})
    registry = json.loads(path.read_text(encoding="utf-8"))
    return MappingProxyType(dict(registry["fingerprints"]))
