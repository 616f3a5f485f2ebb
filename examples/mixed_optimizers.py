"""
BoTorch's own optimizers on the grid
====================================

A constrained BoTorch loop on pco64 whose next point comes from BoTorch's
mixed-integer optimizer (``optimize_acqf_mixed_alternating``) or its box
optimizer (``optimize_acqf``) -- not from enumerating ``candidates()``.

Only 780 of the 29,160 integer points of pco64's bounds are configurations,
so what ``discrete_inds`` alone says (every integer of each range) lets an
optimizer propose points that are not configurations: the problem snaps them
to a configuration, often one already tried. The problem offers its grid in
BoTorch's terms instead:

- ``f.discrete_dims``: the levels of each input, the ``discrete_dims`` of
  ``optimize_acqf_mixed_alternating``;
- ``f.inequality_constraints``: the grid's linear rules (``dp * tp * pp * cp``
  is the number of GPUs, a sum in log2, as two inequalities; ``sp <= tp``;
  the model chunks' rules) as BoTorch's ``inequality_constraints``;
- ``f.project``: what linear rules cannot say (ZeRO stage 2/3 only without
  pipelining): the nearest configuration, as the optimizers'
  ``post_processing_func``; ``exclude=`` leaves out those already tried.

The loop below runs twice: constrained qLogNEI with the mixed optimizer, and
UCB (an exploring acquisition) with the box optimizer. Each proposal is
checked with ``f.is_configuration``; ``f.snap_counts`` counts, at the end,
the evaluated points that were not configurations.
``benchmarks/grid_proposals.py`` measures the share of proposals that are
configurations, and of repeats, against ``discrete_inds`` alone.

Run: ``python examples/mixed_optimizers.py [--budget 16] [--n-init 8] [--seed 0]``
(a minute or two with the defaults).
"""

from __future__ import annotations

import argparse
import functools
import warnings
from typing import Any

import torch
from botorch.acquisition import UpperConfidenceBound, qLogNoisyExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.acquisition.objective import GenericMCObjective
from botorch.exceptions.warnings import BadInitialCandidatesWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf, optimize_acqf_mixed_alternating
from gpytorch.mlls import ExactMarginalLogLikelihood

from bolt_pco64 import PCO64


def fit(X: torch.Tensor, Y: torch.Tensor, bounds: torch.Tensor) -> SingleTaskGP:
    """A GP on ``n x 8`` inputs (normalised with the problem bounds)."""
    model = SingleTaskGP(
        X,
        Y.unsqueeze(-1),
        input_transform=Normalize(d=X.shape[-1], bounds=bounds),
        outcome_transform=Standardize(m=1),
    )
    fit_gpytorch_mll(
        ExactMarginalLogLikelihood(model.likelihood, model),
        optimizer_kwargs={"options": {"ftol": 1e-6, "maxiter": 100}},
    )
    return model


def acquisition(
    kind: str, X: torch.Tensor, y: torch.Tensor, margin: torch.Tensor, f: PCO64
) -> AcquisitionFunction:
    """Constrained qLogNEI (objective GP on the feasible points, constraint GP
    on all), or UCB on the objective GP."""
    feasible = ~torch.isnan(y)  # NaN: the configuration ran out of memory
    objective_gp = fit(X[feasible], y[feasible], f.bounds)
    if kind == "ucb":
        return UpperConfidenceBound(objective_gp, beta=4.0)
    return qLogNoisyExpectedImprovement(
        model=ModelListGP(objective_gp, fit(X, margin, f.bounds)),
        X_baseline=X,
        objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
        constraints=[lambda Z: Z[..., 1]],  # feasible where <= 0
    )


def grid(f: PCO64, tried: torch.Tensor) -> dict[str, Any]:
    """The grid in BoTorch's terms: each input's levels, the linear rules, and
    the nearest configuration not tried yet as the post-processing."""
    return {
        "discrete_dims": f.discrete_dims,
        "inequality_constraints": f.inequality_constraints,
        "post_processing_func": functools.partial(f.project, exclude=tried),
    }


def propose(
    optimizer: str, acqf: AcquisitionFunction, f: PCO64, **space: Any
) -> torch.Tensor:
    """The next point from BoTorch's mixed or box optimizer over ``space``
    (:func:`grid`'s terms; the box optimizer takes all but the levels)."""
    settings = {"bounds": f.bounds, "q": 1, "num_restarts": 4, "raw_samples": 128}
    if optimizer == "mixed":
        x, _ = optimize_acqf_mixed_alternating(acqf, **settings, **space)
    else:
        space.pop("discrete_dims", None)
        x, _ = optimize_acqf(acqf, **settings, **space)
    return x.detach()


def loop(
    f: PCO64, optimizer: str, kind: str, budget: int, n_init: int, seed: int
) -> None:
    torch.manual_seed(seed)  # BoTorch's raw samples use the global generator
    C = f.candidates()
    X = C[torch.randperm(len(C))[:n_init]]  # a random initial design
    y, margin = f(X), f.outcome_constraint(X)
    print(f"-- {optimizer} optimizer, {kind}: {n_init} random configurations")
    for it in range(n_init + 1, budget + 1):
        x = propose(optimizer, acquisition(kind, X, y, margin, f), f, **grid(f, X))
        is_row = bool(f.is_configuration(x)[0])
        repeat = bool((f.lookup(x)[:, None] == f.lookup(X)).any())
        X = torch.cat([X, x])
        y = torch.cat([y, f(x)])
        margin = torch.cat([margin, f.outcome_constraint(x)])
        value = "OOM" if torch.isnan(y[-1]) else f"{y[-1].item():.5f}"
        print(
            f"iteration {it:3d}: {x[0].int().tolist()} -> {value:>8} "
            f"(configuration: {is_row}, repeat: {repeat})"
        )
    best = y[~torch.isnan(y)].max().item()
    print(f"best feasible {best:.5f} of the optimum {f.optimal_value:.5f}")


def main() -> None:
    parser = argparse.ArgumentParser(description="BoTorch's optimizers on the grid.")
    parser.add_argument("--budget", type=int, default=16, help="evaluations per loop")
    parser.add_argument("--n-init", type=int, default=8, help="random initial design")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()
    if not 1 <= args.n_init < args.budget:
        parser.error(
            f"expected 1 <= --n-init < --budget, got {args.n_init}, {args.budget}"
        )
    warnings.filterwarnings("ignore", message=".*not standardized.*")
    # Before a feasible region is modelled, qLogNEI's raw samples can all score
    # -inf; BoTorch then starts from random points and says so at every step.
    warnings.filterwarnings("ignore", category=BadInitialCandidatesWarning)
    torch.set_num_threads(1)  # GPs on tens of points: one thread is faster
    f = PCO64(table=args.table)
    print(f"the grid: {len(f.candidates())} configurations, levels {f.discrete_dims}")
    for indices, coefficients, rhs in f.inequality_constraints:
        print(f"  sum of X[{indices.tolist()}] * {coefficients.tolist()} >= {rhs}")
    loop(f, "mixed", "qlognei", args.budget, args.n_init, args.seed)
    loop(f, "box", "ucb", args.budget, args.n_init, args.seed)
    print(f"snaps: {f.snap_counts}")


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":
    main()
