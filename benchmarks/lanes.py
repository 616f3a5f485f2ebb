"""Lanes (:mod:`bolt_pco64.bench.lanes`) against one seed at a time, side by side.

Three parts, each writing JSON (and records) under ``--out``:

- ``iteration``: the per-seed cost of one lane step (``propose`` of every
  seed of a lane of ``--width`` seeds, warm-started from the step before,
  plus each seed's ``recommend``) at ``n`` = 40, 100, 200 observations,
  next to today's per-seed step (``Method.propose`` + ``recommend``, one
  seed at a time) and to *the floor*: one exact GP posterior (marginal mean
  and variance) over all candidates at ``n`` from the training Cholesky
  factored once (BoTorch's ``posterior`` of the same model is reported
  beside it); the ratios are the lane's and today's step over the floor.
  Each step's CPU seconds (the process runs one thread) are reported beside
  its wall time, with the floor's: on a machine loaded by other work only
  they compare.
- ``matrix``: a comparison's runs (``--methods``, ``--seeds``, ``--budget``)
  with ``--jobs`` worker processes and lanes of ``--width``, timed; with
  ``--baseline-seeds S`` also the first ``S`` seeds of each method one run at
  a time (today's path) in the same invocation, so that the per-run costs
  compare side by side and the full matrix's time can be extrapolated
  (labelled as such). Progress prints lanes, evaluations and a per-method
  ETA. The records of every run are written (``records_lanes.parquet``,
  ``records_baseline.parquet``).
- ``independence``: each seed's records in lanes of ``--width`` and alone
  (a lane of one): the share of seeds whose configurations and values, in
  order, are identical, and both layouts' final-regret summaries.

Run: ``python benchmarks/lanes.py iteration|matrix|independence [options]``
(``--help``). The machine's other load is not controlled: say so with the
figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.bench.backends import make_backend
from bolt_pco64.bench.contract import RunContext
from bolt_pco64.bench.lane_adapters import lane_adapter, lane_recommend, lane_support
from bolt_pco64.bench.methods.registry import get_method
from bolt_pco64.bench.problems import make_problem
from bolt_pco64.bench.run import Task, one_thread_everywhere
from bolt_pco64.bench.spec import BenchConfig
from bolt_pco64.tables.table import load_table

PROTOCOL = "random,qlognei,qlogei,ts,naive,gpc_ei,tobit_ei,gpc_pof"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def _machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


# --------------------------------------------------------------------------
# iteration
# --------------------------------------------------------------------------


def _contexts(problem: Any, cand: torch.Tensor, seeds: list[int], n: int) -> list[Any]:
    y = problem.evaluate_true(cand).to(torch.double)
    margin = problem.outcome_constraint(cand).to(torch.double)
    out = []
    for s in seeds:
        rows = torch.randperm(len(cand), generator=torch.Generator().manual_seed(s))
        tried = rows[:n]
        untried = torch.sort(rows[n:]).values
        out.append(
            RunContext(
                problem=problem,
                candidates=cand,
                rows=tried,
                y=y[tried],
                margin=margin[tried],
                untried=untried,
                q=1,
                seed=s,
                step_seed=1000 + s,
                generator=torch.Generator().manual_seed(s),
                budget=n + 10,
            )
        )
    return out


def _advance(prev: list[Any], nxt: list[Any]) -> None:
    """Carry each seed's state from the step at ``n - 1`` to ``n``."""
    for p, c in zip(prev, nxt, strict=True):
        c.state = p.state


