"""The protocol's result as a page, a figure and files.

- :func:`protocol_markdown`: the Markdown section, leading with the grouped
  ranking, its intervals and its power, then each endpoint's groups and
  pairs, the regret levels at the budget and the seeds whose initial design
  holds the optimum; a smoke test says so and compares nothing;
- :func:`plot_time_to_target`: the Kaplan-Meier curves of every
  time-to-target endpoint (share of runs that reached the target against
  evaluations or GPU-hours, one line per method);
- :func:`write_protocol`: all of it, atomically, into a result folder
  (:data:`PROTOCOL_FILES`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.bench.protocol.analysis import ProtocolResult, kaplan_meier
from bolt_pco64.bench.protocol.endpoints import Endpoint
from bolt_pco64.bench.report.markdown import markdown_table
from bolt_pco64.bench.report.plots import add_caption, method_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PROTOCOL_FILES",
    "plot_time_to_target",
    "protocol_json",
    "protocol_markdown",
    "write_protocol",
]

#: The files :func:`write_protocol` writes, by what they hold.
PROTOCOL_FILES: dict[str, str] = {
    "page": "protocol.md",
    "methods": "protocol_methods.csv",
    "pairs": "protocol_pairs.csv",
    "runs": "protocol_runs.csv",
    "levels": "protocol_levels.csv",
    "facts": "protocol.json",
    "figure": "protocol_km.png",
}

_SHORT = {
    "primary": "primary",
    "co-primary": "co-primary",
    "secondary": "secondary",
}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else "–"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def _seeds_needed(x: float) -> str:
    return "∞ (no effect)" if not math.isfinite(x) else f"{int(x)}"


def _estimate_cell(e: Endpoint, r: pd.Series) -> str:
    if e.kind == "time":
        body = f"{_pct(r['estimate'])} [{_pct(r['low'])}, {_pct(r['high'])}]"
        if math.isfinite(r["median_time"]):
            body += f", median {_num(r['median_time'])}"
    else:
        body = f"{_num(r['estimate'])} [{_num(r['low'])}, {_num(r['high'])}]"
    return f"**{r['letters']}** {body}" if r["letters"] else body


def _smoke_cell(e: Endpoint, runs: pd.DataFrame) -> str:
    """What the runs of one method did, without an interval or a test."""
    if e.kind == "time":
        return f"{int(runs[f'{e.name}_event'].sum())} of {len(runs)} runs reached it"
    x = runs[e.name].to_numpy(float)
    return f"mean {_num(float(x.mean()))} (runs {_num(float(x.min()))}–{_num(float(x.max()))})"


def _what_estimates(result: ProtocolResult) -> str:
    level = f"{100 * result.design.level:g} %"
    return (
        f"Cells: time-to-target endpoints give the share of runs that reached the "
        f"target by the end of the run (Kaplan–Meier) [{level} interval] and the "
        "median time where half got there; the area is the mean regret after the "
        "initial design over the optimal value, the crashes those after the "
        f"initial design per run, each a mean over seeds [{level} bootstrap interval]."
    )


def _header(result: ProtocolResult) -> list[str]:
    k = len(result.methods)
    name = f"{result.problem}: " if result.problem else ""
    return [
        f"{name}{k} methods × {len(result.seeds)} seeds × {result.budget} evaluations "
        f"(initial design {result.n_init}, shared by the methods of a seed). "
        f"Declared family: the {result.family_pairs} pairs of "
        f"{', '.join(result.methods)}, on each endpoint; Holm at "
        f"α = {result.design.alpha:g} within each endpoint."
        + (
            f" {result.left_out} runs of seeds that not every method ran are left out."
            if result.left_out
            else ""
        ),
    ]


def _power_lines(result: ProtocolResult) -> list[str]:
    d = result.design
    n = len(result.seeds)
    alpha = d.alpha / max(1, result.family_pairs)
    lines = []
    if n < len(d.seeds):
        lines.append(
            f"**Underpowered: {n} seeds, fewer than the design's {len(d.seeds)}.** "
        )
    lines.append(
        f"Power: at Holm's first-step level α/{result.family_pairs} = {alpha:.2g}, "
        f"{n} seeds detect with {_pct(d.power)} power a paired standardised effect "
        f"d ≥ {_num(result.detectable)} (the design's {len(d.seeds)} seeds: "
        f"d ≥ {_num(result.design_detectable)}); with fewer than {result.min_seeds} "
        "seeds no outcome could separate a pair. Each pair below shows the seeds "
        "its observed effect would need."
    )
    return ["".join(lines)]


def _ranking_table(result: ProtocolResult) -> list[str]:
    est = result.estimates
    primary = result.endpoints[0]
    first = est[est["endpoint"] == primary.name].set_index("method")
    rows = sorted(result.methods, key=lambda m: (first.loc[m, "letters"], m))
    heads = [f"{e.label} ({e.role})" for e in result.endpoints]
    by = {
        e.name: est[est["endpoint"] == e.name].set_index("method")
        for e in result.endpoints
    }
    cells = (
        [m, *(_estimate_cell(e, by[e.name].loc[m]) for e in result.endpoints)]
        for m in rows
    )
    return markdown_table(["method", *heads], cells)


def _groups_line(result: ProtocolResult, e: Endpoint) -> str:
    groups = result.groups.get(e.name, ())
    if len(groups) == 1:
        return "No pair is separated: all methods form one group."
    parts = [
        f"**{chr(ord('a') + i)}**: {', '.join(sorted(g))}" for i, g in enumerate(groups)
    ]
    return "Groups that cannot be told apart: " + "; ".join(parts) + "."


def _pairs_table(result: ProtocolResult, e: Endpoint) -> list[str]:
    p = result.pairs[result.pairs["endpoint"] == e.name]
    counts = p["verdict"].value_counts()
    what = (
        "seeds on which a / b reaches the target strictly first / neither"
        if e.kind == "time"
        else "seeds on which a / b is lower / tied"
    )
    effect = (
        "effect: (b first − a first) / seeds, negative favours a"
        if e.kind == "time"
        else f"effect: mean of a − b ({e.unit}), negative favours a"
    )
    out = [
        f"{counts.get('separated', 0)} pairs separated, "
        f"{counts.get('equivalent', 0)} equivalent (inside ±{_num(e.margin)}), "
        f"{counts.get('inconclusive', 0)} inconclusive. Seeds: {what}; {effect}; "
        f"seeds needed: for {_pct(result.design.power)} power at the observed effect.",
        "",
        "| a | b | seeds a / b / tied | effect [interval] | p | Holm p | verdict | seeds needed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in p.to_dict("records"):
        verdict = r["verdict"] + (f": {r['better']} better" if r["better"] else "")
        out.append(
            f"| {r['a']} | {r['b']} | {r['a_better']} / {r['b_better']} / {r['tied']} "
            f"| {_num(r['effect'])} [{_num(r['low'])}, {_num(r['high'])}] "
            f"| {r['p_value']:.2g} | {r['p_holm']:.2g} | {verdict} "
            f"| {_seeds_needed(r['seeds_needed'])} |"
        )
    return out


def _levels_table(result: ProtocolResult) -> list[str]:
    lv = result.levels
    cols = [c for c in lv.columns if c != "method"]
    rows = ([r["method"], *(r[c] for c in cols)] for r in lv.to_dict("records"))
    return markdown_table(["method", *cols], rows)


def _initial_line(result: ProtocolResult) -> str:
    hits = result.initial_hits
    if not hits:
        return "No seed's initial design holds the optimum."
    return (
        f"Seeds whose initial design already holds the optimum: "
        f"{', '.join(str(s) for s in hits)} ({len(hits)} of {len(result.seeds)}). "
        "Every method of such a seed reaches it within the initial design, so "
        "the seed ties in every time-to-optimum pair (it stays in the analysis "
        "and weighs nothing there)."
    )


def _smoke_lines(result: ProtocolResult) -> list[str]:
    """A smoke test's section after the header: what the runs did, no ranking."""
    lines = [
        f"**Smoke test: no comparison.** {len(result.seeds)} seeds: with "
        f"{len(result.methods)} methods ({result.family_pairs} pairs per "
        f"endpoint), no outcome of fewer than {result.min_seeds} seeds could "
        f"separate a pair at Holm's α = {result.design.alpha:g}. The table "
        "shows what the runs did, in the declared order; it ranks nothing.",
        "",
    ]
    out = result.outcomes
    rows = (
        [m, *(_smoke_cell(e, out[out["method"] == m]) for e in result.endpoints)]
        for m in result.methods
    )
    heads = ["method", *(e.label for e in result.endpoints)]
    return [*lines, *markdown_table(heads, rows), "", _initial_line(result), ""]


