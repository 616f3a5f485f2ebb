"""Early-termination policies (bolt_pco64.bo.early_stop), as plain functions of numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bolt_pco64.bench.spec import EARLY_STOP_CHOICES
from bolt_pco64.bo.early_stop import (
    EARLY_STOP_POLICIES,
    Evidence,
    NoStop,
    PercentileStop,
    PosteriorStop,
    StepEstimates,
    expected_improvement,
    get_policy,
    normal_posterior,
    ucb_improvement,
)


def _run(
    est: float, se: float = 0.001, inliers: int = 5, steps: int = 6
) -> StepEstimates:
    return StepEstimates(steps=steps, throughput=est, stderr=se, n_inliers=inliers)


def test_two_normals_combine_by_precision() -> None:
    mean, var = normal_posterior(0.0, 1.0, 2.0, 1.0)
    assert float(mean) == pytest.approx(1.0)
    assert float(var) == pytest.approx(0.5)
    mean, var = normal_posterior(0.0, 3.0, 2.0, 1.0)  # weights 1/4 and 3/4
    assert float(mean) == pytest.approx(1.5)
    assert float(var) == pytest.approx(0.75)
    # A flat prior leaves the likelihood.
    mean, var = normal_posterior(5.0, math.inf, 2.0, 0.25)
    assert (float(mean), float(var)) == (2.0, 0.25)


def test_improvement_criteria() -> None:
    # At the incumbent, EI = sigma x phi(0).
    assert float(expected_improvement(1.0, 0.5, 1.0)) == pytest.approx(
        0.5 / math.sqrt(2 * math.pi)
    )
    # Far below: nothing; far above: the plain improvement.
    assert float(expected_improvement(0.0, 0.01, 1.0)) == pytest.approx(0.0, abs=1e-12)
    assert float(expected_improvement(2.0, 0.01, 1.0)) == pytest.approx(1.0)
    assert float(expected_improvement(1.5, 0.0, 1.0)) == 0.5
    assert float(ucb_improvement(0.9, 0.05, 1.0, 1.0)) == 0.0
    assert float(ucb_improvement(0.9, 0.2, 1.0, 1.0)) == pytest.approx(0.1)


def test_posterior_stops_a_run_clearly_below_the_incumbent() -> None:
    rule = PosteriorStop()
    best = Evidence(incumbent=1.0)
    assert rule.stops(_run(0.9), best)
    # Too few inlier steps, no incumbent, or no estimate: never.
    assert not rule.stops(_run(0.9, inliers=4), best)
    assert not rule.stops(_run(0.9), Evidence())
    assert not rule.stops(_run(math.nan), best)
    # Above the incumbent, or too uncertain to tell: goes on.
    assert not rule.stops(_run(1.01), best)
    assert not rule.stops(_run(0.999, se=0.01), best)  # EI ~ 0.0035 > 0.001


def test_posterior_listens_to_the_model_and_the_margin() -> None:
    rule = PosteriorStop()
    # A confident model that says the configuration is far better keeps it.
    sure = Evidence(incumbent=1.0, prior_mean=2.0, prior_var=1e-8)
    assert not rule.stops(_run(0.9), sure)
    # A vague model changes nothing.
    vague = Evidence(incumbent=1.0, prior_mean=2.0, prior_var=1e6)
    assert rule.stops(_run(0.9), vague)
    # A negative margin spares estimates within 20 % of the incumbent.
    assert not PosteriorStop(margin=-0.2).stops(_run(0.9), Evidence(incumbent=1.0))
    # UCB: 0.9 + 1 x 0.2 reaches above the incumbent; 0.9 + 0.05 does not.
    ucb = PosteriorStop(criterion="ucb")
    assert not ucb.stops(_run(0.9, se=0.2), Evidence(incumbent=1.0))
    assert ucb.stops(_run(0.9, se=0.05), Evidence(incumbent=1.0))


def test_posterior_decides_every_step_at_once() -> None:
    run = StepEstimates(
        steps=np.arange(1, 6),
        throughput=np.array([np.nan, 0.5, 0.95, 0.9, 1.2]),
        stderr=np.full(5, 0.001),
        n_inliers=np.array([0, 5, 5, 5, 5]),
    )
    got = PosteriorStop().stops(run, Evidence(incumbent=1.0))
    assert got.tolist() == [False, True, True, True, False]


def test_percentile_is_axs_rule_on_steps() -> None:
    rule = PercentileStop()  # median, after 6 steps, once 5 runs completed
    peers = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    ev = Evidence(peers=peers, completed=5)
    # With the run itself: median of 1, 2, 2.5, 3, 4, 5 = 2.75.
    assert rule.stops(_run(2.5), ev)
    # Strictly below: the median of 1, 2, 3, 3, 4, 5 is 3.
    assert not rule.stops(_run(3.0), ev)
    assert not rule.stops(_run(2.5, steps=5), ev)  # before min_progression
    assert not rule.stops(_run(2.5), Evidence(peers=peers, completed=4))
    sparse = Evidence(
        peers=np.array([[1.0], [2.0], [np.nan], [np.nan], [5.0]]), completed=5
    )
    assert not rule.stops(_run(1.5), sparse)  # 4 runs with data at the step
    assert PercentileStop(min_curves=4).stops(_run(1.5), sparse)


def test_percentile_judges_each_step_against_its_own_peers() -> None:
    peers = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]])
    run = StepEstimates(
        steps=np.array([6, 7]), throughput=np.array([5.0, 5.0]), stderr=0.1, n_inliers=5
    )
    got = PercentileStop(min_curves=4).stops(run, Evidence(peers=peers, completed=4))
    assert got.tolist() == [False, True]


def test_registry_and_bad_settings() -> None:
    assert sorted(EARLY_STOP_POLICIES) == sorted(EARLY_STOP_CHOICES)
    assert isinstance(get_policy("none"), NoStop)
    assert not get_policy("none").stops(_run(0.0), Evidence(incumbent=1.0))
    mine = PercentileStop(percentile=25.0)
    assert get_policy(mine) is mine
    with pytest.raises(ValueError, match="early-stop policy"):
        get_policy("sometimes")
    for bad in (
        {"criterion": "pi"},
        {"threshold": -1.0},
        {"min_inliers": 0},
        {"ucb_beta": math.nan},
    ):
        with pytest.raises(ValueError, match="Expected"):
            PosteriorStop(**bad)
    for bad in ({"percentile": 101.0}, {"min_progression": 0}, {"min_curves": 1.5}):
        with pytest.raises(ValueError, match="Expected"):
            PercentileStop(**bad)
