"""The README, the repository's landing page: its Python code blocks run as
written, in order, in one namespace, and the only warnings they raise are the
stand-ins' (one per instance); it stays one page long (the rest of the
documentation is the site under docs/, whose links tests/test_docs.py checks)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from bolt_pco64.tables import table as table_module
from bolt_pco64.tables.table import ReconstructedTableWarning, SimulatedTableWarning

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_python_blocks_run_with_only_the_table_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README lost its code examples"
    monkeypatch.chdir(tmp_path)
    table_module.reset_simulated_warnings()
    namespace: dict[str, object] = {"__name__": "__readme__"}
    # The package exports lazily, so the BO stack is imported inside the blocks;
    # import it first: what its own imports warn (torch.jit deprecations in
    # linear_operator) is not the README code's doing.
    import bolt_pco64.problem  # noqa: F401

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, block in enumerate(blocks):
            code = compile(block, f"README.md[python block {i}]", "exec")
            exec(code, namespace)
    got = [f"{w.category.__name__}: {w.message} ({w.filename})" for w in caught]
    # the README's default tables are the shipped reconstructions (issue 27);
    # a block that asks for a stand-in gets its warning
    assert {w.category for w in caught} <= {
        SimulatedTableWarning,
        ReconstructedTableWarning,
    }, got
    assert caught, got
    # one per instance whose stand-in the README serves (once per process each)
    messages = [str(w.message) for w in caught]
    assert len(set(messages)) == len(messages), got


def test_readme_stays_a_landing_page() -> None:
    size = len(README.read_bytes())
    assert size <= 12 * 1024, f"Expected README.md <= 12 KB, got {size} bytes"
    text = README.read_text(encoding="utf-8")
    # the commands it promises: install, the main job, the tests
    for command in ("pip install .", "bolt-pco64 bench --quick", "python -m pytest"):
        assert command in text, command
