"""Share of BoTorch's proposals that are configurations, and of repeats.

A constrained loop on pco64 proposes each next point with one of BoTorch's
optimizers over one search space, and records whether the proposal is a
configuration (a row of the table) and whether it snaps to a configuration
already evaluated. Search spaces:

- ``today``: what ``discrete_inds`` alone gives -- every integer of each
  input's range as its levels, no constraint, no post-processing;
- ``grid``: the problem's grid in BoTorch's terms -- ``f.discrete_dims``,
  ``f.inequality_constraints`` and ``post_processing_func=f.project``;
- ``grid-new``: the same, projecting onto configurations not yet evaluated
  (``functools.partial(f.project, exclude=X)``).

Optimizers: ``mixed`` (``optimize_acqf_mixed_alternating``) and ``box``
(``optimize_acqf``; ``today`` relaxes every input to the box). Acquisitions:
constrained ``qlognei`` (an objective GP on the feasible observations, a
constraint GP on all) and ``ucb`` (``UpperConfidenceBound``, beta 4, on the
objective GP). Each loop appends the proposal as proposed, as a user's loop
would, with the value of the configuration it snaps to. The GPs, the
acquisitions and the optimizer calls are ``examples/mixed_optimizers.py``'s
(imported from it, 4 restarts and 128 raw samples).

Writes ``records.csv`` (one row per proposal), ``report.json`` (the run's
settings) and ``README.md`` (the shares by arm) into ``--out``, atomically;
``--report DIR`` rewrites ``README.md`` from the records and settings there.

Run: ``python benchmarks/grid_proposals.py [--seeds 2] [--steps 4] [--out DIR]``
(a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from bolt_pco64 import PCO64
from bolt_pco64._io import atomic_write_text

# The example's loop, not a copy of it: its GPs, acquisitions and optimizer calls.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from mixed_optimizers import acquisition, grid, propose

SPACES = ("today", "grid", "grid-new")
OPTIMIZERS = ("mixed", "box")
ACQUISITIONS = ("qlognei", "ucb")


def space(f: PCO64, name: str, X: torch.Tensor) -> dict[str, Any]:
    """The search space ``name`` in the optimizers' terms (the module docstring)."""
    if name == "today":
        lo, hi = f.bounds.to(torch.int64).tolist()
        return {
            "discrete_dims": {k: list(range(lo[k], hi[k] + 1)) for k in f.discrete_inds}
        }
    terms = grid(f, X)
    if name == "grid":
        terms["post_processing_func"] = f.project
    return terms


def run(
    f: PCO64, name: str, optimizer: str, acq: str, seed: int, n_init: int, steps: int
) -> list[dict[str, object]]:
    """One loop; a record per proposal."""
    C = f.candidates()
    start = torch.randperm(len(C), generator=torch.Generator().manual_seed(seed))
    X = C[start[:n_init]]
    y, margin = f(X, noise=False), f.outcome_constraint(X, noise=False)
    if not bool((~torch.isnan(y)).any()):
        raise RuntimeError(f"seed {seed}: no feasible configuration to start from")
    records = []
    for step in range(steps):
        torch.manual_seed(10_000 * seed + step)
        t0 = time.perf_counter()
        acqf = acquisition(acq, X, y, margin, f)
        x = propose(optimizer, acqf, f, **space(f, name, X))
        seconds = time.perf_counter() - t0
        row = int(f.lookup(x)[0])
        records.append(
            {
                "space": name,
                "optimizer": optimizer,
                "acquisition": acq,
                "seed": seed,
                "step": step,
                "is_row": bool(f.is_configuration(x)[0]),
                "repeat": row in set(f.lookup(X).tolist()),
                "row": row,
                "proposal": " ".join(f"{v:.4g}" for v in x[0].tolist()),
                "seconds": seconds,
            }
        )
        X = torch.cat([X, x])
        y = torch.cat([y, f(x, noise=False)])
        margin = torch.cat([margin, f.outcome_constraint(x, noise=False)])
    return records


def summary(records: pd.DataFrame) -> pd.DataFrame:
    keys = ["space", "optimizer", "acquisition"]
    table = records.groupby(keys, sort=False).agg(
        proposals=("is_row", "size"),
        rows=("is_row", "mean"),
        repeats=("repeat", "mean"),
        median_seconds=("seconds", "median"),
    )
    return table.reset_index()


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table, shares and seconds to two decimals."""
    lines = ["| " + " | ".join(table.columns) + " |", "|---" * len(table.columns) + "|"]
    for row in table.itertuples(index=False):
        cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4, help="proposals per loop")
    parser.add_argument("--n-init", type=int, default=8)
    parser.add_argument("--table", default=None)
    parser.add_argument("--out", default=None, help="folder for the results")
    parser.add_argument(
        "--report", default=None, help="rewrite DIR/README.md from its records"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    if args.report:
        settings = json.loads((Path(args.report) / "report.json").read_text())
        args.seeds, args.steps = settings["seeds"], settings["steps"]
        args.n_init, args.out = settings["n_init"], args.report
    f = PCO64(table=args.table)
    if args.report:
        frame = pd.read_csv(Path(args.out) / "records.csv")
    else:
        records = []
        arms = itertools.product(SPACES, OPTIMIZERS, ACQUISITIONS, range(args.seeds))
        for space, optimizer, acq, seed in arms:
            records += run(f, space, optimizer, acq, seed, args.n_init, args.steps)
            print(f"{space:>8} {optimizer:>5} {acq:>7} seed {seed}: done", flush=True)
        frame = pd.DataFrame(records)
    table = summary(frame)
    source = str(f.table.source).replace(f"{Path.cwd()}/", "")
    text = (
        f"Table: {source}. {args.seeds} seeds x {args.steps} proposals per "
        f"arm after {args.n_init} random configurations; "
        "the example's 4 restarts, 128 raw samples, q = 1, one torch thread.\n\n"
        "rows: share of proposals that are configurations; repeats: share that "
        "snap to a configuration already evaluated.\n\n" + markdown(table)
    )
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        if not args.report:
            buffer = io.StringIO()
            frame.to_csv(buffer, index=False)
            atomic_write_text(out / "records.csv", buffer.getvalue())
            settings = {"script": "grid_proposals", "seeds": args.seeds}
            settings |= {"steps": args.steps, "n_init": args.n_init}
            atomic_write_text(
                out / "report.json", json.dumps(settings, indent=2) + "\n"
            )
        command = (
            f"python benchmarks/grid_proposals.py --seeds {args.seeds} --steps "
            f"{args.steps} --n-init {args.n_init} --out {args.out}"
        )
        atomic_write_text(
            out / "README.md",
            "# Proposals on the grid\n\n"
            f"Command: `{command}`\n\n{__doc__.split(chr(10) * 2, 1)[1]}\n{text}",
        )


if __name__ == "__main__":
    main()
