"""The report of a comparison: per-method summary, Markdown tables and files.

Regret before a run's first feasible evaluation counts as
``optimal_value - worst_feasible_value`` (as bad as the worst configuration
that runs). The cost is labelled "simulated GPU-hours" where the table is the
simulated stand-in and "GPU-hours" otherwise (:func:`cost_label`).

Both the *simple* regret (``regret``: of the best configuration evaluated)
and the *inference* regret (``inference_regret``: of the configuration the
method recommends) are reported as medians over seeds with 95% bootstrap
intervals, and every method is compared with a reference method over the
shared seeds (:mod:`bolt_pco64.bench.stats`). The regret plot is drawn by
:mod:`bolt_pco64.bench.plots`; :func:`write_summary` writes it with the tables.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.config import DEFAULTS, BenchConfig
from bolt_pco64.bench.costmetrics import evaluation_horizon
from bolt_pco64.bench.plots import plot_regret
from bolt_pco64.bench.run import instance_of
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    found_optimum_intervals,
    median_intervals,
    outcome_matrix,
    paired_comparisons,
    regret_fill,
    verdict,
)
from bolt_pco64.costs import TimeModel

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = [
    "checkpoints_for",
    "compare_to_reference",
    "comparisons_markdown",
    "cost_label",
    "no_comparisons_reason",
    "summarize",
    "summary_markdown",
    "terminal_summary",
    "write_summary",
]


def checkpoints_for(budget: int) -> list[int]:
    """Evaluation counts reported in the summary: quarters of the budget."""
    return sorted({max(1, round(budget * f)) for f in (0.25, 0.5, 0.75, 1.0)})


def cost_label(table: Table) -> str:
    """``"simulated GPU-hours"`` for the simulated stand-in, else ``"GPU-hours"``."""
    return "simulated GPU-hours" if table.is_simulated else "GPU-hours"


#: The regret columns reported, with their labels.
REGRETS: tuple[tuple[str, str], ...] = (
    ("regret", "regret"),
    ("inference_regret", "inference regret"),
)


def _complete(records: pd.DataFrame, failed: set[tuple[str, int]]) -> pd.DataFrame:
    """The records of the runs not in ``failed`` (``(method, seed)`` pairs)."""
    if not len(records):
        return records
    keep = np.array(
        [
            (m, int(s)) not in failed
            for m, s in zip(records["method"], records["seed"], strict=True)
        ],
        dtype=bool,
    )
    return records.loc[keep]


def summarize(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
    n_init: int | None = None,
) -> pd.DataFrame:
    """Per-method summary of complete runs.

    A regret of NaN (no feasible evaluation yet) counts as
    ``optimal_value - worst_feasible_value``: as bad as the worst configuration
    that runs. Failed runs (``failed``) are left out and counted.

    Returns:
        One row per method: ``runs``, ``failed``; for each checkpoint ``k``
        ``regret_median@k``, ``regret_q25@k``, ``regret_q75@k``, the 95%
        bootstrap interval of the median ``regret_low@k``/``regret_high@k``,
        and the same median and interval of ``inference_regret`` (NaN for
        records without that column); ``found_optimum`` (share of runs) with
        ``found_optimum_low``/``found_optimum_high``,
        ``evals_to_optimum_median`` (inf when the median run did not find it),
        ``ooms_median``, ``ooms_total``, ``gpu_hours_median``, and, given
        ``n_init``, ``bo_oom_share_median``: the median over runs of the share
        of the evaluations after the initial design that ran out of memory;
        ``repeats_median``/``repeats_total``: evaluations of a row already
        evaluated in the run (a point method's snapped repeats; 0 for
        records without a ``repeat`` column); ``seconds_per_eval_median``:
        the median over runs of the proposal time (fit plus acquisition
        seconds) per evaluation after the initial design (wall time, so it
        varies between otherwise identical runs).
    """
    failed = failed or set()
    fill = regret_fill(optimal_value, worst_feasible_value)
    names = (
        list(methods)
        if methods is not None
        else list(dict.fromkeys(records["method"].tolist()))
    )
    rows = []
    complete = _complete(records, failed)
    for m in names:
        n_failed = sum(1 for (mm, _) in failed if mm == m)
        ok = complete[complete["method"] == m]
        row: dict[str, Any] = {"method": m, "runs": ok["seed"].nunique()}
        row["failed"] = n_failed
        if row["runs"] == 0:
            rows.append(row)
            continue
        _, mat = outcome_matrix(ok, budget, fill, "regret")
        ks = checkpoints_for(budget)
        for k in ks:
            col = mat[:, k - 1]
            row[f"regret_median@{k}"] = float(np.median(col))
            row[f"regret_q25@{k}"] = float(np.quantile(col, 0.25))
            row[f"regret_q75@{k}"] = float(np.quantile(col, 0.75))
        for column, _ in REGRETS:
            if column not in ok.columns:
                for k in ks:
                    for what in ("median", "low", "high"):
                        row[f"{column}_{what}@{k}"] = math.nan
                continue
            ci = median_intervals(ok, budget, fill, ks, column, [m])
            for c in ci.to_dict("records"):
                k = c["checkpoint"]
                row[f"{column}_median@{k}"] = c["median"]
                row[f"{column}_low@{k}"] = c["low"]
                row[f"{column}_high@{k}"] = c["high"]
        hit = mat <= 0
        found = hit.any(axis=1)
        first = np.where(found, hit.argmax(axis=1) + 1, np.inf)
        rate = found_optimum_intervals(ok, budget, fill, "regret", [m]).iloc[0]
        row["found_optimum"] = float(found.mean())
        row["found_optimum_low"] = float(rate["low"])
        row["found_optimum_high"] = float(rate["high"])
        row["evals_to_optimum_median"] = float(np.median(first))
        per = ok.groupby("seed")
        ooms = per["feasible"].apply(lambda f: int((~f.astype(bool)).sum()))
        row["ooms_median"] = float(ooms.median())
        row["ooms_total"] = int(ooms.sum())
        if n_init is not None and budget > n_init:
            after = ok[ok["iteration"] > n_init].groupby("seed")["feasible"]
            share = after.apply(lambda f: float((~f.astype(bool)).mean()))
            row["bo_oom_share_median"] = float(share.median())
        if "repeat" in ok.columns:
            repeats = per["repeat"].apply(lambda f: int(f.astype(bool).sum()))
        else:
            repeats = ooms * 0
        row["repeats_median"] = float(repeats.median())
        row["repeats_total"] = int(repeats.sum())
        row["gpu_hours_median"] = float(per["gpu_hours"].max().median())
        bo = ok[ok["iteration"] > (n_init or 0)]
        if len(bo) and {"fit_seconds", "acq_seconds"} <= set(bo.columns):
            spent = (bo["fit_seconds"] + bo["acq_seconds"]).groupby(bo["seed"])
            row["seconds_per_eval_median"] = float(spent.mean().median())
        else:
            row["seconds_per_eval_median"] = math.nan
        rows.append(row)
    return pd.DataFrame(rows)


#: The measures of the paired comparisons: column, title, what "better" means.
MEASURES: tuple[tuple[str, str, str], ...] = (
    ("regret", "simple regret", "lower regret"),
    (
        "bo_ooms",
        "OOM runs after the initial design, counted up to the checkpoint",
        "fewer OOM runs",
    ),
)


def compare_to_reference(
    records: pd.DataFrame,
    reference: str,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
    n_init: int | None = None,
) -> pd.DataFrame:
    """Paired comparisons of every method with ``reference`` (complete runs).

    :func:`~bolt_pco64.bench.stats.paired_comparisons` at each checkpoint of
    the simple regret and, given ``n_init``, of the number of OOM runs after
    the initial design (``bo_ooms``; the initial design is shared, so only
    the method's own choices count); a ``measure`` column names which, and a
    ``verdict`` column says it in words (:func:`~bolt_pco64.bench.stats.verdict`;
    "better" is lower regret or fewer OOM runs). Empty when ``reference`` has
    no complete run.
    """
    ok = _complete(records, failed or set())
    if ok.empty or reference not in set(ok["method"]):
        return pd.DataFrame()
    fill = regret_fill(optimal_value, worst_feasible_value)
    order = list(methods) if methods is not None else list(dict.fromkeys(ok["method"]))
    ok = ok.sort_values(["method", "seed", "iteration"], kind="stable")
    frames = []
    for column, _, _ in MEASURES:
        if column == "bo_ooms":
            if n_init is None:
                continue
            crashed = (~ok["feasible"].astype(bool)) & (ok["iteration"] > n_init)
            ok = ok.assign(
                bo_ooms=crashed.astype(np.float64)
                .groupby([ok["method"], ok["seed"]])
                .cumsum()
            )
        cmp = paired_comparisons(
            ok, reference, budget, fill, checkpoints_for(budget), column, order
        )
        cmp.insert(2, "measure", column)
        frames.append(cmp)
    out = pd.concat(frames, ignore_index=True)
    out["verdict"] = [
        verdict(
            r["method"], reference, r["better"], r["worse"], r["p_value"], r["pairs"]
        )
        for r in out.to_dict("records")
    ]
    return out


def comparisons_markdown(comparisons: pd.DataFrame, budget: int) -> str:
    """The paired comparisons as Markdown: per measure a table and one line per method."""
    if comparisons.empty:
        return ""
    ref = comparisons["reference"].iloc[0]
    ks = checkpoints_for(budget)
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
        lines += [
            "",
            f"### {title} (better = {better})",
            "",
            "| method | "
            + " | ".join(f"@{k}: better/same/worse (p)" for k in ks)
            + " |",
            "|" + "|".join("---" for _ in range(len(ks) + 1)) + "|",
        ]
        verdicts = []
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
            lines.append("| " + " | ".join(cells) + " |")
            verdicts.append(f"- {'; '.join(said)}.")
        lines += ["", *verdicts]
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
        summary: :func:`summarize`'s frame (an extra leading ``problem``
            column is shown when ``first_column`` is ``"problem"``).
        budget: Evaluations per run.
        header: Lines written above the table.
        cost: The cost column's unit (:func:`cost_label`).
        first_column: ``"method"``, or ``"problem"`` for a combined table.
    """
    ks = checkpoints_for(budget)
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
    lines = [*header, "", "| " + " | ".join(cols) + " |"]
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for r in summary.to_dict("records"):
        cells = [str(r[c]) for c in lead]
        runs = f"{r['runs']}" + (f" (+{r['failed']} failed)" if r["failed"] else "")
        cells.append(runs)
        if r["runs"] == 0:
            lines.append(
                "| " + " | ".join(cells + ["–"] * (len(cols) - len(cells))) + " |"
            )
            continue
        for k in ks:
            cells.append(
                _ci(
                    r[f"regret_median@{k}"], r[f"regret_low@{k}"], r[f"regret_high@{k}"]
                )
            )
        e = r["evals_to_optimum_median"]
        cells += [
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
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
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


def no_comparisons_reason(
    reference: str, methods: Sequence[str], summary: pd.DataFrame
) -> str:
    """The sentence ``summary.md`` and the terminal give when there are no
    paired comparisons with ``reference``.

    Args:
        reference: The reference method.
        methods: The methods compared.
        summary: :func:`summarize`'s frame (its ``runs`` say which methods have
            complete runs).
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
        summary: :func:`summarize`'s frame (with a leading ``problem``
            column when ``first_column`` is ``"problem"``).
        budget: Evaluations per run.
        first_column: ``"method"``, or ``"problem"`` for a combined table.
    """
    ks = checkpoints_for(budget)
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


def write_summary(
    out: str | os.PathLike[str],
    records: pd.DataFrame,
    table: Table,
    optimal_value: float,
    worst_feasible_value: float,
    methods: Sequence[str],
    seeds: Sequence[int],
    config: BenchConfig,
    failed: set[tuple[str, int]],
    fingerprint: str,
    reference: str = DEFAULTS.reference,
) -> tuple[pd.DataFrame, str]:
    """Write ``summary.csv``, ``summary.md``, ``comparisons.csv`` and ``regret.png``.

    Args:
        fingerprint: The table's fingerprint (named in the header).
        reference: The method every other one is compared with
            (:func:`compare_to_reference`); without complete runs of it
            ``summary.md`` says so and ``comparisons.csv`` is empty.

    Returns:
        The summary frame and the Markdown text.
    """
    path = Path(out)
    instance = instance_of(table)
    # On a GPU-hour budget runs make different numbers of evaluations: the
    # evaluation-axis statistics stop at the fewest any complete run made.
    budget = (
        config.budget
        if config.budget is not None
        else evaluation_horizon(records, failed)
    )
    summary = summarize(
        records,
        optimal_value,
        worst_feasible_value,
        budget,
        failed,
        methods,
        config.n_init,
    )
    atomic_write_text(path / "summary.csv", summary.to_csv(index=False))
    cost = cost_label(table)
    src = "SIMULATED stand-in table" if table.is_simulated else "table"
    # The file name, not the full path: summaries are shared and committed
    # (meta.json keeps the full source).
    where = table.source.path.name if table.source.path is not None else "<DataFrame>"
    header = [
        f"# {instance.name} benchmark summary",
        "",
        f"{len(methods)} methods × {len(seeds)} seeds × {config.describe_budget()} "
        f"(n_init {config.n_init}, q {config.q}, noise {config.noise}, "
        f"{config.workers} worker{'s' if config.workers > 1 else ''}"
        + (
            f"; evaluation statistics up to {budget} evaluations, the fewest a run made"
            if config.budget is None
            else ""
        )
        + f"); {src} "
        f"{where} ({table.source.kind}, fingerprint {fingerprint[:12]}); "
        f"optimal value {optimal_value:.5f}.",
        "",
        "Regret = optimal − best feasible throughput (before the first feasible "
        f"evaluation: optimal − worst feasible). {cost} (bolt_pco64.costs): "
        f"{TimeModel(table).describe()}.",
    ]
    md = summary_markdown(summary, budget, header, cost=cost)
    comparisons = compare_to_reference(
        records,
        reference,
        optimal_value,
        worst_feasible_value,
        budget,
        failed,
        methods,
        config.n_init,
    )
    atomic_write_text(path / "comparisons.csv", comparisons.to_csv(index=False))
    if comparisons.empty:
        md += "\n" + no_comparisons_reason(reference, methods, summary) + "\n"
    else:
        md += "\n" + comparisons_markdown(comparisons, budget)
    atomic_write_text(path / "summary.md", md)
    kind = "simulated stand-in" if table.is_simulated else table.source.kind
    plot_regret(
        records,
        path / "regret.png",
        optimal_value,
        worst_feasible_value,
        budget,
        methods,
        title=f"{instance.name} ({kind})",
        cost=cost,
    )
    return summary, md
