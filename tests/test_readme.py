"""The README's Python code blocks run as written, in order, in one namespace."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_has_python_blocks() -> None:
    assert len(_python_blocks(README.read_text(encoding="utf-8"))) >= 2


def test_readme_python_blocks_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, block in enumerate(_python_blocks(README.read_text(encoding="utf-8"))):
            code = compile(block, f"README.md[python block {i}]", "exec")
            exec(code, namespace)
