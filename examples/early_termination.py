"""
Early termination
=================

The per-step times a run records say early whether it can beat the best run
so far. This tutorial follows one run step by step with the ``posterior``
policy (:mod:`bolt_pco64.bo.early_stop`: the model's prediction and the steps'
estimate combined, stop when the expected improvement is negligible), then
lets the benchmark harness stop runs on its own and counts the GPU-hours saved.

Run: ``python examples/early_termination.py [--seeds 1] [--budget-hours 200]
[--out DIR]``
"""

# %%
# A partial run, step by step
# ---------------------------
#
# :class:`~bolt_pco64.tables.partial_runs.PartialRuns` gives every row's throughput
# estimate and its standard error after its first ``k`` steps (by the public
# runner's estimators), and what those steps cost. An objective GP fitted on a
# random initial design gives the prior at the configuration we follow.

import argparse
from pathlib import Path

import numpy as np
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench import ComparisonSpec, run_comparison
from bolt_pco64.bo import fit_gp
from bolt_pco64.bo.early_stop import Evidence, PosteriorStop, StepEstimates
from bolt_pco64.tables.partial_runs import PartialRuns

parser = argparse.ArgumentParser(description="Early termination on pco64.")
parser.add_argument("--seeds", type=int, default=1)
parser.add_argument("--budget-hours", type=float, default=200.0)
parser.add_argument("--n-init", type=int, default=8)
parser.add_argument("--out", default="bench-results/early-termination")
args = parser.parse_args()

torch.set_num_threads(1)
f = PCO64()
cand = f.candidates()
tried = torch.randperm(len(cand), generator=torch.Generator().manual_seed(0))[:10]
y = f(cand[tried])
ok = ~y.isnan()
gp_y = fit_gp(cand[tried][ok], y[ok], f.bounds, seed=0)  # the objective GP
best = float(y[ok].max())  # the incumbent

runs = PartialRuns(f.table)  # every row's estimate and cost after k steps
feasible = ~f(cand).isnan()
nxt = int(torch.nonzero(feasible)[0])  # a configuration that runs
with torch.no_grad():
    post = gp_y.posterior(cand[[nxt]])  # the model's prediction there
evidence = Evidence(
    incumbent=best, prior_mean=float(post.mean), prior_var=float(post.variance)
)
rule = PosteriorStop()
print(f"incumbent {best:.5f}; row {nxt} runs {int(runs.n_steps[nxt])} steps")
for k in range(1, int(runs.n_steps[nxt])):
    seen = runs.estimate(np.array([nxt]), k)  # what the first k steps show
    now = StepEstimates(k, seen.throughput, seen.stderr, seen.n_inliers)
    print(
        f"after {k:2d} steps: {seen.throughput.item():.5f} "
        f"± {seen.stderr.item():.5f}, {seen.gpu_hours.item():.1f} GPU-hours"
    )
    if rule.stops(now, evidence).item():
        print(f"stop after {k} steps")
        break

# %%
# In the harness
# --------------
#
# ``early_stop="posterior"`` judges every run after each of its steps; a
# stopped run is charged start-up plus the steps it ran and frees its budget
# for more evaluations. The records say which runs stopped, after how many
# steps.

spent = {}
for policy in ("none", "posterior"):
    spec = ComparisonSpec(
        methods=("qlognei",),
        seeds=args.seeds,
        budget_hours=args.budget_hours,
        n_init=args.n_init,
        early_stop=policy,
    )
    result = run_comparison(spec, out=Path(args.out) / policy, progress=False)
    rec = result.records
    spent[policy] = rec
    print(
        f"{policy:>9}: {len(rec)} runs, {int(rec['stopped'].sum())} stopped, "
        f"best feasible {rec['best_feasible'].max():.5f} of {f.optimal_value:.5f}"
    )
