"""The BO building blocks of :mod:`bolt_pco64.bo` on small synthetic tables."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import qLogExpectedImprovement, qLogNoisyExpectedImprovement
from botorch.acquisition.logei import qLogProbabilityOfFeasibility

from bolt_pco64 import PCO64
from bolt_pco64.bo import (
    ProposalContext,
    acquisition_function,
    fit_constrained_models,
    fit_gp,
    propose_acquisition,
    propose_thompson,
    safe_bounds,
)
from tests import _fixtures
from tests._fixtures import observed

problem = _fixtures.problem


def test_objective_model_uses_feasible_rows_only(problem: PCO64) -> None:
    rows = torch.arange(0, 72, 3)
    X, y, margin = observed(problem, rows)
    assert torch.isnan(y).any()
    assert (~torch.isnan(y)).any()
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    assert models.objective is not None
    assert models.objective.train_inputs[0].shape[0] == int((~torch.isnan(y)).sum())
    assert models.constraint.train_inputs[0].shape[0] == rows.numel()


def test_no_feasible_observation_falls_back_to_probability_of_feasibility(
    problem: PCO64,
) -> None:
    oom = torch.nonzero(~problem.table.feasible).squeeze(-1)[:4]
    X, y, margin = observed(problem, oom)
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    assert models.objective is None
    for kind in ("qlognei", "qlogei", "pof"):
        acqf = acquisition_function(kind, models, X, y, seed=0)
        assert isinstance(acqf, qLogProbabilityOfFeasibility)
    untried = torch.ones(len(problem.table), dtype=torch.bool)
    untried[oom] = False
    choices = problem.candidates()[untried]
    ctx = ProposalContext(X, y, problem.bounds, 1, 0, choices)
    pick = propose_acquisition("qlognei", models, ctx)
    # The pick maximises the probability of feasibility over the choices.
    post = models.constraint.posterior(choices)
    pof = torch.distributions.Normal(0.0, 1.0).cdf(-post.mean / post.variance.sqrt())
    assert pof.squeeze(-1)[pick].item() == pytest.approx(pof.max().item(), rel=1e-3)


def test_constrained_acquisitions_are_the_botorch_ones(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 72, 4))
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    nei = acquisition_function("qlognei", models, X, y, seed=0)
    ei = acquisition_function("qlogei", models, X, y, seed=0)
    assert isinstance(nei, qLogNoisyExpectedImprovement)
    assert isinstance(ei, qLogExpectedImprovement)
    assert len(nei._constraints) == 1
    assert len(ei._constraints) == 1
    assert ei.best_f.item() == pytest.approx(y[~torch.isnan(y)].max().item())
    with pytest.raises(ValueError, match="Expected kind"):
        acquisition_function("ucb", models, X, y, seed=0)  # type: ignore[arg-type]


def test_constraint_keeps_thompson_sampling_off_oom_rows(problem: PCO64) -> None:
    # With every row observed, both GPs interpolate the table: the objective
    # GP (fitted on feasible rows) extrapolates *above* the optimum into the
    # OOM region, so only the constraint keeps TS on the best feasible row.
    rows = torch.arange(len(problem.table))
    X, y, margin = observed(problem, rows)
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    mean = models.objective.posterior(X).mean.squeeze(-1)
    assert not bool(problem.table.feasible[int(mean.argmax())])
    picks = {
        int(propose_thompson(models, X, 1, torch.Generator().manual_seed(s)))
        for s in range(5)
    }
    assert picks == {problem.table.best_row}


def test_thompson_batch_is_distinct_and_seeded(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 72, 5))
    models = fit_constrained_models(X, y, margin, problem.bounds, seed=0)
    choices = problem.candidates()
    a = propose_thompson(models, choices, 4, torch.Generator().manual_seed(3))
    b = propose_thompson(models, choices, 4, torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert len(set(a.tolist())) == 4
    with pytest.raises(ValueError, match=r"Expected q to be an integer in \[1, "):
        propose_thompson(models, choices, 0, torch.Generator())


def test_fits_and_proposals_are_deterministic_and_leave_global_rng_alone(
    problem: PCO64,
) -> None:
    X, y, margin = observed(problem, torch.arange(1, 72, 4))
    choices = problem.candidates()
    torch.manual_seed(123)
    before = torch.get_rng_state()
    picks = []
    for _ in range(2):
        models = fit_constrained_models(X, y, margin, problem.bounds, seed=7)
        ctx = ProposalContext(X, y, problem.bounds, 2, 7, choices)
        picks.append(propose_acquisition("qlognei", models, ctx))
        assert torch.equal(torch.get_rng_state(), before)
    assert torch.equal(picks[0], picks[1])
    a = fit_gp(X, margin, problem.bounds, seed=1).state_dict()
    b = fit_gp(X, margin, problem.bounds, seed=1).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_bad_inputs_are_refused(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 10))
    with pytest.raises(ValueError, match="Expected finite"):
        fit_gp(X, y.clone().fill_(float("nan")), problem.bounds, seed=0)
    with pytest.raises(ValueError, match="Expected Y of shape"):
        fit_gp(X, margin[:3], problem.bounds, seed=0)
    with pytest.raises(ValueError, match="Expected bounds of shape"):
        safe_bounds(torch.zeros(3, 8))
    widened = safe_bounds(problem.bounds)
    assert (widened[1] > widened[0]).all()


def test_optimize_false_conditions_without_refitting(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 72, 3))
    first = fit_constrained_models(X[:12], y[:12], margin[:12], problem.bounds, seed=0)
    kept = fit_constrained_models(
        X, y, margin, problem.bounds, seed=0, warm_start=first, optimize=False
    )
    refit = fit_constrained_models(
        X, y, margin, problem.bounds, seed=0, warm_start=first
    )
    ls = [m.constraint.covar_module.lengthscale for m in (first, kept, refit)]
    assert torch.equal(ls[1], ls[0])
    assert not torch.equal(ls[2], ls[0])
    assert kept.constraint.train_inputs[0].shape[0] == X.shape[0]


def test_a_proposal_context_names_what_a_proposal_lacks(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 10))
    ctx = ProposalContext(X, y, problem.bounds, q=2, seed=0)
    with pytest.raises(ValueError, match="Expected `choices` for a discrete proposal"):
        ctx.need_choices()
    with pytest.raises(ValueError, match="Expected the observed `margin`"):
        ctx.need_margin()
    with pytest.raises(ValueError, match="Expected margin of shape"):
        ProposalContext(X, y, problem.bounds, margin=margin[:3]).need_margin()
    choices = problem.candidates()[10:20]
    with_choices = ProposalContext(X, y, problem.bounds, 11, 0, choices)
    with pytest.raises(ValueError, match=r"Expected q to be an integer in \[1, 10\]"):
        with_choices.need_choices()
    assert ProposalContext(X, y, problem.bounds, X_pending=X[:0]).pending is None
    assert torch.equal(
        ProposalContext(X, y, problem.bounds, X_pending=X[:2]).pending, X[:2]
    )
