"""The crash-aware methods of :mod:`bolt_pco64.bo.crash` on a small synthetic table."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import replace

import pandas as pd
import pytest
import torch
from botorch.exceptions.warnings import InputDataWarning, UserInputWarning
from botorch.models.transforms.input import Normalize
from botorch.optim.closures import get_loss_closure_with_grads
from botorch.optim.utils import get_parameters
from gpytorch.mlls import VariationalELBO

import bolt_pco64.bo.feasibility as feasibility
from bolt_pco64 import PCO64
from bolt_pco64.bo import (
    CrashAwareState,
    CrashDefaults,
    ProposalContext,
    dirichlet_targets,
    fit_censored_margin,
    fit_feasibility_classifier,
    fit_gp,
    log_prob_feasible,
    propose_censored_logei,
    propose_classifier_logei,
    propose_pof_threshold,
    recommend,
)
from bolt_pco64.bo.elbo import elbo_closure, whitened_elbo
from bolt_pco64.bo.feasibility import CensoredGaussianLikelihood, CensoredMarginGP
from tests import _fixtures
from tests._fixtures import observed
from tests._synth import make_table

problem = _fixtures.problem


Proposer = Callable[..., torch.Tensor]


def _proposers(problem: PCO64) -> dict[str, Proposer]:
    def censored(ctx: ProposalContext, state: CrashAwareState) -> torch.Tensor:
        margin = problem.outcome_constraint(ctx.X)
        return propose_censored_logei(replace(ctx, margin=margin), state)

    return {
        "classifier": propose_classifier_logei,
        "censored": censored,
        "threshold": propose_pof_threshold,
    }


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("classifier", marks=pytest.mark.slow),
        pytest.param("censored", marks=pytest.mark.slow),
        pytest.param("threshold", marks=pytest.mark.slow),
    ],
)
def test_a_loop_proposes_untried_valid_rows_and_is_seeded(
    problem: PCO64, name: str
) -> None:
    propose = _proposers(problem)[name]
    cand = problem.candidates()
    n = cand.shape[0]

    def loop(seed: int) -> list[int]:
        rows = list(range(0, n, 9))  # 8 rows, feasible and OOM
        state = CrashAwareState()
        for step in range(4):
            tried = torch.zeros(n, dtype=torch.bool)
            tried[rows] = True
            untried = torch.nonzero(~tried).squeeze(-1)
            X, y, _ = observed(problem, torch.tensor(rows))
            q = 1 if step < 2 else 3
            ctx = ProposalContext(X, y, problem.bounds, q, seed + step, cand[untried])
            idx = propose(ctx, state)
            assert idx.dtype == torch.long
            assert idx.shape == (q,)
            assert len(set(idx.tolist())) == q
            assert int(idx.min()) >= 0
            assert int(idx.max()) < untried.numel()
            rows += untried[idx].tolist()
        assert state.steps == 4
        assert state.crash_model is not None
        return rows

    torch.manual_seed(5)
    before = torch.get_rng_state()
    a = loop(0)
    assert torch.equal(torch.get_rng_state(), before)
    assert len(set(a)) == len(a) == 8 + 2 + 3 + 3
    assert loop(0) == a


def test_classifier_ranks_feasible_rows_above_oom_rows(problem: PCO64) -> None:
    rows = torch.arange(0, 72, 3)
    X, y, _ = observed(problem, rows)
    feasible = ~torch.isnan(y)
    assert feasible.any()
    assert not feasible.all()
    model = fit_feasibility_classifier(X, feasible, problem.bounds, seed=0)
    rest = torch.ones(72, dtype=torch.bool)
    rest[rows] = False
    p = log_prob_feasible(model, problem.candidates()[rest]).exp()
    truth = problem.table.feasible[rest]
    assert p[truth].mean() > p[~truth].mean() + 0.2
    assert ((p > 0) & (p < 1)).all()


@pytest.mark.slow
def test_censored_margin_reads_crashes_as_above_zero_whatever_the_pad(
    problem: PCO64,
) -> None:
    rows = torch.arange(0, 72, 3)
    X, y, margin = observed(problem, rows)
    feasible = ~torch.isnan(y)
    a = fit_censored_margin(X, margin, feasible, problem.bounds, seed=0)
    padded = torch.where(feasible, margin, torch.full_like(margin, 1e6))
    b = fit_censored_margin(X, padded, feasible, problem.bounds, seed=0)
    pa, pb = (log_prob_feasible(m, X).exp() for m in (a, b))
    assert torch.equal(pa, pb)  # the pad is never read
    assert pa[feasible].min() > pa[~feasible].max()


def test_dirichlet_targets_work_with_one_class() -> None:
    for flags in ([True, True], [False, False, False], [True, False]):
        f = torch.tensor(flags)
        Y, Yvar = dirichlet_targets(f)
        assert Y.shape == Yvar.shape == (len(flags), 2)
        assert (Yvar > 0).all()
        # The observed class gets the larger target.
        assert torch.equal(Y[:, 1] > Y[:, 0], f)
    with pytest.raises(ValueError, match="alpha_epsilon"):
        dirichlet_targets(torch.tensor([True]), alpha_epsilon=1.5)


def test_without_a_feasible_observation_the_pick_maximises_feasibility(
    problem: PCO64,
) -> None:
    oom = torch.nonzero(~problem.table.feasible).squeeze(-1)[:5]
    X, y, _ = observed(problem, oom)
    rest = torch.ones(72, dtype=torch.bool)
    rest[oom] = False
    choices = problem.candidates()[rest]
    state = CrashAwareState()
    pick = propose_classifier_logei(
        ProposalContext(X, y, problem.bounds, 1, 0, choices), state
    )
    assert state.objective is None
    lp = log_prob_feasible(state.crash_model, choices)
    # The method scored the choices in its own call: equal up to rounding.
    assert lp[pick].item() == pytest.approx(lp.max().item(), rel=1e-9, abs=1e-12)


def test_threshold_picks_only_candidates_that_reach_it(problem: PCO64) -> None:
    rows = torch.arange(1, 72, 4)
    X, y, _ = observed(problem, rows)
    rest = torch.ones(72, dtype=torch.bool)
    rest[rows] = False
    choices = problem.candidates()[rest]
    fitted = CrashAwareState()
    propose_pof_threshold(ProposalContext(X, y, problem.bounds, 1, 0, choices), fitted)
    for thr in (0.5, 0.8, 0.95):
        # steps=1: the models are only conditioned, not refitted.
        state = CrashAwareState(fitted.objective, fitted.crash_model, steps=1)
        picks = propose_pof_threshold(
            ProposalContext(X, y, problem.bounds, 2, 0, choices), state, thr
        )
        lp = log_prob_feasible(state.crash_model, choices)
        ok = int((lp >= math.log(thr)).sum())
        if ok >= 2:
            assert (lp[picks] >= math.log(thr)).all()
        else:  # nothing (or too little) reaches it: the most probably feasible
            top = lp.max().item()
            assert lp[picks].max().item() == pytest.approx(top, rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="threshold to be a number in"):
        propose_pof_threshold(
            ProposalContext(X, y, problem.bounds, 1, 0, choices), threshold=1.0
        )


def test_recommend_is_the_best_posterior_mean_among_feasible_runs(
    problem: PCO64,
) -> None:
    rows = torch.arange(0, 72, 3)
    X, y, _ = observed(problem, rows)
    feasible = ~torch.isnan(y)
    model = fit_gp(X[feasible], y[feasible], problem.bounds, seed=0)
    i = recommend(model, X, y)
    assert i is not None
    assert bool(feasible[i])
    # One posterior over all feasible rows: recommend's choice is its maximum.
    # Means of the same rows in batches of other shapes differ in the last
    # bits (BLAS kernels), so the recommended row's mean alone is compared
    # with a tolerance.
    mean = model.posterior(X[feasible]).mean.squeeze(-1)
    position = int(feasible[:i].sum())
    assert mean[position].item() == pytest.approx(mean.max().item(), rel=1e-9)
    alone = model.posterior(X[i : i + 1]).mean.item()
    assert alone == pytest.approx(mean.max().item(), rel=1e-9)
    best = recommend(None, X, y)
    assert y[best].item() == y[feasible].max().item()
    assert recommend(None, X, torch.full_like(y, math.nan)) is None


@pytest.mark.slow
def test_refit_schedule_keeps_hyperparameters_between_refits(problem: PCO64) -> None:
    X, y, _ = observed(problem, torch.arange(0, 72, 3))
    choices = problem.candidates()[torch.arange(1, 72, 3)]
    state = CrashAwareState()
    d = CrashDefaults(refit_every=3)
    lengthscales = []
    for step in range(4):
        n = 12 + step
        propose_classifier_logei(
            ProposalContext(X[:n], y[:n], problem.bounds, 1, 0, choices),
            state,
            defaults=d,
        )
        ls = state.crash_model.covar_module.lengthscale.detach().clone()
        lengthscales.append(ls)
    assert torch.equal(lengthscales[1], lengthscales[0])
    assert torch.equal(lengthscales[2], lengthscales[0])
    assert not torch.equal(lengthscales[3], lengthscales[0])  # refit at step 3


def test_bad_inputs_are_refused(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 10))
    choices = problem.candidates()[10:20]
    b = problem.bounds
    with pytest.raises(ValueError, match=r"Expected q to be an integer in \[1, "):
        propose_classifier_logei(ProposalContext(X, y, b, 11, 0, choices))
    with pytest.raises(ValueError, match="Expected choices of shape"):
        propose_classifier_logei(ProposalContext(X, y, b, 1, 0, choices[:, :3]))
    with pytest.raises(ValueError, match="Expected y of shape"):
        propose_classifier_logei(ProposalContext(X, y[:4], b, 1, 0, choices))
    with pytest.raises(ValueError, match="Expected bounds of shape"):
        propose_classifier_logei(ProposalContext(X, y, b[:, :3], 1, 0, choices))
    with pytest.raises(ValueError, match="bool feasible"):
        fit_feasibility_classifier(X, torch.ones(10), b, 0)
    bad = margin.clone()
    bad[~torch.isnan(y)] = math.nan
    with pytest.raises(ValueError, match="finite margins where feasible"):
        fit_censored_margin(X, bad, ~torch.isnan(y), b, 0)
    with pytest.raises(ValueError, match="warm_start"):
        fit_gp(X, margin, b, 0, optimize=False)


@pytest.mark.parametrize("method", ["gpc_ei", "tobit_ei", "gpc_pof"])
def test_harness_runs_record_untried_valid_rows_and_recommendations(
    method: str,
) -> None:
    from bolt_pco64.bench import BenchConfig, run_one
    from bolt_pco64.tables.table import load_table

    table = load_table(make_table(capacity=80.0))
    config = BenchConfig(budget=10, n_init=6, q=2)  # two BO steps
    out = run_one(method, 3, table, config)
    assert out.error is None
    rec = out.records
    rows = rec["row"].tolist()
    assert len(rows) == 10
    assert len(set(rows)) == 10
    assert all(0 <= r < len(table) for r in rows)
    feasible = table.feasible.numpy()
    for i in range(len(rec)):
        r = int(rec["recommended_row"].iloc[i])
        if not rec["feasible"].iloc[: i + 1].any():
            assert r == -1
            assert math.isnan(rec["inference_regret"].iloc[i])
            continue
        assert r in rows[: i + 1]  # an evaluated configuration ...
        assert feasible[r]  # ... that ran
        assert rec["inference_regret"].iloc[i] >= rec["regret"].iloc[i]
    again = run_one(method, 3, table, config).records
    timing = ["fit_seconds", "acq_seconds"]
    pd.testing.assert_frame_equal(rec.drop(columns=timing), again.drop(columns=timing))


def _random_elbo(n: int, d: int, seed: int) -> VariationalELBO:
    """The ELBO of a censored margin GP (a third of its targets censored) at
    random parameters, in train mode."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.double)
    y = torch.randn(n, generator=g, dtype=torch.double)
    y[::3] = math.inf
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
    transform = Normalize(d=d, bounds=bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)  # the censored +inf
        warnings.simplefilter("ignore", UserInputWarning)  # full-batch fits
        model = CensoredMarginGP(
            X,
            y.unsqueeze(-1),
            likelihood=CensoredGaussianLikelihood(),
            learn_inducing_points=False,
            inducing_points=transform(X).detach().clone(),
            input_transform=transform,
        )
    mll = VariationalELBO(model.likelihood, model.model, num_data=n)
    mll.train()
    model.model.variational_strategy.variational_params_initialized.fill_(1)
    with torch.no_grad():
        for name, p in mll.named_parameters():
            noise = 0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype)
            # The lengthscale's raw value is the lengthscale (no transform).
            p.copy_(p * noise.exp() if "lengthscale" in name else p + noise)
    return mll


