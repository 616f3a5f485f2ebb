"""The protocol (:mod:`bolt_pco64.bench.protocol`): on the committed default
comparison's records, on synthetic records, and against the statistics
libraries called directly."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.duration.survfunc import survdiff
from statsmodels.stats.multitest import multipletests

from bolt_pco64.bench.protocol import (
    PROTOCOL_DEFAULTS,
    PROTOCOL_FILES,
    PROTOCOL_SEEDS,
    SUITE_FILES,
    plot_time_to_target,
    protocol_markdown,
    protocol_suite,
    run_protocol,
    suite_markdown,
    write_protocol,
    write_suite,
)
from bolt_pco64.bench.protocol.analysis import kaplan_meier
from bolt_pco64.bench.protocol.endpoints import declared_endpoints
from bolt_pco64.bench.protocol.groups import letter_groups, letters_of
from bolt_pco64.bench.protocol.pairs import compare_pairs, first_scores, holm
from bolt_pco64.bench.protocol.power import mcnemar_seeds, min_seeds

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
BOTORCH = ("qlognei", "qlogei", "ts", "naive", "gpc_ei", "tobit_ei", "gpc_pof")
# Fewer resamples than the design's 9999: the intervals are not under test here.
FAST = replace(PROTOCOL_DEFAULTS, resamples=499)


@pytest.fixture(scope="module")
def committed() -> tuple[pd.DataFrame, dict]:
    records = pd.read_parquet(RESULTS / "runs.parquet")
    meta = json.loads((RESULTS / "meta.json").read_text())
    return records, meta


@pytest.fixture(scope="module")
def botorch(committed: tuple[pd.DataFrame, dict]):
    records, meta = committed
    return run_protocol(
        records,
        meta["table"]["optimal_value"],
        meta["table"]["worst_feasible_value"],
        meta["config"]["n_init"],
        methods=BOTORCH,
        design=FAST,
        problem="pco64",
    )


def _first_hit(records: pd.DataFrame, budget: int) -> pd.Series:
    """Each run's first evaluation at the optimum (``budget + 1``: never),
    counted directly from the records."""
    hit = records[records["regret"] <= 0].groupby(["method", "seed"])["iteration"].min()
    runs = records.groupby(["method", "seed"])["iteration"].max()
    return hit.reindex(runs.index).fillna(budget + 1)


def test_committed_records_are_the_design_and_its_counts_hold(
    botorch, committed
) -> None:
    """The committed default comparison is the protocol's design, and each
    pair's seeds first to the optimum are the records' own counts, with every
    separated pair decided for the method that got there first more often."""
    records, _meta = committed
    assert not botorch.smoke
    assert list(botorch.seeds) == list(PROTOCOL_SEEDS)
    assert botorch.budget == PROTOCOL_DEFAULTS.budget
    first = _first_hit(records, botorch.budget)
    pairs = botorch.pairs[botorch.pairs["endpoint"] == "evals_to_optimum"]
    assert len(pairs) == 21
    for row in pairs.itertuples():
        fa = first.loc[row.a].to_numpy()
        fb = first.loc[row.b].to_numpy()
        assert (row.a_better, row.b_better) == (
            int((fa < fb).sum()),
            int((fb < fa).sum()),
        )
        if row.verdict == "separated":
            assert row.better == (row.a if row.a_better > row.b_better else row.b)
    # On 100 seeds some BoTorch pairs separate on this endpoint and others do
    # not: the page reports both (its groups overlap).
    assert (pairs["verdict"] == "separated").any()
    assert (pairs["verdict"] == "inconclusive").any()
    assert len(botorch.groups["evals_to_optimum"]) > 1


def test_committed_crash_counts_separate_in_the_direction_of_the_records(
    botorch, committed
) -> None:
    # Crashes after the initial design, counted directly from the records.
    records, meta = committed
    n_init = meta["config"]["n_init"]
    own = records[(records["iteration"] > n_init) & records["method"].isin(BOTORCH)]
    counts = (~own["feasible"]).groupby([own["method"], own["seed"]]).sum()
    runs = botorch.outcomes.set_index(["method", "seed"])["ooms"]
    assert np.array_equal(runs.loc[counts.index].to_numpy(), counts.to_numpy(float))
    mean = counts.groupby(level="method").mean()
    pairs = botorch.pairs[botorch.pairs["endpoint"] == "ooms"]
    separated = pairs[pairs["verdict"] == "separated"]
    assert len(separated) > 0
    for row in separated.itertuples():
        worse = row.b if row.better == row.a else row.a
        assert mean[row.better] < mean[worse]


def test_seeds_whose_initial_design_holds_the_optimum_are_flagged(
    botorch,
    committed,
) -> None:
    records, meta = committed
    at = records[records["iteration"] == meta["config"]["n_init"]]
    expected = sorted(int(s) for s in at.loc[at["regret"] == 0, "seed"].unique())
    assert list(botorch.initial_hits) == expected
    md = protocol_markdown(botorch)
    if expected:
        assert (
            "initial design already holds the optimum: " + ", ".join(map(str, expected))
            in md
        )
    else:
        assert "No seed's initial design holds the optimum." in md


def _records(
    curves: dict[str, np.ndarray], crashes: dict[str, int] | None = None
) -> pd.DataFrame:
    """Records from ``method -> seeds x budget`` regret matrices."""
    frames = []
    for m, mat in curves.items():
        seeds, budget = mat.shape
        feasible = np.ones((seeds, budget), dtype=bool)
        feasible[:, budget - (crashes or {}).get(m, 0) :] = False
        frames.append(
            pd.DataFrame(
                {
                    "method": [m] * (seeds * budget),
                    "seed": np.repeat(np.arange(seeds) + 1000, budget),
                    "iteration": np.tile(np.arange(1, budget + 1), seeds),
                    "regret": mat.reshape(-1),
                    "feasible": feasible.reshape(-1),
                    "gpu_hours": np.tile(np.arange(1, budget + 1) * 2.0, seeds),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _clear_winner(seeds: int = 16, budget: int = 20) -> pd.DataFrame:
    good = np.full((seeds, budget), 0.1)
    good[:, 11:] = 0.0  # reaches the optimum at evaluation 12 on every seed
    other = np.full((seeds, budget), 0.1)
    return _records({"good": good, "b": other, "c": other.copy()})


@pytest.fixture(scope="module")
def winner():
    return run_protocol(_clear_winner(), 1.0, 0.5, 10, design=FAST, problem="toy")


def test_synthetic_clear_winner_is_separated_and_ties_are_equivalent(winner) -> None:
    res = winner
    assert not res.smoke
    for name in (
        "evals_to_optimum",
        "evals_to_1pct",
        "regret_auc",
        "gpu_hours_to_optimum",
    ):
        pairs = res.pairs[res.pairs["endpoint"] == name].set_index(["a", "b"])
        assert pairs.loc[("good", "b"), "verdict"] == "separated"
        assert pairs.loc[("good", "b"), "better"] == "good"
        assert pairs.loc[("b", "c"), "verdict"] == "equivalent"
        assert [set(g) for g in res.groups[name]] == [{"good"}, {"b", "c"}]
    est = res.estimates.set_index(["endpoint", "method"])
    assert est.loc[("evals_to_optimum", "good"), "letters"] == "a"
    assert est.loc[("evals_to_optimum", "good"), "median_time"] == 12


def test_a_quick_run_is_a_smoke_test_that_compares_nothing() -> None:
    res = run_protocol(_clear_winner(seeds=3), 1.0, 0.5, 10, design=FAST)
    assert res.smoke
    assert res.pairs.empty
    assert not res.groups
    md = protocol_markdown(res)
    assert "Smoke test: no comparison" in md
    assert "Grouped ranking" not in md
    assert "[" not in md  # no interval either
    assert "0 of 3 runs reached it" in md
    assert "separated" not in md


def test_smoke_threshold_is_where_the_exact_test_first_can_reject() -> None:
    for pairs in (1, 3, 28, 45):
        n = min_seeds(pairs)
        level = PROTOCOL_DEFAULTS.alpha / pairs
        assert sps.binomtest(n, n).pvalue <= level
        assert sps.binomtest(n - 1, n - 1).pvalue > level


def test_first_scores_are_the_seed_stratified_logrank() -> None:
    rng = np.random.default_rng(7)
    n = 60
    t_a, t_b = (
        rng.integers(1, 15, n).astype(float),
        rng.integers(1, 15, n).astype(float),
    )
    e_a, e_b = rng.random(n) < 0.6, rng.random(n) < 0.4
    s = first_scores(t_a, e_a, t_b, e_b)
    na, nb = int((s < 0).sum()), int((s > 0).sum())
    # statsmodels' log-rank test, one stratum per seed.
    chisq, _ = survdiff(
        np.r_[t_a, t_b],
        np.r_[e_a, e_b].astype(int),
        np.r_[np.zeros(n), np.ones(n)],
        strata=np.r_[np.arange(n), np.arange(n)],
    )
    assert math.isclose((na - nb) ** 2 / (na + nb), chisq)


def _km_by_hand(
    time: np.ndarray, event: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The textbook estimate, written out: at each event time ``1 - d / n``
    multiplied up, Greenwood's variance ``sum d / (n (n - d))``, and the
    log-log interval ``S ** exp(+-z sqrt(V) / log S)`` (Kalbfleisch and
    Prentice 2002, 1.3.1; ``lifelines``' and R's ``survival``'s default).
    Returns the event times, the reached share at each, and the share's
    interval at the last one."""
    times = np.unique(time[event])
    surv, greenwood, reached = 1.0, 0.0, []
    for t in times:
        n = int((time >= t).sum())
        d = int(((time == t) & event).sum())
        surv *= 1 - d / n
        greenwood += d / (n * (n - d)) if n > d else math.inf
        reached.append(1 - surv)
    spread = z * math.sqrt(greenwood) / abs(math.log(surv))
    return (
        times,
        np.array(reached),
        1 - surv ** math.exp(-spread),
        1 - surv ** math.exp(spread),
    )


