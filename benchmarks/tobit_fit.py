"""Side by side: ``tobit_ei``'s censored-margin fit through GPyTorch's ELBO and through the dense one.

``tobit_ei`` (:func:`bolt_pco64.bo.crash.propose_censored_logei`) fits, every
step, the variational GP of :func:`bolt_pco64.bo.feasibility.fit_censored_margin`
by SciPy L-BFGS-B on the variational ELBO: a hyperparameter refit every
``refit_every`` (5) steps, a variational-parameters-only update in between.
This script runs that schedule twice on the same data, interleaved so that
load from other processes hits both alike:

- **old**: the ELBO closure BoTorch builds by default
  (``botorch.optim.closures.get_loss_closure_with_grads``: GPyTorch's
  ``VariationalELBO`` through its variational strategy and lazy operators),
  patched in for :func:`bolt_pco64.bo.elbo.elbo_closure`;
- **new**: :func:`bolt_pco64.bo.elbo.elbo_closure` (the same ELBO on dense
  tensors), what the package uses.

For each ``n`` (``--n``), a run (``--reps`` of them) takes ``n + 4`` random
rows of the pco64 table (seeded) and makes five ``propose_censored_logei``
steps on the first ``n``, ``n + 1``, ..., ``n + 4`` of them (a refit, then
four updates; ``q = 1``). Recorded per path: the wall time of each step (the
whole proposal: crash model fit, objective GP fit, acquisition), the time in
``fit_censored_margin`` alone, the number of ELBO evaluations, and the picks;
and per run the largest difference of the fitted crash models' parameters
between the paths. Timings are medians over runs. One torch thread
(``torch.set_num_threads(1)``), as a harness worker; one unmeasured
cycle per path first (first-call costs).

Usage::

    python benchmarks/tobit_fit.py --n 40 100 --reps 5 --out docs/results/tobit-fit

``--out`` writes ``tobit_fit.json`` (every figure, the command and the
machine's ``uptime`` before and after) there, atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from botorch.optim.closures import get_loss_closure_with_grads

import bolt_pco64.bo.crash as crash_module
import bolt_pco64.bo.feasibility as feasibility
from bolt_pco64 import PCO64
from bolt_pco64._io import atomic_write_text
from bolt_pco64.bo import CrashAwareState, ProposalContext, propose_censored_logei

PATHS = ("old", "new")


@contextmanager
def _path(name: str, counts: list[int], fit_times: list[float]) -> Iterator[None]:
    """Patch in the ELBO closure of path ``name``, counting its evaluations and
    timing ``fit_censored_margin``."""
    base = get_loss_closure_with_grads if name == "old" else feasibility.elbo_closure
    fit = crash_module.fit_censored_margin

    def closure(mll: Any, parameters: dict[str, torch.Tensor]) -> Callable[..., Any]:
        inner = base(mll, parameters)

        def counted(**kwargs: Any) -> Any:
            counts[-1] += 1
            return inner(**kwargs)

        return counted

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fit(*args, **kwargs)
        finally:
            fit_times.append(time.perf_counter() - t0)

    saved = feasibility.elbo_closure
    feasibility.elbo_closure = closure  # type: ignore[assignment]
    crash_module.fit_censored_margin = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        feasibility.elbo_closure = saved
        crash_module.fit_censored_margin = fit


def _cycle(problem: PCO64, rows: torch.Tensor, n: int, name: str) -> dict[str, Any]:
    """Five steps of ``tobit_ei`` on ``rows[:n]``, ..., ``rows[:n + 4]``."""
    cand = problem.candidates()
    state = CrashAwareState()
    steps: list[float] = []
    counts: list[int] = []
    fit_times: list[float] = []
    picks: list[int] = []
    with _path(name, counts, fit_times):
        for k in range(5):
            idx = rows[: n + k]
            X = cand[idx]
            y, margin = problem.evaluate_true(X), problem.outcome_constraint(X)
            rest = torch.ones(cand.shape[0], dtype=torch.bool)
            rest[idx] = False
            ctx = ProposalContext(X, y, problem.bounds, 1, 0, cand[rest], margin=margin)
            counts.append(0)
            t0 = time.perf_counter()
            pick = propose_censored_logei(ctx, state)
            steps.append(time.perf_counter() - t0)
            picks.append(int(torch.nonzero(rest).squeeze(-1)[pick].item()))
    params = {k: v.detach().clone() for k, v in state.crash_model.named_parameters()}
    return {
        "step_s": steps,
        "fit_s": fit_times,
        "evaluations": counts,
        "picks": picks,
        "params": params,
    }


def run(ns: list[int], reps: int, seed: int) -> dict[str, Any]:
    problem = PCO64()
    g = torch.Generator().manual_seed(seed)
    warm = torch.randperm(problem.candidates().shape[0], generator=g)[: min(ns) + 4]
    for name in PATHS:  # first calls (imports, caches) are not measured
        _cycle(problem, warm, min(ns), name)
    out: dict[str, Any] = {}
    for n in ns:
        runs = []
        for r in range(reps):
            g = torch.Generator().manual_seed(seed + 1000 * n + r)
            rows = torch.randperm(problem.candidates().shape[0], generator=g)[: n + 4]
            order = PATHS if r % 2 == 0 else PATHS[::-1]
            res = {name: _cycle(problem, rows, n, name) for name in order}
            old, new = res["old"].pop("params"), res["new"].pop("params")
            res["max_param_diff"] = max(
                (old[k] - new[k]).abs().max().item() for k in old
            )
            res["same_picks"] = res["old"]["picks"] == res["new"]["picks"]
            runs.append(res)
            print(f"n={n} run {r}: {json.dumps(_summary([res]))}", flush=True)
        out[str(n)] = {"runs": runs, "summary": _summary(runs)}
    return out


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over runs: per-step time, refit and update fit times, evaluations."""
    s: dict[str, Any] = {}
    for name in PATHS:
        s[name] = {
            "step_s": statistics.median(
                statistics.mean(r[name]["step_s"]) for r in runs
            ),
            "refit_fit_s": statistics.median(r[name]["fit_s"][0] for r in runs),
            "update_fit_s": statistics.median(
                statistics.mean(r[name]["fit_s"][1:]) for r in runs
            ),
            "fit_s_per_step": statistics.median(
                statistics.mean(r[name]["fit_s"]) for r in runs
            ),
            "evaluations": statistics.median(sum(r[name]["evaluations"]) for r in runs),
        }
    s["speedup_step"] = s["old"]["step_s"] / s["new"]["step_s"]
    s["speedup_fit"] = s["old"]["fit_s_per_step"] / s["new"]["fit_s_per_step"]
    s["all_same_picks"] = all(r["same_picks"] for r in runs)
    s["max_param_diff"] = max(r["max_param_diff"] for r in runs)
    return s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[40, 100])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    t0 = time.perf_counter()
    results = run(args.n, args.reps, args.seed)
    after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    report = {
        "script": "tobit_fit",
        "command": " ".join(["python", "benchmarks/tobit_fit.py", *sys.argv[1:]]),
        "uptime_before": before,
        "uptime_after": after,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "seconds": time.perf_counter() - t0,
        "results": results,
    }
    for n, r in results.items():
        print(f"n={n}: {json.dumps(r['summary'], indent=1)}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "tobit_fit.json", json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
