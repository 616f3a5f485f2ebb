"""The report of a comparison: per-method summary, Markdown table and plot.

Regret before a run's first feasible evaluation counts as
``optimal_value - worst_feasible_value`` (as bad as the worst configuration
that runs). The cost is labelled "simulated GPU-hours" where the table is the
simulated stand-in and "GPU-hours" otherwise (:func:`cost_label`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.bench.config import DEFAULTS, BenchConfig
from bolt_pco64.bench.run import instance_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from bolt_pco64.table import Table

__all__ = [
    "checkpoints_for",
    "cost_label",
    "plot_regret",
    "summarize",
    "summary_markdown",
    "write_summary",
]


def checkpoints_for(budget: int) -> list[int]:
    """Evaluation counts reported in the summary: quarters of the budget."""
    return sorted({max(1, round(budget * f)) for f in (0.25, 0.5, 0.75, 1.0)})


def cost_label(table: Table) -> str:
    """``"simulated GPU-hours"`` for the simulated stand-in, else ``"GPU-hours"``."""
    return "simulated GPU-hours" if table.is_simulated else "GPU-hours"


def _regret_matrix(
    runs: pd.DataFrame, budget: int, fill: float
) -> tuple[list[int], np.ndarray]:
    """``seeds x budget`` regret (NaN before the first feasible -> ``fill``)."""
    seeds = sorted(runs["seed"].unique().tolist())
    mat = np.full((len(seeds), budget), np.nan)
    for i, s in enumerate(seeds):
        r = runs[runs["seed"] == s].sort_values("iteration")
        vals = r["regret"].to_numpy(dtype=np.float64)[:budget]
        mat[i, : len(vals)] = vals
    return seeds, np.where(np.isnan(mat), fill, mat)


def summarize(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per-method summary of complete runs.

    A regret of NaN (no feasible evaluation yet) counts as
    ``optimal_value - worst_feasible_value``: as bad as the worst configuration
    that runs. Failed runs (``failed``) are left out and counted.

    Returns:
        One row per method: ``runs``, ``failed``, ``regret_median@k``,
        ``regret_q25@k``, ``regret_q75@k`` for each checkpoint ``k``,
        ``found_optimum`` (share of runs), ``evals_to_optimum_median`` (inf when
        the median run did not find it), ``ooms_median``, ``ooms_total``,
        ``gpu_hours_median``.
    """
    failed = failed or set()
    fill = float(optimal_value - worst_feasible_value)
    names = (
        list(methods)
        if methods is not None
        else list(dict.fromkeys(records["method"].tolist()))
    )
    rows = []
    for m in names:
        sub = records[records["method"] == m]
        n_failed = sum(1 for (mm, _) in failed if mm == m)
        keep = np.array([(m, int(s)) not in failed for s in sub["seed"]], dtype=bool)
        ok = sub.loc[keep]
        row: dict[str, Any] = {"method": m, "runs": ok["seed"].nunique()}
        row["failed"] = n_failed
        if row["runs"] == 0:
            rows.append(row)
            continue
        _, mat = _regret_matrix(ok, budget, fill)
        for k in checkpoints_for(budget):
            col = mat[:, k - 1]
            row[f"regret_median@{k}"] = float(np.median(col))
            row[f"regret_q25@{k}"] = float(np.quantile(col, 0.25))
            row[f"regret_q75@{k}"] = float(np.quantile(col, 0.75))
        hit = mat <= 0
        found = hit.any(axis=1)
        first = np.where(found, hit.argmax(axis=1) + 1, np.inf)
        row["found_optimum"] = float(found.mean())
        row["evals_to_optimum_median"] = float(np.median(first))
        per = ok.groupby("seed")
        ooms = per["feasible"].apply(lambda f: int((~f.astype(bool)).sum()))
        row["ooms_median"] = float(ooms.median())
        row["ooms_total"] = int(ooms.sum())
        row["gpu_hours_median"] = float(per["gpu_hours"].max().median())
        rows.append(row)
    return pd.DataFrame(rows)


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
        *[f"regret @{k}: median [IQR]" for k in ks],
        "found optimum",
        "evals to optimum (median)",
        "OOMs per run (median)",
        "OOMs total",
        f"{cost} (median)",
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
                f"{_fmt(r[f'regret_median@{k}'])} "
                f"[{_fmt(r[f'regret_q25@{k}'])}, {_fmt(r[f'regret_q75@{k}'])}]"
            )
        e = r["evals_to_optimum_median"]
        cells += [
            f"{100 * r['found_optimum']:.0f}%",
            f"> {budget}" if math.isinf(e) else f"{e:g}",
            f"{r['ooms_median']:g}",
            f"{r['ooms_total']}",
            f"{r['gpu_hours_median']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _draw_regret(
    axes: tuple[Axes, Axes],
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    methods: Sequence[str],
    cost: str,
) -> None:
    """Median regret with IQR bands vs evaluations (left) and cost (right)."""
    fill = float(optimal_value - worst_feasible_value)
    gmax = float(records["gpu_hours"].max()) if len(records) else 1.0
    grid = np.linspace(0.0, gmax, 300)
    x_eval = np.arange(1, budget + 1)
    for m in methods:
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        _, mat = _regret_matrix(sub, budget, fill)
        med, lo, hi = (np.quantile(mat, p, axis=0) for p in (0.5, 0.25, 0.75))
        (line,) = axes[0].plot(x_eval, med, label=m)
        axes[0].fill_between(x_eval, lo, hi, alpha=0.2, color=line.get_color())
        curves = []
        for _, r in sub.groupby("seed"):
            r = r.sort_values("iteration")
            g = r["gpu_hours"].to_numpy(dtype=np.float64)
            reg = np.where(
                np.isnan(r["regret"].to_numpy()), fill, r["regret"].to_numpy()
            )
            pos = np.searchsorted(g, grid, side="right") - 1
            curves.append(np.where(pos >= 0, reg[np.clip(pos, 0, None)], fill))
        c = np.asarray(curves)
        med, lo, hi = (np.quantile(c, p, axis=0) for p in (0.5, 0.25, 0.75))
        axes[1].plot(grid, med, label=m, color=line.get_color())
        axes[1].fill_between(grid, lo, hi, alpha=0.2, color=line.get_color())
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel(f"{cost} (cumulative)")
    for ax in axes:
        # Linear near 0 (regret 0 = optimum found), logarithmic above 1e-3.
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylim(bottom=0.0)
        ax.set_ylabel("regret (optimal - best feasible throughput)")
        ax.grid(alpha=0.3)
        ax.legend()


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
    """Write a PNG: median regret with IQR bands vs evaluations and cost.

    The y axis is symmetric-log (linear below 1e-3), so that both the early
    descent and the last small steps to the optimum (regret 0) are visible.
    Against cost, each run's regret is a step function of its cumulative
    GPU-hours, held at its final value after its budget is spent. Draws on a
    :class:`matplotlib.figure.Figure` of its own: pyplot's state and the
    backend are left alone.

    Args:
        cost: The cost axis's unit (:func:`cost_label`).
    """
    _plot_panels(
        [(title, records, optimal_value, worst_feasible_value, budget, methods, cost)],
        path,
    )


