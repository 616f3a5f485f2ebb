"""
Benchmarking acquisition functions
==================================

Compare acquisition functions on pco64 with the benchmark harness.

Calls :func:`~bolt_pco64.bench.comparison.run_comparison` for four methods
(random, constrained qLogNEI and qLogEI, and the naive qLogNEI that ignores the
constraint), prints ``summary.md`` and shows the regret plot. A rerun with the same
``--out`` resumes instead of recomputing.

The page leads with the protocol (:mod:`bolt_pco64.bench.protocol`): which methods
differ, on which endpoint, with its power. On the few seeds a tutorial can afford it
says that it is a smoke test and compares nothing; the default design of
``bolt-pco64 bench`` (100 paired seeds × 100 evaluations) is the one that
separates methods (:doc:`/protocol`).

Seeds and budget default to ``--quick``'s (``bolt_pco64.bench.QUICK``).

Run: ``python examples/compare_acquisitions.py [--seeds 3] [--budget 30]``
"""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt

from bolt_pco64.bench import QUICK, run_comparison


def main() -> None:
    parser = argparse.ArgumentParser(description="Compare BO methods on pco64.")
    parser.add_argument("--methods", default="random,qlognei,qlogei,naive")
    parser.add_argument("--seeds", type=int, default=QUICK.seeds)
    parser.add_argument("--budget", type=int, default=QUICK.budget)
    parser.add_argument("--n-init", type=int, default=None)
    parser.add_argument("--out", default="bench-results/compare")
    parser.add_argument("--jobs", type=int, default=1, help="local worker processes")
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()

    result = run_comparison(
        QUICK.spec(
            methods=args.methods.split(","),
            seeds=args.seeds,
            budget=args.budget,
            n_init=args.n_init,  # None: the default initial design
        ),
        args.table,
        out=args.out,
        jobs=args.jobs,
    )
    print(result.summary_markdown)
    for name, error in result.errors.items():
        print(f"failed run {name}: {error}")
    print(f"regret plot: {result.plot}")
    # The plot, as a figure at the image's own size (the site shows the figures a
    # tutorial leaves open).
    image = plt.imread(result.plot)
    dpi = 110
    fig = plt.figure(figsize=(image.shape[1] / dpi, image.shape[0] / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.imshow(image)
    ax.set_axis_off()


# %%
# Run it (the output below is the site's build run, on a small budget).

if __name__ == "__main__":  # required for --jobs (worker processes re-import this file)
    main()
