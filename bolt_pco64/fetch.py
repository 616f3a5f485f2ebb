"""Download of the measured pco64 table from the Hugging Face Hub.

``fetch_table`` downloads the dataset ``Glow-AI/pco64_tabular_data`` at revision
``v0.1.0`` into a temporary folder, validates it with the same checks as
:func:`~bolt_pco64.table.load_table`, and only then installs it as
``pco64.parquet`` in :func:`~bolt_pco64.table.data_home` (temporary file, then
rename). A failed or invalid download changes nothing. It needs network access
to the Hub; nothing else in the package does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bolt_pco64._io import atomic_path, atomic_write_text
from bolt_pco64.table import (
    MEASURED_FILENAME,
    Table,
    TableSource,
    data_home,
    read_table_file,
)

__all__ = ["HF_FILE_PATTERNS", "HF_REPO_ID", "HF_REVISION", "FetchError", "fetch_table"]

HF_REPO_ID = "Glow-AI/pco64_tabular_data"
HF_REVISION = "v0.1.0"
#: Files of the dataset repository that may hold the table (parquet preferred).
HF_FILE_PATTERNS = ("*.parquet", "*.csv")

#: ``download(local_dir) -> None`` puts the dataset's files under ``local_dir``.
Downloader = Callable[[Path], None]


class FetchError(RuntimeError):
    """The download failed, or the dataset held no usable table."""


def _hub_download(local_dir: Path) -> None:
    """Download the dataset's table files with ``huggingface_hub``."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as err:  # pragma: no cover - huggingface_hub is a dependency
        raise FetchError(
            "huggingface_hub is needed: pip install huggingface_hub"
        ) from err
    snapshot_download(
        HF_REPO_ID,
        repo_type="dataset",
        revision=HF_REVISION,
        local_dir=local_dir,
        allow_patterns=list(HF_FILE_PATTERNS),
    )


def _pick_table_file(folder: Path) -> Path:
    """The one table file of a downloaded snapshot (parquet before CSV)."""
    for pattern in HF_FILE_PATTERNS:
        found = sorted(p for p in folder.rglob(pattern) if p.is_file())
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = [str(p.relative_to(folder)) for p in found]
            raise FetchError(
                f"Expected one {pattern} file in {HF_REPO_ID}@{HF_REVISION}, got {names}."
            )
    raise FetchError(
        f"Expected a parquet or CSV table in {HF_REPO_ID}@{HF_REVISION}, got no such file."
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_table(
    data_home_dir: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    download: Downloader | None = None,
) -> Path:
    """Download, validate and install the measured pco64 table.

    Args:
        data_home_dir: Where to install (default: :func:`~bolt_pco64.table.data_home`,
            i.e. ``BOLT_PCO64_HOME`` or the platform's user data folder).
        force: Download again even if a table is already installed.
        download: The downloader, ``download(local_dir)``; the default uses
            ``huggingface_hub.snapshot_download`` (tests pass a local fake).

    Returns:
        The path of the installed ``pco64.parquet``.

    Raises:
        FetchError: If the download fails or holds no single table file.
        TableError: If the downloaded table breaks the card's schema; nothing is
            installed then.
    """
    home = data_home(data_home_dir)
    target = home / MEASURED_FILENAME
    if target.is_file() and not force:
        return target
    download = download or _hub_download
    with tempfile.TemporaryDirectory(prefix="bolt_pco64-fetch-") as tmp:
        folder = Path(tmp)
        try:
            download(folder)
        except FetchError:
            raise
        except Exception as err:
            raise FetchError(
                f"Download of {HF_REPO_ID}@{HF_REVISION} failed ({type(err).__name__}: {err}); "
                "fetch needs network access to the Hugging Face Hub."
            ) from err
        source = _pick_table_file(folder)
        # Validates every invariant; raises TableError naming the file otherwise.
        frame, meta = read_table_file(source)
        Table(frame, TableSource("measured", source))
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
            "repo_id": HF_REPO_ID,
            "revision": HF_REVISION,
            "file": str(source.relative_to(folder)),
            "sha256": _sha256(target),
            "metadata": meta,
        }
        atomic_write_text(home / "pco64.json", json.dumps(record, indent=2) + "\n")
    return target
