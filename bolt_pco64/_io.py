"""Atomic file writing: a crash never leaves a half-written file behind."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PARQUET_COMPRESSION",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_parquet",
    "atomic_write_text",
    "atomic_write_with",
]


_UMASK_LOCK = threading.Lock()
#: Where Linux reports the process's umask (a ``Umask:`` line).
_PROC_STATUS = "/proc/self/status"


def current_umask(status: str | None = _PROC_STATUS) -> int:
    """The process's umask, read without changing it for other threads.

    Linux reports it in ``/proc/self/status`` (``Umask:`` line, kernel 4.7+);
    elsewhere (or with ``status=None``) it is read by setting and restoring it
    under a lock.

    Args:
        status: The file with the ``Umask:`` line, ``None`` for the fallback.
    """
    if status is not None:
        with (
            contextlib.suppress(OSError),
            open(status, encoding="ascii", errors="replace") as fh,
        ):
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def new_file_mode(path: Path) -> int:
    """The permission bits ``open(path, "w")`` would leave ``path`` with.

    An existing file keeps its mode; a new one gets ``0o666`` less the umask.
    """
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    The temporary file lives in the destination's folder (so the final
    ``os.replace`` is atomic on POSIX and Windows), is flushed to disk before the
    rename, and is removed if the body raises. Readers therefore see either the
    old file or the complete new one, never a partial write. The file ends up
    with the mode an ordinary ``open(path, "w")`` would give it (see
    :func:`new_file_mode`), not ``mkstemp``'s private 0600.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, new_file_mode(target))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file, then rename)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (temporary file, then rename)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_with(
    path: str | os.PathLike[str], writer: Callable[[Path], None]
) -> None:
    """Call ``writer(tmp_path)`` and rename the result onto ``path`` atomically."""
    with atomic_path(path) as tmp:
        writer(tmp)


#: Compression of every parquet file the package writes (tables and records).
PARQUET_COMPRESSION = "zstd"


def atomic_write_parquet(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write ``frame`` to ``path`` as parquet with key-value ``metadata``, atomically.

    The metadata is added to pandas' own (index, dtypes); the file is
    compressed with :data:`PARQUET_COMPRESSION`.

    Returns:
        The path written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    extra = {k.encode(): v.encode() for k, v in (metadata or {}).items()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    target = Path(path)
    atomic_write_with(
        target, lambda tmp: pq.write_table(table, tmp, compression=PARQUET_COMPRESSION)
    )
    return target
