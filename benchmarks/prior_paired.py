"""Paired regret of the prior methods against a reference, with intervals.

Reads a finished ``bolt-pco64 bench --problem all`` folder (or one problem's
folder) and prints, per problem, method and checkpoint, the median over the
shared seeds of the paired difference in simple regret (method minus
reference; negative: the method is better), its 95 % percentile-bootstrap
interval (:func:`bolt_pco64.bench.stats.bootstrap_interval`), the share of
seeds better / the same / worse, and the Wilcoxon signed-rank p-value the
harness wrote (``comparisons.csv``). With ``--out`` it writes the table as
Markdown (atomically), under the stand-in caveat when the table is simulated.

Run: ``python benchmarks/prior_paired.py bench-results/prior [--reference
qlognei] [--checkpoints 10,20] [--out docs/results/prior/paired.md]``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.stats import bootstrap_interval, keyed_rng, outcome_matrix
from bolt_pco64.bo.prior import STANDIN_CAVEAT


def paired(folder: Path, reference: str, checkpoints: list[int]) -> list[dict]:
    """One record per method and checkpoint of one problem's folder."""
    meta = json.loads((folder / "meta.json").read_text())
    table = meta["table"]
    fill = table["optimal_value"] - table["worst_feasible_value"]
    budget = int(meta["config"]["budget"])
    runs = pd.read_parquet(folder / "runs.parquet")
    comps = pd.read_csv(folder / "comparisons.csv")
    seeds_ref, ref = outcome_matrix(runs[runs["method"] == reference], budget, fill)
    out = []
    for method in [m for m in runs["method"].unique() if m != reference]:
        seeds, mat = outcome_matrix(runs[runs["method"] == method], budget, fill)
        common = sorted(set(seeds) & set(seeds_ref))
        a = mat[[seeds.index(s) for s in common]]
        b = ref[[seeds_ref.index(s) for s in common]]
        for k in checkpoints:
            diff = a[:, k - 1] - b[:, k - 1]
            low, high = bootstrap_interval(diff, rng=keyed_rng(0, method, k))
            row = comps[
                (comps["method"] == method)
                & (comps["measure"] == "regret")
                & (comps["checkpoint"] == k)
            ]
            out.append(
                {
                    "problem": meta["problem"],
                    "simulated": bool(table["simulated"]),
                    "method": method,
                    "checkpoint": k,
                    "pairs": len(common),
                    "median_difference": float(np.median(diff)),
                    "low": low,
                    "high": high,
                    "better": int((diff < 0).sum()),
                    "same": int((diff == 0).sum()),
                    "worse": int((diff > 0).sum()),
                    "p_value": float(row["p_value"].iloc[0]) if len(row) else np.nan,
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder")
    parser.add_argument("--reference", default="qlognei")
    parser.add_argument("--checkpoints", default="10,20")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    root = Path(args.folder)
    folders = (
        [root]
        if (root / "meta.json").exists()
        else sorted(p for p in root.iterdir() if (p / "meta.json").exists())
    )
    ks = [int(k) for k in args.checkpoints.split(",")]
    frame = pd.DataFrame([r for f in folders for r in paired(f, args.reference, ks)])
    lines = [
        f"| problem | method | @ | pairs | median paired difference in regret "
        f"(method − {args.reference}) [95% CI] | better/same/worse | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in frame.to_dict("records"):
        lines.append(
            f"| {r['problem']} | {r['method']} | {r['checkpoint']} | {r['pairs']} | "
            f"{r['median_difference']:+.4f} [{r['low']:+.4f}, {r['high']:+.4f}] | "
            f"{r['better']}/{r['same']}/{r['worse']} | {r['p_value']:.2g} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        head = [STANDIN_CAVEAT, ""] if frame["simulated"].any() else []
        atomic_write_text(Path(args.out), "\n".join(head) + "\n" + text)


if __name__ == "__main__":
    main()