@pytest.mark.parametrize(("n", "d", "seed"), [(7, 2, 0), (40, 8, 1), (100, 8, 2)])
def test_dense_elbo_equals_gpytorchs_value_and_gradient(
    n: int, d: int, seed: int
) -> None:
    mll = _random_elbo(n, d, seed)
    params = get_parameters(mll, requires_grad=True)
    model = mll.model

    def gpytorch_loss() -> torch.Tensor:
        return -mll(model(*model.train_inputs), model.train_targets)

    theirs = get_loss_closure_with_grads(mll, params)()
    ours = elbo_closure(mll, params)()
    for (value, grads), other in ((ours, theirs), (theirs, ours)):
        assert value.item() == pytest.approx(other[0].item(), rel=1e-9, abs=0.0)
        g = torch.cat([x.reshape(-1) for x in grads])
        h = torch.cat([x.reshape(-1) for x in other[1]])
        assert g.shape == h.shape == (sum(p.numel() for p in params.values()),)
        assert ((g - h).abs().max() <= 1e-9 * h.abs().max()).item()
    assert whitened_elbo(mll).item() == pytest.approx(-gpytorch_loss().item(), rel=1e-9)


def test_dense_elbo_with_frozen_hyperparameters_follows_their_values() -> None:
    """A variational-parameters-only update: the closure keeps the
    hyperparameter terms, and recomputes them when a hyperparameter moves."""
    mll = _random_elbo(30, 4, 3)
    for name, p in mll.named_parameters():
        if "variational_strategy" not in name:
            p.requires_grad_(False)
    params = get_parameters(mll, requires_grad=True)
    assert len(params) == 2
    assert all("variational" in name for name in params)
    ours = elbo_closure(mll, params)
    theirs = get_loss_closure_with_grads(mll, params)
    for step in range(3):
        with torch.no_grad():
            if step == 1:  # the variational parameters move
                for p in params.values():
                    p.add_(0.05)
            if step == 2:  # a hyperparameter moves
                mll.model.covar_module.raw_lengthscale.mul_(1.2)
        (v, g), (w, h) = ours(), theirs()
        assert v.item() == pytest.approx(w.item(), rel=1e-9, abs=0.0)
        for a, b in zip(g, h, strict=True):
            assert ((a - b).abs().max() <= 1e-9 * b.abs().max()).item()


