"""The cost report of a comparison: the ERT table, the cost plot and the files.

:func:`write_cost_report` writes ``cost_summary.md``, ``cost_ert.csv``,
``cost_comparisons.csv``, ``cost_sensitivity.csv`` and ``cost.png`` into a
comparison's directory from the metrics of
:mod:`bolt_pco64.bench.report.cost` (time to target, ERT, paired comparisons
on cost, ERT ratios at several targets, regret against the cost axes).

An ERT ratio's lower bound is printed "unbounded" where the reference never
reached the target in enough bootstrap resamples that the bound is one of
them (its ERT infinite there, the ratio 0): the data then cannot bound how
much cheaper the method is; the share of such resamples is printed beside
it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.bench.report.context import ReportContext
from bolt_pco64.bench.report.cost import (
    COST_AXES,
    compare_costs,
    cost_grid,
    ert_sensitivity,
    ert_table,
    regret_on_grid,
    within_budget,
)
from bolt_pco64.bench.report.markdown import markdown_table
from bolt_pco64.bench.report.plots import (
    add_caption,
    draw_median,
    method_style,
    plot_caption,
    regret_axes,
)
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    complete_runs,
    method_order,
    regret_fill,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


__all__ = [
    "COST_REPORT_FILES",
    "ert_markdown",
    "plot_cost",
    "ratio_interval",
    "sensitivity_markdown",
    "write_cost_report",
]


def _num(v: float) -> str:
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:,.0f}"


def _pct(target: float) -> str:
    """``0.005 -> "0.5%"``, ``0.01 -> "1%"``."""
    return f"{100 * target:g}%"


def ratio_interval(ratio: float, low: float, high: float) -> str:
    """``"0.25 [unbounded, 0.52]"``: an ERT ratio and its interval, the lower
    bound "unbounded" where it is NaN (the reference's ERT was infinite in
    that tail of the resamples), and just "—" where the reference never got
    there (no ratio)."""
    if math.isnan(ratio):
        return "—"
    lo = "unbounded" if math.isnan(low) else _num(low)
    return f"{_num(ratio)} [{lo}, {_num(high)}]"


def sensitivity_markdown(table: pd.DataFrame, reference: str) -> str:
    """A Markdown table of
    :func:`~bolt_pco64.bench.report.cost.ert.ert_sensitivity`: one row per
    method, one column per target."""
    targets = sorted(set(table["target"]))
    rows = []
    for m in dict.fromkeys(table["method"]):
        cells = [m]
        for t in targets:
            r = table[(table["method"] == m) & (table["target"] == t)].iloc[0]
            cells.append(
                f"{ratio_interval(r['ert_ratio'], r['ratio_low'], r['ratio_high'])} "
                f"({int(r['reached'])}/{int(r['runs'])})"
            )
        rows.append(cells)
    lines = markdown_table(["method", *(_pct(t) for t in targets)], rows)
    ref = table[table["method"] != reference].groupby("target")["reference_infinite"]
    share = ref.max()
    lines += [
        "",
        f"Cells: ERT / {reference}'s [95% paired bootstrap CI] (seeds that reached "
        f"the target / seeds). {reference}'s ERT was ∞ (no resampled seed reached "
        "the target) in "
        + ", ".join(f"{share.get(t, math.nan):.0%} at {_pct(t)}" for t in targets)
        + " of the resamples; where that share reaches the lower tail the "
        "lower bound is unbounded.",
    ]
    return "\n".join(lines) + "\n"


def ert_markdown(ert: pd.DataFrame, unit: str) -> str:
    """A Markdown table of :func:`~bolt_pco64.bench.report.cost.ert.ert_table`'s
    result (one row per method and target)."""
    lines = [
        f"| method | target | reached | ERT ({unit}) [95% CI] | median cost ({unit}) |",
        "|---|---|---|---|---|",
    ]
    for r in ert.itertuples(index=False):
        lines.append(
            f"| {r.method} | {r.target:.0%} | {r.reached}/{r.runs} "
            f"[{r.rate_low:.0%}, {r.rate_high:.0%}] | {_num(r.ert)} "
            f"[{_num(r.ert_low)}, {_num(r.ert_high)}] | {_num(r.median_cost)} |"
        )
    return "\n".join(lines) + "\n"


def _draw(
    ax: Axes,
    records: pd.DataFrame,
    axis: str,
    fill: float,
    methods: Sequence[str],
    upto: float | None,
) -> None:
    grid = cost_grid(records, axis, upto=upto)
    for i, m in enumerate(methods):
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        _, matrix = regret_on_grid(sub, axis, grid, fill)
        draw_median(ax, grid, matrix, method_style(i), m, m, axis)
    ax.set_xlabel(COST_AXES[axis].label)
    regret_axes(ax, "simple regret (optimal - best feasible evaluated)")


def plot_cost(
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    optimal_value: float,
    worst_feasible_value: float,
    methods: Sequence[str] | None = None,
    title: str = "",
    budget_hours: float | None = None,
    cost: str = "GPU-hours",
) -> None:
    """Write a PNG: median regret with bootstrap bands against GPU-hours and wall-clock.

    Two plots: simple regret against cumulative GPU-hours (up to
    ``budget_hours`` when given, else where the first run stops) and against
    simulated wall-clock hours (where the first run stops), each run's
    regret forward-filled on one grid
    (:func:`~bolt_pco64.bench.report.cost.curves.regret_on_grid`); lines, bands
    and single runs by the regret plot's one rule
    (:func:`~bolt_pco64.bench.report.plots.draw_median`: a band only with enough
    seeds for it to say something, each method in its own style). Drawn on a
    :class:`matplotlib.figure.Figure` of its own (pyplot's state and the
    backend are left alone).

    Args:
        cost: The GPU-hour axis's label (``"simulated GPU-hours"`` on the
            stand-in).
    """
    from matplotlib.figure import Figure

    names = method_order(records, methods)
    fill = regret_fill(optimal_value, worst_feasible_value)
    fig = Figure(figsize=(12, 4.8))
    axes = fig.subplots(1, 2)
    _draw(axes[0], records, "gpu_hours", fill, names, budget_hours)
    axes[0].set_xlabel(f"{cost} (cumulative)")
    _draw(axes[1], records, "wall_hours", fill, names, None)
    if title:
        fig.suptitle(title)
    seeds = [records.loc[records["method"] == m, "seed"].nunique() for m in names]
    add_caption(
        fig, "On one cost grid, each run forward-filled. " + plot_caption(seeds)
    )
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))


#: The files :func:`write_cost_report` writes into a comparison's directory.
COST_REPORT_FILES = (
    "cost_summary.md",
    "cost_ert.csv",
    "cost_comparisons.csv",
    "cost_sensitivity.csv",
    "cost.png",
)


def write_cost_report(ctx: ReportContext) -> str:
    """Write the cost report of a comparison: :data:`COST_REPORT_FILES`.

    ``cost_ert.csv``: :func:`~bolt_pco64.bench.report.cost.ert.ert_table` on
    both axes (column ``axis``); ``cost_comparisons.csv``:
    :func:`~bolt_pco64.bench.report.cost.ert.compare_costs` against
    ``ctx.reference`` on both axes (empty without complete runs of it);
    ``cost_sensitivity.csv``:
    :func:`~bolt_pco64.bench.report.cost.ert.ert_sensitivity` against
    the reference in GPU-hours at
    :attr:`~bolt_pco64.bench.report.cost.base.CostMetricsDefaults.sensitivity_targets`
    (empty without complete runs of it); ``cost_summary.md`` the three as
    Markdown; ``cost.png``: :func:`plot_cost`. Failed runs are
    left out. On a GPU-hour budget only the results that came in within it
    count (:func:`~bolt_pco64.bench.report.cost.base.within_budget`), on
    either axis.

    Returns:
        ``cost_summary.md``'s text.
    """
    config, cost, path = ctx.config, ctx.cost, ctx.out
    done = within_budget(complete_runs(ctx.records, ctx.failed), config.budget_hours)
    done = done[done["method"].isin(list(ctx.methods))]
    names = [m for m in ctx.methods if (done["method"] == m).any()]
    reference = ctx.reference if (done["method"] == ctx.reference).any() else None
    lines = _cost_header(ctx, len(names))
    erts, cmps = [], []
    axes = {"gpu_hours": cost, "wall_hours": "simulated wall-clock hours"}
    for axis, unit in axes.items():
        cap = config.budget_hours if axis == "gpu_hours" else None
        ert = ert_table(done, ctx.optimal_value, axis=axis, budget=cap, methods=names)
        erts.append(ert.assign(axis=axis))
        lines += [f"## Time to target in {unit}", "", ert_markdown(ert, unit)]
        if reference is not None:
            cmp = compare_costs(
                done, reference, ctx.optimal_value, axis=axis, budget=cap, methods=names
            )
            cmps.append(cmp.assign(axis=axis))
            lines += _comparison_lines(cmp, reference)
    atomic_write_text(
        path / "cost_ert.csv", pd.concat(erts, ignore_index=True).to_csv(index=False)
    )
    cmp_frame = pd.concat(cmps, ignore_index=True) if cmps else pd.DataFrame()
    atomic_write_text(path / "cost_comparisons.csv", cmp_frame.to_csv(index=False))
    sens = pd.DataFrame()
    if reference is not None:
        sens = ert_sensitivity(
            done,
            reference,
            ctx.optimal_value,
            axis="gpu_hours",
            budget=config.budget_hours,
            methods=names,
        )
        lines += [
            f"## Sensitivity to the target: ERT in {cost} / {reference}'s",
            "",
            sensitivity_markdown(sens, reference),
        ]
    atomic_write_text(path / "cost_sensitivity.csv", sens.to_csv(index=False))
    md = "\n".join(lines)
    atomic_write_text(path / "cost_summary.md", md)
    if names:
        plot_cost(
            done,
            path / "cost.png",
            ctx.optimal_value,
            ctx.worst_feasible_value,
            names,
            title=f"{ctx.facts.name}: regret against cost",
            budget_hours=config.budget_hours,
            cost=cost,
        )
    return md


def _cost_header(ctx: ReportContext, n_methods: int) -> list[str]:
    """``cost_summary.md``'s title and the paragraphs above its tables."""
    config = ctx.config
    return [
        f"# {ctx.facts.name} cost report",
        "",
        f"{n_methods} methods, {config.describe_budget()} per run, "
        f"{config.workers} worker{'s' if config.workers > 1 else ''}; "
        f"{ctx.cost} by the time model (bolt_pco64.tables.time_model): "
        f"{ctx.facts.time_model}.",
        "",
        "Time to target: the first result whose best feasible throughput is "
        "within the target of the optimum. ERT = the cost spent by all seeds "
        "(a seed that never got there: its whole budget, or its whole run on an "
        "axis without a budget) / the seeds that got there; ∞ when none did. "
        "Intervals: 95% percentile "
        f"bootstrap over seeds ({STATS_DEFAULTS.resamples} resamples).",
        "",
    ]


def _comparison_lines(cmp: pd.DataFrame, reference: str) -> list[str]:
    """The paired cost comparisons with ``reference`` on one axis, as Markdown."""
    lines = [
        f"Against {reference}, seed by seed (cost to the target; a seed "
        "that never got there costs ∞): ERT ratio [95% paired bootstrap "
        f"CI], cheaper / tied / dearer seeds, sign-test p; {reference} ∞: "
        f"the share of resamples where {reference} never reached the "
        "target (the lower bound is unbounded where it reaches "
        f"{(1 - STATS_DEFAULTS.level) / 2:.1%}).",
        "",
        f"| method | target | ERT ratio | cheaper / tied / dearer | p | {reference} ∞ |",
        "|---|---|---|---|---|---|",
    ]
    for r in cmp.itertuples(index=False):
        n = r.pairs
        lines.append(
            f"| {r.method} | {r.target:.0%} | "
            f"{ratio_interval(r.ert_ratio, r.ratio_low, r.ratio_high)} | "
            f"{round(r.better * n)} / {round(r.tied * n)} / "
            f"{round(r.worse * n)} | {r.p_value:.2g} | "
            f"{r.reference_infinite:.0%} |"
        )
    lines.append("")
    return lines
