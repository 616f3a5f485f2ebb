"""What ``bench`` prints on the terminal once its runs are done.

Line builders only (no runs, no files written): the table a result was
computed on, the snapped proposals, the other methods a folder holds, the
protocol's verdict (or, in a smoke test, that there is none), the paired
comparisons with the reference method and the failed runs. The protocol's
lines read the ``protocol.json`` the report wrote
(:data:`~bolt_pco64.bench.protocol.render.PROTOCOL_FILES`), so that the
terminal says what ``summary.md`` leads with.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "comparison_lines",
    "failure_lines",
    "other_methods_line",
    "protocol_facts",
    "seeds_line",
    "shown_budget",
    "smoke_family_line",
    "snap_lines",
    "table_line",
    "table_lines",
    "verdict_lines",
]


def table_line(table: Any, label: str = "table") -> str:
    """``"table: pco64, reconstructed: .../pco64_reconstructed.parquet [...]
    (780 rows, 648 feasible)"``: what a result was computed on."""
    text = (
        f"{label}: {table.instance.name}, {table.source} "
        f"({len(table)} rows, {table.n_feasible} feasible)"
    )
    return textwrap.fill(
        text, 80, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def table_lines(results: Mapping[str, Any]) -> list[str]:
    """One :func:`table_line` per part of a family or of the variants."""
    return [
        table_line(r.table, f"table of {label}")
        for label, r in results.items()
        if r.table is not None
    ]


def seeds_line(asked: Sequence[int], records: Any) -> str:
    """``"seeds: 1000-1099"``: the seeds the report covers (those asked for
    and those of earlier runs in the folder)."""
    from bolt_pco64.bench.spec import seeds_text

    held = {int(s) for s in records["seed"]} if len(records) else set()
    return f"seeds: {seeds_text(sorted(held | set(asked)))}"


def snap_lines(records: Any) -> list[str]:
    """One line per method whose proposals were snapped to other rows: the
    points it evaluated, those moved and those moved far
    (:func:`~bolt_pco64.bench.report.tables.snap_counts`)."""
    from bolt_pco64.bench.report.tables import snap_counts
    from bolt_pco64.problem.counts import SnapCounts

    return [
        f"snaps of {r.method}: {SnapCounts(r.points, r.moved, r.far)}"
        for r in snap_counts(records).itertuples()
        if r.moved
    ]


def other_methods_line(summary: Any, asked: Sequence[str]) -> str | None:
    """A line naming the methods the summary holds besides those asked for
    (earlier runs in the same --out), or ``None``."""
    others = [m for m in summary["method"] if m not in asked]
    if not others:
        return None
    return (
        f"The output folder also holds runs of {', '.join(others)} (same settings): "
        "the summary compares them all."
    )


def shown_budget(budget: int | None, result: Any) -> int:
    """The evaluations the summary reports: ``--budget``, or on a GPU-hour
    budget the fewest any complete run made
    (:func:`~bolt_pco64.bench.report.cost.base.evaluation_horizon`)."""
    if budget is not None:
        return budget
    from bolt_pco64.bench.contract import RunKey
    from bolt_pco64.bench.report.cost import evaluation_horizon

    return evaluation_horizon(result.records, RunKey.parse_all(result.errors))


def protocol_facts(out: Path) -> dict[str, Any] | None:
    """The protocol's facts the report wrote into ``out``
    (:func:`~bolt_pco64.bench.protocol.render.protocol_json`), ``None`` where
    it wrote none (the runs end inside the initial design)."""
    from bolt_pco64.bench.protocol.render import PROTOCOL_FILES

    try:
        facts = json.loads((out / PROTOCOL_FILES["facts"]).read_text())
    except (OSError, ValueError):
        return None
    return facts if isinstance(facts, dict) else None


def _smoke_line(facts: Mapping[str, Any]) -> str:
    """The smoke test's verdict, in ``summary.md``'s words."""
    return (
        f"Smoke test: no comparison. {len(facts['seeds'])} seeds: with "
        f"{len(facts['methods'])} methods ({facts['family_pairs']} pairs per "
        f"endpoint), no outcome of fewer than {facts['min_seeds']} seeds could "
        f"separate a pair at Holm's α = {facts['design']['alpha']:g}. The "
        "table above shows what the runs did; it ranks nothing."
    )


def _group_lines(facts: Mapping[str, Any]) -> list[str]:
    """The protocol's groups per endpoint: methods that share a letter
    cannot be told apart (letter a holds the best estimate)."""
    design = facts["design"]
    planned = design["seeds"][1] - design["seeds"][0]
    n = len(facts["seeds"])
    lines = [
        f"Which methods differ (the protocol, {n} seeds; Holm at α = "
        f"{design['alpha']:g} within each endpoint; methods sharing a letter "
        "cannot be told apart, the order inside a group ranks nothing):"
    ]
    if n < planned:
        lines.append(f"  Underpowered: {n} seeds, fewer than the design's {planned}.")
    for e in facts["endpoints"]:
        groups = facts["groups"].get(e["name"], [])
        if len(groups) <= 1:
            text = "one group, no pair separated"
        else:
            text = " | ".join(
                f"{chr(ord('a') + i)}: {', '.join(sorted(g))}"
                for i, g in enumerate(groups)
            )
        lines.append(f"  {e['label']} ({e['role']}): {text}")
    return lines


def verdict_lines(
    out: Path, reference: str, methods: list[str], summary: Any
) -> list[str]:
    """What the comparison concludes: with fewer than two methods, why there
    is nothing to compare; in a smoke test (too few seeds) that it concludes
    nothing, and no paired verdicts; else the protocol's groups per
    endpoint, then the paired comparisons with ``reference``
    (:func:`comparison_lines`)."""
    facts = protocol_facts(out)
    if len(methods) < 2:
        return comparison_lines(out, reference, methods, summary)
    if facts is not None and facts.get("smoke"):
        return textwrap.wrap(_smoke_line(facts), 80)
    groups = _group_lines(facts) if facts is not None else []
    return [*groups, *comparison_lines(out, reference, methods, summary)]


def smoke_family_line(results: Mapping[str, Any]) -> list[str]:
    """Lines saying which parts of a family are smoke tests (too few seeds
    to compare), in the suite report's words; none when no part is."""
    smoke = [
        label
        for label, r in results.items()
        if (facts := protocol_facts(Path(r.out))) is not None and facts.get("smoke")
    ]
    if not smoke:
        return []
    verb = "has" if len(smoke) == 1 else "have"
    return textwrap.wrap(
        f"Smoke test: no comparison ({', '.join(smoke)} {verb} too few seeds to "
        "separate any pair); the table above shows what the runs did and ranks "
        "nothing.",
        80,
    )


def comparison_lines(
    out: Path, reference: str, methods: list[str], summary: Any
) -> list[str]:
    """The paired comparisons' verdicts on the simple regret at the last
    checkpoint (``summary.md`` has every checkpoint), or why there are none."""
    import pandas as pd

    from bolt_pco64.bench.report.markdown import no_comparisons_reason

    try:
        comparisons = pd.read_csv(out / "comparisons.csv")
    except (pd.errors.EmptyDataError, FileNotFoundError):
        comparisons = pd.DataFrame()
    if comparisons.empty:
        return [no_comparisons_reason(reference, methods, summary)]
    regret = comparisons[comparisons["measure"] == "regret"]
    last = regret[regret["checkpoint"] == regret["checkpoint"].max()]
    return [
        f"Paired with {reference} over shared seeds, simple regret at "
        f"{int(last['checkpoint'].iloc[0])} evaluations:",
        *[f"  {v}" for v in last["verdict"]],
    ]


def failure_lines(errors: Mapping[str, str], where: str) -> list[str]:
    """Lines naming the failed runs (none when ``errors`` is empty)."""
    if not errors:
        return []
    return [
        "",
        f"{len(errors)} run(s) failed (see {where}):",
        *[f"  {k}: {v}" for k, v in errors.items()],
    ]
