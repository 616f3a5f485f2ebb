"""Where a warning should point: the first frame outside the libraries."""

from __future__ import annotations

import os
import sys

__all__ = ["external_stacklevel"]

#: Packages whose frames are library code, never the line a warning is about.
_LIBRARIES = ("bolt_pco64", "torch", "botorch")


def _internal_folders() -> tuple[str, ...]:
    folders = []
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            folders.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(folders)


def external_stacklevel() -> int:
    """``stacklevel`` for a ``warnings.warn`` made by this function's caller.

    Counts the frames from that caller up to the first one whose file lies
    outside bolt_pco64, torch and BoTorch (those already imported), so the
    warning names the user's line however deep inside the package, or a torch
    hook, it was raised.
    """
    internal = _internal_folders()
    level = 1
    frame = sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(
        frame.f_code.co_filename
    ).startswith(internal):
        frame = frame.f_back
        level += 1
    return level
