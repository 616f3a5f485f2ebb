"""The parallelism-informed prior (bolt_pco64.bo.prior): decoding, physics,
fitting, proposals, and the rule that it never touches the stand-in generator."""

from __future__ import annotations

import ast
import copy
import dataclasses
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import bolt_pco64.bo.prior as prior_pkg
from bolt_pco64 import PCO16, PCO64
from bolt_pco64.bench import RunContext, get_method
from bolt_pco64.bench.report.facts import standin_caveats
from bolt_pco64.bench.run import run_one
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.bo.gp import ProposalContext, safe_bounds
from bolt_pco64.bo.prior import (
    BAD_PRIOR_FACTOR,
    PRIOR_DEFAULTS,
    PRIORS,
    STANDIN_CAVEAT,
    LayoutDecoder,
    MemoryPriorMean,
    PhysicalMean,
    PriorState,
    ThroughputPriorMean,
    condition_prior_gp,
    fit_prior_gp,
    fit_prior_models,
    misspecified,
    propose_prior_ei,
)
from bolt_pco64.instances import PCO16_INSTANCE, PCO64_INSTANCE, InputSpec
from tests import _fixtures
from tests._tables import small_frame

problem = _fixtures.problem
observed = _fixtures.observed

# pco64's published shape, written out here (not read from the package)
L64, H64, F64 = 64, 5120, 25600
P64 = L64 * (4 * H64 * H64 + 3 * H64 * F64)


def _bounds(instance=PCO64_INSTANCE) -> torch.Tensor:
    return safe_bounds(torch.tensor(instance.bounds, dtype=torch.double).T)


def _encoded(*rows: tuple[int, ...]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.double)


def _ctx(
    X: torch.Tensor,
    y: torch.Tensor,
    margin: torch.Tensor,
    bounds: torch.Tensor,
    seed: int = 0,
) -> ProposalContext:
    """The observations a fit reads."""
    return ProposalContext(X, y, bounds, seed=seed, margin=margin)


# -- honesty rule: no path from the prior to the generator, traces or data ---

#: Modules the prior may not import: the stand-in generator, the published
#: traces, the landscape reconstructed from them, and the readers of package
#: data (names matched as substrings of every imported or named module).
_FORBIDDEN_MODULES = (
    "simulate",
    "traces",
    "reconstruct",
    "importlib.resources",
    "pkgutil",
)
#: Calls that read a table or a file.
_FORBIDDEN_CALLS = frozenset(
    {
        "open",
        "read_csv",
        "read_parquet",
        "read_json",
        "read_text",
        "read_bytes",
        "load_table",
        "fetch_table",
        "files",
        "get_data",
        "np.load",
        "torch.load",
    }
)
#: Suffixes of data files (tables, traces, fingerprints).
_DATA_SUFFIXES = (".parquet", ".csv", ".json", ".feather", ".arrow", ".npz", ".pkl")


