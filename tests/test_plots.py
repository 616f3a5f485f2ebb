"""The regret plot: bands only where they say something, one resample count."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from bolt_pco64.bench import ComparisonSpec, run_comparison
from bolt_pco64.bench.report import plots
from bolt_pco64.bench.report.plots import PlotDefaults, band_is_informative
from bolt_pco64.bench.stats import STATS_DEFAULTS, keyed_rng, median_band
from tests import _fixtures

if TYPE_CHECKING:
    from matplotlib.figure import Figure

table_path = _fixtures.table_path


@pytest.mark.parametrize("n", range(1, 9))
def test_band_is_informative_exactly_when_the_bootstrap_band_is_narrower_than_the_range(
    n: int,
) -> None:
    values = np.random.default_rng(n).permutation(np.arange(1.0, n + 1.0))[:, None]
    _, low, high = median_band(values, resamples=STATS_DEFAULTS.resamples)
    is_range = low[0] == values.min() and high[0] == values.max()
    assert band_is_informative(n) == (not is_range)


def test_band_in_chunks_of_distinct_columns_equals_one_bootstrap_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plots, "PLOT_DEFAULTS", PlotDefaults(band_cells=200_000))
    rng = np.random.default_rng(3)
    matrix = np.repeat(rng.random((7, 12)), 4, axis=1)[:, rng.permutation(48)]
    whole = median_band(
        matrix,
        resamples=STATS_DEFAULTS.resamples,
        rng=keyed_rng(STATS_DEFAULTS.seed, "m", "regret"),
    )
    for got, want in zip(plots._band(matrix, "m", "regret"), whole, strict=True):
        np.testing.assert_array_equal(got, want)


def _drawn(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, table_path: Path, seeds: int
) -> tuple[Figure, str]:
    """Run ``random`` with ``seeds`` seeds; the regret plot and summary.md (the
    regret plot is saved first, the cost report's plot after it)."""
    from matplotlib.figure import Figure

    figures: list[Figure] = []
    save = Figure.savefig

    def spy(self: Figure, *args: object, **kwargs: object) -> None:
        figures.append(self)
        save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    result = run_comparison(
        ComparisonSpec(["random"], seeds=seeds, budget=6, n_init=3),
        table_path,
        out=tmp_path / f"s{seeds}",
        progress=False,
    )
    return figures[0], result.summary_markdown


def test_few_seeds_draw_single_runs_not_bands(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, table_path: Path
) -> None:
    from matplotlib.collections import PolyCollection

    fig, _ = _drawn(monkeypatch, tmp_path, table_path, seeds=3)
    for ax in fig.axes:
        assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(ax.get_lines()) == 1 + 3  # the median and each run
    (caption,) = [t.get_text() for t in fig.texts]
    assert "3 seeds per method" in caption
    assert "Band:" not in caption


def test_bands_and_summary_state_the_same_resample_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, table_path: Path
) -> None:
    from matplotlib.collections import PolyCollection

    fig, summary_md = _drawn(monkeypatch, tmp_path, table_path, seeds=6)
    for ax in fig.axes:
        assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 1
        assert len(ax.get_lines()) == 1
    (caption,) = [t.get_text() for t in fig.texts]
    assert "6 seeds per method" in caption
    in_caption = re.findall(r"(\d+) resamples", caption)
    in_summary = re.findall(r"(\d+) resamples", summary_md)
    assert len(in_caption) == 1
    assert in_summary
    assert set(in_summary) == set(in_caption)


@pytest.mark.parametrize("width", [6.0, 12.0])
def test_a_caption_is_whole_inside_its_figure(width: float) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from bolt_pco64.bench.report.plots import add_caption, plot_caption

    fig = Figure(figsize=(width, 4.8))
    fig.add_subplot()
    add_caption(fig, plot_caption([20] * 10) + " " + "wide words " * 40)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (caption,) = fig.texts
    box = caption.get_window_extent(renderer)
    assert box.x0 >= 0
    assert box.x1 <= fig.bbox.x1
    assert box.y0 >= 0
