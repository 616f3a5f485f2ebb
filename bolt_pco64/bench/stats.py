"""Statistics of a comparison: intervals, paired tests, plain verdicts.

Pure functions of the harness's record DataFrames (one row per evaluation:
``method``, ``seed``, ``iteration`` and an outcome column such as ``regret``).
BO trajectories depend on floating point, so a comparison made on one machine
differs in detail from the same comparison made on another; these statistics
say how much of a difference between methods the seeds support.

- :func:`median_intervals`: the median regret of each method at each
  checkpoint with a bootstrap interval;
- :func:`found_optimum_intervals`: the share of runs that reached regret 0,
  with a bootstrap interval;
- :func:`paired_comparisons`: each method against a reference over the seeds
  both ran (for a given seed all methods share the initial design): the
  shares of seeds where the method is better, tied and worse, and the p-value
  of a Wilcoxon signed-rank test;
- :func:`signed_rank_p`: the signed-rank test of paired differences;
- :func:`verdict`: one plain sentence per comparison, saying when two methods
  cannot be told apart;
- :func:`bootstrap_mean_intervals`: intervals of the means of several
  quantities of the same seeds, from one set of resamples of the seeds;
- :func:`median_band`: the median of every column of a ``seeds x points``
  matrix with a pointwise bootstrap band (the plot's line and band);
- :func:`seed_resamples` and :func:`percentile_interval`: the resampling of
  the seeds every bootstrap here and in the cost metrics draws, and the
  interval of a statistic that may be infinite (an expected running time);
- :func:`method_order`, :func:`by_method` and :func:`reference_rows`: the
  methods of a report in their order, each one's records, and the
  reference's (refused when it has none).

**Bootstrap.** Percentile intervals (Efron & Tibshirani 1993, "An
Introduction to the Bootstrap", ch. 13) of ``scipy.stats.bootstrap``, resampling
the seeds with replacement, from a generator seeded by ``(seed, method,
checkpoint)``: the same records give the same intervals in any order of
methods. Percentile, not BCa: regret data are full of ties (every run that
found the optimum has regret exactly 0), and BCa's jackknife estimate of the
acceleration is degenerate for the median of such data. With all runs equal the
interval is that value, and a rate of 0 or 1 gives ``[0, 0]`` or ``[1, 1]``: the
bootstrap cannot say more than the seeds show. The intervals are per
quantity, not simultaneous, and no p-value is corrected for multiple
comparisons.

**Signed-rank test.** ``scipy.stats.wilcoxon`` of the paired differences
(method minus reference) with ``zero_method="pratt"`` (Pratt 1959): seeds
where the two methods tie (often both regret 0) take part in the ranking but
not in the statistic, which is more conservative than dropping them first; if
every pair ties the p-value is 1. Two-sided.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from bolt_pco64.params import (
    OPEN_UNIT,
    POSITIVE_INT,
    Interval,
    check_param,
    check_params,
)

__all__ = [
    "STATS_DEFAULTS",
    "StatsDefaults",
    "bootstrap_interval",
    "bootstrap_mean_intervals",
    "by_method",
    "complete_runs",
    "found_optimum_intervals",
    "keyed_rng",
    "median_band",
    "median_intervals",
    "method_order",
    "outcome_matrix",
    "paired_comparisons",
    "percentile_interval",
    "reference_rows",
    "regret_fill",
    "seed_resamples",
    "signed_rank_p",
    "verdict",
]


@dataclass(frozen=True)
class StatsDefaults:
    """The defaults of the statistics (one place).

    Attributes:
        level: Confidence level of the intervals.
        resamples: Bootstrap resamples of an interval.
        band_resamples: Bootstrap resamples of a plot band (one per plotted
            point, so fewer).
        alpha: Significance level of :func:`verdict`.
        seed: Base seed of the bootstrap.
    """

    level: float = 0.95
    resamples: int = 9999
    band_resamples: int = 999
    alpha: float = 0.05
    seed: int = 0


#: The defaults used when no other value is passed.
STATS_DEFAULTS = StatsDefaults()


def keyed_rng(seed: int, *keys: str | int) -> np.random.Generator:
    """A generator seeded by ``seed`` and ``keys`` (strings by their CRC-32)."""
    words = [int(seed)] + [
        zlib.crc32(k.encode("utf-8")) if isinstance(k, str) else int(k) for k in keys
    ]
    return np.random.default_rng(words)


def seed_resamples(
    statistic: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    resamples: int,
    rng: np.random.Generator,
) -> Any:
    """``statistic`` of ``resamples`` bootstrap resamples of the seeds.

    Each resample draws the seeds (the first axis of every one of ``arrays``,
    the same draw for all: the seed is the unit) with replacement;
    ``statistic`` gets the arrays resampled, each with a leading
    ``resamples`` axis.
    """
    n = len(arrays[0])
    idx = rng.integers(0, n, size=(resamples, n))
    return statistic(*(np.asarray(a)[idx] for a in arrays))


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of bootstrap ``draws`` of a statistic that may
    be infinite (NaN draws left out; no interpolation); ``(nan, nan)``
    without a draw."""
    v = draws[~np.isnan(draws)]
    if v.size == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2
    lo, hi = np.quantile(v, [tail, 1 - tail], method="inverted_cdf")
    return float(lo), float(hi)


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    statistic: str = "median",
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the median or the mean of ``values``.

    Args:
        values: ``n`` finite numbers (``n >= 1``), one per run.
        statistic: ``"median"`` or ``"mean"`` (the mean of 0/1 values is a rate).
        level: Confidence level in ``(0, 1)``.
        resamples: Number of bootstrap resamples (``>= 1``).
        rng: Source of the resampling; ``None`` is ``STATS_DEFAULTS.seed``.

    Returns:
        ``(low, high)``; ``(v, v)`` when every value is ``v``.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError(f"Expected at least one finite value, got {x.tolist()}.")
    if statistic not in ("median", "mean"):
        raise ValueError(f"Expected statistic 'median' or 'mean', got {statistic!r}.")
    check_params(
        {"level": level, "resamples": resamples},
        {"level": OPEN_UNIT, "resamples": POSITIVE_INT},
    )
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    fn = np.median if statistic == "median" else np.mean
    res = sps.bootstrap(
        (x,),
        lambda s, axis=-1: fn(s, axis=axis),
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        rng=rng if rng is not None else keyed_rng(STATS_DEFAULTS.seed),
    )
    ci = res.confidence_interval
    return float(ci.low), float(ci.high)


