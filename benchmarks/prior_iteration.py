"""Time one prior_ei iteration against one qlognei iteration, side by side.

One iteration = fit the objective GP (feasible observations) and the
constraint GP (all observations) on the evaluations so far, then choose one
of the untried candidates by constrained qLogNEI (``optimize_acqf_discrete``):
:func:`bolt_pco64.bo.fit_constrained_models` +
:func:`~bolt_pco64.bo.propose_acquisition` for ``qlognei``;
:func:`bolt_pco64.bo.prior.propose_prior_ei` (both GPs on the prior means)
and its throughput-only ablation for ``prior_ei`` / ``prior_ei_tp``.

*Warm* is what an iteration costs inside a run: each method runs a chain of
iterations on growing prefixes of one random set of ``n`` evaluations, each
fit warm-started from the previous iteration's models as the harness does;
the chain starts cold ``warmup`` steps before the timed ``window`` of steps
that ends at ``n`` evaluations (a single warm step is not representative:
how many L-BFGS iterations a refit needs varies from 1 to the limit from
one step to the next). *Cold* is one iteration at ``n`` from the default
hyperparameters. The same random sets serve every method. Prints the mean
seconds and the ratios to ``qlognei`` (the issue's target: a prior_ei
iteration at 40 observations costs at most twice a qlognei one). Timings on
a loaded machine move together only roughly; compare ratios from one run.

Run: ``python benchmarks/prior_iteration.py [--n 40] [--repeats 5]
[--warmup 10] [--window 5] [--problem pco64] [--table PATH] [--threads N]``
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from dataclasses import dataclass

import torch
from torch import Tensor

from bolt_pco64.bo import ProposalContext, fit_constrained_models, propose_acquisition
from bolt_pco64.bo.prior import PriorState, propose_prior_ei
from bolt_pco64.problem import PCO, PROBLEMS

#: The methods timed, in print order, and the prior kind of each prior method.
METHODS: dict[str, str | None] = {
    "qlognei": None,
    "prior_ei": "both",
    "prior_ei_tp": "throughput",
}


@dataclass(frozen=True)
class Sample:
    """One random set of evaluations and the untried candidates."""

    f: PCO
    X: Tensor
    y: Tensor
    m: Tensor
    choices: Tensor
    seed: int


def iteration(method: str, s: Sample, k: int, state: dict[str, object]) -> float:
    """Seconds of one iteration of ``method`` on the first ``k`` evaluations.

    ``state`` carries the previous iteration's models (the warm start, as in
    the harness); an empty dict makes it a cold iteration.
    """
    kind = METHODS[method]
    f, X, y, m = s.f, s.X[:k], s.y[:k], s.m[:k]
    ctx = ProposalContext(X, y, f.bounds, 1, s.seed, s.choices, margin=m)
    t0 = time.perf_counter()
    if kind is None:
        models = fit_constrained_models(
            X, y, m, f.bounds, s.seed, warm_start=state.get("models")
        )
        propose_acquisition("qlognei", models, ctx)
        state["models"] = models
    else:
        prior_state = state.setdefault("prior", PriorState())
        propose_prior_ei(ctx, f.instance, kind, prior_state)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=40, help="observations")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--warmup", type=int, default=10, help="warm-started steps before timing"
    )
    parser.add_argument(
        "--window", type=int, default=5, help="timed steps, ending at n"
    )
    parser.add_argument("--problem", default="pco64", choices=sorted(PROBLEMS))
    parser.add_argument("--table", default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    f = PROBLEMS[args.problem](table=args.table)
    cand = f.candidates()
    y_all, m_all = f.evaluate_true(cand), f.outcome_constraint(cand)
    print(
        f"{args.problem}: {f.table.source}; {len(cand)} candidates; n = {args.n}; "
        f"torch threads {torch.get_num_threads()}"
    )
    times: dict[tuple[str, bool], list[float]] = {}
    for rep in range(args.repeats):
        g = torch.Generator().manual_seed(1000 * args.n + rep)
        rows = torch.randperm(len(cand), generator=g)[: args.n]
        untried = torch.ones(len(cand), dtype=torch.bool)
        untried[rows] = False
        sample = Sample(f, cand[rows], y_all[rows], m_all[rows], cand[untried], rep)
        for method in METHODS:
            state: dict[str, object] = {}
            start = args.n - args.warmup - args.window + 1
            for k in range(start, args.n + 1):
                seconds = iteration(method, sample, k, state)
                if k > args.n - args.window:
                    times.setdefault((method, True), []).append(seconds)
            times.setdefault((method, False), []).append(
                iteration(method, sample, args.n, {})
            )
    med = {key: statistics.mean(v) for key, v in times.items()}
    print(f"{'method':<12} {'warm':>8} {'ratio':>6} {'cold':>8} {'ratio':>6}  (means)")
    for method in METHODS:
        cells = [
            f"{med[(method, w)]:7.3f}s {med[(method, w)] / med[('qlognei', w)]:6.2f}"
            for w in (True, False)
        ]
        print(f"{method:<12} " + " ".join(cells))


if __name__ == "__main__":
    main()
