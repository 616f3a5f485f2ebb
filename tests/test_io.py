"""Atomic writes (bolt_pco64._io): complete files only, with ordinary permissions."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bolt_pco64._io import atomic_path, atomic_write_text, current_umask

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_new_file_gets_the_mode_open_would_give(
    tmp_path: Path, umask: int, expected: int
) -> None:
    atomic, plain = tmp_path / "sub" / "atomic.json", tmp_path / "plain.json"
    missing = str(tmp_path / "no-such-file")
    with _umask(umask):
        # /proc/self/status, a missing status file and the portable fallback
        assert [current_umask(), current_umask(missing), current_umask(None)] == [
            umask
        ] * 3
        atomic_write_text(atomic, "atomic")
        with open(plain, "w") as fh:
            fh.write("plain")
        assert current_umask(None) == umask  # reading it changed nothing
    assert _mode(plain) == expected  # the reference: an ordinary open()
    assert _mode(atomic) == expected
    assert atomic.read_text() == "atomic"
    assert sorted(p.name for p in atomic.parent.iterdir()) == ["atomic.json"]


def test_replacing_a_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, "new")
    assert path.read_text() == "new"
    assert _mode(path) == 0o640


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    def write_then_fail(target: Path) -> None:
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_then_fail(tmp_path / "x.txt")
    assert list(tmp_path.iterdir()) == []
