"""
A constrained BoTorch loop
==========================

A closed constrained-BO loop on pco64, written out in plain BoTorch.

pco64 has a crash constraint: an out-of-memory (OOM) configuration returns no
throughput at all. The loop therefore uses two GPs:

- an objective GP of the throughput, fitted on the *feasible* observations only;
- a constraint GP of the memory margin (``peak_mem_normalised``, ``<= 0`` iff
  the run fits), fitted on *every* observation;

and picks the next configuration with constrained qLogNEI over the untried
``candidates()`` (``optimize_acqf_discrete``). Before the first feasible
observation there is no incumbent, so it picks by probability of feasibility.

Run: ``python examples/constrained_bo.py [--budget 50] [--n-init 10] [--seed 0]``
(about a minute with the defaults).
"""

from __future__ import annotations

import argparse
import warnings

import torch
from botorch.acquisition import qLogNoisyExpectedImprovement
from botorch.acquisition.logei import qLogProbabilityOfFeasibility
from botorch.acquisition.objective import GenericMCObjective
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf_discrete
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.sampling import manual_seed
from gpytorch.mlls import ExactMarginalLogLikelihood

from bolt_pco64 import PCO64


def fit(X: torch.Tensor, Y: torch.Tensor, bounds: torch.Tensor) -> SingleTaskGP:
    """A GP on ``n x 8`` inputs (normalised with the problem bounds), ``n`` outcomes."""
    model = SingleTaskGP(
        X,
        Y.unsqueeze(-1),
        input_transform=Normalize(d=X.shape[-1], bounds=bounds),
        outcome_transform=Standardize(m=1),
    )
    # SciPy's default tolerance spends hundreds of L-BFGS iterations (seconds)
    # on this noise-free table chasing irrelevant lengthscales; 1e-6 is enough.
    fit_gpytorch_mll(
        ExactMarginalLogLikelihood(model.likelihood, model),
        optimizer_kwargs={"options": {"ftol": 1e-6, "maxiter": 100}},
    )
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description="Constrained BO on pco64.")
    parser.add_argument("--budget", type=int, default=50, help="evaluations in all")
    parser.add_argument("--n-init", type=int, default=10, help="random initial design")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()
    if not 1 <= args.n_init <= args.budget:
        parser.error(
            f"expected 1 <= --n-init <= --budget, got {args.n_init}, {args.budget}"
        )

    warnings.filterwarnings("ignore", message=".*not standardized.*")
    # GPs on tens of points are faster on one thread than on several contending.
    torch.set_num_threads(1)
    f = PCO64(table=args.table)
    candidates = f.candidates()  # N x 8, row i = table row i
    bounds = f.bounds
    generator = torch.Generator().manual_seed(args.seed)

    # Initial design: distinct random configurations.
    tried = torch.randperm(len(candidates), generator=generator)[: args.n_init].tolist()
    X = candidates[tried]
    y = f.evaluate_true(X)  # NaN where the run OOMed
    margin = f.outcome_constraint(X)  # <= 0 iff feasible

    def best_feasible() -> float:
        ok = ~torch.isnan(y)
        return y[ok].max().item() if ok.any() else float("nan")

    print(
        f"initial design: {args.n_init} configurations, best feasible {best_feasible():.5f}"
    )
    for it in range(args.n_init + 1, args.budget + 1):
        untried = torch.ones(len(candidates), dtype=torch.bool)
        untried[tried] = False
        choices = candidates[untried]
        index_of = torch.nonzero(untried).squeeze(-1)
        step_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        sampler = SobolQMCNormalSampler(torch.Size([128]), seed=step_seed)

        feasible = ~torch.isnan(y)
        with manual_seed(step_seed):  # fitting and baseline pruning are seeded
            constraint_gp = fit(X, margin, bounds)  # every observation
            if feasible.any():
                objective_gp = fit(X[feasible], y[feasible], bounds)  # feasible only
                acqf = qLogNoisyExpectedImprovement(
                    model=ModelListGP(objective_gp, constraint_gp),
                    X_baseline=X,
                    sampler=sampler,
                    objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
                    constraints=[lambda Z: Z[..., 1]],  # feasible where <= 0
                )
            else:  # no incumbent yet: probability of feasibility
                acqf = qLogProbabilityOfFeasibility(
                    model=constraint_gp,
                    constraints=[lambda Z: Z[..., 0]],
                    sampler=sampler,
                )
            x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=choices)

        row = int(index_of[(choices == x_next).all(dim=-1)][0])
        tried.append(row)
        X = torch.cat([X, x_next])
        y = torch.cat([y, f.evaluate_true(x_next)])
        margin = torch.cat([margin, f.outcome_constraint(x_next)])
        status = "OOM" if torch.isnan(y[-1]) else f"{y[-1].item():.5f}"
        print(
            f"iteration {it:3d}: row {row:4d} -> {status:>8}; best feasible {best_feasible():.5f}"
        )

    regret = f.optimal_value - best_feasible()
    ooms = int(torch.isnan(y).sum())
    print(
        f"done: best feasible throughput {best_feasible():.5f}, optimum {f.optimal_value:.5f}, "
        f"regret {regret:.5f}; {ooms} of {len(y)} evaluations ran out of memory"
    )


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":
    main()
