"""The summary and the paired comparisons as text.

Markdown tables for ``summary.md`` (:func:`summary_markdown`,
:func:`comparisons_markdown`, :func:`no_comparisons_reason`) and the compact
plain-text summary the terminal shows (:func:`terminal_summary`), from the
frames of :mod:`bolt_pco64.bench.report.tables`.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from bolt_pco64.bench.report.tables import MEASURES, summary_checkpoints
from bolt_pco64.bench.stats import STATS_DEFAULTS

__all__ = [
    "comparisons_markdown",
    "markdown_table",
    "no_comparisons_reason",
    "summary_markdown",
    "terminal_summary",
]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table's lines: the header, its rule and one line per row
    (cells written with ``str``)."""
    return [
        "| " + " | ".join(header) + " |",
        "|---" * len(header) + "|",
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
    ]


def comparisons_markdown(comparisons: pd.DataFrame, budget: int) -> str:
    """The paired comparisons as Markdown: per measure a table and one line per method."""
    if comparisons.empty:
        return ""
    ref = comparisons["reference"].iloc[0]
    ks = sorted({int(k) for k in comparisons["checkpoint"]})
    lines = [
        f"## Paired comparisons with {ref} (shared seeds)",
        "",
        f"Per checkpoint: seeds where the method does better / the same / worse "
        f"than {ref}, and the two-sided Wilcoxon signed-rank p-value (ties kept "
        "in the ranking, Pratt); not corrected for multiple comparisons.",
    ]
    for column, title, better in MEASURES:
        part = comparisons[comparisons["measure"] == column]
        if part.empty:
            continue
        rows, verdicts = [], []
        for m, sub in part.groupby("method", sort=False):
            cells = [str(m)]
            said = []
            for k in ks:
                r = sub[sub["checkpoint"] == k].iloc[0]
                n = int(r["pairs"])
                cells.append(
                    f"{round(r['better'] * n)}/{round(r['tied'] * n)}/"
                    f"{round(r['worse'] * n)} ({r['p_value']:.2g})"
                )
                said.append(f"@{k}: {r['verdict']}")
            rows.append(cells)
            verdicts.append(f"- {'; '.join(said)}.")
        header = ["method", *(f"@{k}: better/same/worse (p)" for k in ks)]
        lines += ["", f"### {title} (better = {better})", ""]
        lines += [*markdown_table(header, rows), "", *verdicts]
    return "\n".join(lines) + "\n"


def _ci(median: float, low: float, high: float) -> str:
    return f"{_fmt(median)} [{_fmt(low)}, {_fmt(high)}]"


def _seconds(v: float) -> str:
    return "–" if v is None or math.isnan(v) else f"{v:.2f}"