def part_iteration(args: argparse.Namespace) -> dict[str, Any]:
    table = load_table(args.table)
    problem = make_problem(table)
    cand = problem.candidates().to(torch.double)
    results: dict[str, Any] = {"width": args.width, "sizes": {}}
    with one_thread_everywhere():
        for n in [int(v) for v in args.sizes.split(",")]:
            seeds = list(range(args.width))
            # The floor: one exact GP posterior over all candidates at n.
            from bolt_pco64.bo import fit_gp

            ctx0 = _contexts(problem, cand, [0], n)[0]
            gp = fit_gp(ctx0.X, ctx0.margin, ctx0.bounds, 0)
            floor = []
            for _ in range(args.repeats * 5):
                t0 = time.perf_counter()
                with torch.no_grad():
                    post = gp.posterior(cand)
                    post.mean, post.variance  # noqa: B018 - what is timed
                floor.append(time.perf_counter() - t0)
            # The same posterior (marginal mean and variance) from the
            # training Cholesky, factored once: the floor the ratios use.
            from bolt_pco64.bo.factors import CachedGP

            cached = CachedGP(gp)
            Z = cached.transform(cand)
            floor_c, floor_cpu = [], []
            for _ in range(args.repeats * 5):
                t0, c0 = time.perf_counter(), time.process_time()
                with torch.no_grad():
                    Kxz, V = cached.cross(Z)
                    mean = cached.mean(Kxz)
                    var = (cached.kernel_diag(Z) - V.pow(2).sum(0)) * cached.sd**2
                floor_c.append(time.perf_counter() - t0)
                floor_cpu.append(time.process_time() - c0)
            del mean, var
            botorch_s = statistics.median(floor)
            floor_s = statistics.median(floor_c)
            floor_cpu_s = statistics.median(floor_cpu)
            row: dict[str, Any] = {
                "floor_ms": 1e3 * floor_s,
                "floor_cpu_ms": 1e3 * floor_cpu_s,
                "floor_botorch_posterior_ms": 1e3 * botorch_s,
                "methods": {},
            }
            for name in args.methods.split(","):
                fn = get_method(name)
                adapter = lane_adapter(fn)
                if adapter is None:
                    row["methods"][name] = {"lane": None, "why": lane_support(fn)}
                    continue
                lane, today, lane_cpu, today_cpu = [], [], [], []
                for rep in range(args.repeats):
                    off = 10_000 * rep
                    # Lane: warm up at n - 1, time the step at n.
                    warm = _contexts(problem, cand, [s + off for s in seeds], n - 1)
                    adapter.propose_lane(warm)
                    ctxs = _contexts(problem, cand, [s + off for s in seeds], n)
                    _advance(warm, ctxs)
                    t0, c0 = time.perf_counter(), time.process_time()
                    adapter.propose_lane(ctxs)
                    for c in ctxs:
                        lane_recommend(fn, c)
                    lane.append((time.perf_counter() - t0) / len(ctxs))
                    lane_cpu.append((time.process_time() - c0) / len(ctxs))
                    # Today: one seed at a time, same warm start.
                    k = min(args.today_seeds, len(seeds))
                    warm1 = _contexts(
                        problem, cand, [s + off for s in seeds[:k]], n - 1
                    )
                    for c in warm1:
                        fn.propose(c)
                    ctx1 = _contexts(problem, cand, [s + off for s in seeds[:k]], n)
                    _advance(warm1, ctx1)
                    t0, c0 = time.perf_counter(), time.process_time()
                    for c in ctx1:
                        fn.propose(c)
                        fn.recommend(c)
                    today.append((time.perf_counter() - t0) / k)
                    today_cpu.append((time.process_time() - c0) / k)
                lane_s, today_s = statistics.median(lane), statistics.median(today)
                lane_c, today_c = (
                    statistics.median(lane_cpu),
                    statistics.median(today_cpu),
                )
                row["methods"][name] = {
                    "lane_ms_per_seed": 1e3 * lane_s,
                    "today_ms_per_seed": 1e3 * today_s,
                    "lane_over_floor": lane_s / floor_s,
                    "today_over_floor": today_s / floor_s,
                    "speedup": today_s / lane_s,
                    # CPU seconds of the (one-thread) process: comparable on
                    # a machine loaded by other work, where wall times are not.
                    "lane_cpu_ms_per_seed": 1e3 * lane_c,
                    "lane_cpu_over_floor_cpu": lane_c / floor_cpu_s,
                    "today_cpu_ms_per_seed": 1e3 * today_c,
                }
                print(
                    f"n={n} {name}: lane {1e3 * lane_s:.1f} ms/seed "
                    f"({lane_s / floor_s:.0f}x floor), today {1e3 * today_s:.1f} ms "
                    f"({today_s / floor_s:.0f}x), floor {1e3 * floor_s:.2f} ms; "
                    f"CPU: lane {1e3 * lane_c:.1f} ms/seed, today {1e3 * today_c:.1f} ms",
                    flush=True,
                )
            results["sizes"][str(n)] = row
    return results


# --------------------------------------------------------------------------
# matrix
# --------------------------------------------------------------------------