def test_kaplan_meier_matches_the_textbook_estimate() -> None:
    rng = np.random.default_rng(5)
    time = rng.integers(1, 30, 25).astype(float)
    event = rng.random(25) < 0.5
    km = kaplan_meier(time, event, 0.95)
    times, reached, low, high = _km_by_hand(time, event, 1.959963984540054)
    assert np.array_equal(km.times, times)
    assert np.allclose(km.reached, reached)
    assert np.allclose([km.share, km.low, km.high], [reached[-1], low, high])
    assert km.low < km.share < km.high
    none = kaplan_meier(time, np.zeros(25, bool))
    assert (none.share, none.low, none.high, none.median) == (0.0, 0.0, 0.0, math.inf)


def test_pair_p_values_match_scipy_and_holm_matches_statsmodels() -> None:
    rng = np.random.default_rng(3)
    seeds, budget = 14, 12
    curves = {m: rng.choice([0.0, 0.01, 0.05], size=(seeds, budget)) for m in "xyz"}
    for m in curves:
        curves[m] = np.minimum.accumulate(curves[m], axis=1)
    out = run_protocol(_records(curves), 1.0, 0.5, 4, design=FAST)
    ep = {e.name: e for e in declared_endpoints(FAST)}
    pairs = compare_pairs(out.outcomes, ep["regret_auc"], list("xyz"), FAST)
    runs = out.outcomes.set_index(["method", "seed"])["regret_auc"]
    for r in pairs.to_dict("records"):
        d = runs[r["a"]].to_numpy() - runs[r["b"]].to_numpy()
        expected = (
            1.0 if np.all(d == 0) else sps.wilcoxon(d, zero_method="pratt").pvalue
        )
        assert math.isclose(r["p_value"], expected)
    assert np.allclose(
        pairs["p_holm"], multipletests(pairs["p_value"], method="holm")[1]
    )
    first = compare_pairs(out.outcomes, ep["evals_to_optimum"], list("xyz"), FAST)
    for r in first.to_dict("records"):
        k = r["a_better"] + r["b_better"]
        expected = sps.binomtest(r["a_better"], k).pvalue if k else 1.0
        assert math.isclose(r["p_value"], expected)


