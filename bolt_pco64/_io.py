"""Atomic file writing: a crash never leaves a half-written file behind."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "atomic_path",
    "atomic_write_bytes",
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