class _Progress:
    """Lanes, evaluations and a per-method ETA (from the finished runs)."""

    def __init__(self, tasks: list[Task], jobs: int) -> None:
        self.t0 = time.perf_counter()
        self.jobs = jobs
        self.total: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.evals = 0
        self.budget = tasks[0].config.budget if tasks else 0
        for t in tasks:
            self.total[t.method] = self.total.get(t.method, 0) + 1
            self.done.setdefault(t.method, 0)

    def __call__(self, method: str, n_records: int) -> None:
        self.done[method] += 1
        self.evals += n_records
        el = time.perf_counter() - self.t0
        runs_done = sum(self.done.values())
        runs_left = sum(self.total.values()) - runs_done
        eta = el / runs_done * runs_left if runs_done else float("nan")
        per = " ".join(f"{m}:{self.done[m]}/{self.total[m]}" for m in self.total)
        print(
            f"[{el:7.0f} s] runs {runs_done}/{sum(self.total.values())} "
            f"evaluations {self.evals} | {per} | ETA {eta:.0f} s "
            "(from the runs finished so far)",
            flush=True,
        )


def _run(
    tasks: list[Task], jobs: int, width: int | None, label: str
) -> tuple[pd.DataFrame, float, dict[str, str]]:
    backend = make_backend(jobs, None, width)
    progress = _Progress(tasks, jobs)
    frames, errors = [], {}
    t0 = time.perf_counter()
    print(f"-- {label}: {len(tasks)} runs, jobs {jobs}, lane width {width}", flush=True)
    with backend:
        for outcome in backend.run(tasks, lambda method, n: None):
            frames.append(outcome.records)
            if outcome.error is not None:
                errors[f"{outcome.method}/{outcome.seed}"] = outcome.error
            progress(outcome.method, len(outcome.records))
    wall = time.perf_counter() - t0
    return pd.concat(frames, ignore_index=True), wall, errors


def part_matrix(args: argparse.Namespace) -> dict[str, Any]:
    table = load_table(args.table)
    config = BenchConfig(budget=args.budget, n_init=args.n_init)
    methods = args.methods.split(",")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    tasks = [Task(m, s, table, config, get_method(m)) for m in methods for s in seeds]
    records, wall, errors = _run(tasks, args.jobs, args.width, "lanes")
    out = Path(args.out)
    atomic_write_parquet(out / "records_lanes.parquet", records)
    result: dict[str, Any] = {
        "methods": methods,
        "seeds": [seeds[0], seeds[-1]],
        "budget": args.budget,
        "jobs": args.jobs,
        "width": args.width,
        "lanes_wall_s": wall,
        "lanes_runs": len(tasks),
        "lanes_errors": errors,
        "lanes_fit_acq_s_by_method": records.groupby("method")[
            ["fit_seconds", "acq_seconds"]
        ]
        .sum()
        .to_dict(),
    }
    if args.baseline_seeds:
        base_seeds = seeds[: args.baseline_seeds]
        base = [
            Task(m, s, table, config, get_method(m))
            for m in methods
            for s in base_seeds
        ]
        brec, bwall, berr = _run(base, args.jobs, None, "one run at a time (today)")
        atomic_write_parquet(out / "records_baseline.parquet", brec)
        per_run_lanes = wall / len(tasks)
        per_run_today = bwall / len(base)
        full = 100 * len(methods)
        result.update(
            {
                "baseline_seeds": args.baseline_seeds,
                "baseline_wall_s": bwall,
                "baseline_runs": len(base),
                "baseline_errors": berr,
                "wall_s_per_run_lanes": per_run_lanes,
                "wall_s_per_run_today": per_run_today,
                "speedup": per_run_today / per_run_lanes,
                "extrapolated_full_matrix_min_lanes": full * per_run_lanes / 60,
                "extrapolated_full_matrix_min_today": full * per_run_today / 60,
                "extrapolation_note": (
                    "EXTRAPOLATED: wall time per run of this slice times "
                    f"{full} runs (100 seeds x {len(methods)} methods) at the same "
                    "budget; lanes of this slice are narrower than a full run's "
                    "when --seeds < --width"
                ),
            }
        )
        # Same seeds, both paths: do they reach the same conclusions?
        last = records[records["iteration"] == args.budget]
        blast = brec[brec["iteration"] == args.budget]
        both = last.merge(blast, on=["method", "seed"], suffixes=("_lanes", "_today"))
        result["final_regret_median"] = {
            "lanes_same_seeds": both.groupby("method")["regret_lanes"]
            .median()
            .to_dict(),
            "today": both.groupby("method")["regret_today"].median().to_dict(),
        }
    return result


