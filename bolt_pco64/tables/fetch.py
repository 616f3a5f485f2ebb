"""Download of an instance's measured table from the Hugging Face Hub.

``fetch_table(instance="pco64")`` downloads the instance's dataset
(:attr:`~bolt_pco64.instances.Instance.dataset_id`, e.g.
``Glow-AI/pco64_tabular_data``) at its revision (``v0.1.0``) into a temporary
folder, validates it with the same checks as
:func:`~bolt_pco64.tables.table.load_table`, and only then installs it as
``<name>.parquet`` (``pco64.parquet``) in :func:`~bolt_pco64.tables.locations.data_home`
(temporary file, then rename), with a ``<name>.json`` record of where it came
from. A failed or invalid download changes nothing. It needs network access to
the Hub; nothing else in the package does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bolt_pco64._io import atomic_path, atomic_write_text
from bolt_pco64.instances import (
    DEFAULT_INSTANCE,
    Instance,
    get_instance,
)
from bolt_pco64.tables.locations import data_home
from bolt_pco64.tables.table import Table, TableSource, read_table_file

__all__ = ["HF_FILE_PATTERNS", "FetchError", "fetch_table"]

#: Files of the dataset repository that may hold the table (parquet preferred).
HF_FILE_PATTERNS = ("*.parquet", "*.csv")

#: ``download(local_dir) -> None`` puts the dataset's files under ``local_dir``.
Downloader = Callable[[Path], None]


class FetchError(RuntimeError):
    """The download failed, or the dataset held no usable table."""


def _hub_download(local_dir: Path, instance: Instance) -> None:
    """Download ``instance``'s dataset table files with ``huggingface_hub``."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as err:  # pragma: no cover - huggingface_hub is a dependency
        raise FetchError(
            "huggingface_hub is needed: pip install huggingface_hub"
        ) from err
    snapshot_download(
        instance.dataset_id,
        repo_type="dataset",
        revision=instance.dataset_revision,
        local_dir=local_dir,
        allow_patterns=list(HF_FILE_PATTERNS),
    )


def _pick_table_file(folder: Path, what: str) -> Path:
    """The one table file of a downloaded snapshot (parquet before CSV).

    ``what`` names the dataset and revision in errors.
    """
    for pattern in HF_FILE_PATTERNS:
        found = sorted(p for p in folder.rglob(pattern) if p.is_file())
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = [str(p.relative_to(folder)) for p in found]
            raise FetchError(f"Expected one {pattern} file in {what}, got {names}.")
    raise FetchError(f"Expected a parquet or CSV table in {what}, got no such file.")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_table(
    data_home_dir: str | os.PathLike[str] | None = None,
    *,
    instance: str | Instance = DEFAULT_INSTANCE,
    force: bool = False,
    download: Downloader | None = None,
) -> Path:
    """Download, validate and install an instance's measured table.

    Args:
        data_home_dir: Where to install (default: :func:`~bolt_pco64.tables.locations.data_home`,
            i.e. ``BOLT_PCO64_HOME`` or the platform's user data folder).
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`): whose dataset to fetch.
        force: Download again even if a table is already installed.
        download: The downloader, ``download(local_dir)``; the default uses
            ``huggingface_hub.snapshot_download`` on the instance's dataset id
            and revision (tests pass a local fake).

    Returns:
        The path of the installed ``<name>.parquet`` (``pco64.parquet``).

    Raises:
        FetchError: If the download fails or holds no single table file.
        TableError: If the downloaded table breaks the instance's schema;
            nothing is installed then.
        ValueError: If ``instance`` is unknown or has no dataset.
    """
    inst = get_instance(instance)
    if not inst.dataset_id:
        raise ValueError(
            f"Expected an instance with a published dataset, got {inst.name!r} "
            "(its dataset_id is empty): pass its table file instead."
        )
    what = f"{inst.dataset_id}@{inst.dataset_revision}"
    home = data_home(data_home_dir)
    target = home / inst.measured_filename
    if target.is_file() and not force:
        return target
    download = download or partial(_hub_download, instance=inst)
    with tempfile.TemporaryDirectory(prefix="bolt_pco64-fetch-") as tmp:
        folder = Path(tmp)
        try:
            download(folder)
        except FetchError:
            raise
        except Exception as err:
            raise FetchError(
                f"Download of {what} failed ({type(err).__name__}: {err}); "
                "fetch needs network access to the Hugging Face Hub."
            ) from err
        source = _pick_table_file(folder, what)
        # Validates every invariant; raises TableError naming the file otherwise.
        frame, meta = read_table_file(source)
        Table(frame, TableSource("measured", source), meta, inst)
        home.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as staged:
            if source.suffix.lower() == ".parquet":
                shutil.copyfile(source, staged)
            else:
                table = pa.Table.from_pandas(frame, preserve_index=False)
                table = table.replace_schema_metadata(
                    {**(table.schema.metadata or {}), b"source": b"measured"}
                )
                pq.write_table(table, staged)
        record = {
            "instance": inst.name,
            "repo_id": inst.dataset_id,
            "revision": inst.dataset_revision,
            "file": str(source.relative_to(folder)),
            "sha256": _sha256(target),
            "metadata": meta,
        }
        atomic_write_text(
            home / f"{inst.name}.json", json.dumps(record, indent=2) + "\n"
        )
    return target
