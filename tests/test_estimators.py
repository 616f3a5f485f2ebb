"""The runner's throughput estimators (bolt_pco64.tables.estimators) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bolt_pco64.instances import get_instance
from bolt_pco64.tables.estimators import (
    EstimatorDefaults,
    estimate_throughput,
    step_matrix,
    work_per_step,
)

#: A warm-up step of 5 s, then timed steps 1, 2, 3, 4 and an outlier of 100 s.
#: Timed: median 3, quartiles 2 and 4 (linear), IQR 2, so |t - 3| >= 4 drops
#: 100; inliers 1..4: mean 2.5, population variance 1.25, n = 4.
RUN = [5.0, 1.0, 2.0, 3.0, 4.0, 100.0]
RUN_RATE = 1 / 2.5
RUN_SE = math.sqrt(1.25) / math.sqrt(4) / 2.5**2


def test_hand_computed_run() -> None:
    est = estimate_throughput(RUN)
    assert est.throughput.shape == ()
    assert math.isclose(float(est.throughput), RUN_RATE, rel_tol=1e-12)
    assert math.isclose(float(est.stderr), RUN_SE, rel_tol=1e-12)
    assert math.isclose(float(est.mean_step_s), 2.5, rel_tol=1e-12)
    assert int(est.n_inliers) == 4
    assert int(est.n_timed) == 5


def test_scale_is_the_unit_factor() -> None:
    est = estimate_throughput(RUN, scale=8.0)
    assert math.isclose(float(est.throughput), 8 * RUN_RATE, rel_tol=1e-12)
    assert math.isclose(float(est.stderr), 8 * RUN_SE, rel_tol=1e-12)
    pco64, pco16 = get_instance("pco64"), get_instance("pco16")
    assert work_per_step(pco64) == 512 / 64  # samples per GPU per step
    assert work_per_step(pco16) == 1.0  # optimizer steps
    assert work_per_step(pco16, "samples/s/gpu") == 512 / 16


def test_a_step_exactly_two_iqr_away_is_dropped() -> None:
    # Timed 1, 2, 3, 4, 7: median 3, IQR 2, |7 - 3| = 4 = 2 IQR -> dropped.
    est = estimate_throughput([9.0, 1.0, 2.0, 3.0, 4.0, 7.0])
    assert int(est.n_inliers) == 4
    assert math.isclose(float(est.mean_step_s), 2.5, rel_tol=1e-12)
    # Just inside: |6.9 - 3| < 4 stays.
    assert int(estimate_throughput([9.0, 1.0, 2.0, 3.0, 4.0, 6.9]).n_inliers) == 5


def test_identical_steps_keep_the_median() -> None:
    # IQR 0: the runner's strict rule would keep nothing; the median's steps stay.
    est = estimate_throughput([10.0, 2.0, 2.0, 2.0, 2.0])
    assert float(est.throughput) == 0.5
    assert float(est.stderr) == 0.0
    assert int(est.n_inliers) == 4
    # Three equal steps and one off: IQR 0, the odd one is dropped.
    est = estimate_throughput([10.0, 2.0, 2.0, 2.0, 3.0])
    assert int(est.n_inliers) == 3


def test_prefix_of_k_steps() -> None:
    # First 3 recorded: timed 1, 2 -> median 1.5, IQR 0.5, both kept.
    est = estimate_throughput(RUN, steps=3)
    assert math.isclose(float(est.throughput), 1 / 1.5, rel_tol=1e-12)
    assert math.isclose(float(est.stderr), 0.5 / math.sqrt(2) / 1.5**2, rel_tol=1e-12)
    # One timed step is too few (the runner needs more than two recorded).
    for k in (0, 1, 2):
        est = estimate_throughput(RUN, steps=k)
        assert math.isnan(float(est.throughput))
        assert math.isnan(float(est.stderr))
        assert int(est.n_inliers) == 0
    # A prefix longer than the run is the whole run.
    assert float(estimate_throughput(RUN, steps=50).throughput) == float(
        estimate_throughput(RUN).throughput
    )


def test_batch_of_ragged_runs() -> None:
    times = step_matrix([RUN, [], [3.0, 1.0, 1.0]])
    assert times.shape == (3, 6)
    assert np.isnan(times[1]).all()
    assert np.isnan(times[2, 3:]).all()
    est = estimate_throughput(times)
    assert est.throughput.shape == (3,)
    assert math.isclose(est.throughput[0], RUN_RATE, rel_tol=1e-12)
    assert math.isnan(est.throughput[1])  # an OOM row's empty list
    assert est.throughput[2] == 1.0
    assert est.stderr[2] == 0.0
    assert est.n_inliers.tolist() == [4, 0, 2]
    # One prefix per run.
    per_run = estimate_throughput(times, steps=np.array([3, 6, 3]))
    assert math.isclose(per_run.throughput[0], 1 / 1.5, rel_tol=1e-12)
    assert per_run.throughput[2] == 1.0
    # A batch_shape of two dimensions.
    cube = np.stack([times[[0, 2]], times[[2, 0]]])
    est = estimate_throughput(cube)
    assert est.throughput.shape == (2, 2)
    assert est.throughput[0, 0] == est.throughput[1, 1]


def test_runs_that_record_only_their_warm_up_have_no_estimate() -> None:
    # One recorded step per run (or none): nothing is timed after the warm-up,
    # for a single run, a batch and an empty matrix alike.
    for times in ([4.0], [[4.0]], [[4.0], [2.0]], step_matrix([[4.0], []]), [[]]):
        est = estimate_throughput(times)
        assert np.isnan(est.throughput).all()
        assert np.isnan(est.stderr).all()
        assert (np.asarray(est.n_timed) == 0).all()
        assert (np.asarray(est.n_inliers) == 0).all()
    # With no warm-up, one step per run is timed and kept.
    no_warmup = EstimatorDefaults(warmup_steps=0, min_timed_steps=1)
    est = estimate_throughput([[4.0], [2.0]], defaults=no_warmup)
    assert est.throughput.tolist() == [0.25, 0.5]
    assert est.n_inliers.tolist() == [1, 1]


def test_a_partial_run_drops_the_warm_up_of_its_first_steps() -> None:
    # The first 3 recorded steps (5, 1, 2): the warm-up dropped, 1 and 2 kept.
    est = estimate_throughput(RUN, steps=3)
    assert (int(est.n_timed), int(est.n_inliers)) == (2, 2)
    assert math.isclose(float(est.mean_step_s), 1.5, rel_tol=1e-12)


def test_agrees_with_a_per_run_reference() -> None:
    """Random runs: the vectorised estimate equals the rule applied run by run."""

    def reference(times: np.ndarray) -> tuple[float, float, int]:
        timed = times[1:]
        med = np.median(timed)
        iqr = np.quantile(timed, 0.75) - np.quantile(timed, 0.25)
        kept = timed[np.abs(timed - med) < 2 * iqr]
        m = kept.mean()
        return 1 / m, kept.std() / math.sqrt(len(kept)) / m**2, len(kept)

    rng = np.random.default_rng(7)
    runs = [rng.gamma(20.0, 0.1, size=int(rng.integers(3, 40))) for _ in range(50)]
    for run in runs:
        run[0] *= 2
        if rng.random() < 0.5:
            run[int(rng.integers(1, len(run)))] *= 1.5
    est = estimate_throughput(step_matrix(runs))
    for i, run in enumerate(runs):
        rate, se, n = reference(run)
        assert math.isclose(est.throughput[i], rate, rel_tol=1e-12)
        assert math.isclose(est.stderr[i], se, rel_tol=1e-9)
        assert est.n_inliers[i] == n


def test_settings_are_parameters() -> None:
    loose = EstimatorDefaults(warmup_steps=0, outlier_iqrs=100.0, min_timed_steps=1)
    est = estimate_throughput(RUN, defaults=loose)
    assert int(est.n_inliers) == len(RUN)
    assert math.isclose(float(est.mean_step_s), sum(RUN) / len(RUN), rel_tol=1e-12)


@pytest.mark.parametrize(
    ("times", "kwargs", "match"),
    [
        ([1.0, -2.0, 3.0], {}, "Expected step times > 0"),
        ([1.0, 0.0, 3.0], {}, "Expected step times > 0"),
        ([1.0, np.inf, 3.0], {}, "Expected step times > 0"),
        (2.0, {}, "Expected a batch_shape x n array"),
        (RUN, {"steps": -1}, "Expected `steps` >= 0"),
        (RUN, {"steps": 2.5}, "Expected `steps` as integer"),
        (RUN, {"steps": np.array([1, 2])}, "broadcastable to the batch shape"),
        (RUN, {"scale": 0.0}, "Expected a finite `scale` > 0"),
        (RUN, {"scale": float("nan")}, "Expected a finite `scale` > 0"),
    ],
)
def test_bad_input(times: object, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        estimate_throughput(times, **kwargs)  # type: ignore[arg-type]