def _named(node: ast.AST) -> list[str]:
    """The modules and call targets an AST node names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        assert node.level == 0, "relative import"
        return [node.module or ""] + [a.name for a in node.names]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        # no importlib.import_module("bolt_pco64.tables.simulate...") either
        return [node.value] if node.value.startswith("bolt_pco64.") else []
    return []


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        base = f.value.id if isinstance(f.value, ast.Name) else ""
        dotted = f"{base}.{f.attr}"
        return dotted if dotted in _FORBIDDEN_CALLS else f.attr
    return None


@pytest.mark.slow  # a fresh interpreter imports BoTorch (a few seconds)
def test_importing_the_prior_loads_no_generator_traces_or_reconstruction() -> None:
    code = (
        "import sys, bolt_pco64.bo.prior\n"
        f"bad = [m for m in sys.modules if m.startswith('bolt_pco64.') and "
        f"any(f in m for f in {_FORBIDDEN_MODULES!r})]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_prior_module_names_the_generator_traces_reconstruction_or_data() -> None:
    files = sorted(Path(prior_pkg.__file__).parent.glob("*.py"))
    assert len(files) >= 5
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = _named(node)
            bad = [n for n in names if any(f in n for f in _FORBIDDEN_MODULES)]
            assert not bad, f"{path.name}: imports or names {bad}"
            call = _called(node)
            assert call not in _FORBIDDEN_CALLS, f"{path.name}: calls {call}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.lower()
                assert not text.endswith(_DATA_SUFFIXES), f"{path.name}: {text!r}"
                assert "data/" not in text, f"{path.name}: {text!r}"


def test_the_ast_check_catches_what_it_forbids() -> None:
    """The checks above would fail on a module that broke the rule."""
    bad = ast.parse(
        "import bolt_pco64.tables.traces\n"
        "import importlib.resources\n"
        "from bolt_pco64.tables.reconstruct import landscape\n"
        "import pandas as pd\n"
        "pd.read_parquet('data/pco64_simulated.parquet')\n"
        "open('x')\n"
        "torch.load('w')\n"
    )
    nodes = list(ast.walk(bad))
    named = [n for node in nodes for n in _named(node)]
    assert "bolt_pco64.tables.traces" in named
    assert "bolt_pco64.tables.reconstruct" in named
    assert "importlib.resources" in named
    calls = {_called(node) for node in nodes} & _FORBIDDEN_CALLS
    assert calls == {"read_parquet", "open", "torch.load"}


_AUDIT = """
import sys, warnings
import torch
from bolt_pco64.bo.gp import ProposalContext
from bolt_pco64.bo.prior import PRIORS, PriorState, propose_prior_ei
from bolt_pco64.instances import PCO64_INSTANCE as inst

bounds = torch.tensor(inst.bounds, dtype=torch.double).T
g = torch.Generator().manual_seed(0)
lo, hi = bounds
X = torch.round(lo + (hi - lo) * torch.rand(9, inst.dim, generator=g, dtype=torch.double))
y = torch.rand(9, generator=g, dtype=torch.double) + 0.1
y[::3] = float("nan")
margin = torch.where(torch.isnan(y), 0.2, -0.5 * torch.rand(9, generator=g, dtype=torch.double))
opened = []
sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == "open" else None)
warnings.simplefilter("ignore")
for quality, defaults in PRIORS.items():
    for kind in ("both", "throughput"):
        ctx = ProposalContext(X[:6], y[:6], bounds, 1, 0, X[6:], margin=margin[:6])
        propose_prior_ei(ctx, inst, kind=kind, state=PriorState(), defaults=defaults)