def _plot_panels(
    panels: Sequence[tuple[str, pd.DataFrame, float, float, int, Sequence[str], str]],
    path: str | os.PathLike[str],
    title: str = "",
) -> None:
    """One row of two plots per panel ``(title, records, optimal, worst,
    budget, methods, cost)``, written to ``path``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4.5 * len(panels)))
    grid = fig.subplots(len(panels), 2, squeeze=False)
    for (sub_title, records, opt, worst, budget, methods, cost), axes in zip(
        panels, grid, strict=True
    ):
        _draw_regret((axes[0], axes[1]), records, opt, worst, budget, methods, cost)
        if sub_title:
            axes[0].set_title(sub_title, loc="left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))


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
) -> tuple[pd.DataFrame, str]:
    """Write ``summary.csv``, ``summary.md`` and ``regret.png`` into ``out``.

    Args:
        fingerprint: The table's fingerprint (named in the header).

    Returns:
        The summary frame and the Markdown text.
    """
    path = Path(out)
    instance = instance_of(table)
    budget = config.budget
    summary = summarize(
        records, optimal_value, worst_feasible_value, budget, failed, methods
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
        f"{len(methods)} methods × {len(seeds)} seeds × {budget} evaluations "
        f"(n_init {config.n_init}, q {config.q}, noise {config.noise}); {src} "
        f"{where} ({table.source.kind}, fingerprint {fingerprint[:12]}); "
        f"optimal value {optimal_value:.5f}.",
        "",
        "Regret = optimal − best feasible throughput (before the first feasible "
        f"evaluation: optimal − worst feasible). {cost}: overall_time × "
        f"{instance.num_gpus} / 3600 per run; an OOM costs "
        f"{DEFAULTS.oom_cost_fraction} × the median feasible overall_time.",
    ]
    md = summary_markdown(summary, budget, header, cost=cost)
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
