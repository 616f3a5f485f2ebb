"""A comparison's summary page leads with the protocol's section."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from bolt_pco64.bench.comparison import SingleTable, run_comparison
from bolt_pco64.bench.spec import ComparisonSpec
from tests._fixtures import png_size


def _run(out: Path, **budget: int) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_comparison(
            ComparisonSpec(["random"], seeds=2, n_init=2, **budget),
            SingleTable(None, "pco16"),
            out=out,
            progress=False,
        )
    return (out / "summary.md").read_text()


@pytest.mark.slow
def test_a_few_seeds_are_a_smoke_test_that_leads_the_page(tmp_path: Path) -> None:
    md = _run(tmp_path, budget=4)
    protocol = md.index("## Which methods differ")
    assert protocol < md.index("| method | runs |")
    assert "Smoke test: no comparison" in md
    assert (tmp_path / "protocol.md").read_text().startswith("# Which methods differ")
    assert min(png_size(tmp_path / "protocol_km.png")) >= 100
