"""Time one constrained-BO iteration on pco64 and print the medians.

One iteration = fit the objective GP (feasible observations) and the
constraint GP (all observations) on ``n`` evaluated configurations, then score
every untried candidate with constrained qLogNEI and pick the best
(``optimize_acqf_discrete``), exactly as the harness's ``qlognei`` method does
(:mod:`bolt_pco64.bo`). ``n`` = 20, 50 and 100 random configurations of the
table; each size is repeated ``--repeats`` times with different subsets.

Two fits are timed: *cold* (from BoTorch's default hyperparameters, what a
single iteration costs on its own) and *warm* (started from the
hyperparameters of a fit on the first ``n - 1`` points, as the harness does
from one iteration to the next).

Run: ``python benchmarks/bo_iteration.py [--repeats 5] [--threads N] [--table PATH]``
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
from _data import load, random_rows

from bolt_pco64.bo import ProposalContext, fit_constrained_models, propose_acquisition


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="20,50,100")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--table", default=None)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    f, cand, y_all, m_all = load(args.table)
    print(
        f"{'n':>5} {'fit cold':>9} {'fit warm':>9} {'score':>8} {'iteration (cold)':>17} {'iteration (warm)':>17}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        cold, warm, score = [], [], []
        for rep in range(args.repeats):
            rows = random_rows(len(cand), n, rep)
            X, y, m = cand[rows], y_all[rows], m_all[rows]
            t0 = time.perf_counter()
            models = fit_constrained_models(X, y, m, f.bounds, seed=rep)
            cold.append(time.perf_counter() - t0)
            prev = fit_constrained_models(X[:-1], y[:-1], m[:-1], f.bounds, seed=rep)
            t0 = time.perf_counter()
            fit_constrained_models(X, y, m, f.bounds, seed=rep, warm_start=prev)
            warm.append(time.perf_counter() - t0)
            untried = torch.ones(len(cand), dtype=torch.bool)
            untried[rows] = False
            t0 = time.perf_counter()
            ctx = ProposalContext(X, y, f.bounds, 1, rep, cand[untried])
            propose_acquisition("qlognei", models, ctx)
            score.append(time.perf_counter() - t0)
        mc, mw, ms = (statistics.median(v) for v in (cold, warm, score))
        print(
            f"{n:5d} {mc:8.3f}s {mw:8.3f}s {ms:7.3f}s {mc + ms:16.3f}s {mw + ms:16.3f}s"
        )


if __name__ == "__main__":
    main()
