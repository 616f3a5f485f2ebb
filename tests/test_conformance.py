"""BoTorch conformance of the problems (issue 30): base class, input types,
constructor, ``oom=``, :meth:`PCO.is_configuration` and the far-snap warning."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from botorch.acquisition import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf_mixed_alternating
from botorch.test_functions.synthetic import ConstrainedSyntheticTestFunction
from gpytorch.mlls import ExactMarginalLogLikelihood

from bolt_pco64 import PCO, PCO16, PCO64, problem_class
from bolt_pco64.problem import FarSnapWarning
from tests._tables import frame_from, small_frame

INPUTS = PCO64.instance.input_columns


@pytest.fixture
def frame() -> pd.DataFrame:
    return small_frame(seed=11, n=60, oom_share=0.4)


def test_problems_are_botorch_constrained_synthetic_functions() -> None:
    for cls in (PCO, PCO16, PCO64):
        assert issubclass(cls, ConstrainedSyntheticTestFunction)
        for name in ("forward", "evaluate_true", "evaluate_slack_true"):
            assert name not in vars(cls), f"{cls.__name__} defines {name}"
        assert "_evaluate_true" in vars(PCO)
        assert "_evaluate_slack_true" in vars(PCO)


def test_every_input_is_declared_discrete(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame)
    assert f.discrete_inds == list(range(8))
    assert f.continuous_inds == []
    assert f.categorical_inds == []
    assert PCO16.discrete_inds == list(range(PCO16.dim))


def test_constructor_takes_botorchs_arguments_in_botorchs_order() -> None:
    own = list(inspect.signature(PCO.__init__).parameters)[1:]
    botorch = list(
        inspect.signature(ConstrainedSyntheticTestFunction.__init__).parameters
    )[1:]
    assert own[: len(botorch)] == botorch
    kinds = inspect.signature(PCO.__init__).parameters
    assert kinds["table"].kind is inspect.Parameter.KEYWORD_ONLY
    assert kinds["oom"].kind is inspect.Parameter.KEYWORD_ONLY
    doc = PCO64.__init__.__doc__
    assert doc is not None
    assert "oom" in doc
    assert "constraint_noise_std" in doc
    assert doc != ConstrainedSyntheticTestFunction.__init__.__doc__


def test_bounds_are_the_tables_or_refused(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame)
    same = PCO64(table=frame, bounds=[tuple(b) for b in f.bounds.T.tolist()])
    assert torch.equal(same.bounds, f.bounds)
    wider = [(lo - 1, hi) for lo, hi in f.bounds.T.tolist()]
    with pytest.raises(ValueError, match="Expected `bounds` to be None or the table"):
        PCO64(table=frame, bounds=wider)


@pytest.mark.parametrize("value", [-0.1, "measured", True, [0.1, 0.2], "x"])
def test_bad_constraint_noise_std_is_refused(
    frame: pd.DataFrame, value: object
) -> None:
    with pytest.raises(ValueError, match="Expected `constraint_noise_std`"):
        PCO64(table=frame, constraint_noise_std=value)  # type: ignore[arg-type]


def test_old_positional_negate_is_refused_not_misread(frame: pd.DataFrame) -> None:
    """``PCO64(None, True)`` meant ``negate=True`` before BoTorch's order."""
    with pytest.raises(ValueError, match="constraint_noise_std"):
        PCO64(None, True, table=frame)  # type: ignore[arg-type]


def test_bad_oom_is_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"Expected `oom` to be one of .*got 'zero'"):
        PCO64(table=frame, oom="zero")  # type: ignore[arg-type]


def test_problem_class_of_an_unknown_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="pco128"):
        problem_class("pco128")
    # any Instance, a user's own too, has a class bound to it
    other = dataclasses.replace(PCO64.instance, name="pco128")
    assert problem_class(other).instance is other


# -- oom="impute" -------------------------------------------------------------


def _encoded(frame: pd.DataFrame) -> pd.DataFrame:
    enc = frame.copy()
    enc["zero_stage"] = enc["zero_stage"].map({0: 0, 2: 1, 3: 2})
    return enc


def test_impute_is_the_mean_of_the_equidistant_nearest_feasible_rows() -> None:
    # One OOM row with two feasible rows at distance 1 and one at distance 2.
    configs = [
        (2, 0, 0, 0, 0, 6, 0, 0),  # OOM
        (1, 0, 0, 0, 0, 6, 0, 0),  # distance 1
        (3, 0, 0, 0, 0, 6, 0, 0),  # distance 1
        (2, 0, 0, 0, 0, 8, 0, 0),  # distance 2
    ]
    f = PCO64(table=frame_from(configs, [None, 0.1, 0.4, 0.9]), oom="impute")
    nan = PCO64(table=frame_from(configs, [None, 0.1, 0.4, 0.9]))
    X = torch.tensor([configs[0]], dtype=torch.double)
    assert f(X).item() == pytest.approx(0.25)
    assert torch.isnan(nan(X)).all()
    assert torch.equal(f.evaluate_slack_true(X), nan.evaluate_slack_true(X))
    assert not bool(f.is_feasible(X).any())


