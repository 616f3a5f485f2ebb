"""Every problem of the family in one comparison (``bench --problem all``).

:class:`Family` is the table set of :func:`~bolt_pco64.bench.comparison.run_comparison`
that runs the same comparison on each instance (pco16, pco32, pco64 by default) into
``OUT/<problem>/`` (each a complete one-table directory, resumable on its own) and
writes one combined ``OUT/summary.csv`` (a ``problem`` column first), ``OUT/summary.md``
and ``OUT/regret.png`` (one row of plots per problem). Every problem's table, output
directory and stored runs are checked before anything is created, so a refused
comparison leaves the file system as it was. The combined files are a function of each
problem's records and facts (:func:`write_family_report`), so ``bolt-pco64 report OUT``
rewrites them (``OUT/report.json`` marks the root, :mod:`bolt_pco64.bench.regenerate`).
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.comparison import planned_tables
from bolt_pco64.bench.plan import BenchPlan, BenchResult, PlannedTable
from bolt_pco64.bench.report.facts import TableFacts, cost_label, standin_caveats
from bolt_pco64.bench.report.markdown import summary_markdown
from bolt_pco64.bench.report.plots import plot_panels
from bolt_pco64.bench.spec import BenchConfig, ComparisonSpec, ComparisonSpecError
from bolt_pco64.bench.store import check_output_dir
from bolt_pco64.instances import INSTANCES, get_instance

__all__ = [
    "Family",
    "FamilyPart",
    "FamilyResult",
    "family_cost_label",
    "write_family_report",
]


@dataclass(frozen=True)
class FamilyPart:
    """What the combined report takes from one problem's comparison.

    Attributes:
        summary: Its summary frame (:func:`~bolt_pco64.bench.report.tables.summarize`).
        records: Its records.
        facts: Its table's :class:`~bolt_pco64.bench.report.facts.TableFacts`.
        optimal_value: Its problem's optimal value.
        worst_feasible_value: Its problem's worst feasible value.
    """

    summary: pd.DataFrame
    records: pd.DataFrame
    facts: TableFacts
    optimal_value: float
    worst_feasible_value: float


@dataclass
class FamilyResult:
    """What a comparison on :class:`Family` produced.

    Attributes:
        out: The output directory.
        results: Each problem's :class:`~bolt_pco64.bench.plan.BenchResult`, by name.
        summary: Every problem's summary, a ``problem`` column first.
        summary_markdown: ``summary.md``'s text.
        plot: Path of the combined ``regret.png``.
    """

    out: Path
    results: dict[str, BenchResult]
    summary: pd.DataFrame
    summary_markdown: str
    plot: Path

    @property
    def errors(self) -> dict[str, str]:
        """``"problem/method/seed" -> error`` for the failed runs."""
        return {
            f"{p}/{k}": v for p, r in self.results.items() for k, v in r.errors.items()
        }

    @property
    def ran(self) -> list[tuple[str, str, int]]:
        """``(problem, method, seed)`` run by this call."""
        return [(p, m, s) for p, r in self.results.items() for m, s in r.ran]


@dataclass(frozen=True)
class Family:
    """Each problem of the family on its default table (its environment variable, its
    measured table, else its stand-in; see
    :func:`bolt_pco64.load_table <bolt_pco64.tables.table.load_table>`), a
    :class:`~bolt_pco64.bench.comparison.TableSet`.

    Each problem's comparison goes into ``OUT/<problem>/``; the combined
    report into ``OUT`` (:func:`write_family_report`). The budget must be in
    evaluations: one GPU-hour budget does not fit problems whose runs cost
    tens of times more or less.

    Attributes:
        problems: Instance names, in report order (repeats dropped).
    """

    problems: Sequence[str] = tuple(INSTANCES)

    def plan_tables(
        self,
        spec: ComparisonSpec,
        out: str | os.PathLike[str],
        arguments: dict[str, Any] | None,
    ) -> dict[str, PlannedTable]:
        """Each problem's default table into ``out/<problem>/``.

        Raises:
            ValueError: If no problem is named or one is unknown.
            ComparisonSpecError: On a GPU-hour budget.
            OutputDirError: If ``out`` cannot be created or written.
        """
        if not self.problems:
            raise ValueError(f"Expected problems from {sorted(INSTANCES)}, got none.")
        if spec.budget_hours is not None:
            raise ComparisonSpecError(
                "Expected a budget in evaluations for several problems (their runs "
                f"differ in cost), got budget_hours={spec.budget_hours!r}."
            )
        chosen = list(dict.fromkeys(get_instance(p).name for p in self.problems))
        root = check_output_dir(out)
        base = dict(arguments or {"problems": chosen, "out": str(root)})
        return planned_tables({p: (p, None) for p in chosen}, root, base, key="problem")

    def combine(
        self,
        spec: ComparisonSpec,
        plan: BenchPlan,
        results: dict[str, BenchResult],
        root: Path,
    ) -> FamilyResult:
        """Write ``report.json`` and the combined report; the family's result."""
        marker = {"combined": "family", "problems": list(results)}
        atomic_write_text(root / "report.json", json.dumps(marker, indent=2) + "\n")
        parts = {
            p: FamilyPart(
                r.summary,
                r.records,
                TableFacts.of(plan.problems[p].table),
                float(plan.problems[p].problem.optimal_value),
                float(plan.problems[p].problem.worst_feasible_value),
            )
            for p, r in results.items()
        }
        summary, md, plot = write_family_report(
            root, parts, plan.config, plan.methods, plan.seeds
        )
        return FamilyResult(root, results, summary, md, plot)