def test_holm_matches_statsmodels_on_ties_and_caps() -> None:
    p = np.array([0.01, 0.04, 0.04, 0.5, 0.001, 1.0])
    assert np.allclose(holm(p), multipletests(p, method="holm")[1])
    with pytest.raises(ValueError, match="p-values"):
        holm([0.1, float("nan")])


def test_mcnemar_seeds_give_the_power_they_promise() -> None:
    # Power of the exact test at the returned n, by its binomial law.
    p10, p01, pairs = 0.3, 0.05, 3
    n = int(mcnemar_seeds(p10, p01, pairs))
    level = PROTOCOL_DEFAULTS.alpha / pairs
    share = p10 / (p10 + p01)
    power = 0.0
    for k in range(1, n + 1):  # discordant seeds
        j = np.arange(k + 1)
        # The exact two-sided test at 1/2 (what mcnemar(exact=True) computes).
        p = np.minimum(1.0, 2 * sps.binom.cdf(np.minimum(j, k - j), k, 0.5))
        hit = sps.binom.pmf(j, k, share)[p < level].sum()
        power += sps.binom.pmf(k, n, p10 + p01) * hit
    assert 0.7 < power < 0.95
    assert mcnemar_seeds(0.2, 0.2, pairs) == math.inf


def test_letter_groups_are_the_compact_letter_display() -> None:
    groups = letter_groups(["a", "b", "c"], [("a", "c")])
    assert groups == (("a", "b"), ("b", "c"))
    assert letters_of(groups) == {"a": "a", "b": "ab", "c": "b"}
    assert letter_groups(["a", "b"], []) == (("a", "b"),)
    with pytest.raises(ValueError, match="separated pairs"):
        letter_groups(["a"], [("a", "zz")])


