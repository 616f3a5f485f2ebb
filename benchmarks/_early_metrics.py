"""Metrics of early termination: GPU-hours saved, runs stopped by mistake, ERT paired by seed.

They read the harness's records (``stopped``, ``steps_run``,
``run_gpu_hours``, ``row``; :mod:`bolt_pco64.bench.records`) and the problem's
table (each row's full cost under the time model and its true throughput):

- **GPU-hours saved** (:func:`early_stop_summary`): per stopped run, what its
  complete run would have cost (:attr:`~bolt_pco64.tables.time_model.TimeModel.gpu_hours`)
  minus what it was charged; summed over a method's runs, with the share of
  all GPU-hours those runs would have cost without stopping.
- **Wrongly stopped**: a stopped run whose configuration is *near-optimal*
  (true throughput within ``near``, 1 %, of the optimum). Reported as a
  count and as a rate among the near-optimal runs proposed (stopped or not),
  pooled over seeds, with its exact (Clopper-Pearson) interval: with a
  handful of near-optimal runs per seed a bootstrap over seeds would give
  ``[0, 0]`` whenever none was stopped, which says nothing. The same split
  by *when*: a near-optimal run stopped while the run had not yet found a
  near-optimal configuration (``*_open``) delays reaching the target; one
  stopped after (a second near-optimal configuration below the incumbent)
  costs nothing on the way to it.
- **Whether the optimum was found or stopped** (found-optimum and regret-0
  rates, end-of-budget regret, the optimum started and stopped, each setting
  against the reference paired by seed): :mod:`_early_outcomes`
  (a near-optimal target and ERT do not see a stopped optimum).
- **ERT with and without early termination, paired by seed**
  (:func:`paired_ert`): the comparisons under different ``--early-stop``
  settings are separate result directories of the same methods and seeds
  (the same initial designs); each method's runs are labelled
  ``"<method> [<setting>]"`` and read by the cost metrics
  (:func:`~bolt_pco64.bench.report.cost.ert.ert_table` and
  :func:`~bolt_pco64.bench.report.cost.ert.compare_costs` against the
  reference setting's label): ERT to each target with its bootstrap
  interval, and the ERT ratio with a *paired* bootstrap interval.

Records beyond a GPU-hour budget (the run that crosses it) are left out
(:func:`~bolt_pco64.bench.report.cost.base.within_budget`), as in the cost metrics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats as sps

from bolt_pco64.bench.report.cost import compare_costs, ert_table, within_budget
from bolt_pco64.bench.stats import STATS_DEFAULTS
from bolt_pco64.tables.time_model import TimeModel

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = [
    "EARLY_METRICS_DEFAULTS",
    "EarlyMetricsDefaults",
    "check_early_records",
    "check_reference_setting",
    "early_stop_summary",
    "exact_interval",
    "label_setting",
    "paired_ert",
]


@dataclass(frozen=True)
class EarlyMetricsDefaults:
    """The defaults of the early-termination metrics (one place).

    Attributes:
        near: A configuration is near-optimal when its true throughput is
            within this share of the optimum (0.01 = 1 %).
        targets: The ERT targets (relative distances to the optimum).
    """

    near: float = 0.01
    targets: tuple[float, ...] = (0.01,)


#: The defaults used when no other value is passed.
EARLY_METRICS_DEFAULTS = EarlyMetricsDefaults()

_NEEDED = ("method", "seed", "row", "feasible", "stopped", "run_gpu_hours")


def check_early_records(records: pd.DataFrame) -> None:
    """Raise ``ValueError`` unless ``records`` has the columns of records
    with early termination (``method, seed, row, feasible, stopped,
    run_gpu_hours``)."""
    missing = sorted(set(_NEEDED) - set(records.columns))
    if missing:
        raise ValueError(
            f"Expected record columns {missing} (records with early termination), "
            f"got columns {list(records.columns)}."
        )


def exact_interval(k: int, n: int, level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) ``level`` interval of ``k`` successes in
    ``n`` trials; ``(nan, nan)`` for ``n = 0``."""
    if n == 0:
        return math.nan, math.nan
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def early_stop_summary(
    records: pd.DataFrame,
    table: Table,
    near: float = EARLY_METRICS_DEFAULTS.near,
    budget_hours: float | None = None,
    level: float = STATS_DEFAULTS.level,
) -> pd.DataFrame:
    """Per method: runs stopped, GPU-hours saved, near-optimal runs stopped.

    Args:
        records: The harness's records (any number of methods and seeds).
        table: The problem's table.
        near: The near-optimal tolerance (share of the optimum, in ``[0, 1)``).
        budget_hours: Leave out results beyond this many GPU-hours.
        level: Of the exact interval of the wrongly-stopped rate.

    Returns:
        Columns ``method, seeds, evaluations, stopped, stopped_share,
        gpu_hours, gpu_hours_saved, saved_share, near_optimal,
        wrongly_stopped, wrong_rate, wrong_low, wrong_high`` and the same
        four for the near-optimal runs proposed before the run had found one
        (``near_optimal_open, wrongly_stopped_open, wrong_open_rate,
        wrong_open_low, wrong_open_high``); ``gpu_hours``: charged;
        ``saved_share``: saved over charged + saved; a rate is NaN without a
        near-optimal run.

    Raises:
        ValueError: On records without the needed columns or a bad ``near``.
    """
    check_early_records(records)
    if not 0.0 <= near < 1.0:
        raise ValueError(f"Expected near in [0, 1), got {near!r}.")
    recs = within_budget(records, budget_hours)
    full = TimeModel(table).gpu_hours.numpy()
    true = table.frame["throughput_mean"].to_numpy(dtype=np.float64)
    optimum = float(np.nanmax(true))
    rows = []
    for method, sub in recs.groupby("method", sort=False):
        r = sub["row"].to_numpy(dtype=np.int64)
        stopped = sub["stopped"].to_numpy(dtype=bool)
        charged = sub["run_gpu_hours"].to_numpy(dtype=np.float64)
        saved = float(np.where(stopped, full[r] - charged, 0.0).sum())
        is_near = sub["feasible"].to_numpy(dtype=bool) & (
            true[r] >= (1.0 - near) * optimum
        )
        n_near = int(is_near.sum())
        wrong = int((is_near & stopped).sum())
        low, high = exact_interval(wrong, n_near, level)
        open_ = _before_target(sub, true, (1.0 - near) * optimum) & is_near
        n_open = int(open_.sum())
        wrong_open = int((open_ & stopped).sum())
        o_low, o_high = exact_interval(wrong_open, n_open, level)
        total = float(charged.sum())
        rows.append(
            {
                "method": method,
                "seeds": int(sub["seed"].nunique()),
                "evaluations": len(sub),
                "stopped": int(stopped.sum()),
                "stopped_share": float(stopped.mean()) if len(sub) else math.nan,
                "gpu_hours": total,
                "gpu_hours_saved": saved,
                "saved_share": saved / (total + saved)
                if total + saved > 0
                else math.nan,
                "near_optimal": n_near,
                "wrongly_stopped": wrong,
                "wrong_rate": wrong / n_near if n_near else math.nan,
                "wrong_low": low,
                "wrong_high": high,
                "near_optimal_open": n_open,
                "wrongly_stopped_open": wrong_open,
                "wrong_open_rate": wrong_open / n_open if n_open else math.nan,
                "wrong_open_low": o_low,
                "wrong_open_high": o_high,
            }
        )
    columns = [
        "method",
        "seeds",
        "evaluations",
        "stopped",
        "stopped_share",
        "gpu_hours",
        "gpu_hours_saved",
        "saved_share",
        "near_optimal",
        "wrongly_stopped",
        "wrong_rate",
        "wrong_low",
        "wrong_high",
        "near_optimal_open",
        "wrongly_stopped_open",
        "wrong_open_rate",
        "wrong_open_low",
        "wrong_open_high",
    ]
    return pd.DataFrame(rows, columns=columns)


