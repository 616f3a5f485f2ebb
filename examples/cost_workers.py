"""
Cost and asynchronous workers
=============================

People who tune a parallelism configuration pay in GPU-hours and wait in
wall-clock time. This tutorial reads what each run costs under the package's
one time model (:class:`bolt_pco64.tables.time_model.TimeModel`), then compares random
search and constrained qLogNEI on a budget of GPU-hours instead of a number of
evaluations, with several workers evaluating at once on a simulated clock, and
reads the cost report the harness writes. Background: the user guide's page
on cost.

Run: ``python examples/cost_workers.py [--seeds 2] [--budget-hours 250]
[--workers 2] [--out DIR]``
"""

# %%
# What a run costs
# ----------------
#
# A run that fits in memory costs start-up (an assumption, 120 s) plus its
# ``overall_time``; a crash costs start-up plus the step in which memory ran
# out, estimated from the nearest feasible configurations. GPU-hours are
# seconds × the instance's GPUs / 3600.

import argparse
from pathlib import Path

import matplotlib.pyplot as plt
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench import ComparisonSpec, run_comparison
from bolt_pco64.tables.time_model import TimeModel

parser = argparse.ArgumentParser(description="Cost and workers on pco64.")
parser.add_argument("--seeds", type=int, default=2)
parser.add_argument("--budget-hours", type=float, default=250.0)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--n-init", type=int, default=8)
parser.add_argument("--out", default="bench-results/cost-workers")
args = parser.parse_args()

f = PCO64()
times = TimeModel(f.table)
print(times.describe())
print("GPU-hours of the first three rows:", times.gpu_hours[:3].tolist())
print(
    "seconds after 3 steps of row 0:", times.seconds_after_steps(torch.tensor([0]), 3)
)
feasible = times.feasible
print(
    f"median run {times.gpu_hours[feasible].median():.1f} GPU-hours, "
    f"median crash {times.gpu_hours[~feasible].median():.2f}"
)

# %%
# A budget of GPU-hours, two workers
# ----------------------------------
#
# ``budget_hours`` gives each run that many GPU-hours of the instance's
# cluster; ``workers`` runs that many evaluations at once, each on its own
# cluster. A worker that frees takes the next configuration; the method sees
# the results in so far and the configurations still running as pending
# (``ctx.pending``, passed to the acquisition function as ``X_pending``).

spec = ComparisonSpec(
    methods=("random", "qlognei"),
    seeds=args.seeds,
    budget_hours=args.budget_hours,
    workers=args.workers,
    n_init=args.n_init,
)
result = run_comparison(spec, out=args.out, progress=False)
records = result.records
print(records.groupby("method")["worker"].value_counts().unstack().to_string())

# %%
# The cost report
# ---------------
#
# Every comparison writes ``cost_summary.md`` (regret against GPU-hours and
# simulated wall-clock, the expected running time to within 1, 2 and 5 % of
# the optimum) and ``cost.png``.

out = Path(args.out)
print((out / "cost_summary.md").read_text())

_, ax = plt.subplots(figsize=(10, 4))
ax.imshow(plt.imread(out / "cost.png"))
ax.set_axis_off()
