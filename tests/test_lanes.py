"""Lanes (:mod:`bolt_pco64.bench.lanes`) and their batched computations
(:mod:`bolt_pco64.bo.batched`), on a small synthetic table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tests._synth import make_table

TIMING = ["fit_seconds", "acq_seconds"]


@pytest.fixture(scope="module")
def table():  # type: ignore[no-untyped-def]
    from bolt_pco64.tables.table import load_table

    return load_table(make_table(capacity=80.0))


@pytest.fixture(scope="module")
def data(table):  # type: ignore[no-untyped-def]
    from bolt_pco64.bench.problems import make_problem

    problem = make_problem(table)
    cand = problem.candidates().to(torch.double)
    y = problem.evaluate_true(cand).to(torch.double)
    margin = problem.outcome_constraint(cand).to(torch.double)
    return cand, y, margin, problem.bounds.to(torch.double)


def _fits(data, n: int, seeds: range, pad_to: int = 0):  # type: ignore[no-untyped-def]
    from bolt_pco64.bo.batched import GPFit

    cand, y, margin, _ = data
    fits = []
    for s in seeds:
        rows = torch.randperm(len(cand), generator=torch.Generator().manual_seed(s))
        rows = rows[:n]
        ok = ~y[rows].isnan()
        fits.append(GPFit(cand[rows][ok], y[rows][ok], s, pad_to=pad_to or n))
        fits.append(GPFit(cand[rows], margin[rows], s + 1, pad_to=pad_to or n))
    return fits


def _params(model) -> torch.Tensor:  # type: ignore[no-untyped-def]
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_batched_loss_is_botorch_mll(data) -> None:  # type: ignore[no-untyped-def]
    """The loss the batch minimises is the one BoTorch's fit minimises for
    each seed's model (value and gradient), padding included."""
    from gpytorch.mlls import ExactMarginalLogLikelihood

    from bolt_pco64.bo.batched import _batched_model, _BatchedLoss

    bounds = data[3]
    for fit in _fits(data, 13, range(2), pad_to=21):
        model = _batched_model([fit], bounds)
        loss = _BatchedLoss([model], fit.padded)
        x = loss.x0 * 1.3
        f, g = loss(x, [0])
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1.3)
        model.train()
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        inputs = model.train_inputs
        ref = -mll(
            model(*inputs),
            model.train_targets,
            *(model.transform_inputs(X=t) for t in inputs),
        )
        ref.sum().backward()
        params = dict(model.named_parameters())
        gref = torch.cat([params[n].grad.reshape(1, -1) for n in loss.names], 1)
        assert f[0] == pytest.approx(float(ref.sum().detach()), abs=1e-6)
        np.testing.assert_allclose(g, gref.numpy(), atol=1e-6)


def test_batched_loss_keeps_each_row_sets_values(data) -> None:  # type: ignore[no-untyped-def]
    """The loss keeps the data of the seeds being optimised between calls:
    every call, whichever seeds it asks for and in whatever order the row
    sets change, gives the values of a fresh loss asked for those seeds
    alone (bit for bit)."""
    from bolt_pco64.bo.batched import _batched_model, _BatchedLoss

    bounds = data[3]
    fits = [f for f in _fits(data, 13, range(4)) if f.X.shape[0] == 13]
    assert len(fits) >= 3

    def fresh() -> _BatchedLoss:
        return _BatchedLoss([_batched_model(fits, bounds)], fits[0].padded)

    loss = fresh()
    x = loss.x0 * 1.1
    for rows in ([0, 1, 2], [1, 2], [1, 2], [0, 2], list(range(len(fits))), [2]):
        f, g = loss(x[rows], rows)
        f_ref, g_ref = fresh()(x[rows], rows)
        assert np.array_equal(f, f_ref)
        assert np.array_equal(g, g_ref)


@pytest.mark.slow
def test_fit_gps_seed_does_not_depend_on_batch(data) -> None:  # type: ignore[no-untyped-def]
    """A seed's fitted hyperparameters are bitwise the same alone and in a
    batch (objective and constraint GPs of several sizes, one padded size)."""
    from bolt_pco64.bo.batched import fit_gps

    fits = _fits(data, 11, range(6))
    together, report = fit_gps(fits, data[3])
    assert report.groups == [len(fits)]
    for k in (0, 3, 10):
        (alone,), _ = fit_gps([fits[k]], data[3])
        assert torch.equal(_params(alone), _params(together[k]))


