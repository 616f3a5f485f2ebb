"""
The parallelism-informed prior
==============================

:mod:`bolt_pco64.bo.prior` gives the two GPs of constrained qLogNEI prior means
that know how parallel training behaves: the throughput as one over a step
time made of compute, pipeline bubble and collectives, and the memory margin
from ZeRO's model states and the activations. Their few named parameters are
fitted with the GP's hyperparameters. This tutorial runs a short loop with
:func:`~bolt_pco64.bo.prior.fit.propose_prior_ei` from a 3-row initial design and
prints what the prior learnt.

A prior built from a performance model can look better on a simulated table
than on a measured one: the stand-in tables are themselves produced by an
analytic model of parallel training.

Run: ``python examples/informed_prior.py [--steps 4]``
"""

# %%
# A short loop
# ------------

import argparse

import torch

from bolt_pco64 import PCO64
from bolt_pco64.bo.gp import ProposalContext
from bolt_pco64.bo.prior import STANDIN_CAVEAT, PriorState, propose_prior_ei

parser = argparse.ArgumentParser(description="prior_ei on pco64.")
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()

torch.set_num_threads(1)  # GPs on a few points are fastest on one thread
f = PCO64()
cand = f.candidates()
rows = [0, 300, 600]  # a 3-row initial design
state = PriorState()  # keeps the GPs between steps (warm starts)
for step in range(args.steps):
    X = cand[rows]
    untried = [r for r in range(len(cand)) if r not in rows]
    # The step: observations so far, untried rows, one pick, the step's seed.
    ctx = ProposalContext(
        X,
        f(X),
        f.bounds,
        q=1,
        seed=len(rows),
        choices=cand[untried],
        margin=f.outcome_constraint(X),
    )
    i = propose_prior_ei(ctx, f.instance, state=state)
    rows.append(untried[int(i)])
    y = f(cand[rows[-1:]]).item()
    print(f"step {step}: row {rows[-1]:4d} -> {'OOM' if y != y else f'{y:.5f}'}")

best = f(cand[rows]).nan_to_num(nan=-1.0).max().item()
print(f"best feasible {best:.5f} of {f.optimal_value:.5f} after {len(rows)} runs")

# %%
# What the prior learnt
# ---------------------
#
# The prior means' parameters are positive and named; the throughput's are in
# the table's (unpublished) throughput unit, so only their ratios are
# checkable. The memory prior's bytes per parameter can be compared with the
# ZeRO paper's 2 + 2 + 12.

for name, means in (
    ("throughput", state.models.objective.mean_module),
    ("memory", state.models.constraint.mean_module),
):
    values = ", ".join(f"{k} {float(v):.3g}" for k, v in means.values().items())
    print(f"{name}: {values}")
if f.is_simulated:
    print(STANDIN_CAVEAT)
