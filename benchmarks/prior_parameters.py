"""Fit the prior means on random subsets of each table and print their parameters.

For each problem and each ``n`` in ``--sizes``, ``--repeats`` random sets of
``n`` configurations are drawn; :func:`bolt_pco64.bo.prior.fit_prior_models`
fits both GPs on them (objective on the feasible ones, constraint on all),
and the fitted parameters of the throughput and memory priors are collected,
with the unit-free readings of
:func:`~bolt_pco64.bo.prior.physical_summary` and the per-GPU FLOP rate the
fitted compute time implies if the throughput were in steps/s or in
samples/s. Prints the median of each over the repeats and, with ``--out``,
writes every fit to ``parameters.csv`` and the medians to
``parameters.md`` there (atomically).

Run: ``python benchmarks/prior_parameters.py [--problems pco16,pco32,pco64]
[--sizes 20,100] [--repeats 5] [--out DIR]``
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd
import torch

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bo.gp import ProposalContext
from bolt_pco64.bo.prior import STANDIN_CAVEAT, fit_prior_models, physical_summary
from bolt_pco64.problem import PROBLEMS


def fits(problem: str, n: int, repeats: int) -> list[dict[str, float | str | int]]:
    """One record per repeat: the fitted parameters and their readings."""
    f = PROBLEMS[problem]()
    cand = f.candidates()
    y_all, m_all = f.evaluate_true(cand), f.outcome_constraint(cand)
    batch = f.instance.model.batch_size
    out = []
    for rep in range(repeats):
        g = torch.Generator().manual_seed(1000 * n + rep)
        rows = torch.randperm(len(cand), generator=g)[:n]
        X, y, m = cand[rows], y_all[rows], m_all[rows]
        ctx = ProposalContext(X, y, f.bounds, seed=rep, margin=m)
        models = fit_prior_models(ctx, f.instance)
        rec: dict[str, float | str | int] = {
            "problem": problem,
            "table": f.table.source.kind,
            "n": n,
            "repeat": rep,
        }
        if models.objective is not None:
            mean = models.objective.mean_module
            rec.update(mean.values())
            rec.update(physical_summary(mean))
            flop_time = mean.values()["flop_time"]
            rec["tflops_per_gpu_if_steps_per_s"] = 1e-12 / flop_time
            rec["tflops_per_gpu_if_samples_per_s"] = 1e-12 / (batch * flop_time)
        rec.update(models.constraint.mean_module.values())
        out.append(rec)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", default="pco16,pco32,pco64")
    parser.add_argument("--sizes", default="20,100")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    records = []
    for problem in args.problems.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            records += fits(problem, n, args.repeats)
    frame = pd.DataFrame(records)
    medians = (
        frame.drop(columns=["repeat"]).groupby(["problem", "table", "n"]).median().T
    )
    text = medians.to_string(float_format=lambda v: f"{v:.3g}")
    print(text)
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "parameters.csv", frame.to_csv(index=False))
        kinds = sorted(frame["table"].unique())
        md = [
            "# Fitted prior parameters (medians over repeats)",
            "",
            *([STANDIN_CAVEAT, ""] if "simulated" in kinds else []),
            f"Tables: {', '.join(kinds)} (how each problem's table was found).",
            "",
            "Written by `benchmarks/prior_parameters.py` "
            f"(`--problems {args.problems} --sizes {args.sizes} "
            f"--repeats {args.repeats}`); every fit is in `parameters.csv`.",
            "",
            "```",
            text,
            "```",
            "",
        ]
        atomic_write_text(out / "parameters.md", "\n".join(md))


if __name__ == "__main__":
    main()