def test_write_protocol_writes_every_file_and_the_page_leads_with_the_ranking(
    tmp_path: Path,
    winner,
) -> None:
    res = winner
    written = [k for k in PROTOCOL_FILES if k != "figure"]  # the figure: below
    md = write_protocol(tmp_path, res, written)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        PROTOCOL_FILES[k] for k in written
    )
    assert PROTOCOL_FILES["figure"] not in md
    page = (tmp_path / "protocol.md").read_text()
    # The page is the section one heading level up: a page of its own.
    assert page.startswith("# Which methods differ")
    assert page.replace("\n#", "\n##").replace("# ", "## ", 1) == md
    ranking = md.index("### Grouped ranking")
    assert ranking < md.index("### Evaluations to the optimum")
    assert md.index("Power:") < ranking
    assert "**Underpowered: 16 seeds" in md
    facts = json.loads((tmp_path / "protocol.json").read_text())
    assert facts["groups"]["regret_auc"] == [["good"], ["b", "c"]]
    pairs = pd.read_csv(tmp_path / "protocol_pairs.csv")
    assert len(pairs) == 3 * len(res.endpoints)
    with pytest.raises(ValueError, match="existing folder"):
        write_protocol(tmp_path / "missing", res)


def test_figure_has_one_kaplan_meier_line_per_method_and_target(winner) -> None:
    res = winner
    fig = plot_time_to_target(res)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    timed = [e for e in res.endpoints if e.kind == "time"]
    assert [ax.get_title() for ax in shown] == [e.label for e in timed]
    for ax in shown:
        lines = {
            ln.get_label(): ln
            for ln in ax.get_lines()
            if not ln.get_label().startswith("_")
        }
        assert sorted(lines) == sorted(res.methods)
        # Every run of "good" reaches the optimum: its curve ends at 1, the others' at 0.
        assert lines["good"].get_ydata()[-1] == 1.0
        assert lines["b"].get_ydata()[-1] == 0.0


