"""Time one proposal of qlognei-box and qlognei-mixed against enumeration.

For ``n`` = 20 and 50 random evaluated configurations of the table, fit the
models once (:func:`~bolt_pco64.bo.fit_constrained_models`, not timed here:
``benchmarks/bo_iteration.py`` times fits) and time the acquisition step of

- ``enumerate``: the harness's ``qlognei`` (score every untried row,
  ``optimize_acqf_discrete``);
- ``box``: :func:`~bolt_pco64.bo.box.propose_box` (``optimize_acqf`` over the
  continuous box);
- ``mixed``: :func:`~bolt_pco64.bo.box.propose_mixed`
  (``optimize_acqf_mixed_alternating``, every input integer),

with the settings of :data:`~bolt_pco64.bo.box.BOX_DEFAULTS`. Prints the
median CPU seconds per proposal (``time.process_time``: on a shared machine
wall time measures the neighbours), each as a ratio to ``enumerate``, and how
often the box/mixed point snapped to a row already evaluated.

Run: ``python benchmarks/box_proposal.py [--repeats 5] [--threads 1] [--table PATH]``
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
from _data import load, random_rows

from bolt_pco64.bo.box import propose_box, propose_mixed
from bolt_pco64.bo.gp import (
    ProposalContext,
    fit_constrained_models,
    propose_acquisition,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="20,50")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--table", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    f, cand, y_all, m_all = load(args.table)
    print(
        f"{'n':>4} {'enumerate':>10} {'box':>8} {'(ratio)':>8} {'mixed':>8} "
        f"{'(ratio)':>8} {'box repeats':>12} {'mixed repeats':>14}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        times: dict[str, list[float]] = {"enum": [], "box": [], "mixed": []}
        repeats = {"box": 0, "mixed": 0}
        for rep in range(args.repeats):
            rows = random_rows(len(cand), n, rep)
            X, y, m = cand[rows], y_all[rows], m_all[rows]
            models = fit_constrained_models(X, y, m, f.bounds, seed=rep)
            untried = torch.ones(len(cand), dtype=torch.bool)
            untried[rows] = False
            t0 = time.process_time()
            ctx = ProposalContext(X, y, f.bounds, 1, rep, cand[untried])
            propose_acquisition("qlognei", models, ctx)
            times["enum"].append(time.process_time() - t0)
            for name, fn in (("box", propose_box), ("mixed", propose_mixed)):
                t0 = time.process_time()
                point = fn(models, ctx)
                times[name].append(time.process_time() - t0)
                repeats[name] += int(not untried[f.lookup(point)].all())
        e, b, mx = (statistics.median(times[k]) for k in ("enum", "box", "mixed"))
        print(
            f"{n:4d} {e:9.3f}s {b:7.3f}s {b / e:7.1f}x {mx:7.3f}s {mx / e:7.1f}x "
            f"{repeats['box']:>7d}/{args.repeats:<4d} {repeats['mixed']:>9d}/{args.repeats:<4d}"
        )


if __name__ == "__main__":
    main()
