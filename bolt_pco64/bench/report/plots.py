"""The regret plot of a comparison (``regret.png``), and what every plot of
the harness shares: one style per method and one rule for bands.

Drawn on a :class:`matplotlib.figure.Figure` of its own (matplotlib is
imported when a plot is drawn): pyplot's state and the backend are left
alone. The numbers come from :mod:`bolt_pco64.bench.stats`, with its
defaults (:data:`~bolt_pco64.bench.stats.STATS_DEFAULTS`): the bands use the
same confidence level and number of bootstrap resamples as ``summary.md``'s
intervals. The tables of the same comparison are
:mod:`bolt_pco64.bench.report`'s.

**Every method visible.** Each method has its own colour, dash pattern and
marker (:func:`method_style`, by its position in the report's order), so two
methods whose medians coincide are both seen: the markers of each sit at
their own offsets along the line.

**Few seeds: one rule for every plot.** A percentile-bootstrap interval of
the median of ``n`` seeds is their whole range until ``n`` is large enough
that a resample's median is rarely the smallest (or largest) value
(:func:`band_is_informative`: 6 seeds at 95 %). With fewer seeds
(``--quick`` runs 3) a plot draws no band, which would only repeat the range
and bury the medians under one block of colour, but each seed's run as a
thin line; the caption says how many seeds there are. ``regret.png`` and the
cost report's ``cost.png`` both draw through :func:`draw_median`, so the rule
is the same in both.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_with
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    keyed_rng,
    median_band,
    outcome_matrix,
    regret_fill,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PLOT_DEFAULTS",
    "PlotDefaults",
    "add_caption",
    "band_is_informative",
    "draw_median",
    "method_style",
    "plot_caption",
    "plot_panels",
    "plot_regret",
    "regret_axes",
]


@dataclass(frozen=True)
class PlotDefaults:
    """How the regret plot is drawn (the statistics are ``STATS_DEFAULTS``').

    Attributes:
        band_alpha: Opacity of a bootstrap band.
        run_alpha: Opacity of a single run's line (drawn instead of a band
            when there are too few seeds for one).
        run_width: Width of a single run's line.
        band_cells: Resampled counts held in memory at once while a band is
            computed (:func:`~bolt_pco64.bench.stats.median_band`'s ``cells``).
        line_styles: Dash patterns, one per method in turn.
        markers: Marker symbols, one per method in turn.
        marker_step: Distance between a line's markers, as a share of the
            axis; each method's first marker is offset by a tenth of it
            more than the previous method's.
    """

    band_alpha: float = 0.15
    run_alpha: float = 0.35
    run_width: float = 0.8
    band_cells: int = 4_000_000
    line_styles: tuple[str, ...] = ("-", "--", "-.", ":")
    markers: tuple[str, ...] = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
    marker_step: float = 0.1


#: The defaults of the regret plot.
PLOT_DEFAULTS = PlotDefaults()


def band_is_informative(n_seeds: int, level: float = STATS_DEFAULTS.level) -> bool:
    """Whether a percentile-bootstrap ``level`` interval of the median of
    ``n_seeds`` distinct values can be narrower than their range.

    A resample's median (numpy's: the mean of the two middle values for an even
    count) is the smallest value when at least ``n // 2 + 1`` of the ``n``
    draws are that value, which has the binomial probability
    ``P(Binomial(n, 1/n) > n // 2)``. Unless that is below ``(1 - level) / 2``
    the interval reaches the smallest value (and, by symmetry, the largest):
    it is the seeds' range. At 95 % that holds up to 5 seeds.
    """
    if n_seeds < 2:
        return False
    p = 1.0 / n_seeds
    tail = sum(
        math.comb(n_seeds, k) * p**k * (1.0 - p) ** (n_seeds - k)
        for k in range(n_seeds // 2 + 1, n_seeds + 1)
    )
    return tail < (1.0 - level) / 2


def method_style(index: int) -> dict[str, Any]:
    """The line style of the ``index``-th method of a report (0-based):
    ``color``, ``linestyle``, ``marker`` and ``markevery`` keyword arguments
    of :meth:`matplotlib.axes.Axes.plot`. Colours follow matplotlib's cycle
    (``C0``...); dash patterns and markers cycle through
    :data:`PLOT_DEFAULTS`' so that no two of ten methods look alike."""
    d = PLOT_DEFAULTS
    step = d.marker_step
    return {
        "color": f"C{index % 10}",
        "linestyle": d.line_styles[index % len(d.line_styles)],
        "marker": d.markers[index % len(d.markers)],
        "markevery": ((index % 10) * step / 10, step),
        "markersize": 5,
    }


def plot_caption(seed_counts: Sequence[int]) -> str:
    """What the plot's lines and bands are, for methods run with
    ``seed_counts`` seeds (written under the plots)."""
    counts = sorted({int(n) for n in seed_counts if n > 0}) or [0]
    seeds = (
        f"{counts[0]} seeds" if len(counts) == 1 else f"{counts[0]}–{counts[-1]} seeds"
    ) + " per method"
    banded = [n for n in counts if band_is_informative(n)]
    parts = [f"Line: median over seeds ({seeds})."]
    if banded:
        parts.append(
            f"Band: pointwise {100 * STATS_DEFAULTS.level:g}% percentile-bootstrap "
            f"interval of that median (seeds resampled, {STATS_DEFAULTS.resamples} "
            "resamples, as summary.md's intervals)."
        )
    if len(banded) < len(counts):
        least = next((n for n in range(2, 1000) if band_is_informative(n)), 1000)
        parts.append(
            f"Thin lines: single runs, drawn instead of a band where a method has "
            f"fewer than {least} seeds (its bootstrap band would be just their range)."
        )
    parts.append(
        "Regret before the first feasible evaluation = optimal - worst feasible."
    )
    return " ".join(parts)


def add_caption(fig: Figure, text: str) -> None:
    """Write ``text`` under the plots of ``fig``, wrapped to its width, and
    lay the plots out above it."""
    width_in, height_in = fig.get_size_inches()
    # "small" DejaVu Sans averages about 0.065 in a character: 14 characters
    # an inch leave a margin on the right for the widest lines.
    lines = textwrap.wrap(text, int(width_in * 14))
    fig.text(0.01, 0.005, "\n".join(lines), fontsize="small", va="bottom")
    bottom = (0.08 + 0.16 * len(lines)) / height_in
    fig.tight_layout(rect=(0, bottom, 1, 1))


def _band(
    matrix: np.ndarray, *keys: str | int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~bolt_pco64.bench.stats.median_band` with ``STATS_DEFAULTS``'
    resamples, drawn from a generator seeded by ``keys``, in chunks of
    ``PLOT_DEFAULTS.band_cells``.
    """
    # Equal columns (a run's regret stays put between improvements) have equal
    # bands: each distinct column is resampled once.
    distinct, back = np.unique(matrix, axis=1, return_inverse=True)
    med, low, high = median_band(
        distinct,
        resamples=STATS_DEFAULTS.resamples,
        rng=keyed_rng(STATS_DEFAULTS.seed, *keys),
        cells=PLOT_DEFAULTS.band_cells,
    )
    at = back.reshape(-1)
    return med[at], low[at], high[at]


def draw_median(
    ax: Axes,
    x: np.ndarray,
    matrix: np.ndarray,
    style: dict[str, Any],
    label: str,
    *keys: str | int,
) -> None:
    """The median of ``matrix`` (``seeds x points``) in ``style``
    (:func:`method_style`) with its bootstrap band, or with each seed's line
    where a band would say nothing (:func:`band_is_informative`); the band's
    generator is keyed by ``keys``."""
    color = style["color"]
    if band_is_informative(matrix.shape[0]):
        med, low, high = _band(matrix, *keys)
        ax.plot(x, med, label=label, **style)
        ax.fill_between(x, low, high, alpha=PLOT_DEFAULTS.band_alpha, color=color)
        return
    ax.plot(x, np.median(matrix, axis=0), label=label, **style)
    for run in matrix:
        ax.plot(
            x,
            run,
            color=color,
            linestyle=style["linestyle"],
            alpha=PLOT_DEFAULTS.run_alpha,
            linewidth=PLOT_DEFAULTS.run_width,
        )


def regret_axes(ax: Axes, label: str) -> None:
    """The regret plots' one axis style: ``label`` on the y axis, linear near 0
    (regret 0 = optimum found) and logarithmic above 1e-3, a grid, a legend."""
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylim(bottom=0.0)
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def _draw_regret(
    axes: Sequence[Axes],
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    methods: Sequence[str],
    cost: str,
) -> None:
    """Median regret with bootstrap bands (or single runs): simple and
    inference regret vs evaluations (regret against cost is the cost
    report's ``cost.png``)."""
    fill = regret_fill(optimal_value, worst_feasible_value)
    x_eval = np.arange(1, budget + 1)
    for i, m in enumerate(methods):
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        style = method_style(i)
        _, mat = outcome_matrix(sub, budget, fill, "regret")
        draw_median(axes[0], x_eval, mat, style, m, m, "regret")
        if "inference_regret" in sub.columns:
            _, imat = outcome_matrix(sub, budget, fill, "inference_regret")
            draw_median(axes[1], x_eval, imat, style, m, m, "inference")
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("evaluations")
    labels = (
        "simple regret (optimal - best feasible evaluated)",
        "inference regret (optimal - recommended)",
    )
    for ax, label in zip(axes, labels, strict=True):
        regret_axes(ax, label)


def plot_regret(
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    methods: Sequence[str],
    title: str = "",
    cost: str = "GPU-hours",
) -> None:
    """Write a PNG: median regret with bootstrap bands vs evaluations.

    Two plots: simple regret and inference regret against evaluations (the
    regret against cost is the cost report's ``cost.png``); the line is the
    median over seeds in the method's own style (:func:`method_style`), the
    band its pointwise bootstrap interval, or, with too few seeds for a band
    to say anything (:func:`band_is_informative`), each seed's run as a thin
    line (:func:`plot_caption`, written under the plots). The y axis is
    symmetric-log (linear below 1e-3), so that both the early descent and
    the last small steps to the optimum (regret 0) are visible. Draws on a
    :class:`matplotlib.figure.Figure` of its own: pyplot's state and the
    backend are left alone.

    Args:
        cost: The cost unit (:func:`~bolt_pco64.bench.report.facts.cost_label`);
            kept for callers, the plot has no cost axis.
    """
    plot_panels(
        [(title, records, optimal_value, worst_feasible_value, budget, methods, cost)],
        path,
    )


def plot_panels(
    panels: Sequence[tuple[str, pd.DataFrame, float, float, int, Sequence[str], str]],
    path: str | os.PathLike[str],
    title: str = "",
) -> None:
    """One row of two plots per panel ``(title, records, optimal, worst,
    budget, methods, cost)`` (as :func:`plot_regret`), written to ``path``
    as a PNG under the overall ``title``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4.8 * len(panels) + 0.4))
    grid = fig.subplots(len(panels), 2, squeeze=False)
    for (sub_title, records, opt, worst, budget, methods, cost), axes in zip(
        panels, grid, strict=True
    ):
        _draw_regret(list(axes), records, opt, worst, budget, methods, cost)
        if sub_title:
            axes[0].set_title(sub_title, loc="left")
    if title:
        fig.suptitle(title)
    seeds = [
        records.loc[records["method"] == m, "seed"].nunique()
        for _, records, *_rest, methods, _cost in panels
        for m in methods
    ]
    add_caption(fig, plot_caption(seeds))
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
