"""Quick start: evaluate pco64 configurations, read the memory constraint and
auxiliary columns through ``lookup()``.

Run: ``python examples/quickstart.py [--table PATH]``
"""

from __future__ import annotations

import argparse

import torch

from bolt_pco64 import PCO64
from bolt_pco64.table import decode_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--table", default=None, help="table file (default source)")
    args = parser.parse_args()

    f = PCO64(table=args.table)
    print(f"table: {f.table.source}")
    print(f"{len(f.table)} configurations, {f.table.n_feasible} run, the rest OOM")
    print(f"inputs (last dim of X): {', '.join(f.instance.input_columns)}")
    print(f"optimal throughput {f.optimal_value:.5f} at {f.optimizers.tolist()[0]}")

    # Four configurations: the optimum, the first and last canonical rows, and
    # a continuous point that snaps to its nearest row.
    X = torch.cat(
        [
            f.optimizers,
            f.candidates()[[0, -1]],
            (f.bounds[0] + 0.4 * (f.bounds[1] - f.bounds[0])).unsqueeze(0),
        ]
    )
    throughput = f(X)  # batch_shape = 4; NaN where the run OOMed
    margin = f.outcome_constraint(X)  # <= 0 iff the configuration fits in memory
    rows = f.lookup(X)  # canonical row indices, to read any other column
    peak_mem = f.table.column("peak_mem")[rows]
    overall_time = f.table.column("overall_time")[rows]

    print()
    print(
        f"{'configuration':<68} {'thr':>8} {'margin':>7} {'feas':>5} {'mem GB':>7} {'time s':>8}"
    )
    for k in range(X.shape[0]):
        raw = decode_inputs(f.candidates()[rows[k]])
        cfg = ", ".join(f"{key}={v}" for key, v in raw.items())
        print(
            f"{cfg:<68} {throughput[k].item():8.5f} {margin[k].item():7.3f} "
            f"{bool(f.is_feasible(X[k : k + 1]).item())!s:>5} "
            f"{peak_mem[k].item():7.1f} {overall_time[k].item():8.1f}"
        )


if __name__ == "__main__":
    main()
