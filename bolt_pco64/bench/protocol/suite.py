"""The protocol over the family of problems: which groups hold on every one.

:func:`protocol_suite` takes the :class:`~bolt_pco64.bench.protocol.analysis.ProtocolResult`
of each problem (pco16, pco32, pco64: the same protocol, run per problem)
and, per endpoint, calls a pair **separated on the suite** only when it is
separated on every problem with the same method better. The suite's groups
are the groups that cannot be told apart under that rule
(:func:`~bolt_pco64.bench.protocol.groups.letter_groups`): a group of the
suite is a set of methods no problem consistently separates. Only the
methods every problem ran take part; a smoke test on any problem makes the
whole suite a smoke test.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.protocol.analysis import ProtocolResult
from bolt_pco64.bench.protocol.groups import letter_groups, letters_of
from bolt_pco64.bench.report.markdown import markdown_table

__all__ = ["SUITE_FILES", "protocol_suite", "suite_markdown", "write_suite"]

#: The files :func:`write_suite` writes.
SUITE_FILES: dict[str, str] = {
    "page": "protocol_suite.md",
    "table": "protocol_suite.csv",
}


def _shared_methods(results: Mapping[str, ProtocolResult]) -> list[str]:
    first = next(iter(results.values()))
    return [m for m in first.methods if all(m in r.methods for r in results.values())]


def protocol_suite(results: Mapping[str, ProtocolResult]) -> pd.DataFrame:
    """Each method's letters on every problem and on the suite, per endpoint.

    Args:
        results: Problem name -> its protocol result, in report order.

    Returns:
        One row per endpoint and method: ``endpoint``, ``method``, one column
        of letters per problem and ``suite`` (the groups that hold on all);
        empty where any problem is a smoke test.

    Raises:
        ValueError: Without results.
    """
    if not results:
        raise ValueError("Expected at least one problem's protocol result, got none.")
    names = list(results)
    if any(r.smoke for r in results.values()):
        return pd.DataFrame(columns=["endpoint", "method", *names, "suite"])
    methods = _shared_methods(results)
    first = results[names[0]]
    shared_endpoints = [
        e.name
        for e in first.endpoints
        if all(e.name in r.groups for r in results.values())
    ]
    rows = []
    for ep in shared_endpoints:
        verdicts = []
        positions = {m: 0.0 for m in methods}
        letters = {}
        for n in names:
            r = results[n]
            p = r.pairs[r.pairs["endpoint"] == ep]
            verdicts.append(
                {
                    frozenset((a, b)): better
                    for a, b, better in zip(p["a"], p["b"], p["better"], strict=True)
                }
            )
            est = r.estimates[r.estimates["endpoint"] == ep]
            order = [m for m in est["method"] if m in positions]
            for i, m in enumerate(order):
                positions[m] += i
            letters[n] = dict(zip(est["method"], est["letters"], strict=True))
        cut = []
        for i, a in enumerate(methods):
            for b in methods[i + 1 :]:
                key = frozenset((a, b))
                winners = {v.get(key, "") for v in verdicts}
                if len(winners) == 1 and "" not in winners:
                    cut.append((a, b))
        order = sorted(methods, key=lambda m: (positions[m], methods.index(m)))
        suite = letters_of(letter_groups(order, cut))
        for m in order:
            rows.append(
                {"endpoint": ep, "method": m}
                | {n: letters[n].get(m, "") for n in names}
                | {"suite": suite[m]}
            )
    return pd.DataFrame(rows, columns=["endpoint", "method", *names, "suite"])


def suite_markdown(results: Mapping[str, ProtocolResult]) -> str:
    """The suite table as Markdown (``## The family: groups that hold on every problem``)."""
    names = list(results)
    lines = ["## The family: groups that hold on every problem", ""]
    table = protocol_suite(results)
    if table.empty:
        smoke = [n for n, r in results.items() if r.smoke]
        lines += [
            f"**Smoke test: no comparison** ({', '.join(smoke)} "
            f"{'has' if len(smoke) == 1 else 'have'} too few seeds to separate any pair).",
            "",
        ]
        return "\n".join(lines)
    lines += [
        "The same protocol on each problem. Letters as in each problem's grouped "
        "ranking; **suite**: a pair is separated only where every problem "
        "separates it with the same method better, and methods sharing a "
        "letter are not. Rows are in the order of the methods' mean position "
        "over the problems, which inside a group is no ranking.",
        "",
    ]
    first = results[names[0]]
    labels = {e.name: e.label for e in first.endpoints}
    for ep, sub in table.groupby("endpoint", sort=False):
        groups = sorted(set("".join(sub["suite"])))
        lines += [
            f"### {labels.get(ep, ep)}",
            "",
            f"{len(groups)} suite group{'s' if len(groups) != 1 else ''}.",
            "",
            *markdown_table(
                ["method", *names, "suite"],
                (
                    [r["method"], *(r[n] for n in names), f"**{r['suite']}**"]
                    for r in sub.to_dict("records")
                ),
            ),
            "",
        ]
    return "\n".join(lines)


def write_suite(
    out: str | os.PathLike[str], results: Mapping[str, ProtocolResult]
) -> str:
    """Write :data:`SUITE_FILES` into the existing folder ``out``, each atomically.

    Returns:
        The Markdown section (also written as ``protocol_suite.md``).
    """
    path = Path(out)
    if not path.is_dir():
        raise ValueError(f"Expected an existing folder, got {str(path)!r}.")
    md = suite_markdown(results)
    table = protocol_suite(results)
    atomic_write_text(path / SUITE_FILES["table"], table.to_csv(index=False))
    atomic_write_text(path / SUITE_FILES["page"], md)
    return md