def _before_target(
    records: pd.DataFrame, true: np.ndarray, bar: float
) -> NDArray[np.bool_]:
    """Per record (in ``records``' order): whether its run had not yet found
    (completed) a configuration of true throughput ``>= bar`` before it."""
    out = np.zeros(len(records), dtype=bool)
    pos = np.arange(len(records))
    for _, g in records.assign(_pos=pos).groupby(["method", "seed"], sort=False):
        g = g.sort_values("iteration")
        r = g["row"].to_numpy(dtype=np.int64)
        found = g["feasible"].to_numpy(dtype=bool) & ~g["stopped"].to_numpy(dtype=bool)
        value = np.where(found, true[r], -np.inf)
        best_before = np.concatenate([[-np.inf], np.maximum.accumulate(value)[:-1]])
        out[g["_pos"].to_numpy()] = best_before < bar
    return out


def label_setting(records: pd.DataFrame, setting: str) -> pd.DataFrame:
    """``records`` with each method renamed ``"<method> [<setting>]"``."""
    out = records.copy()
    out["method"] = [f"{m} [{setting}]" for m in out["method"]]
    return out


def paired_ert(
    records_by_setting: Mapping[str, pd.DataFrame],
    optimal_value: float,
    reference: str = "none",
    targets: Sequence[float] = EARLY_METRICS_DEFAULTS.targets,
    budget_hours: float | None = None,
    axis: str = "gpu_hours",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ERT per method and setting, and each setting against ``reference``, paired by seed.

    Args:
        records_by_setting: Records of the same methods and seeds, by
            early-termination setting (e.g. ``{"none": ..., "posterior": ...}``).
        optimal_value: The problem's optimum.
        reference: The setting every other one is compared with.
        targets: Relative distances to the optimum.
        budget_hours: The comparisons' GPU-hour budget (results beyond it do
            not count; an unsuccessful run spent at most that).
        axis: ``"gpu_hours"`` or ``"wall_hours"``.

    Returns:
        ``(ert, comparisons)``: :func:`~bolt_pco64.bench.report.cost.ert.ert_table`
        and, per method and other setting,
        :func:`~bolt_pco64.bench.report.cost.ert.compare_costs` against the same
        method under ``reference`` (``ert_ratio`` < 1: early termination
        reached the target for less), with ``setting`` and ``method`` columns.

    Raises:
        ValueError: If ``reference`` is not among the settings.
    """
    check_reference_setting(records_by_setting, reference)
    budget = budget_hours if axis == "gpu_hours" else None
    labelled = {s: label_setting(r, s) for s, r in records_by_setting.items()}
    allrec = pd.concat(list(labelled.values()), ignore_index=True)
    ert = ert_table(allrec, optimal_value, targets, axis, budget)
    parts = []
    ref = records_by_setting[reference]
    for method in dict.fromkeys(ref["method"]):
        base = f"{method} [{reference}]"
        for setting in labelled:
            if setting == reference:
                continue
            label = f"{method} [{setting}]"
            pair = allrec[allrec["method"].isin([base, label])]
            if (pair["method"] == label).any():
                cmp = compare_costs(pair, base, optimal_value, targets, axis, budget)
                cmp.insert(0, "setting", setting)
                cmp.insert(1, "base_method", method)
                parts.append(cmp)
    comparisons = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return ert, comparisons


def check_reference_setting(
    records_by_setting: Mapping[str, object], reference: str
) -> None:
    """Refuse a ``reference`` setting that has no records.

    Raises:
        ValueError: If ``reference`` is not a key of ``records_by_setting``.
    """
    if reference not in records_by_setting:
        raise ValueError(
            f"Expected the reference setting {reference!r} among "
            f"{sorted(records_by_setting)}, got none of its records."
        )