code = (".py", ".pyc", ".so")
print([p for p in opened if not p.endswith(code) and not p.startswith("/proc/")])
"""


@pytest.mark.slow  # a fresh interpreter fits the prior's GPs (lazy imports: ~1 min)
def test_fitting_and_proposing_open_no_file_but_code() -> None:
    """At run time the prior, good or bad, reads no table, trace or data file:
    an audit hook sees every file opened while it fits and proposes."""
    done = subprocess.run(
        [sys.executable, "-c", _AUDIT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


# -- decoding ----------------------------------------------------------------


def test_decoder_reads_pco64_inputs_and_context() -> None:
    dec = LayoutDecoder(PCO64_INSTANCE, _bounds())
    # the card's best configuration
    lay = dec.decode(_encoded((4, 2, 0, 0, 2, 6, 1, 0)))
    got = [
        float(getattr(lay, k))
        for k in ("dp", "tp", "pp", "cp", "sp", "bucket_mb", "zero_stage", "chunks")
    ]
    assert got == [16, 4, 1, 1, 4, 64, 2, 1]
    assert float(lay.grad_accum_steps) == 1  # context log2_grad_accum_steps = 0
    assert lay.gpus_per_host == 4


def test_decoder_reads_pco16_grad_accumulation_and_fixed_context_parallelism() -> None:
    dec = LayoutDecoder(PCO16_INSTANCE, _bounds(PCO16_INSTANCE))
    # pco16 inputs: dp, tp, pp, sp, bucket, zero, chunks, grad_accum
    lay = dec.decode(_encoded((4, 0, 0, 0, 8, 2, 0, 2)))
    assert (float(lay.dp), float(lay.cp), float(lay.grad_accum_steps)) == (16, 1, 4)
    assert (float(lay.bucket_mb), float(lay.zero_stage)) == (256, 3)
    assert lay.gpus_per_host == 8


def test_decoder_undoes_the_gp_normalisation() -> None:
    bounds = _bounds()
    dec = LayoutDecoder(PCO64_INSTANCE, bounds)
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0), (1, 0, 4, 2, 0, 9, 0, 2))
    unit = (X - bounds[0]) / (bounds[1] - bounds[0])
    a, b = dec(unit), dec.decode(X)
    for k in ("dp", "tp", "pp", "cp", "sp", "bucket_mb", "zero_stage", "chunks"):
        torch.testing.assert_close(getattr(a, k), getattr(b, k))


def test_decoder_refuses_unknown_columns_and_wrong_bounds() -> None:
    # an unknown column is refused already by the Instance (no knob to decode)
    odd = (*PCO64_INSTANCE.inputs[:-1], InputSpec("log2_x", 0, 1))
    with pytest.raises(ValueError, match="log2_x"):
        dataclasses.replace(PCO64_INSTANCE, inputs=odd)
    with pytest.raises(ValueError, match=r"Expected bounds of shape \(2, 8\)"):
        LayoutDecoder(PCO64_INSTANCE, torch.zeros(2, 7, dtype=torch.double))


# -- the throughput prior ------------------------------------------------------


def _with(mean: PhysicalMean, **values: float) -> PhysicalMean:
    theta = mean.theta.detach().clone()
    for name, v in values.items():
        theta[mean.names.index(name)] = v
    mean.set_theta(theta)
    return mean


def test_pipeline_bubble_and_interleaving_stretch_the_compute() -> None:
    mean = ThroughputPriorMean(PCO64_INSTANCE, _bounds())
    # dp 16 x tp 4 (no pipeline) vs dp 8 x tp 4 x pp 2, 1 and 2 chunks
    X = _encoded(
        (4, 2, 0, 0, 2, 6, 1, 0), (3, 2, 1, 0, 2, 6, 0, 0), (3, 2, 1, 0, 2, 6, 0, 1)
    )
    t = mean.terms(mean.decoder.decode(X))["compute"]
    # the same FLOPs per GPU; 64 one-sequence micro-batches: bubble (pp-1)/(m v)
    torch.testing.assert_close(t[1] / t[0], torch.tensor(1 + 1 / 64).to(t))
    torch.testing.assert_close(t[2] / t[0], torch.tensor(1 + 1 / 128).to(t))


def test_parameters_stay_positive_and_within_their_range() -> None:
    mean = ThroughputPriorMean(PCO64_INSTANCE, _bounds())
    start = mean.theta.detach().clone()
    mean.set_theta(torch.tensor([0.0, 1e300, 1.0, 1.0, 1.0, 1.0]))
    ratio = (mean.theta / start).log()
    assert torch.isfinite(ratio).all()
    assert (ratio.abs() <= PRIOR_DEFAULTS.log_range).all()
    assert ratio[0] < -0.99 * PRIOR_DEFAULTS.log_range
    assert ratio[1] > 0.99 * PRIOR_DEFAULTS.log_range
    with torch.no_grad():
        mean.raw_theta.fill_(1e6)  # whatever an optimiser step makes of it
    assert torch.isfinite(mean.theta).all()
    assert (mean.theta > 0).all()


def test_crossing_hosts_uses_the_inter_host_link() -> None:
    mean = ThroughputPriorMean(PCO64_INSTANCE, _bounds())
    # dp 2 x tp 2 fits in a 4-GPU host; dp 4 x tp 2 does not
    X = _encoded((1, 1, 4, 0, 0, 6, 0, 0), (2, 1, 3, 0, 0, 6, 0, 0))
    before = mean.terms(mean.decoder.decode(X))["data"]
    slow = mean.values()["byte_time_inter"] * 10
    after = _with(mean, byte_time_inter=slow).terms(mean.decoder.decode(X))["data"]
    torch.testing.assert_close(after[0], before[0])
    assert after[1] > 5 * before[1]


def test_zero3_moves_half_again_the_data_parallel_bytes() -> None:
    mean = ThroughputPriorMean(PCO64_INSTANCE, _bounds())
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0), (4, 2, 0, 0, 2, 6, 2, 0))
    data = mean.terms(mean.decoder.decode(X))["data"]
    torch.testing.assert_close(data[1] / data[0], torch.tensor(1.5).to(data))


def test_unit_is_set_by_the_observed_throughput() -> None:
    bounds = _bounds()
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0), (3, 2, 1, 0, 2, 6, 0, 0))
    y = torch.tensor([0.25, 0.125], dtype=torch.double)
    mean = ThroughputPriorMean.from_observations(PCO64_INSTANCE, bounds, X, y)
    pred = 1 / mean.step_time(mean.decoder.decode(X))
    # the geometric mean of prediction / observation is one
    torch.testing.assert_close((pred / y).log().mean(), torch.tensor(0.0).to(pred))
    with pytest.raises(ValueError, match="positive finite throughput"):
        ThroughputPriorMean.from_observations(PCO64_INSTANCE, bounds, X, -y)


# -- the memory prior ------------------------------------------------------------


def test_model_states_follow_the_zero_paper() -> None:
    mean = MemoryPriorMean(PCO64_INSTANCE, _bounds())
    # dp 16, tp 4, pp 1: stage 0, 2, 3
    X = _encoded(
        (4, 2, 0, 0, 2, 6, 0, 0), (4, 2, 0, 0, 2, 6, 1, 0), (4, 2, 0, 0, 2, 6, 2, 0)
    )
    states = mean.parts(mean.decoder.decode(X))["states"] * 2.0**30
    psi = P64 / 4
    expected = [psi * 16, psi * (2 + 14 / 16), psi * 16 / 16]
    torch.testing.assert_close(states, torch.tensor(expected, dtype=torch.double))


def test_margin_is_peak_over_the_instance_gpu_memory() -> None:
    bigger = dataclasses.replace(PCO64_INSTANCE, gpu_memory_gb=192.0)
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0), (1, 1, 4, 0, 0, 6, 0, 2))
    unit = (X - _bounds()[0]) / (_bounds()[1] - _bounds()[0])
    m96 = MemoryPriorMean(PCO64_INSTANCE, _bounds()).physical(unit)
    m192 = MemoryPriorMean(bigger, _bounds()).physical(unit)
    torch.testing.assert_close(m192 + 1, (m96 + 1) / 2)


def test_margin_is_capped_softly_at_the_pad() -> None:
    X = _encoded((6, 0, 0, 0, 0, 6, 0, 0), (4, 2, 0, 0, 2, 6, 2, 0))
    unit = (X - _bounds()[0]) / (_bounds()[1] - _bounds()[0])
    free = MemoryPriorMean(PCO64_INSTANCE, _bounds()).physical(unit)
    capped = MemoryPriorMean(PCO64_INSTANCE, _bounds(), pad=0.2).physical(unit)
    assert free[0] > 0.5  # dp 64 without sharding: far over the GPU memory
    assert 0.19 < capped[0] <= 0.2
    assert free[1] < -0.2
    torch.testing.assert_close(capped[1], free[1], atol=1e-3, rtol=0)
    with pytest.raises(ValueError, match="positive finite pad"):
        MemoryPriorMean(PCO64_INSTANCE, _bounds(), pad=-1.0)


# -- the deliberately misspecified prior ---------------------------------------


def test_bad_prior_moves_every_constant_by_the_factor() -> None:
    good, bad = PRIOR_DEFAULTS, misspecified(2.0)
    assert PRIORS["good"] is PRIOR_DEFAULTS
    assert PRIORS["bad"] == misspecified(BAD_PRIOR_FACTOR)
    up = ("flop_rate", "latency_intra", "latency_inter", "step_overhead")
    down = (
        "bandwidth_intra",
        "bandwidth_inter",
        "bytes_weights",
        "bytes_grads",
        "bytes_optimizer",
        "checkpoint_bytes",
        "layer_activation_scale",
        "memory_overhead_gib",
    )
    for name in up:
        assert getattr(bad, name) == pytest.approx(2 * getattr(good, name)), name
    for name in down:
        assert getattr(bad, name) == pytest.approx(getattr(good, name) / 2), name
    assert bad.gpu_memory_factor == pytest.approx(2.0)
    # as confident as the good prior: the widths do not move
    for name in ("throughput_log_sd", "state_log_sd", "activation_log_sd"):
        assert getattr(bad, name) == getattr(good, name)
    assert misspecified(1.0) == good
    for factor in (0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="Expected a finite factor >= 1"):
            misspecified(factor)


def test_bad_memory_prior_is_four_times_too_optimistic() -> None:
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0), (1, 1, 4, 0, 0, 6, 0, 2))
    unit = (X - _bounds()[0]) / (_bounds()[1] - _bounds()[0])
    good = MemoryPriorMean(PCO64_INSTANCE, _bounds()).physical(unit)
    bad = MemoryPriorMean(PCO64_INSTANCE, _bounds(), defaults=PRIORS["bad"])
    # half the bytes on twice the GPU memory: peak / capacity a quarter
    torch.testing.assert_close(bad.physical(unit) + 1, (good + 1) / 4)
    wrong = dataclasses.replace(PRIOR_DEFAULTS, gpu_memory_factor=0.0)
    with pytest.raises(ValueError, match="positive finite gpu_memory_factor"):
        MemoryPriorMean(PCO64_INSTANCE, _bounds(), defaults=wrong)


def test_bad_throughput_prior_makes_communication_four_times_dearer() -> None:
    X = _encoded((4, 2, 0, 0, 2, 6, 1, 0))
    terms = {}
    for quality in ("good", "bad"):
        mean = ThroughputPriorMean(PCO64_INSTANCE, _bounds(), defaults=PRIORS[quality])
        terms[quality] = mean.terms(mean.decoder.decode(X))
    ratio = {q: t["data"] / t["compute"] for q, t in terms.items()}
    torch.testing.assert_close(ratio["bad"], 4 * ratio["good"])


# -- fitting and proposing -------------------------------------------------------


def _fitted(problem: PCO64, n: int) -> tuple[torch.Tensor, ...]:
    """Every fifth candidate, ``n`` of them, observed, and the prior's models
    fitted on them."""
    rows = torch.arange(0, problem.candidates().shape[0], 5)[:n]
    X, y, margin = observed(problem, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = fit_prior_models(_ctx(X, y, margin, problem.bounds), problem.instance)
    return X, y, margin, models


@pytest.fixture(scope="module")
def fitted_12(problem: PCO64) -> tuple:
    """:func:`_fitted` on 12 rows, fitted once for the module (tests that
    change a model change a copy)."""
    return _fitted(problem, 12)


@pytest.mark.slow
def test_output_scale_driven_to_zero_keeps_the_likelihood_finite(
    fitted_12: tuple,
) -> None:
    """A prior mean that explains the data drives the output scale towards 0;
    there GPyTorch's softplus underflows to exactly 0 and the log-normal prior
    on the output scale raised (a harness run failed so). The bound keeps it
    positive and the marginal likelihood finite."""
    from gpytorch.mlls import ExactMarginalLogLikelihood

    models = copy.deepcopy(fitted_12[3])
    for gp in (models.objective, models.constraint):
        kernel = gp.covar_module
        with torch.no_grad():
            kernel.raw_outputscale.fill_(-1e4)
        # the bound is stored in single precision
        assert kernel.outputscale.item() == pytest.approx(
            PRIOR_DEFAULTS.min_outputscale
        )
        gp.train()
        mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
        inputs = gp.train_inputs[0]
        value = mll(gp(inputs), gp.train_targets)
        assert torch.isfinite(value)


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 12])
def test_fit_runs_and_keeps_the_parameters_positive(
    problem: PCO64, fitted_12: tuple, n: int
) -> None:
    X, y, _, models = fitted_12 if n == 12 else _fitted(problem, n)
    for gp in (models.objective, models.constraint):
        assert gp is not None
        assert isinstance(gp.mean_module, PhysicalMean)
        theta = gp.mean_module.theta
        assert torch.isfinite(theta).all()
        assert (theta > 0).all()
        post = gp.posterior(X).mean
        assert torch.isfinite(post).all()
    # the objective GP reproduces what it was fitted on (little noise)
    feas = ~torch.isnan(y)
    fit = models.objective.posterior(X[feas]).mean.squeeze(-1)
    assert (fit - y[feas]).abs().max() < 0.2 * y[feas].abs().max()


def test_ablation_keeps_a_constant_mean_constraint(problem: PCO64) -> None:
    X, y, margin = observed(problem, torch.arange(0, 40, 4))
    ctx = _ctx(X, y, margin, problem.bounds)
    models = fit_prior_models(ctx, problem.instance, kind="throughput")
    assert isinstance(models.objective.mean_module, ThroughputPriorMean)
    assert not isinstance(models.constraint.mean_module, PhysicalMean)
    with pytest.raises(ValueError, match="Expected kind"):
        fit_prior_models(ctx, problem.instance, kind="x")  # type: ignore[arg-type]


def test_cold_start_without_a_feasible_row_proposes_by_feasibility(
    problem: PCO64,
) -> None:
    C = problem.candidates()
    y_all = problem.evaluate_true(C)
    rows = torch.nonzero(torch.isnan(y_all)).squeeze(-1)[:3]
    X, y, margin = observed(problem, rows)
    untried = torch.ones(C.shape[0], dtype=torch.bool)
    untried[rows] = False
    state = PriorState()
    ctx = ProposalContext(X, y, problem.bounds, 2, 7, C[untried], margin=margin)
    idx = propose_prior_ei(ctx, problem.instance, state=state)
    assert state.models is not None
    assert state.models.objective is None
    assert state.steps == 1
    assert idx.unique().numel() == 2
    assert int(idx.max()) < int(untried.sum())


@pytest.mark.slow
def test_proposals_are_deterministic_and_warm_start(problem: PCO64) -> None:
    C = problem.candidates()
    X, y, margin = observed(problem, torch.tensor([0, 9, 20]))
    args = (
        ProposalContext(X, y, problem.bounds, 1, 3, C[3:], margin=margin),
        problem.instance,
    )
    states = [PriorState(), PriorState()]
    picks = [int(propose_prior_ei(*args, state=s)) for s in states]
    assert picks[0] == picks[1]
    first = states[0].models
    propose_prior_ei(*args, state=states[0])
    assert states[0].steps == 2
    assert states[0].models is not first


def test_conditioning_keeps_the_prior_gp_s_parameters_and_sees_the_new_data(
    problem: PCO64,
) -> None:
    C = problem.candidates()
    y_all = problem.evaluate_true(C)
    feasible = torch.nonzero(~torch.isnan(y_all)).squeeze(-1)
    X, y, margin = observed(problem, feasible[:6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp = fit_prior_models(
            _ctx(X, y, margin, problem.bounds), problem.instance
        ).objective
    X2, y2, _ = observed(problem, feasible[:10])
    new = condition_prior_gp(gp, X2, y2, problem.bounds, problem.instance)
    assert new.train_inputs[0].shape[0] == 10
    # The kernel's and likelihood's hyperparameters as fitted; the prior's
    # parameters by value (its raw ones are relative to data-set references).
    before = dict(gp.named_parameters())
    for name, param in new.named_parameters():
        if not name.startswith("mean_module."):
            torch.testing.assert_close(param, before[name])
    torch.testing.assert_close(new.mean_module.theta, gp.mean_module.theta)
    # It interpolates its new data as the fitted GP does its own.
    fit = new.posterior(X2).mean.squeeze(-1)
    assert (fit - y2).abs().max() < 0.2 * y2.abs().max()
    with pytest.raises(ValueError, match="warm_start"):
        fit_prior_gp(X2, y2, problem.bounds, new.mean_module, 0, optimize=False)


@pytest.mark.slow
def test_prior_ei_recommends_and_predicts_with_its_prior_mean_gp(
    problem: PCO64,
) -> None:
    method = get_method("prior_ei")
    C = problem.candidates()
    rows = torch.arange(0, C.shape[0], 7)[:8]
    X, y, margin = observed(problem, rows)
    tried = torch.zeros(C.shape[0], dtype=torch.bool)
    tried[rows] = True
    ctx = RunContext(
        problem=problem, candidates=C, rows=rows, y=y, margin=margin,
        untried=torch.nonzero(~tried).squeeze(-1), q=1, seed=0, step_seed=5,
        generator=torch.Generator().manual_seed(0), budget=20,
        state=method.new_state(),
    )  # fmt: skip
    assert isinstance(ctx.state, PriorState)
    assert method.predict(ctx, C[:2]) is None  # no model before a proposal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        picked = int(torch.as_tensor(method.propose(ctx)).reshape(-1)[0])
    gp = ctx.state.models.objective
    assert isinstance(gp.mean_module, ThroughputPriorMean)
    pred = method.predict(ctx, C[[picked]])
    torch.testing.assert_close(pred.mean, gp.posterior(C[[picked]]).mean.reshape(-1))
    # The recommendation: the evaluated feasible row of highest posterior mean
    # under the prior GP conditioned on every feasible observation.
    ok = ~torch.isnan(y)
    model = condition_prior_gp(gp, X[ok], y[ok], problem.bounds, problem.instance)
    best = int(rows[ok][int(model.posterior(X[ok]).mean.reshape(-1).argmax())])
    assert method.recommend(ctx) == best


@pytest.mark.slow
def test_fit_on_a_pco16_table() -> None:
    f = PCO16(table=small_frame(seed=3, instance="pco16"))
    C = f.candidates()
    X, y, margin = C[:10], f.evaluate_true(C[:10]), f.outcome_constraint(C[:10])
    models = fit_prior_models(_ctx(X, y, margin, f.bounds, seed=1), f.instance)
    assert models.objective is not None
    assert models.objective.mean_module.decoder.instance is PCO16_INSTANCE
    assert (models.constraint.mean_module.theta > 0).all()


# -- the harness's methods ----------------------------------------------------------


@pytest.mark.slow
def test_prior_methods_start_from_three_rows_of_the_shared_design(
    problem: PCO64,
) -> None:
    config = BenchConfig(budget=5, n_init=4)
    default = run_one("first", 2, problem.table, config, fn=_first_rows)
    for name in ("prior_ei", "prior_ei_tp", "prior_ei_bad", "qlognei_init3"):
        method = get_method(name)
        assert method.n_init == 3
        if name != "qlognei_init3":
            assert method.standin_caveat == STANDIN_CAVEAT
        out = run_one(name, 2, problem.table, config, fn=method)
        assert out.error is None, out.error
        rows = out.records["row"].tolist()
        assert rows[:3] == default.records["row"].tolist()[:3]
        assert len(set(rows)) == 5


def test_the_control_and_the_bad_prior_are_registered_variants() -> None:
    control, qlognei = get_method("qlognei_init3"), get_method("qlognei")
    assert type(control) is type(qlognei)
    assert control.kind == qlognei.kind
    assert (control.n_init, qlognei.n_init) == (3, None)
    bad, good = get_method("prior_ei_bad"), get_method("prior_ei")
    assert (bad.kind, bad.quality, good.quality) == ("both", "bad", "good")
    with pytest.raises(ValueError, match="Expected quality"):
        type(good)("both", quality="medium")  # type: ignore[arg-type]


def test_a_stand_in_summary_of_a_prior_method_carries_the_caveat() -> None:
    assert standin_caveats(["qlognei", "prior_ei", "prior_ei_tp"]) == [STANDIN_CAVEAT]
    assert standin_caveats(["qlognei", "random"]) == []
    assert "simulated table" in STANDIN_CAVEAT


def _first_rows(ctx: RunContext) -> torch.Tensor:
    return ctx.available[: ctx.q]
