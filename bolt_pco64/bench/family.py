"""Every problem of the family in one comparison (``bench --problem all``).

:func:`run_problems` runs the same comparison on each instance (pco16,
pco32, pco64 by default) into ``OUT/<problem>/`` (each a complete
:func:`~bolt_pco64.bench.run_benchmark` directory, resumable on its own) and
writes one combined ``OUT/summary.csv`` (a ``problem`` column first),
``OUT/summary.md`` and ``OUT/regret.png`` (one row of plots per problem).
Every problem's table, output directory and stored runs are checked before
anything is created, so a refused comparison leaves the file system as it was.
The combined files are a function of each problem's records and facts
(:func:`write_family_report`), so ``bolt-pco64 report OUT`` rewrites them
(``OUT/report.json`` marks the root, :mod:`bolt_pco64.bench.regenerate`).
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
from bolt_pco64.bench.config import DEFAULTS, BenchConfig
from bolt_pco64.bench.formatting import summary_markdown
from bolt_pco64.bench.plan import BenchResult, execute_plan, make_plan
from bolt_pco64.bench.plots import plot_panels
from bolt_pco64.bench.report import TableFacts, cost_label, standin_caveats
from bolt_pco64.bench.store import check_output_dir
from bolt_pco64.instances import INSTANCES, get_instance

__all__ = ["FamilyPart", "FamilyResult", "run_problems", "write_family_report"]


@dataclass(frozen=True)
class FamilyPart:
    """What the combined report takes from one problem's comparison.

    Attributes:
        summary: Its summary frame (:func:`~bolt_pco64.bench.summary.summarize`).
        records: Its records.
        facts: Its table's :class:`~bolt_pco64.bench.report.TableFacts`.
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
    """What :func:`run_problems` produced.

    Attributes:
        out: The output directory.
        results: Each problem's :class:`~bolt_pco64.bench.BenchResult`, by name.
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


def run_problems(
    problems: Sequence[str] = tuple(INSTANCES),
    methods: Sequence[str] = DEFAULTS.methods,
    seeds: int | Sequence[int] = DEFAULTS.seeds,
    budget: int = DEFAULTS.budget,
    n_init: int = DEFAULTS.n_init,
    q: int = DEFAULTS.q,
    out: str | os.PathLike[str] = DEFAULTS.out,
    noise: float | str | None = None,
    jobs: int = DEFAULTS.jobs,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
    reference: str | None = None,
    workers: int = DEFAULTS.workers,
    early_stop: str = DEFAULTS.early_stop,
) -> FamilyResult:
    """Run (or resume) one comparison on each problem, and a combined report.

    Each problem's table comes from its default source (its environment
    variable, its measured table, else its stand-in; see
    :func:`bolt_pco64.load_table`). The other arguments are
    :func:`~bolt_pco64.bench.run_benchmark`'s, shared by every problem
    (the budget is in evaluations: one GPU-hour budget does not fit
    problems whose runs cost tens of times more or less).

    Raises:
        OutputDirError, BackendError, FileNotFoundError, TableError,
        ValueError: As :func:`~bolt_pco64.bench.run_benchmark`, for any
            problem, before anything is created or written.
    """
    if not problems:
        raise ValueError(f"Expected problems from {sorted(INSTANCES)}, got none.")
    chosen = list(dict.fromkeys(get_instance(p).name for p in problems))
    root = check_output_dir(out)
    args = dict(arguments or {"problems": chosen, "out": str(root)})
    plan = make_plan(
        dict.fromkeys(chosen),
        {p: root / p for p in chosen},
        {p: {**args, "problem": p, "out": str(root / p)} for p in chosen},
        methods,
        seeds,
        BenchConfig(
            budget=budget,
            n_init=n_init,
            q=q,
            noise=noise,
            workers=workers,
            early_stop=early_stop,
        ),
        reference,
        jobs,
        dask_scheduler,
        progress,
    )
    results = execute_plan(plan)
    marker = {"combined": "family", "problems": chosen}
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
    if len(simulated) == len(facts):
        cost = "simulated GPU-hours"
    elif simulated:
        cost = f"GPU-hours (simulated on {', '.join(simulated)})"
    else:
        cost = "GPU-hours"
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
