"""Side-by-side benchmark of pco64 row lookup against the plain full ``cdist``.

The anchor's way (bolt-bench 0.2.0) to snap points onto a tabular benchmark's
rows is one full ``torch.cdist(X, table).argmin(-1)``: an ``n x N`` distance
matrix per call (about 6 GB for a million points on the 780-row table).
``bolt_pco64`` resolves points that are table rows by an exact key lookup and
the rest by a chunked exact nearest-neighbour search (``bolt_pco64/snap.py``),
after one validation pass. This script runs both in one process and prints
the ratios:

(a) exact-row points (random rows of ``candidates()``): ``PCO64`` evaluation
    ``f(X)`` and ``lookup`` vs the full ``cdist`` (target: at least 100x
    faster);
(b) continuous points drawn uniformly inside the bounds (target: at least 10x
    faster), with the agreement of the indices against ``cdist`` and, on a
    subsample, against :func:`bolt_pco64.snap.nearest_rows_reference`;
(c) peak memory of 1e7 exact-row points through ``f(X)`` and ``lookup``,
    measured as the peak resident memory of a fresh child process (target:
    under 2 GB in total), next to what the full distance matrix would need;
(d) the time of ``import botorch`` vs ``import bolt_pco64`` and of ``PCO64()``
    construction, each in fresh subprocesses (median of several runs).

The table is the shipped stand-in ``data/pco64_simulated.parquet`` when it
exists (or ``--table PATH``), else a synthetic 780-row table over the published
bounds (configurations with dp*tp*pp*cp = 64 GPUs, drawn with a seeded
generator). Times are the minimum over ``--repeats`` runs, fast path and
``cdist`` interleaved, so that load from other processes on a shared machine
hits both alike.

Usage::

    python benchmarks/lookup.py                      # defaults, a few minutes
    python benchmarks/lookup.py --n 1000000 --repeats 3 --mem-n 10000000
    python benchmarks/lookup.py --quick              # smoke run, seconds
    python benchmarks/lookup.py --out docs/results/lookup  # the committed figures

``--out`` writes ``lookup.json`` (every figure) and ``README.md`` (the report)
there, each atomically.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "data" / "pco64_simulated.parquet"
# The published bounds (docs/architecture.md §2), in raw units where they are sizes.
LOG2_RANGES = {
    "dp": range(1, 7),
    "tp": range(3),
    "pp": range(5),
    "cp": range(3),
    "sp": range(3),
    "bucket": range(6, 10),
    "chunks": range(3),
}
ZERO_STAGES = (0, 2, 3)
GIB = 1024**3


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------


def synthetic_frame(seed: int = 0, rows: int = 780, oom_share: float = 220 / 780):
    """A valid pco64-schema frame of ``rows`` configurations with 64 GPUs.

    Configurations are drawn without replacement from the lattice of the
    published bounds restricted to dp*tp*pp*cp = 64; the bounds' extremes are
    always included so that the problem's bounds are the published ones.
    """
    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(REPO))
    from bolt_pco64.instances import PCO64_INSTANCE

    COLUMNS = PCO64_INSTANCE.columns

    r = LOG2_RANGES
    space = [
        c
        for c in itertools.product(
            r["dp"],
            r["tp"],
            r["pp"],
            r["cp"],
            r["sp"],
            r["bucket"],
            ZERO_STAGES,
            r["chunks"],
        )
        if c[0] + c[1] + c[2] + c[3] == 6
    ]
    rng = np.random.default_rng(seed)
    # Extremes first: (6,0,0,0,...) and (1,2,2,1,...)-style rows span every bound.
    must = [
        (6, 0, 0, 0, 0, 6, 0, 0),
        (1, 2, 3, 0, 2, 9, 3, 2),
        (1, 0, 3, 2, 0, 7, 2, 1),
    ]
    must += [(2, 0, 4, 0, 1, 8, 0, 1)]
    rest = [c for c in space if c not in must]
    pick = rng.choice(len(rest), size=rows - len(must), replace=False)
    configs = must + [rest[i] for i in sorted(pick)]
    feasible = rng.random(rows) >= oom_share
    feasible[0] = True
    records = []
    for i, cfg in enumerate(configs):
        ok = bool(feasible[i])
        tp = float(rng.uniform(0.05, 0.27)) if ok else float("nan")
        pm = float(rng.uniform(20.0, 79.3)) if ok else float("inf")
        steps = [1.0 / tp * (1 + 0.01 * j) for j in range(3)] if ok else []
        records.append(
            {
                **dict(zip(COLUMNS[:8], cfg, strict=True)),
                "log2_grad_accum_steps": 0,
                "ran_successfully": ok,
                "throughput_mean": tp,
                "throughput_std": 0.01 * tp if ok else float("nan"),
                "peak_mem_normalised": pm / 96.0 - 1 if ok else 0.5,
                "overall_time": 100.0 + i if ok else float("nan"),
                "all_time_steps": str(steps),
                "peak_mem": pm,
                "peak_mem_per_gpu": str([pm, pm - 1.0]) if ok else "[]",
            }
        )
    return pd.DataFrame(records, columns=list(COLUMNS))


def resolve_table(arg: str | None, workdir: Path) -> tuple[Path, str]:
    """The table file to benchmark on and a one-line description of it."""
    if arg:
        return Path(arg).resolve(), f"{arg} (--table)"
    if STANDIN.is_file():
        return STANDIN, f"{STANDIN.relative_to(REPO)} (shipped stand-in)"
    path = workdir / "synthetic_pco64.parquet"
    synthetic_frame().to_parquet(path, index=False)
    return path, "synthetic 780-row table over the published bounds (seed 0)"


# --------------------------------------------------------------------------
# Timing helpers
# --------------------------------------------------------------------------


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict:
    """Minimum wall time of each function over ``repeats`` interleaved rounds."""
    best = {k: float("inf") for k in fns}
    results = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            results[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return {"time": best, "result": results}


def full_cdist(X, C):
    """The plain full-matrix search: one ``n x N`` ``cdist`` and its argmin."""
    import torch

    return torch.cdist(X, C).argmin(dim=-1)


def reference_chunked(X, C, chunk: int = 2048):
    """:func:`nearest_rows_reference` in chunks (its ``n x N x d`` tensor is big)."""
    import torch

    from bolt_pco64.snap import nearest_rows_reference

    return torch.cat(
        [nearest_rows_reference(X[i : i + chunk], C) for i in range(0, len(X), chunk)]
    )


# --------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------


def bench_lookup(table: Path, n: int, repeats: int, ref_n: int, seed: int) -> dict:
    import torch

    from bolt_pco64 import PCO64

    f = PCO64(table=table)
    C = f.candidates()
    gen = torch.Generator().manual_seed(seed)
    out = {"rows": len(C), "n": n, "threads": torch.get_num_threads()}

    # (a) exact rows
    idx = torch.randint(len(C), (n,), generator=gen)
    X = C[idx]
    truth = f.table.column("throughput_mean")[idx]
    a = interleaved(
        {
            "evaluate": lambda: f(X),
            "lookup": lambda: f.lookup(X),
            "cdist": lambda: full_cdist(X, C),
        },
        repeats,
    )
    res = a["result"]
    out["exact"] = {
        **{f"t_{k}": v for k, v in a["time"].items()},
        "agree_cdist": float((res["lookup"] == res["cdist"]).double().mean()),
        "agree_truth": float((res["lookup"] == idx).double().mean()),
        "values_exact": bool(torch.equal(res["evaluate"].isnan(), truth.isnan()))
        and bool(
            (res["evaluate"][~truth.isnan()] == truth[~truth.isnan()]).all().item()
        ),
    }
    X = res = a = None  # free them before (b)

    # (b) continuous points inside the bounds
    lo, hi = f.bounds
    U = lo + (hi - lo) * torch.rand(n, 8, dtype=torch.float64, generator=gen)
    b = interleaved(
        {
            "evaluate": lambda: f(U),
            "lookup": lambda: f.lookup(U),
            "cdist": lambda: full_cdist(U, C),
        },
        repeats,
    )
    res = b["result"]
    sub = torch.randperm(n, generator=gen)[:ref_n]
    ref = reference_chunked(U[sub], C)
    out["continuous"] = {
        **{f"t_{k}": v for k, v in b["time"].items()},
        "agree_cdist": float((res["lookup"] == res["cdist"]).double().mean()),
        "ref_n": len(sub),
        "agree_reference": float((res["lookup"][sub] == ref).double().mean()),
    }
    return out


def peak_rss() -> int:
    """Peak resident memory of this process so far, in bytes.

    ``VmHWM`` from ``/proc/self/status`` where there is one: unlike
    ``ru_maxrss`` on Linux, it is not inherited across ``exec`` from a large
    parent. ``ru_maxrss`` elsewhere (kilobytes on Linux, bytes on macOS).
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def _child_memory(table: Path, n: int, seed: int) -> None:
    """Runs in a fresh process: peak RSS of ``n`` exact-row points through ``f``."""
    import torch

    from bolt_pco64 import PCO64

    f = PCO64(table=table)
    C = f.candidates()
    base = peak_rss()
    idx = torch.randint(len(C), (n,), generator=torch.Generator().manual_seed(seed))
    X = C[idx]
    del idx
    after_input = peak_rss()
    t0 = time.perf_counter()
    y = f(X)
    rows = f.lookup(X)
    elapsed = time.perf_counter() - t0
    peak = peak_rss()
    ok = bool(torch.equal(C[rows], X)) and y.shape == X.shape[:-1]
    print(
        json.dumps(
            {
                "n": n,
                "rows": len(C),
                "baseline": base,
                "after_input": after_input,
                "peak": peak,
                "input_bytes": X.numel() * X.element_size(),
                "seconds": elapsed,
                "correct": ok,
            }
        )
    )


