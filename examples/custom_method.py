"""
Adding your own method
======================

A method of the benchmark harness receives a
:class:`~bolt_pco64.bench.contract.RunContext` (the problem, what was tried and seen,
the untried rows, the batch size) and returns ``q`` untried rows, or a
``q x d`` floating tensor of points of ``ctx.bounds``, which the harness snaps
to rows. Register it, and ``run_comparison`` and ``bolt-pco64 bench`` compare
it with the built-in methods on the same seeds and initial designs.

Run: ``python examples/custom_method.py [--seeds 2] [--budget 20] [--out DIR]``
"""

# %%
# A method is a function
# ----------------------
#
# This one tries the configurations with the lowest peak memory first. It
# reads the table's ``peak_mem`` column, which no real method could know
# before running a configuration (an oracle of the constraint): it never
# picks a crash after the initial design, and shows what ignoring the
# objective costs.

import argparse

import torch

from bolt_pco64.bench import (
    ComparisonSpec,
    RunContext,
    method_names,
    register_method,
    run_comparison,
)

parser = argparse.ArgumentParser(description="A method of your own.")
parser.add_argument("--seeds", type=int, default=2)
parser.add_argument("--budget", type=int, default=20)
parser.add_argument("--n-init", type=int, default=8)
parser.add_argument("--out", default="bench-results/custom-method")
args = parser.parse_args()


@register_method("lowest_memory_first")
def lowest_memory_first(ctx: RunContext) -> torch.Tensor:
    mem = ctx.problem.table.column("peak_mem")[ctx.untried]  # inf where OOM
    return ctx.untried[torch.argsort(mem, stable=True)[: ctx.q]]


print("lowest_memory_first" in method_names())

# %%
# Compare it
# ----------

spec = ComparisonSpec(
    ("random", "lowest_memory_first"),
    seeds=args.seeds,
    budget=args.budget,
    n_init=args.n_init,
)
result = run_comparison(spec, out=args.out, progress=False)
print(result.summary_markdown)

# %%
# Methods with a model, and methods of other packages
# ---------------------------------------------------
#
# A method with a model subclasses
# :class:`bolt_pco64.bench.Method <bolt_pco64.bench.contract.Method>`: ``propose(ctx)``
# as above, ``objective_model(ctx)`` returning its objective GP (the harness
# re-conditions it after each evaluation and recommends from it, for the inference
# regret) and ``n_init`` for its own initial-design size. Another package adds methods
# through the entry-point group ``bolt_pco64.methods`` of its ``pyproject.toml``::
#
#     [project.entry-points."bolt_pco64.methods"]
#     mine = "my_package.methods:MyMethod"
#
# Once that package is installed, ``mine`` appears in
# ``bolt-pco64 bench --methods`` and its ``--help``. This package registers
# Optuna's samplers that way (``optuna_tpe``, ``optuna_gp``).
