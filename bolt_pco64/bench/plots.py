"""The regret plot of a comparison (``regret.png``).

Drawn on a :class:`matplotlib.figure.Figure` of its own (matplotlib is
imported when a plot is drawn): pyplot's state and the backend are left
alone. The numbers come from :mod:`bolt_pco64.bench.stats`; the tables of
the same comparison are :mod:`bolt_pco64.bench.report`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_with
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    keyed_rng,
    median_band,
    outcome_matrix,
    regret_fill,
    step_values,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["PLOT_CAPTION", "plot_panels", "plot_regret"]


#: What the plot's lines and bands are (written under the plot).
PLOT_CAPTION = (
    "Line: median over seeds. Band: pointwise 95% percentile-bootstrap interval "
    f"of that median (seeds resampled, {STATS_DEFAULTS.band_resamples} resamples). "
    "Regret before the first feasible evaluation = optimal - worst feasible."
)


def _draw_regret(
    axes: Sequence[Axes],
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    methods: Sequence[str],
    cost: str,
) -> None:
    """Median regret with bootstrap bands: simple and inference regret vs
    evaluations, simple regret vs cost."""
    fill = regret_fill(optimal_value, worst_feasible_value)
    gmax = float(records["gpu_hours"].max()) if len(records) else 1.0
    grid = np.linspace(0.0, gmax, 300)
    x_eval = np.arange(1, budget + 1)
    seed = STATS_DEFAULTS.seed
    for m in methods:
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        _, mat = outcome_matrix(sub, budget, fill, "regret")
        med, lo, hi = median_band(mat, rng=keyed_rng(seed, m, "regret"))
        (line,) = axes[0].plot(x_eval, med, label=m)
        color = line.get_color()
        axes[0].fill_between(x_eval, lo, hi, alpha=0.15, color=color)
        if "inference_regret" in sub.columns:
            _, imat = outcome_matrix(sub, budget, fill, "inference_regret")
            med, lo, hi = median_band(imat, rng=keyed_rng(seed, m, "inference"))
            axes[1].plot(x_eval, med, label=m, color=color)
            axes[1].fill_between(x_eval, lo, hi, alpha=0.15, color=color)
        curves = []
        for _, r in sub.groupby("seed"):
            r = r.sort_values("iteration")
            g = r["gpu_hours"].to_numpy(dtype=np.float64)
            curves.append(step_values(g, r["regret"].to_numpy(), grid, fill))
        med, lo, hi = median_band(np.asarray(curves), rng=keyed_rng(seed, m, "cost"))
        axes[2].plot(grid, med, label=m, color=color)
        axes[2].fill_between(grid, lo, hi, alpha=0.15, color=color)
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("evaluations")
    axes[2].set_xlabel(f"{cost} (cumulative)")
    labels = (
        "simple regret (optimal - best feasible evaluated)",
        "inference regret (optimal - recommended)",
        "simple regret (optimal - best feasible evaluated)",
    )
    for ax, label in zip(axes, labels, strict=True):
        # Linear near 0 (regret 0 = optimum found), logarithmic above 1e-3.
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylim(bottom=0.0)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")


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
    """Write a PNG: median regret with bootstrap bands vs evaluations and cost.

    Three plots: simple regret and inference regret against evaluations,
    simple regret against cost; the line is the median over seeds, the band
    its pointwise 95% bootstrap interval (:data:`PLOT_CAPTION`, written under
    the plots). The y axis is symmetric-log (linear below 1e-3), so that both the early
    descent and the last small steps to the optimum (regret 0) are visible.
    Against cost, each run's regret is a step function of its cumulative
    GPU-hours, held at its final value after its budget is spent. Draws on a
    :class:`matplotlib.figure.Figure` of its own: pyplot's state and the
    backend are left alone.

    Args:
        cost: The cost axis's unit
            (:func:`~bolt_pco64.bench.report.cost_label`).
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
    """One row of three plots per panel ``(title, records, optimal, worst,
    budget, methods, cost)`` (as :func:`plot_regret`), written to ``path``
    as a PNG under the overall ``title``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(17, 4.8 * len(panels) + 0.4))
    grid = fig.subplots(len(panels), 3, squeeze=False)
    for (sub_title, records, opt, worst, budget, methods, cost), axes in zip(
        panels, grid, strict=True
    ):
        _draw_regret(list(axes), records, opt, worst, budget, methods, cost)
        if sub_title:
            axes[0].set_title(sub_title, loc="left")
    if title:
        fig.suptitle(title)
    fig.text(0.01, 0.005, PLOT_CAPTION, fontsize="small", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
