"""Whether early termination lost the optimum: found-optimum and regret-0 rates, paired by seed.

A stopped configuration is never measured fully (methods propose only
untried rows), so stopping the optimum makes regret 0 unreachable; a
near-optimal target (:mod:`_early_metrics`) and ERT do not
see that loss. These metrics do. They read the harness's records
(:mod:`bolt_pco64.bench.records`: ``method, seed, iteration, row, feasible,
stopped, regret``, and ``gpu_hours`` on a GPU-hour budget) and the problem's
table (its rows' true throughput):

- :func:`optimum_outcomes`, per method over its seeds (one run each): the
  *found-optimum rate* (the run evaluated an optimum row fully: feasible and
  not stopped), the *regret-0 rate* (the records' ``regret`` at the end of
  the budget is 0: the records count only runs that were not stopped as
  found, so noise-free the two agree, and a difference would flag
  inconsistent records), the median *regret at the end of the budget*
  (before a first feasible result: optimum minus worst feasible, as in the
  summaries, :func:`~bolt_pco64.bench.stats.regret_fill`), and the runs
  that *started the optimum and stopped it* (every evaluation of an optimum
  row stopped early, so it was never measured fully). Rates over seeds come
  with exact (Clopper-Pearson) intervals, which stay informative at 0 of 20
  where a bootstrap gives ``[0, 0]``; the median with a percentile-bootstrap
  interval (:func:`~bolt_pco64.bench.stats.bootstrap_interval`).
- :func:`paired_outcomes`, each early-termination setting against the
  reference setting (the same methods and seeds, so the same initial
  designs): the paired difference in end-of-budget regret (median,
  bootstrap interval, seeds better / tied / worse, two-sided Wilcoxon
  signed-rank p with Pratt's zeros, as
  :func:`~bolt_pco64.bench.stats.paired_comparisons`), and the seeds that
  found the optimum under one setting and not the other (*lost* /
  *gained*) with an exact McNemar p (a two-sided binomial test of the
  discordant seeds).

An *optimum row* is a row of the table's highest ``throughput_mean`` (rows
tied with it included). Results beyond a GPU-hour budget do not count
(:func:`~bolt_pco64.bench.report.cost.base.within_budget`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from _early_metrics import (
    check_early_records,
    check_reference_setting,
    exact_interval,
)
from scipy import stats as sps

from bolt_pco64.bench.report.cost import within_budget
from bolt_pco64.bench.stats import (
    STATS_DEFAULTS,
    bootstrap_interval,
    keyed_rng,
    regret_fill,
    signed_rank_p,
)

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = ["optimum_outcomes", "paired_outcomes"]


def _end_of_budget(
    records: pd.DataFrame, table: Table, budget_hours: float | None
) -> pd.DataFrame:
    """One row per run (``method``, ``seed``): whether it started, stopped and
    fully measured an optimum row, and its regret at the end of the budget."""
    for col in ("regret", "iteration"):
        if col not in records.columns:
            raise ValueError(
                f"Expected record columns ['{col}'], got columns {list(records.columns)}."
            )
    recs = within_budget(records, budget_hours)
    true = table.frame["throughput_mean"].to_numpy(dtype=np.float64)
    optimum, worst = float(np.nanmax(true)), float(np.nanmin(true))
    fill = regret_fill(optimum, worst)
    # the same array's maximum: rows tied with it are optima too
    is_opt = np.nan_to_num(true, nan=-np.inf) >= optimum
    rows = []
    for (method, seed), g in recs.groupby(["method", "seed"], sort=False):
        g = g.sort_values("iteration")
        r = g["row"].to_numpy(dtype=np.int64)
        opt = is_opt[r] & g["feasible"].to_numpy(dtype=bool)
        halted = g["stopped"].to_numpy(dtype=bool)
        regret = float(g["regret"].iloc[-1])
        full = bool((opt & ~halted).any())
        rows.append(
            {
                "method": method,
                "seed": int(seed),
                "found": full,
                "regret": fill if math.isnan(regret) else regret,
                "started": bool(opt.any()),
                "stopped_optimum": bool(opt.any()) and not full,
                "optimum_stops": int((opt & halted).sum()),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "method",
            "seed",
            "found",
            "regret",
            "started",
            "stopped_optimum",
            "optimum_stops",
        ],
    )


def optimum_outcomes(
    records: pd.DataFrame,
    table: Table,
    budget_hours: float | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Per method: found-optimum and regret-0 rates, end-of-budget regret, optimum stopped.

    An *optimum row* is a row of the table's highest ``throughput_mean``
    (rows tied with it included). Every rate is over the method's seeds (one
    run each), with its exact (Clopper-Pearson) interval; the regret's median
    with a percentile-bootstrap interval over the seeds.

    Args:
        records: The harness's records (``method, seed, iteration, row,
            feasible, stopped, run_gpu_hours, regret``; ``gpu_hours`` with
            ``budget_hours``).
        table: The problem's table.
        budget_hours: Leave out results beyond this many GPU-hours (the run
            that crosses the budget does not count).
        level: Of every interval.
        resamples, seed: Of the bootstrap.

    Returns:
        Columns ``method, seeds``; ``found, found_rate, found_low,
        found_high``: runs that evaluated an optimum row fully (feasible, not
        stopped); ``regret0, regret0_rate, regret0_low, regret0_high``: runs
        whose ``regret`` at the end of the budget is ``<= 0``;
        ``final_regret, final_regret_low, final_regret_high``: the median
        end-of-budget regret (before a first feasible result: optimum minus
        worst feasible); ``started_optimum``: runs that evaluated an optimum
        row at all; ``stopped_optimum, stopped_optimum_rate,
        stopped_optimum_low, stopped_optimum_high``: runs that started the
        optimum but stopped every evaluation of it early (never measured
        fully), the rate among the runs that started it (NaN when none did);
        ``optimum_stops``: evaluations of an optimum row stopped early, over
        all runs.

    Raises:
        ValueError: On records without the needed columns.
    """
    check_early_records(records)
    runs = _end_of_budget(records, table, budget_hours)
    out = []
    for method, g in runs.groupby("method", sort=False):
        n = len(g)
        found = int(g["found"].sum())
        zero = int((g["regret"] <= 0).sum())
        started = int(g["started"].sum())
        stopped = int(g["stopped_optimum"].sum())
        regret = g["regret"].to_numpy(dtype=np.float64)
        r_low, r_high = bootstrap_interval(
            regret, "median", level, resamples, keyed_rng(seed, str(method), "final")
        )
        row: dict[str, object] = {"method": method, "seeds": n}
        for name, k, total in (
            ("found", found, n),
            ("regret0", zero, n),
            ("stopped_optimum", stopped, started),
        ):
            low, high = exact_interval(k, total, level)
            rate = k / total if total else math.nan
            row |= {name: k, f"{name}_rate": rate, f"{name}_low": low}
            row[f"{name}_high"] = high
            if name == "regret0":
                row |= {
                    "final_regret": float(np.median(regret)),
                    "final_regret_low": r_low,
                    "final_regret_high": r_high,
                    "started_optimum": started,
                }
        row["optimum_stops"] = int(g["optimum_stops"].sum())
        out.append(row)
    columns = ["method", "seeds"]
    for name in ("found", "regret0"):
        columns += [name, f"{name}_rate", f"{name}_low", f"{name}_high"]
    columns += ["final_regret", "final_regret_low", "final_regret_high"]
    columns += ["started_optimum", "stopped_optimum", "stopped_optimum_rate"]
    columns += ["stopped_optimum_low", "stopped_optimum_high", "optimum_stops"]
    return pd.DataFrame(out, columns=columns)


