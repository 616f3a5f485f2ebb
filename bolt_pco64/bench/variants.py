"""One comparison on every stand-in variant, and whether its conclusions agree.

The stand-ins ship in variants (:data:`bolt_pco64.tables.standins.STANDIN_VARIANTS`):
readings of the job that meet every published figure and put the crash
boundary in different places (docs/standins.md). :class:`StandinVariants`
is the table set of :func:`~bolt_pco64.bench.comparison.run_comparison` that runs the
same comparison on each variant of one problem into ``OUT/<variant>/``
(each a complete, resumable one-table directory; every variant is checked
before anything is created) and writes
``OUT/robustness.md`` and ``OUT/robustness.csv``:

* per pair of methods, the paired comparison of their final simple regret on each
  variant (:func:`~bolt_pco64.bench.stats.paired_comparisons` over the seeds both
  completed; the direction is :func:`~bolt_pco64.bench.stats.verdict`'s: better or worse
  only when significant) and whether it **holds on every variant** (the same direction,
  significant everywhere) or **depends on the reading**;
* per pair of variants, Kendall's tau between the methods' rankings by
  median final regret (1: the same order).

Both are computed from each variant's stored records and ``meta.json``
(:func:`write_robustness`), so ``bolt-pco64 report OUT`` rewrites them
(``OUT/report.json`` marks the root, :mod:`bolt_pco64.bench.regenerate`).
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as sps

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.comparison import planned_tables
from bolt_pco64.bench.contract import RunKey
from bolt_pco64.bench.plan import BenchPlan, BenchResult, PlannedTable
from bolt_pco64.bench.report.markdown import markdown_table
from bolt_pco64.bench.spec import ComparisonSpec, ComparisonSpecError
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    complete_runs,
    paired_comparisons,
    regret_fill,
)
from bolt_pco64.bench.store import check_output_dir
from bolt_pco64.instances import DEFAULT_INSTANCE, get_instance
from bolt_pco64.tables.standins import STANDIN_PREFIX, STANDIN_VARIANTS, check_variant

__all__ = [
    "StandinVariants",
    "VariantsResult",
    "agreement",
    "rank_agreement",
    "write_robustness",
]


@dataclass
class VariantsResult:
    """What a comparison on :class:`StandinVariants` produced.

    Attributes:
        out: The output directory.
        results: Each variant's :class:`~bolt_pco64.bench.plan.BenchResult`.
        pairs: Per pair of methods and variant the paired comparison, and per
            pair whether it holds on every variant (:func:`agreement`).
        taus: Kendall's tau per pair of variants (:func:`rank_agreement`).
        markdown: ``robustness.md``'s text.
    """

    out: Path
    results: dict[str, BenchResult]
    pairs: pd.DataFrame
    taus: pd.DataFrame
    markdown: str

    @property
    def errors(self) -> dict[str, str]:
        """``"variant/method/seed" -> error`` for the failed runs."""
        return {
            f"{v}/{k}": e for v, r in self.results.items() for k, e in r.errors.items()
        }


@dataclass(frozen=True)
class StandinVariants:
    """Each stand-in variant of one problem, a
    :class:`~bolt_pco64.bench.comparison.TableSet`.

    Each variant's comparison goes into ``OUT/<variant>/``; ``OUT/robustness.md``
    and ``OUT/robustness.csv`` say which conclusions hold on every variant
    (:func:`write_robustness`). The budget must be in evaluations: runs of
    the variants differ in cost.

    Attributes:
        problem: The instance whose stand-ins are compared.
        variants: Variant names (:data:`bolt_pco64.tables.standins.STANDIN_VARIANTS`),
            in report order; ``None``: all of the problem's.
    """

    problem: str = DEFAULT_INSTANCE
    variants: Sequence[str] | None = None

    def plan_tables(
        self,
        spec: ComparisonSpec,
        out: str | os.PathLike[str],
        arguments: dict[str, Any] | None,
    ) -> dict[str, PlannedTable]:
        """Each variant's stand-in table into ``out/<variant>/``.

        Raises:
            ValueError: On an unknown problem or variant, or none.
            ComparisonSpecError: On a GPU-hour budget.
            OutputDirError: If ``out`` cannot be created or written.
        """
        inst = get_instance(self.problem)
        given = self.variants
        names = list(STANDIN_VARIANTS.get(inst.name, ()) if given is None else given)
        if not names:
            raise ValueError(f"Expected stand-in variants of {inst.name}, got none.")
        names = list(dict.fromkeys(check_variant(inst, v) for v in names))
        if spec.budget_hours is not None:
            raise ComparisonSpecError(
                "Expected a budget in evaluations for several stand-in variants "
                f"(their runs differ in cost), got budget_hours={spec.budget_hours!r}."
            )
        root = check_output_dir(out)
        base = dict(arguments or {"problem": inst.name, "out": str(root)})
        return planned_tables(
            {v: (inst.name, STANDIN_PREFIX + v) for v in names},
            root,
            base,
            key="standin",
        )

    def combine(
        self,
        spec: ComparisonSpec,
        plan: BenchPlan,
        results: dict[str, BenchResult],
        root: Path,
    ) -> VariantsResult:
        """Write ``report.json`` and the robustness report; the variants' result."""
        problem = get_instance(self.problem).name
        marker = {"combined": "variants", "problem": problem, "variants": list(results)}
        atomic_write_text(root / "report.json", json.dumps(marker, indent=2) + "\n")
        pairs, taus, markdown = write_robustness(
            root,
            problem,
            {v: (r.records, _meta(r.out)) for v, r in results.items()},
            list(plan.methods),
            # An evaluation budget: plan_tables refused a GPU-hour one.
            int(spec.budget),  # type: ignore[arg-type]
        )
        return VariantsResult(root, results, pairs, taus, markdown)


