"""The pages of a comparison's report, written at its end and by
``bolt-pco64 report`` from the records alone.

:class:`~bolt_pco64.bench.report.context.ReportContext` is what every page reads (the records, the optimum
and worst feasible value, the methods, seeds, run settings, failed runs,
reference and the table's :class:`~bolt_pco64.bench.report.facts.TableFacts`).
:func:`write_report` writes the summary page (:func:`write_summary`:
``summary.csv``, ``summary.md``, ``comparisons.csv``, ``regret.png``), then
each section of :data:`REPORT_SECTIONS` in order (the cost report,
:func:`~bolt_pco64.bench.report.cost.page.write_cost_report`). A section is
a function of the context that writes its files into ``ctx.out``; one that
needs only the records and the folder reads ``ctx.records`` and
``ctx.out``.

Regret before a run's first feasible evaluation counts as
``optimal_value - worst_feasible_value`` (as bad as the worst configuration
that runs).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.protocol.analysis import ProtocolResult, run_protocol
from bolt_pco64.bench.protocol.render import (
    PROTOCOL_FILES,
    protocol_markdown,
    write_protocol,
)
from bolt_pco64.bench.report.context import ReportContext
from bolt_pco64.bench.report.cost.page import write_cost_report
from bolt_pco64.bench.report.facts import standin_caveats
from bolt_pco64.bench.report.markdown import (
    comparisons_markdown,
    no_comparisons_reason,
    summary_markdown,
)
from bolt_pco64.bench.report.plots import plot_regret
from bolt_pco64.bench.report.tables import compare_to_reference, summarize
from bolt_pco64.bench.spec import seeds_text
from bolt_pco64.bench.stats import complete_runs

__all__ = [
    "REPORT_SECTIONS",
    "ReportContext",
    "protocol_lead",
    "protocol_result",
    "write_report",
    "write_summary",
]


#: A section of the report, which writes its files into ``ctx.out``.
ReportSection = Callable[[ReportContext], object]

#: The sections written after the summary page, in order.
REPORT_SECTIONS: list[ReportSection] = [write_cost_report]


def write_report(ctx: ReportContext) -> tuple[pd.DataFrame, str]:
    """Write the summary page, which leads with the protocol's section, each of
    :data:`REPORT_SECTIONS`, then the protocol's own files.

    Returns:
        The summary frame and ``summary.md``'s text.
    """
    result = protocol_result(ctx)
    summary, md = write_summary(ctx, lead=protocol_lead(ctx, result))
    for section in REPORT_SECTIONS:
        section(ctx)
    if result is not None:
        write_protocol(ctx.out, result)
    return summary, md


def protocol_result(ctx: ReportContext) -> ProtocolResult | None:
    """The protocol (:func:`~bolt_pco64.bench.protocol.analysis.run_protocol`) on
    the complete runs of ``ctx``'s methods that have any; ``None`` where there
    is nothing to compare: the runs end inside the initial design, or no
    method has a complete run (every run failed)."""
    if ctx.budget <= ctx.config.n_init:
        return None
    records = complete_runs(ctx.records, ctx.failed)
    ran = set(records["method"])
    if not ran:
        return None
    return run_protocol(
        records,
        ctx.optimal_value,
        ctx.worst_feasible_value,
        ctx.config.n_init,
        ctx.budget,
        methods=[m for m in ctx.methods if m in ran],
        problem=ctx.facts.name,
    )


def protocol_lead(ctx: ReportContext, result: ProtocolResult | None) -> str:
    """What ``summary.md`` leads with: the protocol's power statement and
    grouped ranking (the whole section, every pair on every endpoint, is
    ``protocol.md``, :data:`~bolt_pco64.bench.protocol.render.PROTOCOL_FILES`).
    """
    if result is None and ctx.budget <= ctx.config.n_init:
        return (
            "## Which methods differ (the protocol)\n\n"
            f"Nothing to compare: the runs reported end at {ctx.budget} "
            f"evaluations, within the initial design of {ctx.config.n_init}.\n"
        )
    if result is None:
        return (
            "## Which methods differ (the protocol)\n\n"
            "Nothing to compare: no method has a complete run (the failed "
            "runs are listed below).\n"
        )
    return protocol_markdown(
        result, PROTOCOL_FILES["figure"], details=PROTOCOL_FILES["page"]
    )


def _header(ctx: ReportContext) -> list[str]:
    """``summary.md``'s title and the paragraphs above its tables."""
    config, facts = ctx.config, ctx.facts
    src = "SIMULATED stand-in table" if facts.is_simulated else "table"
    horizon = (
        f"; evaluation statistics up to {ctx.budget} evaluations, the fewest a run made"
        if config.budget is None
        else ""
    )
    header = [
        f"# {facts.name} benchmark summary",
        "",
        f"{len(ctx.methods)} methods × {len(ctx.seeds)} seeds "
        f"({seeds_text(ctx.seeds)}) × "
        f"{config.describe_budget()} (n_init {config.n_init}, q {config.q}, "
        f"noise {config.noise}, {config.workers} "
        f"worker{'s' if config.workers > 1 else ''}{horizon}); {src} "
        f"{facts.source_name} ({facts.source_kind}, fingerprint "
        f"{ctx.fingerprint[:12]}); optimal value {ctx.optimal_value:.5f}.",
        "",
        "Regret = optimal − best feasible throughput (before the first feasible "
        f"evaluation: optimal − worst feasible). {ctx.cost} (bolt_pco64.tables.time_model): "
        f"{facts.time_model}.",
    ]
    return header + [f"\n{c}" for c in _caveats(ctx)]