def median_band(
    matrix: np.ndarray,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.band_resamples,
    rng: np.random.Generator | None = None,
    cells: int = 4_000_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column medians of ``matrix`` with pointwise percentile-bootstrap bands.

    Each resample draws the seeds (rows) with replacement once and takes the
    median of every column, so a band is the set of the pointwise
    ``level`` intervals of the median, not a simultaneous band.

    Args:
        matrix: ``seeds x points``-dim array of finite values.
        level: Confidence level in ``(0, 1)``.
        resamples: Number of bootstrap resamples.
        rng: Source of the resampling; ``None`` is ``STATS_DEFAULTS.seed``.
        cells: Resampled counts held in memory at once (``resamples x seeds``
            per column; the columns are taken in chunks of that size, which
            changes nothing in the result).

    Returns:
        ``(median, low, high)``, each ``points``-dim.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0 or not np.isfinite(m).all():
        raise ValueError(f"Expected a finite seeds x points matrix, got {m.shape}.")
    check_params(
        {"level": level, "cells": cells}, {"level": OPEN_UNIT, "cells": POSITIVE_INT}
    )
    gen = rng if rng is not None else keyed_rng(STATS_DEFAULTS.seed)
    n, points = m.shape
    idx = seed_resamples(lambda i: i, [np.arange(n)], resamples, gen)
    # How often each resample draws each seed; a resample's median is where
    # its cumulative count over a column's seeds in order of value passes the
    # middle: the median of the resampled values (``np.median`` of
    # ``m[idx]``, the same floats) without their resamples x seeds x points
    # copy or its partial sort.
    flat = (idx + n * np.arange(resamples)[:, None]).ravel()
    small = np.uint8 if n < 256 else np.uint16 if n < 65536 else np.int64
    counts = np.bincount(flat, minlength=resamples * n)
    counts = counts.reshape(resamples, n).T.astype(small)
    order = np.argsort(m, axis=0, kind="stable")
    tail = 100 * (1 - level) / 2
    low, high = np.empty(points), np.empty(points)
    width = max(1, cells // (resamples * n))
    for start in range(0, points, width):
        cols = np.arange(start, min(start + width, points))
        # seeds in order of value x columns x resamples, summed over the seeds
        # row by row (whole rows at once: numpy's cumsum over a small
        # integer's first axis is several times slower).
        cum = counts[order[:, cols]]
        for i in range(1, n):
            np.add(cum[i], cum[i - 1], out=cum[i])
        at = cols[:, None]
        meds = m[order[np.count_nonzero(cum <= (n - 1) // 2, axis=0), at], at]
        if n % 2 == 0:
            above = m[order[np.count_nonzero(cum <= n // 2, axis=0), at], at]
            meds = (meds + above) / 2
        low[cols], high[cols] = np.percentile(meds, [tail, 100 - tail], axis=1)
    return np.median(m, axis=0), low, high


def bootstrap_mean_intervals(
    matrix: np.ndarray,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap intervals of the row means of a ``rows x seeds`` matrix.

    Every resample draws the seeds (columns) with replacement once, for all
    rows together (the seed is the unit: rows are quantities of the same
    seeds, such as the paired differences of several pairs); each row's
    interval is the percentiles of its resampled means. A row of equal
    values gives that value twice.

    Args:
        matrix: ``rows x seeds``-dim array of finite values (``seeds >= 1``).
        level: Confidence level in ``(0, 1)``.
        resamples: Number of bootstrap resamples.
        rng: Source of the resampling; ``None`` is ``STATS_DEFAULTS.seed``.

    Returns:
        ``(low, high)``, each ``rows``-dim.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] == 0 or not np.isfinite(m).all():
        raise ValueError(f"Expected a finite rows x seeds matrix, got {m.shape}.")
    check_params(
        {"level": level, "resamples": resamples},
        {"level": OPEN_UNIT, "resamples": POSITIVE_INT},
    )
    gen = rng if rng is not None else keyed_rng(STATS_DEFAULTS.seed)
    n = m.shape[1]
    idx = seed_resamples(lambda i: i, [np.arange(n)], resamples, gen)
    # How often each resample draws each seed: the resampled means are one
    # product, in memory rows x resamples (not rows x resamples x seeds).
    flat = (idx + n * np.arange(resamples)[:, None]).ravel()
    counts = np.bincount(flat, minlength=resamples * n).reshape(resamples, n)
    means = m @ counts.T.astype(np.float64) / n
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail], axis=1)
    same = np.all(m == m[:, :1], axis=1)
    return np.where(same, m[:, 0], low), np.where(same, m[:, 0], high)


def regret_fill(optimal_value: float, worst_feasible_value: float) -> float:
    """The regret a run counts before its first feasible evaluation (and for
    evaluations it did not reach): ``optimal - worst feasible``, as bad as the
    worst configuration that runs. The one definition the summary, the
    comparisons and the plots use."""
    return float(optimal_value - worst_feasible_value)


def complete_runs(
    records: pd.DataFrame, failed: set[tuple[str, int]] | None
) -> pd.DataFrame:
    """The records of the runs not in ``failed`` (``(method, seed)`` pairs).

    Args:
        records: Harness records (``method`` and ``seed`` columns).
        failed: The failed runs; ``None`` or empty keeps every record.

    Returns:
        The kept rows of ``records``, in their order.
    """
    if not failed or not len(records):
        return records
    keep = np.array(
        [
            (m, int(s)) not in failed
            for m, s in zip(records["method"], records["seed"], strict=True)
        ],
        dtype=bool,
    )
    return records.loc[keep]


def outcome_matrix(
    records: pd.DataFrame,
    budget: int,
    fill: float,
    column: str = "regret",
) -> tuple[list[int], np.ndarray]:
    """One method's outcome per seed and evaluation.

    Args:
        records: The records of *one* method.
        budget: Evaluations per run.
        fill: The value of NaN entries (regret before the first feasible
            evaluation counts as ``optimal - worst feasible``) and of
            evaluations a run did not reach.
        column: The outcome column.

    Returns:
        ``(seeds, M)``: the sorted seeds and the ``seeds x budget`` matrix.
    """
    missing = {"seed", "iteration", column} - set(records.columns)
    if missing:
        raise ValueError(f"Expected record columns {sorted(missing)}, got none.")
    seed = records["seed"].to_numpy(dtype=np.int64)
    # The rows by seed, then by iteration; each row's place in its seed's run.
    order = np.lexsort((records["iteration"].to_numpy(), seed))
    first = np.unique(seed)
    row = np.searchsorted(first, seed[order])
    place = np.arange(len(order)) - np.searchsorted(seed[order], first)[row]
    kept = place < budget
    mat = np.full((len(first), budget), np.nan)
    vals = records[column].to_numpy(dtype=np.float64)[order]
    mat[row[kept], place[kept]] = vals[kept]
    return [int(s) for s in first], np.where(np.isnan(mat), fill, mat)


def method_order(records: pd.DataFrame, methods: Sequence[str] | None) -> list[str]:
    """``methods`` as a list, or by default every method of ``records`` in
    order of appearance (the order of every table and plot of a report)."""
    if methods is not None:
        return list(methods)
    return list(dict.fromkeys(records["method"].tolist()))


def by_method(
    records: pd.DataFrame, methods: Sequence[str] | None, skip: str | None = None
) -> Iterator[tuple[str, pd.DataFrame]]:
    """``(method, its records)`` in :func:`method_order`, leaving out ``skip``
    and the methods without records."""
    for m in method_order(records, methods):
        sub = records[records["method"] == m]
        if m != skip and not sub.empty:
            yield m, sub


def reference_rows(frame: pd.DataFrame, reference: str) -> pd.DataFrame:
    """The rows of ``frame`` of the ``reference`` method; it must have some."""
    ref = frame[frame["method"] == reference]
    if ref.empty:
        raise ValueError(
            f"Expected reference method {reference!r} among the records, got "
            f"{sorted(set(frame['method']))}."
        )
    return ref


def median_intervals(
    records: pd.DataFrame,
    budget: int,
    fill: float,
    checkpoints: Sequence[int],
    column: str = "regret",
    methods: Sequence[str] | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Median of ``column`` per method and checkpoint, with a bootstrap interval.

    Args:
        records: Records of complete runs (any number of methods).
        budget: Evaluations per run.
        fill: See :func:`outcome_matrix`.
        checkpoints: Evaluation counts (1-based, ``<= budget``).
        column: The outcome column (``regret`` or ``inference_regret``).
        methods: Which methods, in order; default all, in order of appearance.
        level, resamples, seed: Of the bootstrap.

    Returns:
        Columns ``method, checkpoint, runs, median, low, high``.
    """
    rows = []
    for m, sub in by_method(records, methods):
        _, mat = outcome_matrix(sub, budget, fill, column)
        for k in checkpoints:
            check_param("checkpoints", k, Interval(Integral, 1, budget))
            col = mat[:, k - 1]
            lo, hi = bootstrap_interval(
                col, "median", level, resamples, keyed_rng(seed, m, column, k)
            )
            rows.append(
                {
                    "method": m,
                    "checkpoint": int(k),
                    "runs": int(col.size),
                    "median": float(np.median(col)),
                    "low": lo,
                    "high": hi,
                }
            )
    return pd.DataFrame(
        rows, columns=["method", "checkpoint", "runs", "median", "low", "high"]
    )


def found_optimum_intervals(
    records: pd.DataFrame,
    budget: int,
    fill: float,
    column: str = "regret",
    methods: Sequence[str] | None = None,
    level: float = STATS_DEFAULTS.level,
    resamples: int = STATS_DEFAULTS.resamples,
    seed: int = STATS_DEFAULTS.seed,
) -> pd.DataFrame:
    """Share of runs whose ``column`` reached 0 within the budget, with an interval.

    Returns:
        Columns ``method, runs, found, rate, low, high`` (``found`` counts runs).
    """
    rows = []
    for m, sub in by_method(records, methods):
        _, mat = outcome_matrix(sub, budget, fill, column)
        hit = (mat <= 0).any(axis=1).astype(np.float64)
        lo, hi = bootstrap_interval(
            hit, "mean", level, resamples, keyed_rng(seed, m, column, "found")
        )
        rows.append(
            {
                "method": m,
                "runs": int(hit.size),
                "found": int(hit.sum()),
                "rate": float(hit.mean()),
                "low": lo,
                "high": hi,
            }
        )
    return pd.DataFrame(
        rows, columns=["method", "runs", "found", "rate", "low", "high"]
    )


def signed_rank_p(diff: Sequence[float] | np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (Pratt's
    zeros, see the module docstring); 1 without a nonzero difference."""
    diff = np.asarray(diff, dtype=np.float64)
    if diff.size == 0 or np.all(diff == 0):
        return 1.0
    return float(sps.wilcoxon(diff, zero_method="pratt").pvalue)


def paired_comparisons(
    records: pd.DataFrame,
    reference: str,
    budget: int,
    fill: float,
    checkpoints: Sequence[int],
    column: str = "regret",
    methods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Each method against ``reference`` over the seeds both ran (lower is better).

    Args:
        records: Records of complete runs.
        reference: The reference method's name (it must have runs).
        budget, fill, checkpoints, column, methods: As in :func:`median_intervals`.

    Returns:
        Columns ``method, reference, checkpoint, pairs, better, tied, worse``
        (shares of the paired seeds; they add up to 1), ``median_difference``
        (of method minus reference; negative favours the method) and
        ``p_value`` (two-sided Wilcoxon signed-rank, see the module docstring;
        NaN without pairs).
    """
    ref = reference_rows(records, reference)
    ref_seeds, ref_mat = outcome_matrix(ref, budget, fill, column)
    ref_row = {s: i for i, s in enumerate(ref_seeds)}
    rows = []
    for m, sub in by_method(records, methods, skip=reference):
        seeds, mat = outcome_matrix(sub, budget, fill, column)
        shared = [(i, ref_row[s]) for i, s in enumerate(seeds) if s in ref_row]
        mine = np.array([i for i, _ in shared], dtype=np.int64)
        theirs = np.array([j for _, j in shared], dtype=np.int64)
        for k in checkpoints:
            check_param("checkpoints", k, Interval(Integral, 1, budget))
            diff = mat[mine, k - 1] - ref_mat[theirs, k - 1]
            n = diff.size
            rows.append(
                {
                    "method": m,
                    "reference": reference,
                    "checkpoint": int(k),
                    "pairs": int(n),
                    "better": float((diff < 0).mean()) if n else math.nan,
                    "tied": float((diff == 0).mean()) if n else math.nan,
                    "worse": float((diff > 0).mean()) if n else math.nan,
                    "median_difference": float(np.median(diff)) if n else math.nan,
                    "p_value": signed_rank_p(diff) if n else math.nan,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "method",
            "reference",
            "checkpoint",
            "pairs",
            "better",
            "tied",
            "worse",
            "median_difference",
            "p_value",
        ],
    )


def verdict(
    method: str,
    reference: str,
    better: float,
    worse: float,
    p_value: float,
    pairs: int,
    alpha: float = STATS_DEFAULTS.alpha,
) -> str:
    """One plain sentence about a paired comparison.

    The method is called better (worse) than the reference only when the
    signed-rank p-value is below ``alpha`` *and* it is better (worse) on more
    seeds than the other way round; otherwise the two cannot be told apart
    with these seeds.

    Returns:
        E.g. ``"ts is better than random (better on 15 of 20 seeds, p = 0.003)"``
        or ``"ts and random cannot be told apart (p = 0.41)"``.
    """
    check_param("alpha", alpha, OPEN_UNIT)
    if pairs == 0 or math.isnan(p_value):
        return f"{method} and {reference} share no seeds: no comparison"
    n_better, n_worse = round(better * pairs), round(worse * pairs)
    if p_value < alpha and n_better > n_worse:
        return (
            f"{method} is better than {reference} (better on {n_better} of "
            f"{pairs} seeds, worse on {n_worse}, p = {p_value:.2g})"
        )
    if p_value < alpha and n_worse > n_better:
        return (
            f"{method} is worse than {reference} (worse on {n_worse} of "
            f"{pairs} seeds, better on {n_better}, p = {p_value:.2g})"
        )
    return f"{method} and {reference} cannot be told apart (p = {p_value:.2g})"
