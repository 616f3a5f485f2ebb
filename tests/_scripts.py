"""Scripts of ``benchmarks/`` loaded as modules, for the tests of their records."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

#: The folder of the scripts (and of their sibling modules).
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module.

    ``benchmarks/`` is on ``sys.path`` while it loads (as when it is run), so
    it imports its sibling modules; the script and those siblings are
    registered in ``sys.modules`` only while it loads (its dataclasses look
    their module up).
    """
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ValueError(f"Expected a script benchmarks/{name}.py, got none.")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            for added in set(sys.modules) - before:
                origin = getattr(sys.modules[added], "__file__", None) or ""
                if added == name or Path(origin).parent == BENCHMARKS:
                    del sys.modules[added]
    return module