def paired_outcomes(
    records_by_setting: Mapping[str, pd.DataFrame],
    table: Table,
    reference: str = "none",
    budget_hours: float | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Each setting against ``reference``, per method, paired by seed.

    Args:
        records_by_setting: Records of the same methods and seeds, by
            early-termination setting.
        table: The problem's table.
        reference: The setting every other one is compared with.
        budget_hours: As in :func:`optimum_outcomes`.
        level, resamples, seed: Of the bootstrap interval.

    Returns:
        Columns ``method, setting, reference, pairs``; ``regret_difference,
        difference_low, difference_high``: the median over the paired seeds
        of the end-of-budget regret under ``setting`` minus under
        ``reference`` (positive: the setting ends worse) with its
        percentile-bootstrap interval; ``better, tied, worse``: seeds;
        ``p_value``: two-sided Wilcoxon signed-rank (Pratt), 1 when every
        pair ties; ``lost, gained``: seeds that found the optimum under
        ``reference`` but not under ``setting``, and the other way round;
        ``mcnemar_p``: exact two-sided binomial test of ``lost`` among
        ``lost + gained`` (1 without discordant seeds).

    Raises:
        ValueError: If ``reference`` is not among the settings.
    """
    check_reference_setting(records_by_setting, reference)
    runs = {}
    for name, recs in records_by_setting.items():
        check_early_records(recs)
        runs[name] = _end_of_budget(recs, table, budget_hours).set_index(
            ["method", "seed"]
        )
    base = runs[reference]
    out = []
    for setting, mine in runs.items():
        if setting == reference:
            continue
        for method in dict.fromkeys(base.index.get_level_values("method")):
            a = mine.xs(method, level="method") if method in mine.index else None
            if a is None:
                continue
            b = base.xs(method, level="method")
            common = a.index.intersection(b.index)
            diff = (a.loc[common, "regret"] - b.loc[common, "regret"]).to_numpy()
            fa = a.loc[common, "found"].to_numpy(dtype=bool)
            fb = b.loc[common, "found"].to_numpy(dtype=bool)
            lost, gained = int((fb & ~fa).sum()), int((fa & ~fb).sum())
            n = diff.size
            low, high = (
                bootstrap_interval(
                    diff,
                    "median",
                    level,
                    resamples,
                    keyed_rng(seed, str(method), setting, "paired"),
                )
                if n
                else (math.nan, math.nan)
            )
            out.append(
                {
                    "method": method,
                    "setting": setting,
                    "reference": reference,
                    "pairs": n,
                    "regret_difference": float(np.median(diff)) if n else math.nan,
                    "difference_low": low,
                    "difference_high": high,
                    "better": int((diff < 0).sum()),
                    "tied": int((diff == 0).sum()),
                    "worse": int((diff > 0).sum()),
                    "p_value": signed_rank_p(diff) if n else math.nan,
                    "lost": lost,
                    "gained": gained,
                    "mcnemar_p": float(sps.binomtest(lost, lost + gained).pvalue)
                    if lost + gained
                    else 1.0,
                }
            )
    columns = ["method", "setting", "reference", "pairs", "regret_difference"]
    columns += ["difference_low", "difference_high", "better", "tied", "worse"]
    columns += ["p_value", "lost", "gained", "mcnemar_p"]
    return pd.DataFrame(out, columns=columns)
