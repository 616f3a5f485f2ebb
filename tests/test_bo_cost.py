"""Cost-aware proposals (bolt_pco64.bo.cost) on the small synthetic table."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from botorch.models import SingleTaskGP

from bolt_pco64 import PCO64
from bolt_pco64.bo import ProposalContext, fit_constrained_models, propose_acquisition
from bolt_pco64.bo.cost import (
    cooling_exponent,
    cost_aware_scores,
    crash_cost_estimate,
    expected_cost,
    fit_cost_model,
    propose_cost_aware,
)
from tests import _fixtures
from tests._fixtures import observed

problem = _fixtures.problem


ROWS = torch.arange(0, 72, 4)


def _cost_model(
    problem: PCO64,
    X: torch.Tensor,
    y: torch.Tensor,
    expensive: torch.Tensor | None = None,
) -> SingleTaskGP:
    """A cost model of the observed runs: 100 s, except around ``expensive``
    (by distance)."""
    ok = ~torch.isnan(y)
    cost = torch.full((int(ok.sum()),), 100.0, dtype=torch.double)
    if expensive is not None:
        d = (X[ok] - expensive).norm(dim=-1)
        cost = cost + 5000.0 * torch.exp(-(d**2))
    return fit_cost_model(X[ok], cost, problem.bounds, seed=0)


@pytest.fixture(scope="module")
def setup(problem: PCO64) -> tuple:
    """Every fourth row observed, the constrained models and a flat cost model
    fitted on them, and the untried rows (fitted once for the module)."""
    X, y, margin = observed(problem, ROWS)
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    tried = torch.zeros(len(problem.table), dtype=torch.bool)
    tried[ROWS] = True
    choices = problem.candidates()[~tried]
    return X, y, models, _cost_model(problem, X, y), choices


def test_cooling_exponent_goes_from_one_to_zero() -> None:
    assert cooling_exponent(0.1, 0.1) == 1.0
    assert cooling_exponent(0.55, 0.1) == pytest.approx(0.5)
    assert cooling_exponent(1.0, 0.1) == 0.0
    assert cooling_exponent(0.0) == 1.0
    with pytest.raises(ValueError, match="spent_fraction"):
        cooling_exponent(1.5)
    with pytest.raises(ValueError, match="init_fraction"):
        cooling_exponent(0.5, 1.0)


def test_crash_cost_estimate() -> None:
    cost = torch.tensor([10.0, 3.0, 5.0, 20.0], dtype=torch.double)
    feasible = torch.tensor([True, False, False, True])
    assert crash_cost_estimate(cost, feasible) == 4.0
    assert crash_cost_estimate(cost[[0, 3]], feasible[[0, 3]]) == 10.0
    with pytest.raises(ValueError, match="observed cost"):
        crash_cost_estimate(cost[:0], feasible[:0])


def test_expected_cost_lies_between_a_crash_and_a_run(setup: tuple) -> None:
    _, _, models, cost_model, choices = setup
    cheap = expected_cost(models, cost_model, choices, crash_cost=1.0)
    dear = expected_cost(models, cost_model, choices, crash_cost=1e4)
    with torch.no_grad():
        run = cost_model.posterior(choices).mean.reshape(-1).exp()
    assert (cheap <= run + 1e-9).all()
    assert (dear >= run - 1e-9).all()
    # The crash cost weighs most where a crash is most likely.
    assert (dear - cheap).argmax() != (dear - cheap).argmin()
    with pytest.raises(ValueError, match="crash_cost"):
        expected_cost(models, cost_model, choices, crash_cost=0.0)


def test_eipu_avoids_an_expensive_region_that_qlognei_picks(
    problem: PCO64, setup: tuple
) -> None:
    X, y, models, _, choices = setup
    ctx = ProposalContext(X, y, problem.bounds, 1, 0, choices)
    plain = int(propose_acquisition("qlognei", models, ctx)[0])
    cost_model = _cost_model(problem, X, y, expensive=choices[plain])
    pick = int(propose_cost_aware(models, cost_model, ctx, crash_cost=50.0)[0])
    assert pick != plain
    # Cooled down to exponent 0 (budget spent), it is qLogNEI again.
    exponent = cooling_exponent(spent_fraction=1.0)
    cooled = propose_cost_aware(models, cost_model, ctx, 50.0, exponent)
    assert int(cooled[0]) == plain


def test_pending_points_lower_their_own_score_and_q_picks_are_distinct(
    problem: PCO64, setup: tuple
) -> None:
    X, y, models, cost_model, choices = setup
    ctx = ProposalContext(X, y, problem.bounds, 3, 0, choices)
    scores = cost_aware_scores(models, cost_model, ctx, 50.0)
    top = int(scores.argmax())
    pending = replace(ctx, X_pending=choices[top : top + 1])
    again = cost_aware_scores(models, cost_model, pending, 50.0)
    assert float(again[top]) < float(scores[top])
    picks = propose_cost_aware(models, cost_model, ctx, crash_cost=50.0)
    assert picks.shape == (3,)
    assert len(set(picks.tolist())) == 3
    assert int(picks[0]) == top


def test_without_a_feasible_run_it_falls_back_to_feasibility(problem: PCO64) -> None:
    oom = torch.nonzero(~problem.table.feasible).squeeze(-1)[:4]
    X, y, margin = observed(problem, oom)
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    choices = problem.candidates()[:10]
    ctx = ProposalContext(X, y, problem.bounds, 1, 0, choices)
    pick = propose_cost_aware(models, None, ctx, crash_cost=1.0)
    expected = propose_acquisition("pof", models, ctx)
    assert pick.tolist() == expected.tolist()


def test_fit_cost_model_refuses_bad_costs(problem: PCO64) -> None:
    X = problem.candidates()[:3]
    with pytest.raises(ValueError, match="costs"):
        fit_cost_model(
            X, torch.tensor([1.0, 0.0, 2.0], dtype=torch.double), problem.bounds, 0
        )