def _fmt(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def summary_markdown(
    summary: pd.DataFrame,
    budget: int,
    header: Sequence[str] = (),
    cost: str = "GPU-hours",
    first_column: str = "method",
) -> str:
    """The summary as a Markdown table (median [IQR] of regret at checkpoints).

    Args:
        summary: :func:`~bolt_pco64.bench.report.tables.summarize`'s frame (an extra
            leading ``problem`` column is shown when ``first_column`` is
            ``"problem"``).
        budget: Evaluations per run.
        header: Lines written above the table.
        cost: The cost column's unit
            (:func:`~bolt_pco64.bench.report.facts.cost_label`).
        first_column: ``"method"``, or ``"problem"`` for a combined table.
    """
    ks = summary_checkpoints(summary)
    lead = ["problem", "method"] if first_column == "problem" else ["method"]
    cols = [
        *lead,
        "runs",
        *[f"regret @{k}: median [95% CI]" for k in ks],
        "found optimum [95% CI]",
        "evals to optimum (median)",
        "OOMs per run (median)",
        "OOM share after the initial design (median)",
        "OOMs total",
        "repeats per run (median)",
        "repeats total",
        f"{cost} (median)",
        "s per evaluation (median)",
    ]
    rows = (
        _summary_cells(r, lead, ks, budget, cols) for r in summary.to_dict("records")
    )
    lines = [*header, "", *markdown_table(cols, rows)]
    lines += _inference_lines(summary, lead, ks)
    lines += [
        "",
        "Medians over seeds; intervals: 95% percentile bootstrap over seeds "
        f"({STATS_DEFAULTS.resamples} resamples). Repeats: evaluations of a row "
        "already evaluated in the run (a method that proposes points of the box "
        "can snap to one); a repeat costs an evaluation and returns the row's "
        "first observation. s per evaluation: model fitting plus acquisition "
        "wall seconds per evaluation after the initial design.",
    ]
    return "\n".join(lines) + "\n"


def _summary_cells(
    r: dict[str, Any], lead: list[str], ks: list[int], budget: int, cols: list[str]
) -> list[str]:
    """One summary row's cells (dashes for a method without complete runs)."""
    cells = [str(r[c]) for c in lead]
    cells.append(f"{r['runs']}" + (f" (+{r['failed']} failed)" if r["failed"] else ""))
    if r["runs"] == 0:
        return cells + ["–"] * (len(cols) - len(cells))
    for k in ks:
        cells.append(
            _ci(r[f"regret_median@{k}"], r[f"regret_low@{k}"], r[f"regret_high@{k}"])
        )
    e = r["evals_to_optimum_median"]
    return [
        *cells,
        f"{100 * r['found_optimum']:.0f}% [{100 * r['found_optimum_low']:.0f}%, "
        f"{100 * r['found_optimum_high']:.0f}%]",
        f"> {budget}" if math.isinf(e) else f"{e:g}",
        f"{r['ooms_median']:g}",
        _fmt(r.get("bo_oom_share_median", math.nan)),
        f"{r['ooms_total']}",
        f"{r.get('repeats_median', 0):g}",
        f"{r.get('repeats_total', 0)}",
        f"{r['gpu_hours_median']:.1f}",
        _seconds(r.get("seconds_per_eval_median", math.nan)),
    ]


def _inference_lines(
    summary: pd.DataFrame, lead: list[str], ks: list[int]
) -> list[str]:
    """The inference-regret table below the summary."""
    lines = [
        "",
        "Inference regret (of the configuration each method recommends: its "
        "model's best posterior mean among the evaluated feasible ones; for "
        "model-free methods the best observed), median [95% CI]:",
        "",
        "| " + " | ".join([*lead, *[f"@{k}" for k in ks]]) + " |",
        "|" + "|".join("---" for _ in range(len(lead) + len(ks))) + "|",
    ]
    for r in summary.to_dict("records"):
        if r["runs"] == 0:
            continue
        cells = [str(r[c]) for c in lead]
        cells += [
            _ci(
                r[f"inference_regret_median@{k}"],
                r[f"inference_regret_low@{k}"],
                r[f"inference_regret_high@{k}"],
            )
            for k in ks
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def no_comparisons_reason(
    reference: str, methods: Sequence[str], summary: pd.DataFrame
) -> str:
    """The sentence ``summary.md`` and the terminal give when there are no
    paired comparisons with ``reference``.

    Args:
        reference: The reference method.
        methods: The methods compared.
        summary: :func:`~bolt_pco64.bench.report.tables.summarize`'s frame (its
            ``runs`` say which methods have complete runs).
    """
    runs = dict(zip(summary["method"], summary["runs"], strict=True))
    others = [m for m in methods if m != reference]
    if reference not in methods:
        return (
            f"No paired comparisons: the reference {reference!r} is not among the "
            f"methods compared ({', '.join(methods)})."
        )
    if not others:
        return (
            f"No paired comparisons: {reference} is the only method compared, so "
            "there is nothing to compare it with."
        )
    if not runs.get(reference):
        return (
            f"No paired comparisons: the reference {reference!r} has no complete run."
        )
    return (
        f"No paired comparisons: no other method has a complete run to pair with "
        f"{reference}'s."
    )


def _bound(v: float, digits: int) -> str:
    """An interval bound: ``"0"`` for exactly 0, else ``digits`` decimals."""
    return "0" if v == 0 else f"{v:.{digits}f}"


def terminal_summary(
    summary: pd.DataFrame, budget: int, first_column: str = "method"
) -> str:
    """A compact plain-text summary for the terminal (``summary.md`` has it all).

    Per method: its complete runs, the median simple regret at each
    checkpoint with its 95% bootstrap interval on the line below, the
    found-optimum rate (with its interval below) and the median OOM share
    of the evaluations after the initial design. About 90 characters wide
    for four checkpoints, so that it does not wrap in a terminal.

    Args:
        summary: :func:`~bolt_pco64.bench.report.tables.summarize`'s frame (with a
            leading ``problem`` column when ``first_column`` is ``"problem"``).
        budget: Evaluations per run.
        first_column: ``"method"``, or ``"problem"`` for a combined table.
    """
    ks = summary_checkpoints(summary)
    lead = ["problem", "method"] if first_column == "problem" else ["method"]
    header = [*lead, "runs", *[f"@{k}" for k in ks], "found optimum", "OOM share"]
    rows: list[list[str]] = []
    for r in summary.to_dict("records"):
        top = [str(r[c]) for c in lead]
        below = ["" for _ in lead]
        runs = f"{r['runs']}" + (f" (+{r['failed']} failed)" if r["failed"] else "")
        top.append(runs)
        below.append("")
        if r["runs"] == 0:
            rows += [top + ["–"] * (len(header) - len(top))]
            continue
        for k in ks:
            top.append(_fmt(r[f"regret_median@{k}"]))
            below.append(
                f"{_bound(r[f'regret_low@{k}'], 4)}–{_bound(r[f'regret_high@{k}'], 4)}"
            )
        top.append(f"{100 * r['found_optimum']:.0f}%")
        below.append(
            f"{100 * r['found_optimum_low']:.0f}–{100 * r['found_optimum_high']:.0f}%"
        )
        share = r.get("bo_oom_share_median", math.nan)
        top.append("–" if share is None or math.isnan(share) else f"{100 * share:.0f}%")
        below.append("")
        rows += [top, below]
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    numeric = len(lead)  # columns from here on are right-aligned

    def line(cells: list[str]) -> str:
        out = [
            c.ljust(w) if i < numeric else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    title = (
        f"Simple regret (optimal − best feasible) at {', '.join(map(str, ks))} "
        "evaluations: median over seeds, its 95% bootstrap interval below. "
        f"Found optimum: share of runs with regret 0 by {budget}. OOM share: of "
        "the evaluations after the initial design (median over runs)."
    )
    return "\n".join(
        [*textwrap.wrap(title, 80), "", line(header), *[line(r) for r in rows]]
    )
