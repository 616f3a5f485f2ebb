"""Recognising a reconstruction by its content (design §7).

A table is a reconstruction if it has a valid per-row ``source`` column
(:data:`bolt_pco64.tables.validation.RECONSTRUCTION_COLUMNS`), if its parquet
metadata says ``source=reconstructed``, or if its
:func:`~bolt_pco64.tables.standins.content_fingerprint` is registered in the package
data file ``bolt_pco64/tables/reconstruction_fingerprints.json`` (kept apart from the
stand-ins' registry) -- so a CSV export with only the card's columns is still
recognised. After regenerating the shipped reconstructions, rewrite the file
with :func:`bolt_pco64.tables.reconstruct.build.register_reconstructions` (it also
forgets this process's cached copy). Light: no model code is imported.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

__all__ = ["RECONSTRUCTION_REGISTRY", "reconstruction_registry", "registry_path"]

#: Package data file of the registered reconstruction fingerprints.
RECONSTRUCTION_REGISTRY = "reconstruction_fingerprints.json"


def registry_path() -> Path:
    """Where the registry file lives (inside the package)."""
    return Path(__file__).resolve().parent.parent / RECONSTRUCTION_REGISTRY


@functools.cache
def reconstruction_registry() -> Mapping[str, dict[str, str]]:
    """The registered reconstructions (read-only): ``fingerprint -> entry``.

    Each entry has ``instance``, ``generator_version``, ``file`` and the
    ``exact``, ``observed`` and ``imputed`` row counts (as strings). Read once
    per process (the one mapping every caller shares, so none may change it);
    empty if the file is missing.
    """
    path = registry_path()
    if not path.is_file():
        return MappingProxyType({})
    return MappingProxyType(json.loads(path.read_text(encoding="utf-8")))