def _meta(out: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((out / "meta.json").read_text())
    return meta


def write_robustness(
    root: Path,
    problem: str,
    variants: dict[str, tuple[pd.DataFrame, dict[str, Any]]],
    methods: list[str],
    budget: int,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Write ``robustness.md`` and ``robustness.csv`` from each variant's
    records and ``meta.json`` (by variant name).

    Returns:
        ``(pairs, taus, markdown)``: :func:`agreement`, :func:`rank_agreement`
        and ``robustness.md``'s text.
    """
    final = {v: _final_regret(rec, meta, budget) for v, (rec, meta) in variants.items()}
    pairs = agreement(final, methods)
    taus = rank_agreement(final)
    markdown = robustness_markdown(problem, pairs, taus, budget)
    atomic_write_text(root / "robustness.md", markdown)
    atomic_write_text(root / "robustness.csv", pairs.to_csv(index=False))
    return pairs, taus, markdown


def _final_regret(
    records: pd.DataFrame, meta: dict[str, Any], budget: int
) -> pd.DataFrame:
    """Complete runs' records (``meta.json`` names the failed ones), with the
    regret before a first feasible evaluation (``_fill``,
    :func:`~bolt_pco64.bench.stats.regret_fill`) and the budget."""
    failed = RunKey.parse_all(meta["runs"]["failed"])
    table = meta["table"]
    fill = regret_fill(table["optimal_value"], table["worst_feasible_value"])
    return complete_runs(records, failed).assign(_fill=fill, _budget=budget)


def _direction(better: float, worse: float, p: float, pairs: int, alpha: float) -> int:
    """+1 (first method better), -1 (worse) or 0 (cannot be told apart), as
    :func:`~bolt_pco64.bench.stats.verdict` decides."""
    if pairs == 0 or math.isnan(p) or p >= alpha:
        return 0
    n_better, n_worse = round(better * pairs), round(worse * pairs)
    return int(np.sign(n_better - n_worse))


def agreement(
    records: dict[str, pd.DataFrame],
    methods: Sequence[str],
    alpha: float = STATS_DEFAULTS.alpha,
) -> pd.DataFrame:
    """Per pair of methods, the paired comparison on each variant and overall.

    Args:
        records: Per variant, records of complete runs with ``_fill`` and
            ``_budget`` columns (the regret given to a run without a feasible
            point, and the budget).
        methods: The methods, in order; each pair ``(a, b)`` with ``a``
            before ``b``.
        alpha: Significance level.

    Returns:
        One row per pair and variant: ``method, other, variant, pairs,
        better, worse, p_value, direction`` (+1: ``method`` has significantly
        lower final regret, -1 higher, 0 neither), and ``holds`` -- the same
        for every variant of the pair: ``"yes"`` when the direction is the
        same non-zero one on every variant, ``"no"`` otherwise.
    """
    rows = []
    for a, b in itertools.combinations(methods, 2):
        for variant, rec in records.items():
            sub = rec[rec["method"].isin([a, b])]
            if sub.empty or b not in set(sub["method"]) or a not in set(sub["method"]):
                continue
            budget = int(sub["_budget"].iloc[0])
            cmp = paired_comparisons(
                sub, b, budget, float(sub["_fill"].iloc[0]), [budget], "regret", [a]
            )
            r = cmp.iloc[0]
            rows.append(
                {
                    "method": a,
                    "other": b,
                    "variant": variant,
                    "pairs": int(r["pairs"]),
                    "better": float(r["better"]),
                    "worse": float(r["worse"]),
                    "p_value": float(r["p_value"]),
                    "direction": _direction(
                        r["better"], r["worse"], r["p_value"], int(r["pairs"]), alpha
                    ),
                }
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "method",
            "other",
            "variant",
            "pairs",
            "better",
            "worse",
            "p_value",
            "direction",
        ],
    )
    if out.empty:
        return out.assign(holds=pd.Series(dtype=str))
    holds = {}
    for key, group in out.groupby(["method", "other"], sort=False):
        d = set(group["direction"])
        same = len(group) == len(records) and len(d) == 1 and 0 not in d
        holds[key] = "yes" if same else "no"
    out["holds"] = [
        holds[(m, o)] for m, o in zip(out["method"], out["other"], strict=True)
    ]
    return out


def rank_agreement(records: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Kendall's tau between the variants' method rankings (median final regret).

    Returns:
        One row per pair of variants: ``variant, other, methods, tau``
        (NaN with fewer than two shared methods).
    """
    medians = {}
    for variant, rec in records.items():
        budget = int(rec["_budget"].iloc[0]) if len(rec) else 0
        final = rec[rec["iteration"] == budget]
        medians[variant] = final.groupby("method")["regret"].median()
    rows = []
    for v, w in itertools.combinations(medians, 2):
        shared = sorted(set(medians[v].index) & set(medians[w].index))
        tau = math.nan
        if len(shared) >= 2:
            tau = float(
                sps.kendalltau(medians[v][shared], medians[w][shared]).statistic
            )
        rows.append({"variant": v, "other": w, "methods": len(shared), "tau": tau})
    return pd.DataFrame(rows, columns=["variant", "other", "methods", "tau"])


def robustness_markdown(
    problem: str, pairs: pd.DataFrame, taus: pd.DataFrame, budget: int
) -> str:
    """``robustness.md``: which conclusions hold on every variant."""
    lines = [
        f"# {problem}: do the conclusions depend on the stand-in's reading?",
        "",
        "SIMULATED stand-in variants (docs/standins.md). Final simple regret "
        f"after {budget} evaluations, paired by seed; a direction counts only "
        f"when significant (signed-rank p < {STATS_DEFAULTS.alpha}).",
        "",
    ]
    words = {1: "better", -1: "worse", 0: "–"}
    rows = [
        [
            a,
            b,
            *(
                f"{words[int(r['direction'])]} (p = {r['p_value']:.2g})"
                for r in group.to_dict("records")
            ),
            group["holds"].iloc[0],
        ]
        for (a, b), group in pairs.groupby(["method", "other"], sort=False)
    ]
    variants = list(dict.fromkeys(pairs["variant"]))
    header = ["method", "other", *variants, "holds on every variant"]
    lines += markdown_table(header, rows)
    held = pairs.drop_duplicates(["method", "other"])
    lines += [
        "",
        f"{int((held['holds'] == 'yes').sum())} of {len(held)} pairwise conclusions "
        "hold on every variant; the others depend on the reading (or are not "
        "significant on some variant).",
        "",
        "Rank agreement (Kendall's tau of the methods' median final regret):",
        "",
        *markdown_table(
            ["variant", "other", "methods", "tau"],
            (
                [r["variant"], r["other"], r["methods"], f"{r['tau']:.2f}"]
                for r in taus.to_dict("records")
            ),
        ),
    ]
    return "\n".join(lines) + "\n"