def test_dense_elbo_refuses_other_inducing_points() -> None:
    mll = _random_elbo(6, 2, 0)
    strategy = mll.model.variational_strategy
    strategy.inducing_points = strategy.inducing_points + 0.1
    with pytest.raises(ValueError, match="inducing points to be the"):
        whitened_elbo(mll)
    with pytest.raises(ValueError, match="inducing points to be the"):
        elbo_closure(mll, {})


@pytest.mark.slow
def test_dense_elbo_fits_and_picks_as_gpytorchs(
    problem: PCO64, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package's fit (dense ELBO) against the same fit with BoTorch's
    default closure (GPyTorch's ELBO): parameters equal to the optimiser's
    tolerance, the same picks over a refit and two updates."""
    cand = problem.candidates()

    def loop() -> tuple[list[int], dict[str, torch.Tensor]]:
        rows = list(range(0, 72, 4))
        state = CrashAwareState()
        for step in range(3):
            tried = torch.zeros(72, dtype=torch.bool)
            tried[rows] = True
            untried = torch.nonzero(~tried).squeeze(-1)
            X, y, margin = observed(problem, torch.tensor(rows))
            ctx = ProposalContext(
                X, y, problem.bounds, 1, step, cand[untried], margin=margin
            )
            rows += untried[propose_censored_logei(ctx, state)].tolist()
        model = state.crash_model
        assert model is not None
        return rows, {k: v.detach().clone() for k, v in model.named_parameters()}

    rows, params = loop()
    monkeypatch.setattr(feasibility, "elbo_closure", get_loss_closure_with_grads)
    old_rows, old_params = loop()
    assert rows == old_rows
    assert params.keys() == old_params.keys()
    for k, v in params.items():
        torch.testing.assert_close(v, old_params[k], rtol=1e-4, atol=1e-4)
