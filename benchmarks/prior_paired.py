"""Paired regret of the prior methods against their controls, with intervals.

Reads a finished ``bolt-pco64 bench --problem all`` folder (or one problem's
folder): its per-evaluation records (``runs.parquet``) and ``meta.json``,
leaving out failed runs. Per problem, reference, method and checkpoint: the
median over the shared seeds of the paired difference in simple regret
(method minus reference; negative: the method is better), its 95 %
percentile-bootstrap interval (:func:`bolt_pco64.bench.stats.bootstrap_interval`),
the seeds better / the same / worse, and the two-sided Wilcoxon signed-rank
p-value (:func:`bolt_pco64.bench.stats.paired_comparisons`, Pratt's zeros).

The references (``--references``, default ``qlognei_init3,qlognei,prior_ei``;
those without runs in the folder are skipped):

- ``qlognei_init3``, qlognei from the same 3-row initial design as the prior
  methods: the control that separates the prior's effect from the shorter
  design (seeds pair exactly: both start from the seed's first 3 rows);
- ``qlognei`` from the comparison's 10 rows, as before (at 10 evaluations it
  has made no model-guided choice yet);
- ``prior_ei``: what the ablation and the misspecified prior lose against
  the full prior.

Then one sentence per problem and checkpoint on the deliberately
misspecified prior (``prior_ei_bad``) against ``qlognei_init3``
(:func:`bolt_pco64.bench.stats.verdict`: worse only when the p-value is below
0.05 *and* it is worse on more seeds), and against ``prior_ei``.

With ``--out`` it writes the Markdown (atomically), under the stand-in
caveat when the table is simulated, and the same rows as CSV beside it
(``.csv``).

Run::

    python benchmarks/prior_paired.py bench-results/prior \\
        [--references qlognei_init3,qlognei,prior_ei] [--checkpoints 10,20] \\
        [--out docs/results/prior/paired.md]
    python benchmarks/prior_paired.py --report docs/results/prior

``--report DIR`` writes ``DIR/paired.md`` and ``DIR/paired.csv`` with the
default references and checkpoints and prints the two paths: a family folder
whose ``report.json`` also names this script (``{"combined": "family",
"script": "prior_paired"}``) gets them back from ``benchmarks/report_results.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bolt_pco64._io import atomic_write_text
from bolt_pco64.bench.contract import RunKey
from bolt_pco64.bench.stats import (
    bootstrap_interval,
    complete_runs,
    keyed_rng,
    outcome_matrix,
    paired_comparisons,
    verdict,
)
from bolt_pco64.bo.prior import STANDIN_CAVEAT

#: The name a family marker gives this script (``{"script": SCRIPT}``).
SCRIPT = "prior_paired"
#: The references every method is paired with, in report order.
REFERENCES = ("qlognei_init3", "qlognei", "prior_ei")
#: The misspecified prior and what it is checked against.
BAD, BAD_AGAINST = "prior_ei_bad", ("qlognei_init3", "prior_ei")


def _records(folder: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    meta = json.loads((folder / "meta.json").read_text())
    failed = RunKey.parse_all(meta["runs"]["failed"])
    runs = pd.read_parquet(folder / "runs.parquet")
    runs["method"] = runs["method"].astype(object)
    return complete_runs(runs, failed), meta


def paired(
    folder: Path, references: list[str], checkpoints: list[int]
) -> list[dict[str, object]]:
    """One record per reference, method and checkpoint of one problem's folder."""
    runs, meta = _records(folder)
    table = meta["table"]
    fill = table["optimal_value"] - table["worst_feasible_value"]
    budget = int(meta["config"]["budget"])
    methods = list(dict.fromkeys(runs["method"]))
    out: list[dict[str, object]] = []
    for reference in [r for r in references if r in methods]:
        tests = paired_comparisons(
            runs, reference, budget, fill, checkpoints
        ).set_index(["method", "checkpoint"])
        seeds_ref, ref = outcome_matrix(runs[runs["method"] == reference], budget, fill)
        for method in [m for m in methods if m != reference]:
            seeds, mat = outcome_matrix(runs[runs["method"] == method], budget, fill)
            common = sorted(set(seeds) & set(seeds_ref))
            a = mat[[seeds.index(s) for s in common]]
            b = ref[[seeds_ref.index(s) for s in common]]
            for k in checkpoints:
                diff = a[:, k - 1] - b[:, k - 1]
                low, high = bootstrap_interval(
                    diff, rng=keyed_rng(0, method, reference, k)
                )
                out.append(
                    {
                        "problem": meta["problem"],
                        "simulated": bool(table["simulated"]),
                        "reference": reference,
                        "method": method,
                        "checkpoint": k,
                        "pairs": len(common),
                        "median_difference": float(np.median(diff)),
                        "low": low,
                        "high": high,
                        "better": int((diff < 0).sum()),
                        "same": int((diff == 0).sum()),
                        "worse": int((diff > 0).sum()),
                        "p_value": float(tests.loc[(method, k), "p_value"]),
                    }
                )
    return out