def protocol_markdown(
    result: ProtocolResult,
    figure: str | None = PROTOCOL_FILES["figure"],
    details: str | None = None,
) -> str:
    """The protocol's Markdown section (``## Which methods differ``).

    Args:
        result: :func:`~bolt_pco64.bench.protocol.analysis.run_protocol`'s result.
        figure: The Kaplan–Meier figure's path relative to the page, or
            ``None`` for none.
        details: ``None`` for the whole section; else the path of the page
            that holds it, and the section stops after the power statement
            and the grouped ranking with a link to that page (what a
            comparison's ``summary.md`` leads with).
    """
    lines = ["## Which methods differ (the protocol)", "", *_header(result), ""]

    def lead() -> str:
        link = (
            "Every pair on every endpoint (test, interval, verdict, the seeds it "
            f"would need): [{details}]({details})."
        )
        return "\n".join(lines).rstrip() + f"\n\n{link}\n"

    if result.smoke:
        lines += _smoke_lines(result)
        return lead() if details else "\n".join(lines)
    lines += [
        *_power_lines(result),
        "",
        "### Grouped ranking",
        "",
        "Methods that share a letter cannot be told apart on that endpoint "
        f"(Holm-adjusted p ≥ {result.design.alpha:g}); letter **a** holds the best "
        "point estimate. Rows are grouped by the first endpoint's letters and "
        "alphabetical inside a group: the order inside a group is no ranking. "
        + _what_estimates(result),
        "",
        *_ranking_table(result),
        "",
    ]
    if figure:
        lines += [
            f"![Share of runs that reached each target, Kaplan–Meier]({figure})",
            "",
        ]
    if details:
        return lead()
    for e in result.endpoints:
        lines += [
            f"### {e.label[0].upper()}{e.label[1:]} ({_SHORT[e.role]})",
            "",
            _groups_line(result, e),
            "",
            *_pairs_table(result, e),
            "",
        ]
    lines += [
        "### Regret at the budget, by level",
        "",
        "Runs per method whose regret at the budget is at each level (percent "
        "of the optimal value; the regret is a row's value, so runs sit on a "
        "few levels and a median hides how many sit on each).",
        "",
        *_levels_table(result),
        "",
        "### Seeds whose initial design holds the optimum",
        "",
        _initial_line(result),
        "",
    ]
    return "\n".join(lines)


