"""Registering a regenerated stand-in's fingerprint (docs/architecture.md §1).

Whenever a shipped stand-in is regenerated and its memory model or candidates
changed, add its entry to the package registry that
:mod:`bolt_pco64.tables.standins` recognises it by: run ::

    python -c "from bolt_pco64.tables.simulate.registry import refresh_standin_registry as r; r('data/pco16_simulated.parquet')"

(one or more paths), which adds each file's entry
(:func:`standin_fingerprint_entry`) to the registry; old entries stay, so
earlier stand-ins remain recognised. ``tests/test_table.py`` fails while a
shipped stand-in is not registered.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bolt_pco64 import instances
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance
from bolt_pco64.tables import standins
from bolt_pco64.tables.table import Table, TableSource, read_table_file

__all__ = ["refresh_standin_registry", "standin_fingerprint_entry"]


def standin_fingerprint_entry(
    path: str | os.PathLike[str], instance: str | Instance | None = None
) -> dict[str, dict[str, str]]:
    """The registry entry of a stand-in file: ``{fingerprint: {...}}``.

    Args:
        path: A stand-in table written by the generator (parquet with its
            ``source=simulated`` metadata).
        instance: Its instance; default: the file's ``instance`` metadata,
            else :data:`~bolt_pco64.instances.DEFAULT_INSTANCE`.

    Raises:
        ValueError: If the file's metadata does not say ``source=simulated``.
    """
    file = Path(path)
    frame, meta = read_table_file(file)
    if meta.get("source") != "simulated":
        raise ValueError(
            f"Expected a stand-in with parquet metadata source=simulated, got "
            f"source={meta.get('source')!r} in {file}."
        )
    inst = instances.get_instance(instance or meta.get("instance", DEFAULT_INSTANCE))
    table = Table(frame, TableSource("argument", file.resolve()), meta, inst)
    return {
        table.fingerprint: {
            "instance": inst.name,
            "variant": meta.get("variant", "default"),
            "generator_version": meta.get("generator_version", "unknown"),
            "file": file.name,
        }
    }


def refresh_standin_registry(*paths: str | os.PathLike[str]) -> Path:
    """Add the entries of the stand-in files ``paths`` to the package registry.

    Existing entries are kept. The registry file is rewritten atomically.

    Returns:
        The registry's path.
    """
    from bolt_pco64._io import atomic_write_text

    target = standins._registry_path()
    registry = dict(standins.standin_registry())
    for path in paths:
        registry.update(standin_fingerprint_entry(path))
    document = {
        "description": (
            "Content fingerprints of the shipped SIMULATED stand-in tables "
            "(bolt_pco64.tables.standins.content_fingerprint). Refresh with "
            "bolt_pco64.tables.simulate.registry.refresh_standin_registry(path); "
            "see that module."
        ),
        "fingerprints": dict(sorted(registry.items())),
    }
    atomic_write_text(target, json.dumps(document, indent=2) + "\n")
    standins.standin_registry.cache_clear()
    return target
