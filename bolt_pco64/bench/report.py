"""The report of a comparison: the files written at its end
(:func:`~bolt_pco64.bench.report.write_summary`).

Regret before a run's first feasible evaluation counts as
``optimal_value - worst_feasible_value`` (as bad as the worst configuration
that runs). The cost is labelled "simulated GPU-hours" where the table is the
simulated stand-in, "modelled GPU-hours" where it is the reconstruction from
published traces (its run times come from the time model, not from a trace)
and "GPU-hours" otherwise (:func:`cost_label`).

The summary and the paired comparisons are computed by
:mod:`bolt_pco64.bench.summary` and written as text by
:mod:`bolt_pco64.bench.formatting`; the regret plot is drawn by
:mod:`bolt_pco64.bench.plots`. :func:`write_summary` writes them all.

Everything the report says about the table is a :class:`TableFacts`, which
``meta.json`` keeps (under ``report``): the report is a function of the
records and ``meta.json`` alone, so :func:`~bolt_pco64.bench.regenerate.regenerate`
rewrites it from them, without the table.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.costmetrics import evaluation_horizon
from bolt_pco64.bench.formatting import (
    comparisons_markdown,
    no_comparisons_reason,
    summary_markdown,
)
from bolt_pco64.bench.plots import plot_regret
from bolt_pco64.bench.problems import instance_of
from bolt_pco64.bench.spec import DEFAULT_REFERENCE, BenchConfig
from bolt_pco64.bench.summary import compare_to_reference, summarize

if TYPE_CHECKING:
    from bolt_pco64.table import Table

__all__ = [
    "TableFacts",
    "compare_to_reference",
    "cost_label",
    "standin_caveats",
    "summarize",
    "write_summary",
]


@dataclass(frozen=True)
class TableFacts:
    """What a comparison's report says about its table (kept in ``meta.json``).

    Attributes:
        name: The instance's name (``"pco64"``).
        is_simulated: Whether the table is the simulated stand-in.
        source_name: The table file's name (not its full path: summaries are
            shared and committed), or ``"<DataFrame>"``.
        source_kind: How the table was found (:class:`~bolt_pco64.table.TableSource`).
        time_model: The time model's description
            (:meth:`~bolt_pco64.costs.TimeModel.describe`).
        is_reconstructed: Whether the table is a reconstruction from the
            published traces (its ``overall_time`` and step times are
            modelled). ``meta.json`` files written before this field existed
            read as ``source_kind == "reconstructed"``.
    """

    name: str
    is_simulated: bool
    source_name: str
    source_kind: str
    time_model: str
    is_reconstructed: bool = False

    @classmethod
    def of(cls, table: Table | TableFacts) -> TableFacts:
        """The facts of ``table`` (``table`` itself if it is facts already)."""
        if isinstance(table, TableFacts):
            return table
        from bolt_pco64.costs import TimeModel

        path = table.source.path
        return cls(
            name=instance_of(table).name,
            is_simulated=bool(table.is_simulated),
            source_name=path.name if path is not None else "<DataFrame>",
            source_kind=str(table.source.kind),
            time_model=TimeModel(table).describe(),
            is_reconstructed=bool(table.is_reconstructed),
        )

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> TableFacts:
        """The facts :meth:`as_meta` wrote.

        Raises:
            ValueError: If a field is missing.
        """
        fields = cls.__dataclass_fields__
        required = [k for k in fields if k != "is_reconstructed"]
        missing = sorted(set(required) - set(meta))
        if missing:
            raise ValueError(
                f"Expected table facts {sorted(required)}, missing {missing}."
            )
        return cls(
            **{k: meta[k] for k in required},
            is_reconstructed=bool(
                meta.get("is_reconstructed", meta["source_kind"] == "reconstructed")
            ),
        )

    def as_meta(self) -> dict[str, Any]:
        """A JSON-ready dict (:meth:`from_meta` reads it back)."""
        return asdict(self)


def cost_label(table: Table | TableFacts) -> str:
    """``"simulated GPU-hours"`` for the simulated stand-in, ``"modelled
    GPU-hours"`` for the reconstruction (its run times are the time model's),
    else ``"GPU-hours"``."""
    if table.is_simulated:
        return "simulated GPU-hours"
    return "modelled GPU-hours" if table.is_reconstructed else "GPU-hours"


def write_summary(
    out: str | os.PathLike[str],
    records: pd.DataFrame,
    table: Table | TableFacts,
    optimal_value: float,
    worst_feasible_value: float,
    methods: Sequence[str],
    seeds: Sequence[int],
    config: BenchConfig,
    failed: set[tuple[str, int]],
    fingerprint: str,
    reference: str = DEFAULT_REFERENCE,
) -> tuple[pd.DataFrame, str]:
    """Write ``summary.csv``, ``summary.md``, ``comparisons.csv`` and ``regret.png``.

    Args:
        table: The table, or its :class:`TableFacts`.
        fingerprint: The table's fingerprint (named in the header).
        reference: The method every other one is compared with
            (:func:`~bolt_pco64.bench.summary.compare_to_reference`); without
            complete runs of it ``summary.md`` says so and ``comparisons.csv``
            is empty.

    Returns:
        The summary frame and the Markdown text.
    """
    path = Path(out)
    facts = TableFacts.of(table)
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
    cost = cost_label(facts)
    src = "SIMULATED stand-in table" if facts.is_simulated else "table"
    header = [
        f"# {facts.name} benchmark summary",
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
        f"{facts.source_name} ({facts.source_kind}, fingerprint {fingerprint[:12]}); "
        f"optimal value {optimal_value:.5f}.",
        "",
        "Regret = optimal − best feasible throughput (before the first feasible "
        f"evaluation: optimal − worst feasible). {cost} (bolt_pco64.costs): "
        f"{facts.time_model}.",
    ]
    caveats = standin_caveats(methods) if facts.is_simulated else []
    header += [f"\n{c}" for c in caveats]
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
    kind = "simulated stand-in" if facts.is_simulated else facts.source_kind
    plot_regret(
        records,
        path / "regret.png",
        optimal_value,
        worst_feasible_value,
        budget,
        methods,
        title="\n".join(
            [f"{facts.name} ({kind})", *(textwrap.fill(c, 60) for c in caveats)]
        ),
        cost=cost,
    )
    return summary, md


def standin_caveats(
    methods: Sequence[str], registry: Mapping[str, object] | None = None
) -> list[str]:
    """The sentences that methods ask a stand-in summary to carry
    (a method's optional ``standin_caveat``), each once, in method order.

    ``registry``: where the methods are looked up (``None``: the registered
    and built-in ones, :data:`~bolt_pco64.bench.registry.METHODS`; no entry
    point is loaded to write a report).
    """
    from bolt_pco64.bench.registry import METHODS

    found_in = METHODS if registry is None else registry
    found = [getattr(found_in.get(m), "standin_caveat", None) for m in methods]
    return list(dict.fromkeys(c for c in found if c))