def plot_time_to_target(result: ProtocolResult) -> Figure:
    """The Kaplan–Meier curves of every time-to-target endpoint, one panel each.

    Each line is one method's Kaplan–Meier estimate
    (:func:`~bolt_pco64.bench.protocol.analysis.kaplan_meier`) of the
    share of runs that reached the target, against evaluations or GPU-hours.
    """
    from matplotlib.figure import Figure

    timed = [e for e in result.endpoints if e.kind == "time"]
    cols = 2 if len(timed) > 1 else 1
    rows = max(1, math.ceil(len(timed) / cols))
    fig = Figure(figsize=(6 * cols, 4 * rows + 0.6))
    axes = fig.subplots(rows, cols, squeeze=False).reshape(-1)
    out = result.outcomes
    for ax, e in zip(axes, timed, strict=False):
        for i, m in enumerate(result.methods):
            sub = out[out["method"] == m]
            time = sub[e.name].to_numpy(float)
            km = kaplan_meier(time, sub[f"{e.name}_event"].to_numpy(bool))
            end = max(float(time.max()), float(km.times.max(initial=0.0)))
            style = method_style(i)
            ax.step(
                np.r_[0.0, km.times, end],
                np.r_[0.0, km.reached, km.share],
                where="post",
                label=m,
                color=style["color"],
                linestyle=style["linestyle"],
            )
        ax.set_title(e.label, fontsize="medium")
        ax.set_xlabel(e.unit)
        ax.set_ylabel("share of runs that reached it")
        ax.set_ylim(-0.02, 1.02)
        if e.unit == "evaluations" and result.n_init:
            ax.axvline(result.n_init, color="0.7", linewidth=0.8)
    for ax in axes[len(timed) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize="small", ncol=2)
    add_caption(
        fig,
        f"{result.problem} {len(result.seeds)} seeds × {result.budget} evaluations: "
        "Kaplan–Meier estimate of the share of runs that reached each target "
        "(runs that did not are censored at the end of the run; grey line: the "
        "end of the initial design).",
    )
    return fig


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, range)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return _jsonable(x.item())
    return x


