"""Statistics of a comparison (:mod:`bolt_pco64.bench.stats`) on synthetic records."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from bolt_pco64.bench.report.tables import checkpoints_for
from bolt_pco64.bench.stats import (
    bootstrap_interval,
    bootstrap_mean_intervals,
    found_optimum_intervals,
    median_intervals,
    paired_comparisons,
    signed_rank_p,
    verdict,
)


def _records(curves: dict[str, np.ndarray]) -> pd.DataFrame:
    """Records from ``method -> seeds x budget`` regret matrices (seed = row)."""
    frames = []
    for m, mat in curves.items():
        seeds, budget = mat.shape
        frames.append(
            pd.DataFrame(
                {
                    "method": [m] * (seeds * budget),
                    "seed": np.repeat(np.arange(seeds), budget),
                    "iteration": np.tile(np.arange(1, budget + 1), seeds),
                    "regret": mat.reshape(-1),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_intervals_cover_the_truth_about_95_percent_of_the_time() -> None:
    # Medians of Exponential(1) samples (true median ln 2) and rates of
    # Bernoulli(0.3) samples, 20 "seeds" each, as in a default comparison.
    rng = np.random.default_rng(2024)
    n_sets, covered_median, covered_rate = 300, 0, 0
    for i in range(n_sets):
        x = rng.exponential(size=20)
        lo, hi = bootstrap_interval(
            x, "median", resamples=999, rng=np.random.default_rng(i)
        )
        covered_median += lo <= math.log(2) <= hi
        b = (rng.random(20) < 0.3).astype(float)
        lo, hi = bootstrap_interval(
            b, "mean", resamples=999, rng=np.random.default_rng(i)
        )
        covered_rate += lo <= 0.3 <= hi
    # Binomial standard error of a 95% coverage over 300 sets: 0.013.
    assert 0.90 <= covered_median / n_sets <= 0.99
    assert 0.90 <= covered_rate / n_sets <= 0.99


def test_interval_is_seeded_and_narrows_with_more_seeds() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=20)
    a = bootstrap_interval(x, rng=np.random.default_rng(1))
    b = bootstrap_interval(x, rng=np.random.default_rng(1))
    assert a == b
    assert a[0] < np.median(x) < a[1]
    big = rng.normal(size=400)
    lo, hi = bootstrap_interval(big, rng=np.random.default_rng(1))
    assert hi - lo < (a[1] - a[0]) / 2
    assert bootstrap_interval([0.0, 0.0, 0.0]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="finite value"):
        bootstrap_interval([])
    with pytest.raises(ValueError, match="statistic"):
        bootstrap_interval([1.0, 2.0], statistic="mode")


def test_median_and_found_intervals_from_records() -> None:
    budget = 8
    a = np.tile(np.linspace(0.5, 0.0, budget), (10, 1))  # every seed reaches 0
    b = np.tile(np.linspace(0.5, 0.1, budget), (10, 1))
    b[0, 3:] = np.nan  # a NaN (no feasible run yet) counts as the fill
    rec = _records({"a": a, "b": b})
    med = median_intervals(rec, budget, fill=1.0, checkpoints=[4, 8])
    assert list(med["method"]) == ["a", "a", "b", "b"]
    row = med[(med["method"] == "a") & (med["checkpoint"] == 8)].iloc[0]
    assert (row["median"], row["low"], row["high"]) == (0.0, 0.0, 0.0)
    rb = med[(med["method"] == "b") & (med["checkpoint"] == 8)].iloc[0]
    assert rb["low"] <= rb["median"] <= rb["high"]
    found = found_optimum_intervals(rec, budget, fill=1.0).set_index("method")
    assert found.loc["a", "found"] == 10
    assert found.loc["b", "found"] == 0
    assert found.loc["a", "rate"] == 1.0
    # Same records, other method order: the same intervals.
    again = median_intervals(rec, budget, 1.0, [4, 8], methods=["b", "a"])
    pd.testing.assert_frame_equal(
        again.sort_values(["method", "checkpoint"]).reset_index(drop=True),
        med.reset_index(drop=True),
    )


def test_signed_rank_detects_a_real_shift_and_not_a_null_one() -> None:
    rng = np.random.default_rng(7)
    seeds, budget = 20, 4
    ref = rng.exponential(0.02, size=(seeds, budget))
    shifted = ref * 0.3 + rng.normal(0.0, 0.001, size=(seeds, budget)).clip(0)
    null = rng.exponential(0.02, size=(seeds, budget))  # same distribution
    same = ref.copy()
    rec = _records({"random": ref, "good": shifted, "null": null, "same": same})
    cmp = paired_comparisons(rec, "random", budget, fill=1.0, checkpoints=[4])
    cmp = cmp.set_index("method")
    assert list(cmp.index) == ["good", "null", "same"]
    assert cmp.loc["good", "p_value"] < 0.01
    assert cmp.loc["good", "better"] > 0.8
    assert cmp.loc["null", "p_value"] > 0.05
    assert cmp.loc["same", "tied"] == 1.0
    assert cmp.loc["same", "p_value"] == 1.0
    for m in cmp.index:
        r = cmp.loc[m]
        assert r["better"] + r["tied"] + r["worse"] == pytest.approx(1.0)
        assert r["pairs"] == seeds


def test_paired_comparison_uses_only_shared_seeds() -> None:
    ref = np.full((6, 3), 0.5)
    other = np.zeros((4, 3))
    rec = _records({"random": ref, "m": other})
    rec = rec[~((rec["method"] == "random") & (rec["seed"] == 0))]
    cmp = paired_comparisons(rec, "random", 3, 1.0, [3]).iloc[0]
    assert cmp["pairs"] == 3  # seeds 1, 2, 3
    assert cmp["better"] == 1.0
    with pytest.raises(ValueError, match="reference method 'nope'"):
        paired_comparisons(rec, "nope", 3, 1.0, [3])


def test_verdict_says_plainly_when_methods_cannot_be_told_apart() -> None:
    assert verdict("ts", "random", 0.75, 0.1, 0.003, 20) == (
        "ts is better than random (better on 15 of 20 seeds, worse on 2, p = 0.003)"
    )
    assert verdict("ts", "random", 0.1, 0.8, 0.01, 20).startswith(
        "ts is worse than random"
    )
    assert verdict("ts", "random", 0.5, 0.4, 0.3, 20) == (
        "ts and random cannot be told apart (p = 0.3)"
    )
    # A small p-value with as many wins as losses is no verdict either.
    assert "cannot be told apart" in verdict("a", "b", 0.4, 0.4, 0.01, 20)


def test_summary_reports_intervals_and_the_oom_share_after_the_initial_design() -> None:
    from bolt_pco64.bench.report.tables import summarize

    budget, n_init = 8, 4
    mat = np.tile(np.linspace(0.4, 0.0, budget), (5, 1))
    rec = _records({"m": mat})
    rec["inference_regret"] = rec["regret"] + 0.01
    # Seed s crashes at iterations 1 and 5..(4 + s): shares 0, .25, .5, .75, 1.
    rec["feasible"] = ~(
        (rec["iteration"] == 1)
        | ((rec["iteration"] > n_init) & (rec["iteration"] <= n_init + rec["seed"]))
    )
    rec["gpu_hours"] = rec["iteration"].astype(float)
    row = summarize(rec, 1.0, 0.5, budget, n_init=n_init).iloc[0]
    assert row["bo_oom_share_median"] == 0.5
    assert row["ooms_median"] == 3.0
    assert row["regret_median@8"] == 0.0
    assert row["inference_regret_median@8"] == pytest.approx(0.01)
    assert row["found_optimum"] == 1.0
    assert row["regret_low@6"] <= row["regret_median@6"] <= row["regret_high@6"]
    # Checkpoints start after the shared 4-row initial design (2 and 4 are in it).
    assert "regret_median@2" not in row.index
    assert "regret_median@4" not in row.index


def test_checkpoints_are_the_quarters_after_the_initial_design() -> None:
    assert checkpoints_for(40) == [10, 20, 30, 40]
    assert checkpoints_for(40, n_init=10) == [20, 30, 40]
    assert checkpoints_for(30, n_init=10) == [15, 22, 30]
    assert checkpoints_for(40, n_init=5) == [10, 20, 30, 40]
    assert checkpoints_for(10, n_init=10) == [10]


def test_reference_comparison_counts_oom_runs_after_the_initial_design() -> None:
    from bolt_pco64.bench.report.tables import compare_to_reference

    budget, n_init = 8, 4
    mat = np.tile(np.linspace(0.4, 0.1, budget), (6, 1))
    rec = _records({"safe": mat, "random": mat})
    # random crashes at every other evaluation, safe only in the shared design.
    odd = rec["iteration"] % 2 == 1
    rec["feasible"] = ~(
        odd & ((rec["method"] == "random") | (rec["iteration"] <= n_init))
    )
    cmp = compare_to_reference(rec, "random", 1.0, 0.5, budget, n_init=n_init)
    assert set(cmp["measure"]) == {"regret", "bo_ooms"}
    ooms = cmp[(cmp["measure"] == "bo_ooms") & (cmp["checkpoint"] == budget)].iloc[0]
    assert ooms["better"] == 1.0
    assert ooms["median_difference"] == -2.0  # iterations 5 and 7
    assert ooms["verdict"].startswith("safe is better than random")
    tie = cmp[(cmp["measure"] == "regret") & (cmp["checkpoint"] == budget)].iloc[0]
    assert "cannot be told apart" in tie["verdict"]
    assert compare_to_reference(rec, "nope", 1.0, 0.5, budget).empty


def test_complete_runs_drops_exactly_the_failed_runs() -> None:
    from bolt_pco64.bench.stats import complete_runs

    records = pd.DataFrame(
        {"method": ["a", "a", "b", "b", "a"], "seed": [0, 1, 0, 1, 0], "v": range(5)}
    )
    kept = complete_runs(records, {("a", 0), ("b", 7)})
    assert kept["v"].tolist() == [1, 2, 3]
    assert complete_runs(records, None) is records
    assert complete_runs(records, set()) is records


def test_mean_intervals_of_several_rows_agree_with_scipy_bootstrap() -> None:
    rng = np.random.default_rng(11)
    rows = np.vstack([rng.normal(size=30), rng.exponential(size=30), np.full(30, 2.0)])
    low, high = bootstrap_mean_intervals(rows, 0.9, 4000, np.random.default_rng(1))
    for i in range(2):
        ref = sps.bootstrap(
            (rows[i],),
            np.mean,
            n_resamples=4000,
            confidence_level=0.9,
            method="percentile",
            rng=np.random.default_rng(2),
        ).confidence_interval
        # Two bootstraps of 4000 resamples: equal to a few hundredths of a SD.
        assert abs(low[i] - ref.low) < 0.06 * rows[i].std()
        assert abs(high[i] - ref.high) < 0.06 * rows[i].std()
    assert (low[2], high[2]) == (2.0, 2.0)
    again = bootstrap_mean_intervals(rows, 0.9, 4000, np.random.default_rng(1))
    assert np.array_equal(again[0], low)
    with pytest.raises(ValueError, match="rows x seeds"):
        bootstrap_mean_intervals(np.zeros(3))


def test_signed_rank_p_is_scipys_with_pratt_zeros() -> None:
    d = np.array(
        [0.0, 0.3, -0.1, 0.5, 0.7, 0.2, 0.0, 0.9, -0.4, 1.1, 0.6, 0.8, 1.3, 0.4]
    )
    assert math.isclose(signed_rank_p(d), sps.wilcoxon(d, zero_method="pratt").pvalue)
    assert signed_rank_p(np.zeros(5)) == 1.0
    assert signed_rank_p([]) == 1.0