def _caveats(ctx: ReportContext) -> list[str]:
    return standin_caveats(ctx.methods) if ctx.facts.is_simulated else []


def write_summary(ctx: ReportContext, lead: str = "") -> tuple[pd.DataFrame, str]:
    """Write ``summary.csv``, ``summary.md``, ``comparisons.csv`` and ``regret.png``.

    ``lead`` (the protocol's section, :func:`protocol_lead`) stands
    between ``summary.md``'s header and its tables.

    Without complete runs of ``ctx.reference`` ``summary.md`` says so and
    ``comparisons.csv`` is empty
    (:func:`~bolt_pco64.bench.report.tables.compare_to_reference`).

    Returns:
        The summary frame and the Markdown text.
    """
    path, budget = ctx.out, ctx.budget
    values = (ctx.optimal_value, ctx.worst_feasible_value, budget, ctx.failed)
    summary = summarize(ctx.records, *values, ctx.methods, ctx.config.n_init)
    atomic_write_text(path / "summary.csv", summary.to_csv(index=False))
    header = [*_header(ctx), "", lead.strip()] if lead else _header(ctx)
    md = summary_markdown(summary, budget, header, cost=ctx.cost)
    comparisons = compare_to_reference(
        ctx.records, ctx.reference, *values, ctx.methods, ctx.config.n_init
    )
    atomic_write_text(path / "comparisons.csv", comparisons.to_csv(index=False))
    if comparisons.empty:
        md += "\n" + no_comparisons_reason(ctx.reference, ctx.methods, summary) + "\n"
    else:
        md += "\n" + comparisons_markdown(comparisons, budget)
    atomic_write_text(path / "summary.md", md)
    facts = ctx.facts
    kind = "simulated stand-in" if facts.is_simulated else facts.source_kind
    caveats = (textwrap.fill(c, 60) for c in _caveats(ctx))
    plot_regret(
        ctx.records,
        path / "regret.png",
        ctx.optimal_value,
        ctx.worst_feasible_value,
        budget,
        ctx.methods,
        title="\n".join([f"{facts.name} ({kind})", *caveats]),
        cost=ctx.cost,
    )
    return summary, md