def bench_memory(table: Path, n: int, seed: int, threads: int | None) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--_child-memory", str(n), "--table", str(table)]
        + (["--threads", str(threads)] if threads else []),
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memory child failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


_IMPORT_SNIPPETS = {
    "import botorch": "import botorch",
    # What any BoTorch test problem (Hartmann, ...) costs: its module imports scipy.
    "import botorch.test_functions": "from botorch.test_functions import Hartmann",
    "import bolt_pco64": "import bolt_pco64",
}
_BUILD_SNIPPET = (
    "import warnings; warnings.simplefilter('ignore')\n"
    "import time\n"
    "from bolt_pco64 import PCO64\n"
    "t0 = time.perf_counter(); PCO64(table={table!r})\n"
    "print(time.perf_counter() - t0)"
)


def _timed_child(code: str) -> float:
    wrapped = f"import time\nt0 = time.perf_counter()\n{code}\nprint(time.perf_counter() - t0)"
    return _child_seconds(wrapped)


def _child_seconds(code: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def bench_import(table: Path, runs: int) -> dict:
    out: dict[str, list[float]] = {k: [] for k in _IMPORT_SNIPPETS}
    out["PCO64()"] = []
    for _ in range(runs):  # interleaved, one fresh interpreter each
        for name, code in _IMPORT_SNIPPETS.items():
            out[name].append(_timed_child(code))
        out["PCO64()"].append(_child_seconds(_BUILD_SNIPPET.format(table=str(table))))
    return {k: statistics.median(v) for k, v in out.items()}


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def _count(n: int) -> str:
    return f"{n:.0e}".replace("e+0", "e").replace("e+", "e")


def _ms(s: float) -> str:
    return f"{s * 1e3:,.0f} ms" if s >= 0.1 else f"{s * 1e3:,.1f} ms"


def report(args, desc: str, lk: dict | None, mem: dict | None, imp: dict | None):
    import torch

    lines = [
        f"Table: {desc}; {lk['rows'] if lk else '?'} rows.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, torch "
        f"{torch.__version__}, {torch.get_num_threads()} torch threads, load "
        f"average {os.getloadavg()[0]:.1f} at the end; times are the minimum of "
        f"{args.repeats} interleaved runs.",
        "",
        "| measurement | bolt_pco64 | full `cdist` | ratio | target | agreement |",
        "|---|---|---|---|---|---|",
    ]
    verdicts = []
    if lk:
        n = _count(lk["n"])
        e, c = lk["exact"], lk["continuous"]
        for label, d, target, agree in (
            (
                f"{n} exact-row points, `f(X)`",
                e,
                100,
                f"{e['agree_cdist']:.6f} vs cdist, values exact: {e['values_exact']}",
            ),
            (
                f"{n} continuous points, `f(X)`",
                c,
                10,
                f"{c['agree_cdist']:.6f} vs cdist; {c['agree_reference']:.6f} vs "
                f"reference ({c['ref_n']:,} pts)",
            ),
        ):
            ratio = d["t_cdist"] / d["t_evaluate"]
            ratio_l = d["t_cdist"] / d["t_lookup"]
            lines.append(
                f"| {label} | {_ms(d['t_evaluate'])} (`lookup` {_ms(d['t_lookup'])}) "
                f"| {_ms(d['t_cdist'])} | {ratio:.1f}× (`lookup` {ratio_l:.1f}×) "
                f"| ≥ {target}× | {agree} |"
            )
            verdicts.append((label, ratio >= target))
    if mem:
        n = mem["n"]
        full = n * mem["rows"] * 8
        lines.append(
            f"| peak memory, {_count(n)} exact-row points | {mem['peak'] / GIB:.2f} GB "
            f"total RSS ({(mem['peak'] - mem['baseline']) / GIB:.2f} GB over the "
            f"{mem['baseline'] / GIB:.2f} GB after import; input X "
            f"{mem['input_bytes'] / GIB:.2f} GB) | {full / GIB:.1f} GB for the "
            f"distance matrix alone | – | < 2 GB | correct: {mem['correct']} |"
        )
        verdicts.append((f"peak memory, {_count(n)} points", mem["peak"] < 2 * GIB))
    if imp:
        lines += [
            "",
            "| fresh interpreter | median |",
            "|---|---|",
            f"| `import botorch` | {_ms(imp['import botorch'])} |",
            f"| `from botorch.test_functions import Hartmann` (any BoTorch test problem) | "
            f"{_ms(imp['import botorch.test_functions'])} |",
            f"| `import bolt_pco64` (its public names are imported on first use) | "
            f"{_ms(imp['import bolt_pco64'])} |",
            f"| `PCO64()` after `from bolt_pco64 import PCO64` (reads + validates the table) | "
            f"{_ms(imp['PCO64()'])} |",
            "",
            f"(median of {args.import_runs} fresh interpreters each)",
        ]
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load > cpus and torch.get_num_threads() > 1:
        lines += [
            "",
            f"NOTE: the machine is oversubscribed (load {load:.1f} on {cpus} CPUs). "
            "Intra-op threads then stall at every parallel region, which hurts "
            "the many small chunked ops of the fast path far more than the few "
            "large ops of the full cdist; rerun with --threads 1 for a stable "
            "side-by-side comparison.",
        ]
    lines.append("")
    lines += [f"{'PASS' if ok else 'MISS'}  {label}" for label, ok in verdicts]
    text = "\n".join(lines)
    print(text)
    return all(ok for _, ok in verdicts), text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="points for (a), (b)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--mem-n", type=int, default=10_000_000, help="points for (c)")
    p.add_argument("--ref-n", type=int, default=20_000, help="reference subsample")
    p.add_argument("--import-runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--table", default=None, help="table file (default: see doc)")
    p.add_argument("--threads", type=int, default=None, help="torch threads")
    p.add_argument("--json", default=None, help="also write the figures here")
    p.add_argument(
        "--out", default=None, help="folder for lookup.json and README.md (atomic)"
    )
    p.add_argument("--skip", default="", help="comma list of: lookup,memory,import")
    p.add_argument("--quick", action="store_true", help="tiny sizes, smoke test")
    p.add_argument("--_child-memory", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    sys.path.insert(0, str(REPO))
    import warnings

    warnings.simplefilter("ignore")  # the stand-in's "simulated" warning
    import torch

    from bolt_pco64._io import atomic_write_text

    if args.threads:
        torch.set_num_threads(args.threads)
    if args._child_memory is not None:
        _child_memory(Path(args.table), args._child_memory, args.seed)
        return 0
    if args.quick:
        args.n, args.repeats, args.mem_n = 20_000, 1, 100_000
        args.ref_n, args.import_runs = 2_000, 1
    skip = set(filter(None, args.skip.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        table, desc = resolve_table(args.table, Path(tmp))
        # Child processes first, while this one is still small.
        mem = None
        if "memory" not in skip:
            mem = bench_memory(table, args.mem_n, args.seed, args.threads)
        imp = None if "import" in skip else bench_import(table, args.import_runs)
        lk = (
            None
            if "lookup" in skip
            else bench_lookup(table, args.n, args.repeats, args.ref_n, args.seed)
        )
        ok, text = report(args, desc, lk, mem, imp)
        figures = json.dumps({"lookup": lk, "memory": mem, "import": imp}, indent=2)
        if args.json:
            atomic_write_text(args.json, figures)
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out / "lookup.json", figures + "\n")
            command = "python benchmarks/lookup.py " + " ".join(argv or sys.argv[1:])
            atomic_write_text(
                out / "README.md",
                f"# Lookup speed and memory\n\nCommand: `{command}`\n\n{text}\n",
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
