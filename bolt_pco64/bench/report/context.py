"""What every page of a comparison's report reads:
:class:`~bolt_pco64.bench.report.context.ReportContext`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bolt_pco64.bench.report.cost import evaluation_horizon
from bolt_pco64.bench.report.facts import TableFacts, cost_label
from bolt_pco64.bench.spec import BenchConfig

__all__ = ["ReportContext"]


@dataclass(frozen=True)
class ReportContext:
    """What every page of a comparison's report reads.

    Attributes:
        out: The comparison's directory (the pages are written into it).
        records: The records of the runs reported, one row per evaluation.
        facts: What the report says about the table.
        optimal_value: The table's optimum.
        worst_feasible_value: Its worst feasible value.
        methods: The methods reported, in order.
        seeds: The seeds reported.
        config: The runs' settings.
        failed: ``(method, seed)`` of the failed runs (left out).
        fingerprint: The table's fingerprint (named in the header).
        reference: The method every other one is compared with.
    """

    out: Path
    records: pd.DataFrame
    facts: TableFacts
    optimal_value: float
    worst_feasible_value: float
    methods: Sequence[str]
    seeds: Sequence[int]
    config: BenchConfig
    failed: set[tuple[str, int]]
    fingerprint: str
    reference: str

    @property
    def cost(self) -> str:
        """The cost unit (:func:`~bolt_pco64.bench.report.facts.cost_label`)."""
        return cost_label(self.facts)

    @property
    def budget(self) -> int:
        """The evaluations the statistics run to, the budget, or on a GPU-hour
        budget the fewest any complete run made."""
        if self.config.budget is not None:
            return self.config.budget
        return evaluation_horizon(self.records, self.failed)