def test_suite_separates_only_what_every_problem_separates(winner) -> None:
    a = winner
    flipped = _clear_winner().replace({"method": {"good": "b", "b": "good"}})
    b = run_protocol(flipped, 1.0, 0.5, 10, design=FAST, problem="p2")
    same = protocol_suite({"p1": a, "p3": a})
    auc = same[same["endpoint"] == "regret_auc"].set_index("method")
    assert auc.loc["good", "suite"] != auc.loc["b", "suite"]
    mixed = protocol_suite({"p1": a, "p2": b})
    auc = mixed[mixed["endpoint"] == "regret_auc"].set_index("method")
    assert set(auc["suite"]) == {"a"}  # good wins on p1, b on p2: no suite order
    assert "| good | a | b | **a** |" in suite_markdown({"p1": a, "p2": b})


def test_write_suite_writes_its_table_and_page(tmp_path: Path, winner) -> None:
    md = write_suite(tmp_path, {"p1": winner, "p3": winner})
    assert (tmp_path / SUITE_FILES["page"]).read_text() == md
    table = pd.read_csv(tmp_path / SUITE_FILES["table"])
    assert list(table.columns) == ["endpoint", "method", "p1", "p3", "suite"]


def test_only_the_seeds_every_method_ran_are_compared() -> None:
    recs = _clear_winner()
    extra = recs[(recs["method"] == "good") & (recs["seed"] == 1000)].assign(seed=5)
    res = run_protocol(pd.concat([recs, extra]), 1.0, 0.5, 10, design=FAST)
    assert 5 not in res.seeds
    assert res.left_out == 1
    assert (
        "1 runs of seeds that not every method ran are left out"
        in protocol_markdown(res)
    )


def test_bad_records_are_refused_with_what_is_wrong() -> None:
    recs = _clear_winner(seeds=4)
    with pytest.raises(ValueError, match=r"missing \['feasible'\]"):
        run_protocol(recs.drop(columns="feasible"), 1.0, 0.5, 10)
    with pytest.raises(
        ValueError, match=r"run \w+/1000 to have evaluations 1..30, got 20"
    ):
        run_protocol(recs, 1.0, 0.5, 10, budget=30)
    with pytest.raises(ValueError, match="Expected methods among"):
        run_protocol(recs, 1.0, 0.5, 10, methods=["good", "nope"])
    with pytest.raises(ValueError, match="n_init < budget"):
        run_protocol(recs, 1.0, 0.5, 20)


def test_default_seeds_did_not_choose_the_protocol() -> None:
    assert PROTOCOL_DEFAULTS.seeds == PROTOCOL_SEEDS
    assert len(PROTOCOL_SEEDS) == 100
    assert min(PROTOCOL_SEEDS) >= 20
    assert not set(PROTOCOL_SEEDS) & set(range(20))
    assert list(itertools.islice(PROTOCOL_SEEDS, 2)) == [1000, 1001]


def test_regret_levels_break_count_ties_towards_the_lower_level() -> None:
    from bolt_pco64.bench.protocol.analysis import regret_levels

    # Levels 1 %, 2 %, 3 % once each, 4 % twice; two columns: 4 % and 1 %.
    outcomes = pd.DataFrame(
        {"method": ["a"] * 5, "final_regret": [0.03, 0.01, 0.02, 0.04, 0.04]}
    )
    table = regret_levels(outcomes, 1.0, ["a"], top=2)
    assert list(table.columns) == ["method", "1 %", "4 %", "other"]
    assert table.iloc[0, 1:].tolist() == [1, 2, 2]
