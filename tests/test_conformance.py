"""BoTorch conformance of the problems: one class, input types, constructor,
``oom=``, one snap on every evaluation path, :meth:`PCO.is_configuration` and
the snap counts."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

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

from bolt_pco64 import PCO, PCO16, PCO32, PCO64, problem_class
from bolt_pco64.problem import SnapCounts
from tests._tables import frame_from, small_frame

INPUTS = PCO64.instance.input_columns


@pytest.fixture
def frame() -> pd.DataFrame:
    return small_frame(seed=11, n=60, oom_share=0.4)


def test_problems_are_one_botorch_class_the_named_ones_fix_the_instance(
    frame: pd.DataFrame,
) -> None:
    assert issubclass(PCO, ConstrainedSyntheticTestFunction)
    for cls in (PCO16, PCO32, PCO64):
        assert cls.__bases__ == (PCO,)
        own = {k for k in vars(cls) if not k.startswith(("__", "_abc"))}
        stated = {"dim", "_bounds", "_optimal_value", "_optimizers"}
        assert own == {"instance", *stated}, f"{cls.__name__} defines {own}"
    f = PCO(instance="pco64", table=frame)
    g = PCO64(table=frame)
    assert type(f) is PCO
    assert isinstance(g, PCO)
    assert not isinstance(f, PCO64)
    assert f.instance is g.instance is PCO64.instance
    C = f.candidates()
    assert torch.equal(f(C).isnan(), g(C).isnan())
    for problem in (f, g):
        again = pickle.loads(pickle.dumps(problem))  # by reference: plain classes
        assert type(again) is type(problem)
        torch.testing.assert_close(again(C), problem(C), equal_nan=True)


def test_pco_needs_an_instance_and_a_named_class_refuses_another(
    frame: pd.DataFrame,
) -> None:
    with pytest.raises(TypeError, match="Expected `instance`"):
        PCO(table=frame)
    with pytest.raises(ValueError, match="Expected `instance` to be None or pco64"):
        PCO64(instance="pco16", table=frame)
    assert PCO64(instance="pco64", table=frame).instance is PCO64.instance


def test_every_input_is_declared_discrete(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame)
    assert f.discrete_inds == list(range(8))
    assert f.continuous_inds == []
    assert f.categorical_inds == []
    g = PCO16(table=small_frame(seed=3, instance="pco16"))
    assert g.discrete_inds == list(range(PCO16.instance.dim))
    assert g.discrete_inds is not f.discrete_inds  # no list shared between problems


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
    # any Instance, a user's own too, is served: by PCO itself
    other = dataclasses.replace(PCO64.instance, name="pco128")
    assert problem_class(other) is PCO
    assert problem_class(dataclasses.replace(other, name="pco64")) is PCO64


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


@pytest.mark.slow
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
        x_next, _ = optimize_acqf_mixed_alternating(
            acqf,
            bounds=problem.bounds,
            discrete_dims=problem.discrete_dims,
            q=1,
            num_restarts=2,
            raw_samples=32,
        )
        y_next = problem(x_next).unsqueeze(-1)
        assert bool(torch.isfinite(y_next).all())
        X, Y = torch.cat([X, x_next]), torch.cat([Y, y_next])


def test_mixed_optimizer_takes_the_problems_grid(frame: pd.DataFrame) -> None:
    """``discrete_dims``, ``inequality_constraints`` and ``project`` go to
    BoTorch's mixed optimizer as they are; it proposes a configuration."""
    problem = PCO64(table=frame)
    X = problem.candidates()[:10]
    Y = problem.evaluate_slack_true(X)
    gp = SingleTaskGP(X, Y)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    x_next, _ = optimize_acqf_mixed_alternating(
        qLogNoisyExpectedImprovement(gp, X_baseline=X),
        bounds=problem.bounds,
        discrete_dims=problem.discrete_dims,
        inequality_constraints=problem.inequality_constraints,
        post_processing_func=problem.project,
        q=1,
        num_restarts=2,
        raw_samples=32,
        # Two rounds of discrete and continuous steps (64 by default): what
        # is checked is that the problem's grid goes in and a point of it
        # comes out, not how well it is optimised.
        options={"maxiter_alternating": 2},
    )
    assert bool(problem.is_configuration(x_next).all())


# -- one snap on every path ------------------------------------------------------


def test_evaluate_true_snaps_any_real_point_as_forward_does(
    frame: pd.DataFrame,
) -> None:
    f = PCO64(table=frame, noise_std=0.5, negate=True)
    lo, hi = f.bounds
    gen = torch.Generator().manual_seed(0)
    X = lo + (hi - lo) * torch.rand(50, 8, dtype=torch.double, generator=gen)
    torch.testing.assert_close(
        f.forward(X, noise=False), -f.evaluate_true(X), equal_nan=True
    )
    C = f.candidates()[f.lookup(X)]
    torch.testing.assert_close(f.evaluate_true(X), f.evaluate_true(C), equal_nan=True)
    torch.testing.assert_close(f.evaluate_slack_true(X), f.evaluate_slack_true(C))
    assert torch.equal(f.is_feasible(X, noise=False), f.is_feasible(C))


def test_an_evaluation_looks_its_rows_up_once(
    frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = PCO64(table=frame)
    calls: list[int] = []
    snapper = type(f.outcome_constraint.snapper)
    nearest = snapper.nearest

    def counted(self, X):  # type: ignore[no-untyped-def]
        calls.append(X.shape[0])
        return nearest(self, X)

    monkeypatch.setattr(snapper, "nearest", counted)
    C = f.candidates()[:7]
    X = torch.where(f.bounds[1] > C, C + 0.1, C - 0.1)
    f(X)
    f.evaluate_true(X)
    f.evaluate_slack(X)
    assert calls == [7, 7, 7]


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


def test_snap_counts_count_every_evaluated_point() -> None:
    configs = [(1, 0, 0, 0, 0, 6, 0, 0), (5, 2, 2, 2, 2, 9, 2, 2)]
    f = PCO64(table=frame_from(configs, [0.1, 0.2]))
    row = torch.tensor([configs[0]], dtype=torch.double)
    near = torch.tensor([[2.0, 0, 0, 0, 0, 6, 0, 0]])  # one step from row 0
    rounds_to_row = row + 0.45  # 1.27 from row 0, but its lattice point is row 0
    far = torch.tensor([[1.0, 0, 0, 0, 0, 6, 1, 1]])  # sqrt(2) from row 0
    f(row)
    f(torch.cat([near, rounds_to_row.float()]))
    assert f.snap_counts == SnapCounts(points=3, moved=2, far=0)
    f.lookup(far)  # lookups, projections and constraints are not counted...
    f.project(far)
    f.is_feasible(far)
    f.outcome_constraint(far)
    assert f.snap_counts == SnapCounts(points=3, moved=2, far=0)
    for _ in range(3):  # counted every time, not once
        f(far)
    f.evaluate_true(far.expand(2, 8))
    assert f.snap_counts == SnapCounts(points=8, moved=7, far=5)
    assert str(f.snap_counts).startswith(
        "8 points evaluated: 7 snapped to another configuration, 5 of them far"
    )
    f.lookup(far, count=True)  # ... unless asked
    assert f.snap_counts == SnapCounts(points=9, moved=8, far=6)
    f.snap_counts.reset()
    assert f.snap_counts == SnapCounts()
