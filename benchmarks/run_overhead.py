"""Side-by-side benchmark of a run's set-up before and after the table's parts were built once.

Before, every run (:class:`bolt_pco64.bench.loop.RunLoop`) built the table's
time model and its partial runs (:class:`bolt_pco64.tables.partial_runs.PartialRuns`,
every row's estimate after each step) even with ``early_stop="none"``; after,
they are built when a run first uses them, once per table
(:class:`~bolt_pco64.bench.loop.TableParts`). This script runs both versions
of the package side by side, each in fresh child processes, alternately (the
"before" code is ``git archive REF bolt_pco64``, by default 5731138, the last
commit before the change; the "after" code is this checkout), and prints:

(a) the set-up of one run (constructing its ``RunLoop`` and what its first
    evaluation reads), with ``early_stop="none"``: the first run on a table
    and the next one on the same table object (minimum over ``--repeats``);
(b) the wall time of whole runs of ``--method`` (``--budget`` evaluations,
    one per seed, the first one on a fresh table object), each policy of
    ``--early-stop``;
(c) whether the two versions' records are identical, timing columns aside
    (SHA-256 of the records without ``fit_seconds`` and ``acq_seconds``).

The table is the shipped stand-in ``data/pco64_simulated.parquet`` (or
``--table PATH``), the same file for both versions. Times are wall clock on
one torch thread, as the harness runs.

Usage::

    python benchmarks/run_overhead.py                  # qlognei x 2 seeds x 40
    python benchmarks/run_overhead.py --before 5731138 --seeds 3 --rounds 2
    python benchmarks/run_overhead.py --quick          # smoke run, a minute
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "data" / "pco64_simulated.parquet"
TIMING = ("fit_seconds", "acq_seconds")
#: The last commit before the table's parts were built once.
BEFORE = "5731138"


def _touch(run: Any) -> None:
    """Build what the run's first evaluation reads (after: the table's time
    model, built on first use; before: built with the run)."""
    parts = getattr(run, "parts", None)
    if parts is not None:
        parts.run_seconds, parts.run_hours, parts.steps  # noqa: B018


def _child(args: argparse.Namespace) -> None:
    """Runs in a child process with the version under test on ``PYTHONPATH``."""
    import torch

    import bolt_pco64
    from bolt_pco64.bench import BenchConfig
    from bolt_pco64.bench.loop import RunLoop
    from bolt_pco64.bench.run import run_one
    from bolt_pco64.tables.table import load_table

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # the stand-in's label, once per table
    source = load_table(Path(args.table))
    fresh = []  # set-up of the first run on a fresh table object
    again = []  # set-up of a further run on the same table object
    for _ in range(args.repeats):
        table = load_table(source.frame)
        config = BenchConfig(budget=args.budget, early_stop="none")
        for seed, into in ((0, fresh), (1, again)):
            t0 = time.perf_counter()
            _touch(RunLoop(args.method, seed, table, config, None))
            into.append(time.perf_counter() - t0)
    runs: dict[str, Any] = {}
    for stop in args.early_stop.split(","):
        config = BenchConfig(budget=args.budget, early_stop=stop)
        table = load_table(source.frame)
        walls, digest = [], hashlib.sha256()
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            out = run_one(args.method, seed, table, config)
            walls.append(time.perf_counter() - t0)
            if not out.ok:
                raise RuntimeError(out.traceback)
            rec = out.records.drop(columns=list(TIMING))
            digest.update(rec.to_csv(index=False, float_format="%r").encode())
        runs[stop] = {"walls": walls, "sha256": digest.hexdigest()}
    json.dump(
        {
            "package": bolt_pco64.__file__,
            "setup_fresh": fresh,
            "setup_again": again,
            "runs": runs,
        },
        sys.stdout,
    )


def _extract(ref: str, into: Path) -> Path:
    """``git archive ref bolt_pco64`` unpacked under ``into``."""
    blob = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "bolt_pco64"],
        check=True,
        capture_output=True,
    ).stdout
    tar = into / "code.tar"
    tar.write_bytes(blob)
    with tarfile.open(tar) as f:
        f.extractall(into, filter="data")
    return into


def _run_child(code: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, __file__, "--child", *_forward(args)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _forward(args: argparse.Namespace) -> list[str]:
    return [
        f"--method={args.method}",
        f"--budget={args.budget}",
        f"--seeds={args.seeds}",
        f"--repeats={args.repeats}",
        f"--early-stop={args.early_stop}",
        f"--table={args.table}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="git ref of the old code")
    parser.add_argument("--method", default="qlognei")
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--early-stop", default="none,posterior")
    parser.add_argument("--table", default=str(STANDIN), help="a table file")
    parser.add_argument("--rounds", type=int, default=1, help="before/after pairs")
    parser.add_argument("--quick", action="store_true", help="budget 15, 1 seed")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    if args.quick:
        args.budget, args.seeds, args.repeats = 15, 1, 2
    with tempfile.TemporaryDirectory() as tmp:
        versions = {"before": _extract(args.before, Path(tmp)), "after": REPO}
        got: dict[str, list[dict[str, Any]]] = {v: [] for v in versions}
        for _ in range(args.rounds):  # alternate, so that load hits both alike
            for name, code in versions.items():
                got[name].append(_run_child(code, args))
    print(
        f"{args.method}, {args.budget} evaluations, {args.seeds} seed(s), "
        f"before = {args.before}, after = this checkout; wall seconds"
    )
    print(f"{'':34}{'before':>10}{'after':>10}{'saved':>10}")
    rows: list[tuple[str, float, float]] = []
    for key, label in (
        ("setup_fresh", "set-up, first run on a table"),
        ("setup_again", "set-up, next run on it"),
    ):
        b = min(x for r in got["before"] for x in r[key])
        a = min(x for r in got["after"] for x in r[key])
        rows.append((label, b, a))
    for stop in args.early_stop.split(","):
        for i in range(args.seeds):
            b = min(r["runs"][stop]["walls"][i] for r in got["before"])
            a = min(r["runs"][stop]["walls"][i] for r in got["after"])
            rows.append((f"run, early stop {stop}, seed {i}", b, a))
    for label, b, a in rows:
        print(f"{label:34}{b:10.3f}{a:10.3f}{b - a:10.3f}")
    for stop in args.early_stop.split(","):
        hashes = {r["runs"][stop]["sha256"] for v in got.values() for r in v}
        verdict = "identical" if len(hashes) == 1 else "DIFFERENT"
        print(f"records, early stop {stop}: {verdict} (timing columns aside)")


if __name__ == "__main__":
    main()