def test_impute_matches_a_brute_force_reading_of_the_rule(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame, oom="impute")
    enc = _encoded(frame)
    x = enc[list(INPUTS)].to_numpy(dtype=float)
    y = enc["throughput_mean"].to_numpy(dtype=float)
    ran = ~np.isnan(y)
    expected = y.copy()
    for i in np.flatnonzero(~ran):
        d = np.sqrt(((x[ran] - x[i]) ** 2).sum(axis=1))
        expected[i] = y[ran][np.isclose(d, d.min(), rtol=0, atol=1e-9)].mean()
    got = f(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    plain = PCO64(table=frame)
    slack = plain.evaluate_slack_true(torch.tensor(x))
    assert torch.equal(f.evaluate_slack_true(torch.tensor(x)), slack)
    assert f.optimal_value == plain.optimal_value


def test_tutorial_loop_runs_unmodified_with_impute(frame: pd.DataFrame) -> None:
    """The closed-loop style of BoTorch's tutorials: a GP on ``problem(X)``."""
    torch.manual_seed(0)
    problem = PCO64(table=frame, noise_std=0.001, oom="impute")
    X = problem.candidates()[torch.randperm(len(frame))[:8]]
    Y = problem(X).unsqueeze(-1)
    assert bool(torch.isfinite(Y).all())
    for _ in range(2):
        gp = SingleTaskGP(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        acqf = qLogNoisyExpectedImprovement(gp, X_baseline=X)
        lo, hi = problem.bounds.to(torch.int64).tolist()
        discrete_dims = {
            i: list(range(lo[i], hi[i] + 1)) for i in problem.discrete_inds
        }
        x_next, _ = optimize_acqf_mixed_alternating(
            acqf,
            bounds=problem.bounds,
            discrete_dims=discrete_dims,
            q=1,
            num_restarts=2,
            raw_samples=32,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FarSnapWarning)
            y_next = problem(x_next).unsqueeze(-1)
        assert bool(torch.isfinite(y_next).all())
        X, Y = torch.cat([X, x_next]), torch.cat([Y, y_next])


def test_mixed_optimizer_needs_only_what_the_problem_declares(
    frame: pd.DataFrame,
) -> None:
    """``discrete_dims`` from ``discrete_inds`` and the bounds; the points it
    returns are integer points BoTorch's own ``evaluate_true`` accepts."""
    problem = PCO64(table=frame)
    X = problem.candidates()[:10]
    Y = problem.evaluate_slack_true(X)
    gp = SingleTaskGP(X, Y)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    lo, hi = problem.bounds.to(torch.int64).tolist()
    discrete_dims = {i: list(range(lo[i], hi[i] + 1)) for i in problem.discrete_inds}
    cat_dims = {i: list(range(lo[i], hi[i] + 1)) for i in problem.categorical_inds}
    x_next, _ = optimize_acqf_mixed_alternating(
        qLogNoisyExpectedImprovement(gp, X_baseline=X),
        bounds=problem.bounds,
        discrete_dims=discrete_dims,
        cat_dims=cat_dims,
        q=1,
        num_restarts=2,
        raw_samples=32,
    )
    assert torch.equal(x_next, x_next.round())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FarSnapWarning)
        assert problem.evaluate_true(x_next).shape == (1,)


# -- snapping: which points are configurations, and the far-snap warning -------


def test_botorchs_evaluate_true_wants_integers_while_f_snaps(
    frame: pd.DataFrame,
) -> None:
    f = PCO64(table=frame)
    C = f.candidates()[:2]
    X = torch.where(f.bounds[1] > C, C + 0.2, C - 0.2)
    with pytest.raises(ValueError, match="integer values"):
        f.evaluate_true(X)
    torch.testing.assert_close(
        f(X, noise=False), f.evaluate_true(f.candidates()[:2]), equal_nan=True
    )


def test_is_configuration(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame)
    C = f.candidates()
    assert f.is_configuration(C).all()
    assert f.is_configuration(C.float().reshape(2, -1, 8)).shape == (2, len(C) // 2)
    shifted = torch.where(C[:3] < f.bounds[1], C[:3] + 0.25, C[:3] - 0.25)
    assert not f.is_configuration(shifted).any()
    lo, hi = f.bounds.to(torch.int64).tolist()
    lattice = torch.cartesian_prod(
        *[
            torch.arange(a, b + 1, dtype=torch.double)
            for a, b in zip(lo, hi, strict=True)
        ]
    )
    rows = {tuple(r) for r in C.tolist()}
    expected = torch.tensor([tuple(p) in rows for p in lattice.tolist()])
    assert torch.equal(f.is_configuration(lattice), expected)
    with pytest.raises(ValueError, match=r"X\[0, 2\].*log2_pp_size"):
        f.is_configuration(torch.cat([C[:1, :2], C[:1, 2:] + 99], dim=-1))


def test_a_far_snap_warns_once_at_the_callers_line() -> None:
    configs = [(1, 0, 0, 0, 0, 6, 0, 0), (5, 2, 2, 2, 2, 9, 2, 2)]
    f = PCO64(table=frame_from(configs, [0.1, 0.2]))
    near = torch.tensor([[2.0, 0, 0, 0, 0, 6, 0, 0]])  # one step from row 0
    rounds_to_row = torch.tensor([configs[0]], dtype=torch.float) + 0.45
    far = torch.tensor([[1.0, 0, 0, 0, 0, 6, 1, 1]])  # sqrt(2) from row 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", FarSnapWarning)
        f(near)
        f(rounds_to_row)  # 1.27 from row 0, but its integer point is row 0
        f.lookup(far)  # lookup is silent
    with pytest.warns(FarSnapWarning, match="1.41 lattice steps") as record:
        f(far)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", FarSnapWarning)
        f(far)  # once per problem
        f.evaluate_true(far)
    other = PCO64(table=frame_from(configs, [0.1, 0.2]))
    with pytest.warns(FarSnapWarning) as record:
        other.evaluate_slack_true(far)
    assert record[0].filename == __file__
