"""
Quick start: evaluate configurations
====================================

Evaluate pco64 configurations, read the memory constraint and auxiliary
columns through ``lookup()``, and see a run that does not fit in memory.

The configurations shown are chosen from the table by what they are, so the
script works on any table of the card's schema: the optimum, the feasible
configuration closest to the memory limit, the configuration nearest the
optimum that runs out of memory (if any does), and a continuous point, which
snaps to its nearest configuration.

Run: ``python examples/quickstart.py [--table PATH]``
"""

from __future__ import annotations

import argparse

import torch

from bolt_pco64 import PCO64
from bolt_pco64.tables.table import decode_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()

    f = PCO64(table=args.table)
    n_oom = len(f.table) - f.table.n_feasible
    print(f"table: {f.table.source}")
    print(f"{len(f.table)} configurations, {f.table.n_feasible} run, {n_oom} OOM")
    print(f"inputs (last dim of X): {', '.join(f.instance.input_columns)}")
    print(f"optimal throughput {f.optimal_value:.5f} at {f.optimizers.tolist()[0]}")

    # Pick configurations by the constraint: c(X) <= 0 iff the run fits in memory.
    candidates = f.candidates()
    margins = f.outcome_constraint(candidates)
    fits = margins <= 0
    tightest = torch.where(fits, margins, -torch.inf).argmax()
    chosen = [("optimum", f.optimizers[0]), ("nearest the limit", candidates[tightest])]
    if (~fits).any():
        # The out-of-memory configuration nearest the optimum (encoded space).
        distance = torch.linalg.vector_norm(candidates - f.optimizers, dim=-1)
        crash = torch.where(~fits, distance, torch.inf).argmin()
        chosen.append(("out of memory", candidates[crash]))
    else:
        print("(every configuration of this table fits in memory: no OOM to show)")
    point = f.bounds[0] + 0.4 * (f.bounds[1] - f.bounds[0])
    chosen.append(("continuous, snapped", point))
    X = torch.stack([x for _, x in chosen])

    throughput = f(X)  # batch_shape = len(chosen); NaN where the run OOMed
    margin = f.outcome_constraint(X)  # <= 0 iff the configuration fits in memory
    rows = f.lookup(X)  # canonical row indices, to read any other column
    peak_mem = f.table.column("peak_mem")[rows]  # inf where the run OOMed
    overall_time = f.table.column("overall_time")[rows]  # NaN where it OOMed
    feasible = f.is_feasible(X)  # BoTorch's, on the configurations X snaps to

    configs = [
        " ".join(f"{key}={v}" for key, v in decode_inputs(candidates[r]).items())
        for r in rows
    ]
    w = max(len(what) for what, _ in chosen)
    c = max(len(cfg) for cfg in configs)
    print()
    print(
        f"{'':<{w}}  {'configuration':<{c}}  {'thr':>7} {'margin':>7} {'feas':>5} "
        f"{'mem GB':>6} {'time s':>6}"
    )
    for k, (what, _) in enumerate(chosen):
        print(
            f"{what:<{w}}  {configs[k]:<{c}}  {throughput[k].item():7.5f} "
            f"{margin[k].item():7.3f} {bool(feasible[k])!s:>5} "
            f"{peak_mem[k].item():6.1f} {overall_time[k].item():6.0f}"
        )
    print()
    print(
        "An OOM run has no throughput (NaN), a positive margin, peak memory inf and "
        "no time:\nthe crash is a hidden constraint, learnt only by running."
    )


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":
    main()