def markdown(frame: pd.DataFrame) -> list[str]:
    """The title, the tables (one per reference) and the bad prior's verdicts."""
    lines: list[str] = [
        "# Paired comparisons of the prior runs, by seed",
        "",
        "Regret differences at each checkpoint, paired by seed, with a 95 % "
        "bootstrap interval of the median and the signed-rank p-value.",
        "",
    ]
    for reference, sub in frame.groupby("reference", sort=False):
        lines += [
            f"## Against {reference}",
            "",
            f"| problem | method | @ | pairs | median paired difference in regret "
            f"(method − {reference}) [95% CI] | better/same/worse | p |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in sub.to_dict("records"):
            lines.append(
                f"| {r['problem']} | {r['method']} | {r['checkpoint']} | "
                f"{r['pairs']} | {r['median_difference']:+.4f} "
                f"[{r['low']:+.4f}, {r['high']:+.4f}] | "
                f"{r['better']}/{r['same']}/{r['worse']} | {r['p_value']:.2g} |"
            )
        lines.append("")
    bad = frame[(frame["method"] == BAD) & frame["reference"].isin(BAD_AGAINST)]
    if len(bad):
        lines += [f"## The misspecified prior ({BAD})", ""]
        for r in bad.to_dict("records"):
            n = int(r["pairs"])
            said = verdict(
                BAD,
                str(r["reference"]),
                r["better"] / n,
                r["worse"] / n,
                float(r["p_value"]),
                n,
            )
            lines.append(
                f"- {r['problem']} @{r['checkpoint']}: {said}; median paired "
                f"difference {r['median_difference']:+.4f} "
                f"[{r['low']:+.4f}, {r['high']:+.4f}]."
            )
        lines.append("")
    return lines


def name_in_family_marker(root: Path) -> bool:
    """Name this script in ``root``'s family marker (``report.json`` of a
    ``bench --problem all`` folder), so that ``benchmarks/report_results.py``
    rewrites ``paired.md`` and ``paired.csv`` with the family's report; returns
    whether the marker changed. A folder without a family marker is left alone.
    """
    marker = root / "report.json"
    if not marker.exists():
        return False
    data = json.loads(marker.read_text(encoding="utf-8"))
    if data.get("combined") != "family" or data.get("script") == SCRIPT:
        return False
    data["script"] = SCRIPT
    atomic_write_text(marker, json.dumps(data, indent=2) + "\n")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=None)
    parser.add_argument("--references", default=",".join(REFERENCES))
    parser.add_argument("--checkpoints", default="10,20")
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--report",
        default=None,
        metavar="DIR",
        help="Rewrite DIR/paired.md and DIR/paired.csv from DIR's records and "
        "print the files written (what `benchmarks/report_results.py DIR` calls).",
    )
    args = parser.parse_args()
    if (args.folder is None) == (args.report is None):
        parser.error("Expected a results folder or --report DIR (one of them).")
    root = Path(args.report if args.report is not None else args.folder)
    folders = (
        [root]
        if (root / "meta.json").exists()
        else sorted(p for p in root.iterdir() if (p / "meta.json").exists())
    )
    ks = [int(k) for k in args.checkpoints.split(",")]
    refs = [r for r in args.references.split(",") if r]
    frame = pd.DataFrame([r for f in folders for r in paired(f, refs, ks)])
    if frame.empty:
        raise SystemExit(f"Expected runs of a reference in {refs}, got none.")
    text = "\n".join(markdown(frame))
    out = root / "paired.md" if args.report is not None else args.out
    if args.report is None:
        print(text)
    if out is not None:
        out = Path(out)
        head = [STANDIN_CAVEAT, ""] if frame["simulated"].any() else []
        atomic_write_text(out, "\n".join(head) + "\n" + text)
        atomic_write_text(out.with_suffix(".csv"), frame.to_csv(index=False))
        if out.resolve().parent == root.resolve():
            name_in_family_marker(root)
        if args.report is not None:
            print(out)
            print(out.with_suffix(".csv"))


if __name__ == "__main__":
    main()
