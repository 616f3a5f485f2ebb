"""Box and mixed-integer proposals of :mod:`bolt_pco64.bo.box` on a small table."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition.logei import qLogProbabilityOfFeasibility

from bolt_pco64 import PCO64
from bolt_pco64.bo.box import (
    BoxDefaults,
    integer_values,
    propose_box,
    propose_mixed,
)
from bolt_pco64.bo.gp import (
    ConstrainedModels,
    ProposalContext,
    acquisition_function,
    fit_constrained_models,
)
from tests import _fixtures

# Small budgets keep the tests fast; the behaviour tested does not depend on them.
FAST = BoxDefaults(num_restarts=2, raw_samples=16, maxiter=5, mc_samples=16)
PROPOSE = {"box": propose_box, "mixed": propose_mixed}


problem = _fixtures.problem


def _fit(
    problem: PCO64, rows: torch.Tensor
) -> tuple[ConstrainedModels, torch.Tensor, torch.Tensor]:
    X = problem.candidates()[rows]
    y = problem.evaluate_true(X)
    margin = problem.outcome_constraint(X)
    return fit_constrained_models(X, y, margin, problem.bounds, seed=0), X, y


@pytest.fixture(scope="module")
def fitted(problem: PCO64) -> tuple[ConstrainedModels, torch.Tensor, torch.Tensor]:
    return _fit(problem, torch.arange(0, 72, 4))


def test_integer_values_is_the_structure_the_problem_declares(problem: PCO64) -> None:
    """``propose_mixed``'s ``discrete_dims`` are what a BoTorch user derives
    from the problem: every ``discrete_inds`` input, its integer range."""
    dims = integer_values(problem.bounds)
    assert sorted(dims) == problem.discrete_inds
    assert problem.continuous_inds == problem.categorical_inds == []
    lo, hi = problem.bounds.to(torch.int64).tolist()
    for i in problem.discrete_inds:
        assert dims[i] == [float(v) for v in range(lo[i], hi[i] + 1)]


def test_integer_values_lists_each_bound_range() -> None:
    bounds = torch.tensor([[1.0, 0.0, 6.0], [3.0, 0.0, 7.0]])
    assert integer_values(bounds) == {
        0: [1.0, 2.0, 3.0],
        1: [0.0],
        2: [6.0, 7.0],
    }
    with pytest.raises(ValueError, match="integer-valued bounds"):
        integer_values(torch.tensor([[0.0, 0.5], [1.0, 2.0]]))


@pytest.mark.parametrize("name", ["box", "mixed"])
@pytest.mark.parametrize("q", [1, 3])
def test_points_have_shape_q_x_d_and_lie_in_the_bounds(
    problem: PCO64, fitted: tuple, name: str, q: int
) -> None:
    models, X, y = fitted
    points = PROPOSE[name](models, ProposalContext(X, y, problem.bounds, q, 3), FAST)
    assert points.shape == (q, problem.dim)
    assert points.dtype == X.dtype
    assert bool((points >= problem.bounds[0]).all())
    assert bool((points <= problem.bounds[1]).all())
    # They snap (the problem accepts them without error).
    assert problem.lookup(points).shape == (q,)


def test_mixed_points_are_integer_vectors(problem: PCO64, fitted: tuple) -> None:
    models, X, y = fitted
    points = propose_mixed(models, ProposalContext(X, y, problem.bounds, 3, 1), FAST)
    assert torch.equal(points, points.round())


@pytest.fixture(scope="module")
def by_seed(problem: PCO64, fitted: tuple) -> dict[str, list[torch.Tensor]]:
    """One point (``q = 1``) per seed 0, 1, 2 from each proposal."""
    models, X, y = fitted
    return {
        name: [
            fn(models, ProposalContext(X, y, problem.bounds, 1, s), FAST)
            for s in range(3)
        ]
        for name, fn in PROPOSE.items()
    }


def test_box_points_use_the_continuous_box(by_seed: dict) -> None:
    # Some coordinate of some point is off the integer lattice (a continuous
    # optimiser that only returned lattice points would be suspect).
    points = torch.cat(by_seed["box"])
    assert not torch.equal(points, points.round())


@pytest.mark.parametrize("name", ["box", "mixed"])
def test_same_seed_gives_bit_identical_points(
    problem: PCO64, fitted: tuple, by_seed: dict, name: str
) -> None:
    models, X, y = fitted
    state = torch.get_rng_state()
    a = PROPOSE[name](models, ProposalContext(X, y, problem.bounds, 1, 2), FAST)
    # The global generator is left as it was.
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a, by_seed[name][2])
    if name == "mixed":  # q > 1: the sequential picks with pending points
        torch.manual_seed(12345)  # whatever the global generator holds
        b = propose_mixed(models, ProposalContext(X, y, problem.bounds, 2, 7), FAST)
        c = propose_mixed(models, ProposalContext(X, y, problem.bounds, 2, 7), FAST)
        assert torch.equal(b, c)


@pytest.mark.parametrize("name", ["box", "mixed"])
def test_before_any_feasible_point_it_maximises_probability_of_feasibility(
    problem: PCO64, name: str
) -> None:
    oom = torch.nonzero(~problem.table.feasible).squeeze(-1)[:4]
    models, X, y = _fit(problem, oom)
    assert models.objective is None
    acqf = acquisition_function("qlognei", models, X, y, seed=0)
    assert isinstance(acqf, qLogProbabilityOfFeasibility)
    point = PROPOSE[name](models, ProposalContext(X, y, problem.bounds, 1, 0), FAST)
    with torch.no_grad():
        chosen = float(acqf(point.unsqueeze(0)))
        at_oom = acqf(X.unsqueeze(-2))
    # The optimiser found a point likelier to be feasible than the crashes seen.
    assert chosen > float(at_oom.max())


def test_mixed_point_is_a_local_optimum_over_one_step_integer_moves(
    problem: PCO64, fitted: tuple
) -> None:
    # The same acquisition function as inside propose_mixed (same seed, same
    # MC samples), evaluated at the point and its one-step lattice neighbours.
    models, X, y = fitted
    acqf = acquisition_function("qlognei", models, X, y, seed=0, mc_samples=16)
    point = propose_mixed(models, ProposalContext(X, y, problem.bounds, 1, 0), FAST)
    with torch.no_grad():
        value = float(acqf(point.unsqueeze(0)))
        d = problem.dim
        steps = torch.cat([torch.eye(d), -torch.eye(d)]).to(point)
        nbrs = (point + steps).clamp(problem.bounds[0], problem.bounds[1])
        nbr_values = acqf(nbrs.unsqueeze(-2))
    assert value >= float(nbr_values.max()) - 1e-9


@pytest.mark.parametrize("name", ["box", "mixed"])
def test_bad_input_is_refused_with_a_clear_error(
    problem: PCO64, fitted: tuple, name: str
) -> None:
    models, X, y = fitted
    fn = PROPOSE[name]
    with pytest.raises(ValueError, match="q to be an integer >= 1"):
        fn(models, ProposalContext(X, y, problem.bounds, 0, 0), FAST)
    with pytest.raises(ValueError, match="X_observed of shape"):
        fn(models, ProposalContext(X[:, :3], y, problem.bounds, 1, 0), FAST)
    with pytest.raises(ValueError, match="y of shape"):
        fn(models, ProposalContext(X, y[:-1], problem.bounds, 1, 0), FAST)
    with pytest.raises(ValueError, match="bounds of shape 2 x d"):
        fn(models, ProposalContext(X, y, problem.bounds[0], 1, 0), FAST)