@pytest.mark.slow
def test_failed_seed_refits_alone(data, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A seed whose batched optimisation fails refits alone (fit_gp); its
    lane-mates keep their batched result."""
    import bolt_pco64.bo.batched as batched
    from bolt_pco64.bo.gp import fit_gp

    real = batched.fmin_l_bfgs_b_batched

    def fail_second(*args, **kwargs):  # type: ignore[no-untyped-def]
        xs, fs, results = real(*args, **kwargs)
        results[1]["status"] = 2
        return xs, fs, results

    fits = _fits(data, 12, range(2))
    before, _ = batched.fit_gps(fits, data[3])
    monkeypatch.setattr(batched, "fmin_l_bfgs_b_batched", fail_second)
    models, report = batched.fit_gps(fits, data[3])
    assert report.fallback == [1]
    assert sorted(report.batched) == [0, 2, 3]
    f = fits[1]
    alone = fit_gp(f.X, f.Y, data[3], f.seed)
    assert torch.equal(_params(models[1]), _params(alone))
    for k in (0, 2, 3):
        assert torch.equal(_params(models[k]), _params(before[k]))


@pytest.mark.parametrize("naive", [False, True])
def test_q1_values_are_botorchs(data, naive: bool) -> None:  # type: ignore[no-untyped-def]
    """qLogNEI on the factor model, at every candidate at once, equals
    BoTorch's qLogNEI on the GPs themselves (constrained on a model list, and
    naive's single GP): the same pruned baseline, the same values."""
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler
    from botorch.utils.sampling import manual_seed

    from bolt_pco64.bo import acquisition_function, fit_constrained_models, fit_gp
    from bolt_pco64.bo.factors import factor_model, q1_values

    cand, y, margin, bounds = data
    rows = torch.randperm(len(cand), generator=torch.Generator().manual_seed(4))
    tr, rest = rows[:12], rows[12:]

    def naive_acqf(model):  # type: ignore[no-untyped-def]
        with manual_seed(3):
            return qLogNoisyExpectedImprovement(
                model=model,
                X_baseline=cand[tr],
                sampler=SobolQMCNormalSampler(torch.Size([128]), seed=3),
                prune_baseline=True,
            )

    if naive:
        gp = fit_gp(cand[tr], torch.nan_to_num(y[tr], nan=0.0), bounds, 3)
        acqf, fast_acqf = naive_acqf(gp), naive_acqf(factor_model(gp))
    else:
        models = fit_constrained_models(cand[tr], y[tr], margin[tr], bounds, 3)
        acqf = acquisition_function("qlognei", models, cand[tr], y[tr], 3)
        fm = factor_model(models.model_list())
        fast_acqf = acquisition_function(
            "qlognei", models, cand[tr], y[tr], 3, model=fm
        )
    assert torch.equal(acqf.X_baseline, fast_acqf.X_baseline)
    with torch.no_grad():
        ref = acqf(cand[rest].unsqueeze(-2))
    fast = q1_values(fast_acqf, cand[rest])
    assert fast.shape == ref.shape
    assert float((fast - ref).abs().max()) <= 1e-6
    assert int(fast.argmax()) == int(ref.argmax())


def test_q1_values_use_the_base_samples_of_botorchs_evaluation(data) -> None:  # type: ignore[no-untyped-def]
    """q1_values sets the sampler's base samples for (baseline, one point)
    without evaluating qLogNEI at a point: they are the ones BoTorch's own
    evaluation at one point sets, bit for bit."""
    import copy

    from bolt_pco64.bo import acquisition_function, fit_constrained_models
    from bolt_pco64.bo.factors import factor_model, q1_values

    cand, y, margin, bounds = data
    rows = torch.randperm(len(cand), generator=torch.Generator().manual_seed(6))
    tr, rest = rows[:14], rows[14:]
    models = fit_constrained_models(cand[tr], y[tr], margin[tr], bounds, 5)
    fm = factor_model(models.model_list())
    acqf = acquisition_function("qlognei", models, cand[tr], y[tr], 5, model=fm)
    botorchs = copy.deepcopy(acqf)
    with torch.no_grad():
        botorchs(cand[rest][:1].unsqueeze(-2))
    q1_values(acqf, cand[rest])
    assert acqf.sampler.base_samples is not None
    assert torch.equal(acqf.sampler.base_samples, botorchs.sampler.base_samples)


@pytest.mark.parametrize(("a", "b", "d"), [(1, 1, 1), (37, 5, 3), (300, 41, 8)])
def test_squared_distances_in_blocks_are_the_whole(monkeypatch, a, b, d) -> None:  # type: ignore[no-untyped-def]
    """The RBF kernel's squared distances, computed in blocks of rows (any
    block size, a last block shorter), are the unblocked computation's bit
    for bit."""
    import bolt_pco64.bo.factors as factors

    gen = torch.Generator().manual_seed(a * b * d)
    A = torch.rand(a, d, generator=gen, dtype=torch.double) * 7
    B = torch.rand(b, d, generator=gen, dtype=torch.double) * 7
    whole = (A.unsqueeze(-2) - B.unsqueeze(-3)).pow(2).sum(-1)
    for block in (1, 2 * b * d, 3 * b * d + 1, factors._DISTANCE_BLOCK):
        monkeypatch.setattr(factors, "_DISTANCE_BLOCK", block)
        got = factors._squared_distances(A, B)
        assert got.shape == whole.shape
        assert torch.equal(got, whole)
    batched = A.expand(2, a, d)  # not blocked: the unblocked computation itself
    assert torch.equal(factors._squared_distances(batched, B)[1], whole)


def test_factor_model_posterior_is_the_gps(data) -> None:  # type: ignore[no-untyped-def]
    """The factor model's joint posterior (mean and covariance, outcome scale)
    is the fitted GP's own, and a GP re-conditioned on other data with its
    hyperparameters kept recommends what fit_gp(optimize=False) does."""
    from bolt_pco64.bo import fit_gp, recommend
    from bolt_pco64.bo.factors import best_by_posterior_mean, factor_model

    cand, y, _margin, bounds = data
    rows = torch.randperm(len(cand), generator=torch.Generator().manual_seed(5))
    tr = rows[:15]
    ok = ~torch.isnan(y[tr])
    gp = fit_gp(cand[tr][ok], y[tr][ok], bounds, 2)
    X = cand[rows[15:40]]
    with torch.no_grad():
        ref = gp.posterior(X).distribution
        got = factor_model(gp).posterior(X).distribution
    torch.testing.assert_close(got.mean, ref.mean, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(
        got.covariance_matrix, ref.covariance_matrix, rtol=1e-7, atol=1e-9
    )
    more = rows[:30]
    again = fit_gp(
        cand[more][~torch.isnan(y[more])],
        y[more][~torch.isnan(y[more])],
        bounds,
        0,
        warm_start=gp,
        optimize=False,
    )
    assert best_by_posterior_mean(gp, cand[more], y[more]) == recommend(
        again, cand[more], y[more]
    )
    none = torch.full_like(y[more], float("nan"))
    assert best_by_posterior_mean(gp, cand[more], none) is None


@pytest.mark.slow
@pytest.mark.parametrize("method", ["qlognei", "gpc_ei"])
def test_seed_records_do_not_depend_on_lane_mates(table, method: str) -> None:  # type: ignore[no-untyped-def]
    """A seed's configurations and values, in order, are the same alone and
    in a lane; its records have run_one's columns."""
    from bolt_pco64.bench import BenchConfig, run_one
    from bolt_pco64.bench.lanes import run_lane
    from bolt_pco64.bench.methods.registry import get_method

    config = BenchConfig(budget=14, n_init=5)
    fn = get_method(method)
    lane = run_lane(method, [0, 1, 2], table, config, fn)
    alone = run_lane(method, [1], table, config, fn)[0]
    assert [o.seed for o in lane] == [0, 1, 2]
    assert all(o.error is None for o in lane)
    pd.testing.assert_frame_equal(
        lane[1].records.drop(columns=TIMING), alone.records.drop(columns=TIMING)
    )
    plain = run_one(method, 1, table, config)
    assert list(lane[1].records.columns) == list(plain.records.columns)
    assert lane[1].records["row"].nunique() == 14


def test_methods_that_cannot_batch_say_so_and_run_as_today(table) -> None:  # type: ignore[no-untyped-def]
    from bolt_pco64.bench import BenchConfig, run_one
    from bolt_pco64.bench.lane_adapters import lane_adapter, lane_support
    from bolt_pco64.bench.lanes import run_lane
    from bolt_pco64.bench.methods.registry import get_method

    assert lane_adapter(get_method("qlognei")) is not None
    assert lane_support(get_method("qlognei")) is None
    assert "variational" in str(lane_support(get_method("tobit_ei")))
    assert lane_adapter(get_method("random")) is None
    config = BenchConfig(budget=9, n_init=5)
    out = run_lane("random", [2], table, config, get_method("random"))[0]
    plain = run_one("random", 2, table, config)
    pd.testing.assert_frame_equal(
        out.records.drop(columns=TIMING), plain.records.drop(columns=TIMING)
    )


def test_split_lanes_by_method_and_width(table) -> None:  # type: ignore[no-untyped-def]
    from bolt_pco64.bench import BenchConfig
    from bolt_pco64.bench.lanes import split_lanes
    from bolt_pco64.bench.methods.registry import get_method

    todo = [("random", s) for s in range(3)] + [("qlognei", s) for s in range(7)]
    tasks = split_lanes(todo, table, BenchConfig(budget=9, n_init=5), get_method, 3)
    # 7 seeds in lanes of at most 3: three lanes of 3, 2, 2 (not 3, 3, 1),
    # before the single runs of a method that cannot batch.
    assert [(t.method, t.seeds) for t in tasks] == [
        ("qlognei", (0, 1, 2)),
        ("qlognei", (3, 4)),
        ("qlognei", (5, 6)),
        ("random", (0,)),
        ("random", (1,)),
        ("random", (2,)),
    ]
    with pytest.raises(ValueError, match="lane_width"):
        split_lanes(todo, table, BenchConfig(budget=9, n_init=5), get_method, 0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["qlogei", "ts", "naive", "gpc_pof"])
def test_every_batching_method_runs_its_lane(table, method: str) -> None:  # type: ignore[no-untyped-def]
    """Each method a lane batches finishes every seed's budget without an
    error (a lane answers a failing seed with the exception that ends its
    run, so a broken adapter shows as errors here, not as a crash)."""
    from bolt_pco64.bench import BenchConfig
    from bolt_pco64.bench.lane_adapters import lane_adapter
    from bolt_pco64.bench.lanes import run_lane
    from bolt_pco64.bench.methods.registry import get_method

    fn = get_method(method)
    assert lane_adapter(fn) is not None
    lane = run_lane(method, [0, 1], table, BenchConfig(budget=9, n_init=5), fn)
    assert [o.error for o in lane] == [None, None]
    assert [len(o.records) for o in lane] == [9, 9]


def test_factor_model_samples_a_singular_posterior(data) -> None:  # type: ignore[no-untyped-def]
    """A posterior over repeated points has a singular covariance: the factor
    model samples it as BoTorch does (a root with jitter), not by a plain
    Cholesky that fails (qLogNEI prunes its baseline at the observed rows,
    where long runs repeat configurations)."""
    from botorch.sampling import SobolQMCNormalSampler

    from bolt_pco64.bo import fit_gp
    from bolt_pco64.bo.factors import factor_model

    cand, y, _margin, bounds = data
    ok = torch.nonzero(~torch.isnan(y)).reshape(-1)[:20]
    gp = fit_gp(cand[ok], y[ok], bounds, 1)
    X = torch.cat([cand[ok], cand[ok]])
    with torch.no_grad():
        post = factor_model(gp).posterior(X)
        cov = post.distribution.covariance_matrix
        assert torch.linalg.cholesky_ex(cov).info.item() != 0
        samples = SobolQMCNormalSampler(torch.Size([64]), seed=0)(post)
    assert samples.shape == (64, 40, 1)
    assert bool(torch.isfinite(samples).all())
    torch.testing.assert_close(samples[:, :20], samples[:, 20:], rtol=0, atol=1e-3)