def protocol_json(result: ProtocolResult) -> dict[str, Any]:
    """The protocol's facts as JSON-ready data: design, seeds, power, groups."""
    design = asdict(result.design)
    design["seeds"] = [result.design.seeds.start, result.design.seeds.stop]
    return _jsonable(
        {
            "problem": result.problem,
            "design": design,
            "methods": list(result.methods),
            "seeds": list(result.seeds),
            "budget": result.budget,
            "n_init": result.n_init,
            "smoke": result.smoke,
            "min_seeds": result.min_seeds,
            "family_pairs": result.family_pairs,
            "detectable_effect": result.detectable,
            "design_detectable_effect": result.design_detectable,
            "endpoints": [asdict(e) for e in result.endpoints],
            "groups": {k: [list(g) for g in v] for k, v in result.groups.items()},
            "initial_hits": list(result.initial_hits),
        }
    )


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, float_format="%.10g")


def _page(md: str) -> str:
    """The section as a page of its own: every heading one level up (the
    section's ``##`` title becomes the page's ``#``)."""
    return "\n".join(
        line[1:] if line.startswith("##") else line for line in md.split("\n")
    )


def write_protocol(
    out: str | os.PathLike[str],
    result: ProtocolResult,
    files: Sequence[str] = tuple(PROTOCOL_FILES),
) -> str:
    """Write the protocol's files (:data:`PROTOCOL_FILES`) into ``out``, each atomically.

    Args:
        out: An existing folder.
        result: :func:`~bolt_pco64.bench.protocol.analysis.run_protocol`'s result.
        files: Which of :data:`PROTOCOL_FILES`' keys to write.

    Returns:
        The Markdown section (also written as ``protocol.md``).
    """
    path = Path(out)
    if not path.is_dir():
        raise ValueError(f"Expected an existing folder, got {str(path)!r}.")
    unknown = sorted(set(files) - set(PROTOCOL_FILES))
    if unknown:
        raise ValueError(
            f"Expected files among {sorted(PROTOCOL_FILES)}, got {unknown}."
        )
    md = protocol_markdown(
        result, PROTOCOL_FILES["figure"] if "figure" in files else None
    )
    writers = {
        "page": lambda: atomic_write_text(path / PROTOCOL_FILES["page"], _page(md)),
        "methods": lambda: atomic_write_text(
            path / PROTOCOL_FILES["methods"], _csv(result.estimates)
        ),
        "pairs": lambda: atomic_write_text(
            path / PROTOCOL_FILES["pairs"], _csv(result.pairs)
        ),
        "runs": lambda: atomic_write_text(
            path / PROTOCOL_FILES["runs"], _csv(result.outcomes)
        ),
        "levels": lambda: atomic_write_text(
            path / PROTOCOL_FILES["levels"], _csv(result.levels)
        ),
        "facts": lambda: atomic_write_text(
            path / PROTOCOL_FILES["facts"],
            json.dumps(protocol_json(result), indent=1, sort_keys=True) + "\n",
        ),
        "figure": lambda: _write_figure(path / PROTOCOL_FILES["figure"], result),
    }
    for key in PROTOCOL_FILES:
        if key in files:
            writers[key]()
    return md


def _write_figure(path: Path, result: ProtocolResult) -> None:
    fig = plot_time_to_target(result)
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