# --------------------------------------------------------------------------
# independence
# --------------------------------------------------------------------------


def part_independence(args: argparse.Namespace) -> dict[str, Any]:
    table = load_table(args.table)
    config = BenchConfig(budget=args.budget, n_init=args.n_init)
    methods = args.methods.split(",")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    tasks = [Task(m, s, table, config, get_method(m)) for m in methods for s in seeds]
    if args.wide_records:
        # The wide layout's records from a comparison already run in lanes
        # (its runs.parquet): only the seeds alone are run here.
        wide = pd.read_parquet(args.wide_records)
        wide = wide[wide["method"].isin(methods) & wide["seed"].isin(seeds)]
        wall_w = float("nan")
    else:
        wide, wall_w, _ = _run(tasks, args.jobs, args.width, f"lanes of {args.width}")
    alone, wall_1, _ = _run(tasks, args.jobs, 1, "lanes of 1")
    out = Path(args.out)
    atomic_write_parquet(out / "records_independence_wide.parquet", wide)
    atomic_write_parquet(out / "records_independence_alone.parquet", alone)
    same: dict[str, list[int]] = {}
    differ: dict[str, list[int]] = {}
    for (m, s), a in wide.groupby(["method", "seed"]):
        b = alone[(alone["method"] == m) & (alone["seed"] == s)]
        key = ["row", "throughput", "margin", "recommended_row"]
        equal = a[key].reset_index(drop=True).equals(b[key].reset_index(drop=True))
        (same if equal else differ).setdefault(str(m), []).append(int(s))
    n_same = sum(len(v) for v in same.values())
    n_all = n_same + sum(len(v) for v in differ.values())
    last_w = wide[wide["iteration"] == args.budget]
    last_1 = alone[alone["iteration"] == args.budget]
    return {
        "methods": methods,
        "seeds": [seeds[0], seeds[-1]],
        "budget": args.budget,
        "width": args.width,
        "wide_records": args.wide_records,
        "identical_share": n_same / n_all,
        "identical": n_same,
        "runs": n_all,
        "differing_seeds": differ,
        "wall_s": {"wide": wall_w, "alone": wall_1},
        "final_regret_median": {
            "wide": last_w.groupby("method")["regret"].median().to_dict(),
            "alone": last_1.groupby("method")["regret"].median().to_dict(),
        },
        "found_optimum_share": {
            "wide": (
                last_w.assign(f=last_w["regret"] <= 0)
                .groupby("method")["f"]
                .mean()
                .to_dict()
            ),
            "alone": (
                last_1.assign(f=last_1["regret"] <= 0)
                .groupby("method")["f"]
                .mean()
                .to_dict()
            ),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("part", choices=["iteration", "matrix", "independence"])
    parser.add_argument("--methods", default=None)
    parser.add_argument("--width", type=int, default=32, help="seeds per lane")
    parser.add_argument("--sizes", default="40,100,200")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--today-seeds", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--baseline-seeds", type=int, default=0)
    parser.add_argument("--table", default=None)
    parser.add_argument("--out", default="docs/results/lanes")
    parser.add_argument(
        "--wide-records",
        default=None,
        help="independence: the lanes layout's records from a comparison's "
        "runs.parquet (run in lanes of at most --width) instead of running it",
    )
    parser.add_argument("--tag", default=None, help="suffix of the JSON file")
    args = parser.parse_args()
    if args.methods is None:
        args.methods = "qlognei" if args.part == "iteration" else PROTOCOL
    warnings.simplefilter("ignore")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    run = {"iteration": part_iteration, "matrix": part_matrix}.get(
        args.part, part_independence
    )
    result = run(args)
    result["machine"] = _machine()
    result["command"] = " ".join(sys.argv)
    name = args.part + (f"_{args.tag}" if args.tag else "") + ".json"
    _write_json(Path(args.out) / name, result)
    print(json.dumps(result, indent=2, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