def family_cost_label(facts: Mapping[str, TableFacts]) -> str:
    """The cost unit of a family's combined report: every problem's
    :func:`~bolt_pco64.bench.report.facts.cost_label` where they agree, else
    ``"GPU-hours (simulated on pco16; modelled on pco32, pco64)"``."""
    labels = {p: cost_label(t) for p, t in facts.items()}
    if len(set(labels.values())) == 1:
        return next(iter(labels.values()))
    kinds = {
        kind: [p for p, label in labels.items() if label == f"{kind} GPU-hours"]
        for kind in ("simulated", "modelled")
    }
    parts = [f"{kind} on {', '.join(ps)}" for kind, ps in kinds.items() if ps]
    return "GPU-hours (" + "; ".join(parts) + ")"


def write_family_report(
    root: Path,
    parts: Mapping[str, FamilyPart],
    config: BenchConfig,
    methods: Sequence[str],
    seeds: Sequence[int],
) -> tuple[pd.DataFrame, str, Path]:
    """Write the combined ``summary.csv``, ``summary.md`` and ``regret.png``
    of the problems' comparisons (``parts`` by problem, in report order).

    Returns:
        The combined summary, ``summary.md``'s text and the plot's path.
    """
    summary = pd.concat(
        [r.summary.assign(problem=p) for p, r in parts.items()], ignore_index=True
    )
    summary = summary[["problem", *[c for c in summary.columns if c != "problem"]]]
    atomic_write_text(root / "summary.csv", summary.to_csv(index=False))
    facts = {p: r.facts for p, r in parts.items()}
    simulated = [p for p, t in facts.items() if t.is_simulated]
    cost = family_cost_label(facts)
    header = [
        f"# pco family benchmark summary: {', '.join(parts)}",
        "",
        f"{len(methods)} methods × {len(seeds)} seeds × {config.budget} evaluations "
        f"per problem (n_init {config.n_init}, q {config.q}, noise {config.noise}). "
        "Each problem's own summary.md (in its folder) names its table and cost "
        "model."
        + (f" SIMULATED stand-in tables: {', '.join(simulated)}." if simulated else ""),
    ]
    caveats = standin_caveats(methods) if simulated else []
    header += [f"\n{c}" for c in caveats]
    md = summary_markdown(
        summary, config.budget, header, cost=cost, first_column="problem"
    )
    atomic_write_text(root / "summary.md", md)
    panels = []
    for p, r in parts.items():
        kind = "simulated stand-in" if r.facts.is_simulated else r.facts.source_kind
        panels.append(
            (
                f"{p} ({kind})",
                r.records,
                r.optimal_value,
                r.worst_feasible_value,
                config.budget,
                methods,
                cost_label(r.facts),
            )
        )
    plot = root / "regret.png"
    plot_panels(panels, plot, title="\n".join(textwrap.fill(c, 120) for c in caveats))
    return summary, md, plot
