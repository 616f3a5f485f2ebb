"""Benchmark harness: compare BO methods on pco64 (``bolt-pco64 bench``).

A *run* is one method optimising pco64 from one seed for ``budget``
evaluations (the initial design included). Every evaluation is one row of a
long table (:data:`RECORD_COLUMNS`):

- ``method``, ``seed``, ``iteration`` (1-based evaluation count), ``row``
  (canonical table index), the 8 inputs by their card names (encoded: log2
  values, ZeRO as the ordinal 0/1/2);
- ``throughput``: the observed throughput (the table's ``throughput_mean``, plus
  Gaussian noise when ``noise`` is set), NaN when the run OOMed; ``margin``: the
  row's ``peak_mem_normalised`` (``<= 0`` iff feasible); ``feasible``;
- ``best_feasible``: the best *true* (noise-free) feasible throughput evaluated
  so far, NaN before the first feasible evaluation; ``regret``:
  ``optimal_value - best_feasible`` (so regret is never negative, with or
  without noise);
- ``gpu_hours``: cumulative simulated cost, ``overall_time x 64 GPUs / 3600``
  per feasible run. **An OOM run is charged** :data:`OOM_COST_FRACTION` (a
  quarter) of the median feasible ``overall_time`` of the table (the lower
  middle value for an even count, as ``torch.median``): a crashed job
  still pays for scheduling, start-up, model construction and the first steps
  until the allocator fails, but not for a whole measured run;
- ``fit_seconds`` and ``acq_seconds``: the wall time of the proposal step that
  chose this evaluation (model fitting, and the rest of the proposal). A batch
  of ``q`` evaluations carries the time on its first row and 0 on the others;
  the initial design costs 0.

Methods (:data:`METHODS`, extend it with :func:`register_method`):

- ``random``: uniform over the untried configurations;
- ``qlognei`` / ``qlogei``: constrained qLogNEI / qLogEI (objective GP on
  feasible observations, constraint GP on every margin, see
  :mod:`bolt_pco64.bo`) over the untried candidates;
- ``ts``: constrained Thompson sampling over the untried candidates;
- ``naive``: qLogNEI on one GP that ignores the constraint: an OOM is recorded
  as the problem's ``worst_feasible_value`` and nothing models feasibility.

Fairness: for a given seed every method starts from the same initial design
(``n_init`` distinct untried rows drawn by a generator seeded by the seed
alone) and, with noise, sees the same noise on it. Until a run has its first
feasible observation the model methods (``qlognei``, ``qlogei``, ``ts``) choose
by ``qLogProbabilityOfFeasibility`` of the constraint GP (there is no
incumbent to improve on yet). ``naive`` has no constraint model and always uses
its imputed objective.

Determinism: a run depends only on (method, seed, configuration, table). Each
run executes with one torch thread (restored afterwards), so the in-process,
``jobs`` (local processes) and Dask backends give bit-identical records
(``fit_seconds``/``acq_seconds`` aside). Use single-threaded Dask workers
(``dask worker --nthreads 1``): GP fitting seeds torch's global generator
locally (see :mod:`bolt_pco64.bo`), which threads of one process share.

Reliability: each finished run is written atomically to
``OUT/runs/<method>__seed<seed>.parquet`` (its status and error in the file's
metadata), then ``runs.parquet`` and ``meta.json`` are rewritten atomically, so
a killed process leaves every file valid. A rerun into the same directory skips
the complete runs (and reruns failed ones); it refuses a directory holding runs
of a different configuration (budget, n_init, q, noise or table). A method that
raises ends only its own run: its rows so far are kept and the error goes to
``meta.json``. At the end ``summary.csv``, ``summary.md`` and ``regret.png``
are written. ``meta.json``'s ``status`` is ``running`` while runs go on,
``complete`` at the end, ``interrupted`` after Ctrl-C and ``aborted`` when the
harness itself failed (a run in progress when the process stops is not kept;
a rerun repeats it). Worker processes of ``jobs`` exit when the harness dies.

Writing your own method::

    import torch
    from bolt_pco64.bench import RunContext, register_method, run_benchmark

    @register_method("lowest_memory_first")
    def lowest_memory_first(ctx: RunContext) -> torch.Tensor:
        # ctx.untried: canonical row indices not evaluated yet (ascending)
        mem = ctx.problem.table.column("peak_mem")[ctx.untried]
        return ctx.untried[torch.argsort(mem, stable=True)[: ctx.q]]

    run_benchmark(["random", "lowest_memory_first"], seeds=5, budget=30,
                  out="my-results")

A method returns ``q`` distinct untried row indices. It must draw randomness
only from ``ctx.generator`` / ``ctx.step_seed``, and may add the time it spends
fitting models to ``ctx.fit_seconds``. For ``jobs``/Dask backends the function
must be importable by the workers (defined in a module, or in a script run
as ``__main__``; Dask pickles it by value).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import multiprocessing
import os
import platform
import re
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch import Tensor

from bolt_pco64._io import atomic_write_text, atomic_write_with
from bolt_pco64.problem import PCO64, is_noise_std
from bolt_pco64.table import INPUT_COLUMNS, Table, load_table

__all__ = [
    "DEFAULT_METHODS",
    "GPUS",
    "METHODS",
    "OOM_COST_FRACTION",
    "QUICK",
    "RECORD_COLUMNS",
    "BenchConfig",
    "BenchResult",
    "OutputDirError",
    "RunContext",
    "register_method",
    "run_benchmark",
    "run_one",
    "summarize",
]

#: GPUs per training run (the card's ``log2_num_gpus = 6``).
GPUS = 64
#: An OOM run costs this fraction of the table's median feasible overall_time.
OOM_COST_FRACTION = 0.25
#: Columns of the records, in order.
RECORD_COLUMNS: tuple[str, ...] = (
    "method",
    "seed",
    "iteration",
    "row",
    *INPUT_COLUMNS,
    "throughput",
    "margin",
    "feasible",
    "best_feasible",
    "regret",
    "gpu_hours",
    "fit_seconds",
    "acq_seconds",
)
#: The default comparison: 5 methods x 20 seeds x 60 evaluations.
DEFAULT_METHODS: tuple[str, ...] = ("random", "qlognei", "qlogei", "ts", "naive")
#: ``--quick``: 3 methods x 3 seeds x 30 evaluations.
QUICK: dict[str, Any] = {
    "methods": ("random", "qlognei", "ts"),
    "seeds": 3,
    "budget": 30,
    "n_init": 10,
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class OutputDirError(OSError):
    """The output directory cannot be created or written."""


# --------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------


@dataclass
class RunContext:
    """What a method sees when it proposes the next evaluations.

    Attributes:
        problem: The :class:`~bolt_pco64.PCO64` problem.
        candidates: ``N x 8``-dim tensor of all configurations (canonical order).
        rows: ``n``-dim long tensor of the rows evaluated so far, in order.
        y: ``n``-dim tensor of observed throughput, NaN where the run OOMed.
        margin: ``n``-dim tensor of the observed memory margins.
        untried: ``m``-dim long tensor of the rows not evaluated yet (ascending).
        q: How many rows to propose.
        seed: The run's seed.
        step_seed: A fresh integer seed for this step (from ``generator``).
        generator: The method's random number generator for this run.
        fit_seconds: Time spent fitting models; a method adds to it.
        state: A dict that persists across the steps of one run (the
            built-in model methods keep their last GPs there to warm-start
            the next fit).
    """

    problem: PCO64
    candidates: Tensor
    rows: Tensor
    y: Tensor
    margin: Tensor
    untried: Tensor
    q: int
    seed: int
    step_seed: int
    generator: torch.Generator
    fit_seconds: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def X(self) -> Tensor:
        """``n x 8``-dim tensor of the evaluated configurations."""
        return self.candidates[self.rows]

    @property
    def feasible(self) -> Tensor:
        """``n``-dim bool tensor: which evaluations ran."""
        return ~torch.isnan(self.y)

    @property
    def bounds(self) -> Tensor:
        """``2 x 8``-dim tensor of the problem's bounds."""
        return self.problem.bounds.to(self.candidates)


MethodFn = Callable[[RunContext], "Tensor | Sequence[int]"]
#: The registry of methods by name.
METHODS: dict[str, MethodFn] = {}


def register_method(
    name: str, fn: MethodFn | None = None
) -> MethodFn | Callable[[MethodFn], MethodFn]:
    """Register a method under ``name``; usable as a decorator or a function.

    ``register_method("mine", fn)`` or ``@register_method("mine")``. A method
    is ``fn(ctx: RunContext) -> q distinct untried row indices`` (a long
    tensor or a sequence of ints). Re-registering a name replaces it.

    Raises:
        ValueError: If ``name`` is not a simple file-safe name.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"Expected a method name of letters, digits, '_', '.', '-', got {name!r}."
        )

    def add(f: MethodFn) -> MethodFn:
        if not callable(f):
            raise TypeError(f"Expected a callable method, got {type(f).__name__}.")
        METHODS[name] = f
        return f

    return add(fn) if fn is not None else add


def _random(ctx: RunContext) -> Tensor:
    perm = torch.randperm(ctx.untried.numel(), generator=ctx.generator)
    return ctx.untried[perm[: ctx.q]]


def _propose_model(ctx: RunContext, kind: str) -> Tensor:
    """The constrained model methods; ``kind`` is qlognei, qlogei or ts."""
    from bolt_pco64.bo import (
        fit_constrained_models,
        propose_acquisition,
        propose_thompson,
    )

    t0 = time.perf_counter()
    models = fit_constrained_models(
        ctx.X,
        ctx.y,
        ctx.margin,
        ctx.bounds,
        ctx.step_seed,
        warm_start=ctx.state.get("models"),
    )
    ctx.state["models"] = models
    ctx.fit_seconds += time.perf_counter() - t0
    choices = ctx.candidates[ctx.untried]
    if models.objective is None:
        # No feasible observation yet: probability of feasibility.
        idx = propose_acquisition(
            "pof", models, ctx.X, ctx.y, choices, ctx.q, ctx.step_seed
        )
    elif kind == "ts":
        idx = propose_thompson(models, choices, ctx.q, ctx.generator)
    else:
        idx = propose_acquisition(
            kind, models, ctx.X, ctx.y, choices, ctx.q, ctx.step_seed
        )
    return ctx.untried[idx]


def _qlognei(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "qlognei")


def _qlogei(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "qlogei")


def _ts(ctx: RunContext) -> Tensor:
    return _propose_model(ctx, "ts")


def _naive(ctx: RunContext) -> Tensor:
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler
    from botorch.utils.sampling import manual_seed

    from bolt_pco64.bo import MC_SAMPLES, fit_gp, select_discrete

    worst = float(ctx.problem.worst_feasible_value)
    y = torch.where(ctx.feasible, ctx.y, torch.full_like(ctx.y, worst))
    t0 = time.perf_counter()
    model = fit_gp(ctx.X, y, ctx.bounds, ctx.step_seed, ctx.state.get("model"))
    ctx.state["model"] = model
    ctx.fit_seconds += time.perf_counter() - t0
    with manual_seed(ctx.step_seed):  # baseline pruning draws from the global RNG
        acqf = qLogNoisyExpectedImprovement(
            model=model,
            X_baseline=ctx.X,
            sampler=SobolQMCNormalSampler(torch.Size([MC_SAMPLES]), seed=ctx.step_seed),
            prune_baseline=True,
        )
    return ctx.untried[
        select_discrete(acqf, ctx.candidates[ctx.untried], ctx.q, ctx.step_seed)
    ]


register_method("random", _random)
register_method("qlognei", _qlognei)
register_method("qlogei", _qlogei)
register_method("ts", _ts)
register_method("naive", _naive)


# --------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchConfig:
    """What makes runs comparable (stored with every run; resume checks it).

    Attributes:
        budget: Evaluations per run, initial design included.
        n_init: Size of the initial design (``1 <= n_init <= budget``).
        q: Batch size of each proposal.
        noise: ``None`` (noise-free), a float standard deviation, or
            ``"measured"`` (each row's ``throughput_std``).
    """

    budget: int = 60
    n_init: int = 10
    q: int = 1
    noise: float | str | None = None

    def check(self, n_rows: int | None = None) -> None:
        """Raise ``ValueError`` on an inconsistent configuration."""
        for name in ("budget", "n_init", "q"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Expected {name} to be an integer >= 1, got {v!r}.")
        if self.n_init > self.budget:
            raise ValueError(
                f"Expected n_init <= budget, got n_init={self.n_init} > budget={self.budget}."
            )
        if n_rows is not None and self.budget > n_rows:
            raise ValueError(
                f"Expected budget <= the table's {n_rows} rows, got {self.budget}."
            )
        if not is_noise_std(self.noise):
            raise ValueError(
                f"Expected noise None, 'measured' or a float >= 0, got {self.noise!r}."
            )


def _method_seed(method: str, seed: int) -> int:
    """A seed for the method's generator, stable across processes and platforms."""
    return (int(seed) * 1_000_003 + zlib.crc32(method.encode("utf-8"))) % (2**62)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _cost_per_row(table: Table) -> Tensor:
    """``N``-dim tensor: simulated GPU-hours of evaluating each row.

    Feasible: ``overall_time * GPUS / 3600``. OOM: ``OOM_COST_FRACTION`` times
    the ``torch.median`` (lower middle value) of the feasible ``overall_time``.
    """
    ot = table.column("overall_time")
    feas = table.feasible
    oom_seconds = OOM_COST_FRACTION * float(ot[feas].median())
    seconds = torch.where(feas, ot, torch.full_like(ot, oom_seconds))
    return seconds * GPUS / 3600.0


@dataclass
class RunOutcome:
    """The result of one run: its records and, if it failed, the error."""

    method: str
    seed: int
    records: pd.DataFrame
    error: str | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_one(
    method: str,
    seed: int,
    table: Table,
    config: BenchConfig,
    fn: MethodFn | None = None,
    on_evaluation: Callable[[int], None] | None = None,
) -> RunOutcome:
    """Run one method from one seed; never raises for a failing method.

    Args:
        method: The method's name (recorded; looked up in :data:`METHODS` when
            ``fn`` is ``None``).
        seed: The run's seed.
        table: The pco64 table.
        config: Budget, initial design, batch size and noise.
        fn: The method itself (to run one that is not registered here).
        on_evaluation: Called with the number of new evaluations after each step.

    Returns:
        A :class:`RunOutcome`; when the method raises (or proposes invalid rows)
        the records hold every evaluation made before and ``error`` says why.
    """
    if fn is None:
        if method not in METHODS:
            raise ValueError(f"Expected a method in {sorted(METHODS)}, got {method!r}.")
        fn = METHODS[method]
    config.check(len(table))
    with _one_thread():
        return _run(method, int(seed), table, config, fn, on_evaluation)


def _run(
    method: str,
    seed: int,
    table: Table,
    config: BenchConfig,
    fn: MethodFn,
    on_evaluation: Callable[[int], None] | None,
) -> RunOutcome:
    problem = PCO64(table=table)
    cand = problem.candidates().to(torch.double)
    n_rows = cand.shape[0]
    true_y = problem.evaluate_true(cand).to(torch.double)
    margins = problem.outcome_constraint(cand).to(torch.double)
    cost = _cost_per_row(table)
    optimal = float(problem.optimal_value)
    if config.noise is None:
        noise_sd = torch.zeros(n_rows, dtype=torch.double)
    elif config.noise == "measured":
        noise_sd = torch.nan_to_num(table.column("throughput_std"), nan=0.0)
    else:
        noise_sd = torch.full((n_rows,), float(config.noise), dtype=torch.double)

    init_gen = torch.Generator().manual_seed(int(seed))
    noise_gen = torch.Generator().manual_seed(int(seed) + 7_919)
    method_gen = torch.Generator().manual_seed(_method_seed(method, seed))

    state: dict[str, Any] = {}
    rows: list[int] = []
    ys: list[float] = []
    fit_s: list[float] = []
    acq_s: list[float] = []
    tried = torch.zeros(n_rows, dtype=torch.bool)

    def evaluate(new: list[int], fit: float, acq: float) -> None:
        z = torch.randn(len(new), generator=noise_gen, dtype=torch.double)
        for k, r in enumerate(new):
            t = float(true_y[r])
            obs = t + float(noise_sd[r]) * float(z[k]) if not math.isnan(t) else t
            rows.append(r)
            ys.append(obs)
            fit_s.append(fit if k == 0 else 0.0)
            acq_s.append(acq if k == 0 else 0.0)
            tried[r] = True
        if on_evaluation is not None:
            on_evaluation(len(new))

    error = tb = None
    init = torch.randperm(n_rows, generator=init_gen)[: config.n_init].tolist()
    evaluate(init, 0.0, 0.0)
    try:
        while len(rows) < config.budget:
            q = min(config.q, config.budget - len(rows))
            untried = torch.nonzero(~tried).squeeze(-1)
            step_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=method_gen))
            ctx = RunContext(
                problem=problem,
                candidates=cand,
                rows=torch.tensor(rows, dtype=torch.long),
                y=torch.tensor(ys, dtype=torch.double),
                margin=margins[torch.tensor(rows, dtype=torch.long)],
                untried=untried,
                q=q,
                seed=seed,
                step_seed=step_seed,
                generator=method_gen,
                state=state,
            )
            t0 = time.perf_counter()
            proposed = fn(ctx)
            total = time.perf_counter() - t0
            new = _check_proposal(proposed, tried, q, method)
            evaluate(new, ctx.fit_seconds, max(total - ctx.fit_seconds, 0.0))
    except Exception as err:  # a failing method ends only its own run
        error = f"{type(err).__name__}: {err}".splitlines()[0][:500]
        tb = traceback.format_exc()
    records = _records(method, seed, rows, ys, cand, margins, true_y, cost, optimal)
    records["fit_seconds"] = np.asarray(fit_s, dtype=np.float64)
    records["acq_seconds"] = np.asarray(acq_s, dtype=np.float64)
    return RunOutcome(method, seed, records, error, tb)


def _check_proposal(proposed: object, tried: Tensor, q: int, method: str) -> list[int]:
    try:
        idx = torch.as_tensor(proposed).reshape(-1)
    except Exception as err:
        raise ValueError(
            f"Expected method {method!r} to return row indices, got {type(proposed).__name__}."
        ) from err
    if idx.is_floating_point() or idx.is_complex() or idx.dtype == torch.bool:
        raise ValueError(
            f"Expected method {method!r} to return integer row indices, got {idx.dtype}."
        )
    new = [int(v) for v in idx.tolist()]
    if len(new) != q:
        raise ValueError(
            f"Expected method {method!r} to return {q} rows, got {len(new)}."
        )
    n = tried.numel()
    for r in new:
        if not 0 <= r < n or bool(tried[r]):
            raise ValueError(
                f"Expected method {method!r} to return untried rows in 0..{n - 1}, got {r}."
            )
    if len(set(new)) != len(new):
        raise ValueError(
            f"Expected method {method!r} to return distinct rows, got {new}."
        )
    return new


def _records(
    method: str,
    seed: int,
    rows: list[int],
    ys: list[float],
    cand: Tensor,
    margins: Tensor,
    true_y: Tensor,
    cost: Tensor,
    optimal: float,
) -> pd.DataFrame:
    idx = torch.tensor(rows, dtype=torch.long)
    n = len(rows)
    true = true_y[idx].numpy() if n else np.zeros(0)
    feas = ~np.isnan(true)
    best = np.full(n, np.nan)
    running = -np.inf
    for i in range(n):
        if feas[i] and true[i] > running:
            running = float(true[i])
        best[i] = running if math.isfinite(running) else np.nan
    data: dict[str, Any] = {
        "method": pd.Series([method] * n, dtype=object),
        "seed": np.full(n, seed, dtype=np.int64),
        "iteration": np.arange(1, n + 1, dtype=np.int64),
        "row": idx.numpy().astype(np.int64),
    }
    X = cand[idx].numpy() if n else np.zeros((0, len(INPUT_COLUMNS)))
    for j, name in enumerate(INPUT_COLUMNS):
        data[name] = np.rint(X[:, j]).astype(np.int64)
    data["throughput"] = np.asarray(ys, dtype=np.float64)
    data["margin"] = margins[idx].numpy().astype(np.float64) if n else np.zeros(0)
    data["feasible"] = feas
    data["best_feasible"] = best
    data["regret"] = optimal - best
    data["gpu_hours"] = np.cumsum(cost[idx].numpy()) if n else np.zeros(0)
    data["fit_seconds"] = np.zeros(n)
    data["acq_seconds"] = np.zeros(n)
    return pd.DataFrame(data, columns=list(RECORD_COLUMNS))


def _empty_records() -> pd.DataFrame:
    nothing = torch.zeros(0, dtype=torch.double)
    cand = torch.zeros((0, len(INPUT_COLUMNS)), dtype=torch.double)
    return _records("", 0, [], [], cand, nothing, nothing, nothing, 0.0)


@dataclass(frozen=True)
class _Task:
    method: str
    seed: int
    table: Table
    config: BenchConfig
    fn: MethodFn


def _run_task(task: _Task) -> RunOutcome:
    """Worker entry point (processes and Dask)."""
    return run_one(task.method, task.seed, task.table, task.config, fn=task.fn)


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------


def _run_path(out: Path, method: str, seed: int) -> Path:
    return out / "runs" / f"{method}__seed{seed}.parquet"


def check_output_dir(out: str | os.PathLike[str]) -> Path:
    """Create ``out`` (and ``out/runs``) and prove it writable, before any work.

    Raises:
        OutputDirError: With a one-line reason, if it cannot be created or written.
    """
    path = Path(out).expanduser()
    try:
        (path / "runs").mkdir(parents=True, exist_ok=True)
        for folder in (path, path / "runs"):
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
                pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise OutputDirError(
            f"Cannot write to output directory {str(path)!r}: {reason}"
            + (f" ({err.filename})" if err.filename else "")
        ) from None
    return path


def _table_fingerprint(table: Table) -> str:
    cols = [*INPUT_COLUMNS, "throughput_mean", "peak_mem_normalised", "overall_time"]
    values = table.frame[cols].to_numpy(dtype=np.float64)
    values = np.where(np.isnan(values), -1.2345e300, values)
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:16]


def _config_key(config: BenchConfig, table: Table) -> dict[str, Any]:
    return {**asdict(config), "table": _table_fingerprint(table)}


def _write_run(out: Path, outcome: RunOutcome, key: dict[str, Any]) -> None:
    meta = {
        "status": "complete" if outcome.ok else "failed",
        "error": outcome.error or "",
        "config": json.dumps(key, sort_keys=True),
        "method": outcome.method,
        "seed": str(outcome.seed),
    }
    arrow = pa.Table.from_pandas(outcome.records, preserve_index=False)
    arrow = arrow.replace_schema_metadata(
        {**(arrow.schema.metadata or {}), **{k: v.encode() for k, v in meta.items()}}
    )
    atomic_write_with(
        _run_path(out, outcome.method, outcome.seed),
        lambda tmp: pq.write_table(arrow, tmp),
    )


def _read_run(path: Path) -> tuple[pd.DataFrame, dict[str, str]] | None:
    """A per-run file and its metadata; ``None`` if it is not a valid one."""
    try:
        arrow = pq.read_table(path)
    except (OSError, pa.ArrowException, ValueError):
        return None
    meta = {
        k.decode(): v.decode()
        for k, v in (arrow.schema.metadata or {}).items()
        if k in (b"status", b"error", b"config", b"method", b"seed")
    }
    frame = arrow.to_pandas()
    if list(frame.columns) != list(RECORD_COLUMNS) or not {
        "status",
        "method",
        "seed",
    } <= set(meta):
        return None
    frame["method"] = frame["method"].astype(object)
    return frame, meta


def _clean_temporaries(out: Path) -> None:
    """Remove temporary files left by a killed writer (never complete files)."""
    for folder in (out, out / "runs"):
        for p in folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                p.unlink()


def _write_parquet(path: Path, frame: pd.DataFrame) -> None:
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    atomic_write_with(path, lambda tmp: pq.write_table(arrow, tmp))


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import botorch
    import gpytorch

    try:
        own = version("bolt_pco64")
    except PackageNotFoundError:
        own = "unknown (source checkout)"
    return {
        "bolt_pco64": own,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "botorch": botorch.__version__,
        "gpytorch": gpytorch.__version__,
        "pandas": pd.__version__,
        "numpy": np.__version__,
    }


# --------------------------------------------------------------------------
# Summary and plot
# --------------------------------------------------------------------------


def checkpoints_for(budget: int) -> list[int]:
    """Evaluation counts reported in the summary: quarters of the budget."""
    return sorted({max(1, round(budget * f)) for f in (0.25, 0.5, 0.75, 1.0)})


def _regret_matrix(
    runs: pd.DataFrame, budget: int, fill: float
) -> tuple[list[int], np.ndarray]:
    """``seeds x budget`` regret (NaN before the first feasible -> ``fill``)."""
    seeds = sorted(runs["seed"].unique().tolist())
    mat = np.full((len(seeds), budget), np.nan)
    for i, s in enumerate(seeds):
        r = runs[runs["seed"] == s].sort_values("iteration")
        vals = r["regret"].to_numpy(dtype=np.float64)[:budget]
        mat[i, : len(vals)] = vals
    return seeds, np.where(np.isnan(mat), fill, mat)


def summarize(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    failed: set[tuple[str, int]] | None = None,
    methods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per-method summary of complete runs.

    A regret of NaN (no feasible evaluation yet) counts as
    ``optimal_value - worst_feasible_value``: as bad as the worst configuration
    that runs. Failed runs (``failed``) are left out and counted.

    Returns:
        One row per method: ``runs``, ``failed``, ``regret_median@k``,
        ``regret_q25@k``, ``regret_q75@k`` for each checkpoint ``k``,
        ``found_optimum`` (share of runs), ``evals_to_optimum_median`` (inf when
        the median run did not find it), ``ooms_median``, ``ooms_total``,
        ``gpu_hours_median``.
    """
    failed = failed or set()
    fill = float(optimal_value - worst_feasible_value)
    names = (
        list(methods)
        if methods is not None
        else list(dict.fromkeys(records["method"].tolist()))
    )
    rows = []
    for m in names:
        sub = records[records["method"] == m]
        n_failed = sum(1 for (mm, _) in failed if mm == m)
        keep = np.array([(m, int(s)) not in failed for s in sub["seed"]], dtype=bool)
        ok = sub.loc[keep]
        row: dict[str, Any] = {"method": m, "runs": ok["seed"].nunique()}
        row["failed"] = n_failed
        if row["runs"] == 0:
            rows.append(row)
            continue
        _, mat = _regret_matrix(ok, budget, fill)
        for k in checkpoints_for(budget):
            col = mat[:, k - 1]
            row[f"regret_median@{k}"] = float(np.median(col))
            row[f"regret_q25@{k}"] = float(np.quantile(col, 0.25))
            row[f"regret_q75@{k}"] = float(np.quantile(col, 0.75))
        hit = mat <= 0
        found = hit.any(axis=1)
        first = np.where(found, hit.argmax(axis=1) + 1, np.inf)
        row["found_optimum"] = float(found.mean())
        row["evals_to_optimum_median"] = float(np.median(first))
        per = ok.groupby("seed")
        ooms = per["feasible"].apply(lambda f: int((~f.astype(bool)).sum()))
        row["ooms_median"] = float(ooms.median())
        row["ooms_total"] = int(ooms.sum())
        row["gpu_hours_median"] = float(per["gpu_hours"].max().median())
        rows.append(row)
    return pd.DataFrame(rows)


def _fmt(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def summary_markdown(
    summary: pd.DataFrame, budget: int, header: Sequence[str] = ()
) -> str:
    """The summary as a Markdown table (median [IQR] of regret at checkpoints)."""
    ks = checkpoints_for(budget)
    cols = [
        "method",
        "runs",
        *[f"regret @{k}: median [IQR]" for k in ks],
        "found optimum",
        "evals to optimum (median)",
        "OOMs per run (median)",
        "OOMs total",
        "GPU-hours (median)",
    ]
    lines = [*header, "", "| " + " | ".join(cols) + " |"]
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for r in summary.to_dict("records"):
        runs = f"{r['runs']}" + (f" (+{r['failed']} failed)" if r["failed"] else "")
        if r["runs"] == 0:
            lines.append(
                "| " + " | ".join([r["method"], runs] + ["–"] * (len(cols) - 2)) + " |"
            )
            continue
        cells = [r["method"], runs]
        for k in ks:
            cells.append(
                f"{_fmt(r[f'regret_median@{k}'])} "
                f"[{_fmt(r[f'regret_q25@{k}'])}, {_fmt(r[f'regret_q75@{k}'])}]"
            )
        e = r["evals_to_optimum_median"]
        cells += [
            f"{100 * r['found_optimum']:.0f}%",
            f"> {budget}" if math.isinf(e) else f"{e:g}",
            f"{r['ooms_median']:g}",
            f"{r['ooms_total']}",
            f"{r['gpu_hours_median']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_regret(
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    optimal_value: float,
    worst_feasible_value: float,
    budget: int,
    methods: Sequence[str],
    title: str = "",
) -> None:
    """Write ``regret.png``: median regret with IQR bands vs evaluations and GPU-hours.

    The y axis is symmetric-log (linear below 1e-3), so that both the early
    descent and the last small steps to the optimum (regret 0) are visible.

    Regret before the first feasible evaluation counts as
    ``optimal_value - worst_feasible_value``. Against GPU-hours, each run's
    regret is a step function of its cumulative cost, held at its final value
    after its budget is spent.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fill = float(optimal_value - worst_feasible_value)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    gmax = float(records["gpu_hours"].max()) if len(records) else 1.0
    grid = np.linspace(0.0, gmax, 300)
    x_eval = np.arange(1, budget + 1)
    for m in methods:
        sub = records[records["method"] == m]
        if sub.empty:
            continue
        _, mat = _regret_matrix(sub, budget, fill)
        med, lo, hi = (np.quantile(mat, p, axis=0) for p in (0.5, 0.25, 0.75))
        (line,) = axes[0].plot(x_eval, med, label=m)
        axes[0].fill_between(x_eval, lo, hi, alpha=0.2, color=line.get_color())
        curves = []
        for _, r in sub.groupby("seed"):
            r = r.sort_values("iteration")
            g = r["gpu_hours"].to_numpy(dtype=np.float64)
            reg = np.where(
                np.isnan(r["regret"].to_numpy()), fill, r["regret"].to_numpy()
            )
            pos = np.searchsorted(g, grid, side="right") - 1
            curves.append(np.where(pos >= 0, reg[np.clip(pos, 0, None)], fill))
        c = np.asarray(curves)
        med, lo, hi = (np.quantile(c, p, axis=0) for p in (0.5, 0.25, 0.75))
        axes[1].plot(grid, med, label=m, color=line.get_color())
        axes[1].fill_between(grid, lo, hi, alpha=0.2, color=line.get_color())
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("simulated GPU-hours (cumulative)")
    for ax in axes:
        # Linear near 0 (regret 0 = optimum found), logarithmic above 1e-3.
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylim(bottom=0.0)
        ax.set_ylabel("regret (optimal - best feasible throughput)")
        ax.grid(alpha=0.3)
        ax.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)


# --------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------


@dataclass
class BenchResult:
    """What :func:`run_benchmark` produced.

    Attributes:
        out: The output directory.
        records: All records (complete and failed runs), one row per evaluation.
        summary: The per-method summary (:func:`summarize`).
        summary_markdown: ``summary.md``'s text.
        plot: Path of ``regret.png``.
        errors: ``"method/seed" -> error`` for the failed runs.
        ran: ``(method, seed)`` pairs run by this call (the others were resumed).
    """

    out: Path
    records: pd.DataFrame
    summary: pd.DataFrame
    summary_markdown: str
    plot: Path
    errors: dict[str, str]
    ran: list[tuple[str, int]] = field(default_factory=list)


def _seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise TypeError(f"Expected an int or a sequence of ints, got {seeds!r}.")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"Expected seeds >= 1, got {seeds}.")
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out or len(set(out)) != len(out) or min(out) < 0:
        raise ValueError(f"Expected distinct seeds >= 0, got {list(seeds)}.")
    return out


def run_benchmark(
    methods: Sequence[str] = DEFAULT_METHODS,
    seeds: int | Sequence[int] = 20,
    budget: int = 60,
    n_init: int = 10,
    q: int = 1,
    out: str | os.PathLike[str] = "bench-results",
    table: str | os.PathLike[str] | pd.DataFrame | Table | None = None,
    noise: float | str | None = None,
    jobs: int = 1,
    dask_scheduler: str | None = None,
    progress: bool = True,
    arguments: dict[str, Any] | None = None,
) -> BenchResult:
    """Run (or resume) a comparison and write all its files into ``out``.

    Args:
        methods: Names in :data:`METHODS`.
        seeds: A number ``N`` (seeds ``0..N-1``) or explicit seeds.
        budget: Evaluations per run, initial design included.
        n_init: Size of the shared initial design.
        q: Batch size of each proposal.
        out: Output directory (created; must be writable).
        table: The table (see :func:`bolt_pco64.load_table`); default source
            when ``None``.
        noise: ``None``, a standard deviation, or ``"measured"``.
        jobs: Local worker processes (1 = in this process).
        dask_scheduler: Address of an existing Dask scheduler (overrides jobs).
        progress: Show tqdm progress bars (on stderr).
        arguments: Recorded in ``meta.json`` as the arguments (the CLI passes
            its options); defaults to this call's arguments.

    Returns:
        A :class:`BenchResult`.

    Raises:
        OutputDirError: If ``out`` cannot be created or written (before any run).
        ValueError: On unknown methods, bad settings or a directory holding
            runs of another configuration (before any run).
    """
    config = BenchConfig(budget=budget, n_init=n_init, q=q, noise=noise)
    methods = list(dict.fromkeys(methods))
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown:
        raise ValueError(
            f"Expected methods from {sorted(METHODS)}, got {unknown or methods!r}."
        )
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"Expected jobs to be an integer >= 1, got {jobs!r}.")
    if dask_scheduler is not None and importlib.util.find_spec("distributed") is None:
        raise ValueError(
            "Expected Dask for dask_scheduler (pip install 'bolt_pco64[dask]'), "
            "got no 'distributed' module."
        )
    seed_list = _seeds(seeds)
    config.check()
    path = check_output_dir(out)
    tab = load_table(table)
    config.check(len(tab))
    problem = PCO64(table=tab)
    optimal = float(problem.optimal_value)
    worst = float(problem.worst_feasible_value)
    key = _config_key(config, tab)
    _clean_temporaries(path)

    done: dict[tuple[str, int], tuple[pd.DataFrame, dict[str, str]]] = {}
    for p in sorted((path / "runs").glob("*.parquet")):
        got = _read_run(p)
        if got is None:
            continue
        _frame, meta = got
        if json.loads(meta.get("config", "{}")) != key:
            raise ValueError(
                f"Expected {str(path)!r} to hold runs of this configuration "
                f"{key}, got {p.name} with {meta.get('config')}; use another --out."
            )
        done[(meta["method"], int(meta["seed"]))] = got
    todo = [
        (m, s)
        for m in methods
        for s in seed_list
        if done.get((m, s), (None, {}))[1].get("status") != "complete"
    ]
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    args = arguments or {
        "methods": methods,
        "seeds": seed_list,
        "budget": budget,
        "n_init": n_init,
        "q": q,
        "out": str(path),
        "table": None
        if table is None or isinstance(table, pd.DataFrame | Table)
        else str(table),
        "noise": noise,
        "jobs": jobs,
        "dask_scheduler": dask_scheduler,
    }
    selected = {(m, s) for m in methods for s in seed_list}

    def assemble() -> pd.DataFrame:
        order = {m: i for i, m in enumerate(methods)}
        frames = [f for k, (f, _) in done.items() if k in selected]
        if not frames:
            return _empty_records()
        all_ = pd.concat(frames, ignore_index=True)
        all_["_o"] = all_["method"].map(order)
        all_ = all_.sort_values(["_o", "seed", "iteration"], kind="stable")
        return all_.drop(columns="_o").reset_index(drop=True)

    def errors() -> dict[str, str]:
        return {
            f"{m}/{s}": meta.get("error", "")
            for (m, s), (_, meta) in sorted(done.items())
            if (m, s) in selected and meta.get("status") == "failed"
        }

    def write_meta(status: str) -> None:
        complete = sorted(
            f"{m}/{s}"
            for (m, s), (_, meta) in done.items()
            if (m, s) in selected and meta.get("status") == "complete"
        )
        meta = {
            "status": status,
            "arguments": args,
            "config": key,
            "versions": _versions(),
            "table": {
                "source": str(tab.source),
                "simulated": bool(tab.is_simulated),
                "rows": len(tab),
                "feasible": tab.n_feasible,
                "fingerprint": key["table"],
                "optimal_value": optimal,
                "worst_feasible_value": worst,
            },
            "cost_model": {
                "gpus": GPUS,
                "feasible_run": "overall_time * gpus / 3600 GPU-hours",
                "oom_run": f"{OOM_COST_FRACTION} * median feasible overall_time "
                "* gpus / 3600 GPU-hours",
            },
            "regret_before_first_feasible_in_summary": "optimal_value - "
            "worst_feasible_value",
            "checkpoints": checkpoints_for(budget),
            "runs": {
                "requested": len(selected),
                "complete": complete,
                "failed": sorted(errors()),
                "pending": len(selected) - len(complete) - len(errors()),
            },
            "errors": errors(),
            "started": started,
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")

    def persist(outcome: RunOutcome) -> None:
        _write_run(path, outcome, key)
        status = "complete" if outcome.ok else "failed"
        done[(outcome.method, outcome.seed)] = (
            outcome.records,
            {"status": status, "error": outcome.error or ""},
        )
        _write_parquet(path / "runs.parquet", assemble())
        write_meta("running")

    ran: list[tuple[str, int]] = []
    bars = _Bars(progress, len(selected), len(selected) * budget)
    bars.update(
        runs=len(selected) - len(todo), evals=(len(selected) - len(todo)) * budget
    )
    status = "complete"
    try:
        write_meta("running")
        for outcome in _execute(todo, tab, config, jobs, dask_scheduler, bars):
            persist(outcome)
            ran.append((outcome.method, outcome.seed))
            bars.update(runs=1, evals=budget - len(outcome.records))
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except BaseException:
        status = "aborted"  # e.g. the Dask scheduler went away
        raise
    finally:
        bars.close()
        records = assemble()
        _write_parquet(path / "runs.parquet", records)
        write_meta(status if status != "complete" else "finishing")
    failed = {tuple(k.split("/")) for k in errors()}
    failed_pairs = {(m, int(s)) for m, s in failed}
    summary = summarize(records, optimal, worst, budget, failed_pairs, methods)
    atomic_write_text(path / "summary.csv", summary.to_csv(index=False))
    src = "SIMULATED stand-in table" if tab.is_simulated else "table"
    # The file name, not the full path: summaries are shared and committed
    # (meta.json keeps the full source).
    where = tab.source.path.name if tab.source.path is not None else "<DataFrame>"
    header = [
        "# pco64 benchmark summary",
        "",
        f"{len(methods)} methods × {len(seed_list)} seeds × {budget} evaluations "
        f"(n_init {n_init}, q {q}, noise {noise}); {src} {where} "
        f"({tab.source.kind}, fingerprint {_table_fingerprint(tab)[:12]}); "
        f"optimal value {optimal:.5f}.",
        "",
        "Regret = optimal − best feasible throughput (before the first feasible "
        "evaluation: optimal − worst feasible). GPU-hours: overall_time × 64 / "
        f"3600 per run; an OOM costs {OOM_COST_FRACTION} × the median feasible "
        "overall_time.",
    ]
    md = summary_markdown(summary, budget, header)
    atomic_write_text(path / "summary.md", md)
    plot = path / "regret.png"
    plot_regret(
        records,
        plot,
        optimal,
        worst,
        budget,
        methods,
        title=f"pco64 ({'simulated stand-in' if tab.is_simulated else tab.source.kind})",
    )
    write_meta("complete")
    return BenchResult(path, records, summary, md, plot, errors(), ran)


class _Bars:
    """Two tqdm bars (runs, evaluations), or nothing."""

    def __init__(self, enabled: bool, runs: int, evals: int) -> None:
        self.runs = self.evals = None
        if enabled:
            from tqdm.auto import tqdm

            self.runs = tqdm(total=runs, desc="runs", unit="run", position=0)
            self.evals = tqdm(total=evals, desc="evaluations", unit="eval", position=1)

    def update(self, runs: int = 0, evals: int = 0) -> None:
        if self.runs is not None and runs:
            self.runs.update(runs)
        if self.evals is not None and evals:
            self.evals.update(evals)

    def close(self) -> None:
        for bar in (self.evals, self.runs):
            if bar is not None:
                bar.close()


def _execute(
    todo: list[tuple[str, int]],
    table: Table,
    config: BenchConfig,
    jobs: int,
    dask_scheduler: str | None,
    bars: _Bars,
) -> Iterator[RunOutcome]:
    """Yield the outcomes of ``todo`` as they finish, on the chosen backend.

    In-process, the evaluation bar moves per evaluation; on the other backends
    it moves per finished run (the harness tops it up to the budget).
    """
    tasks = [_Task(m, s, table, config, METHODS[m]) for m, s in todo]
    if not tasks:
        return
    if dask_scheduler is not None:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(dask_scheduler) as client:
            futures = {client.submit(_run_task, t, pure=False): t for t in tasks}
            try:
                for fut in dask_completed(list(futures)):
                    yield _collect(fut.result, futures[fut], config, bars)
            finally:
                for fut in futures:
                    fut.cancel()
        return
    if jobs > 1:
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=ctx,
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )
        try:
            futures = {pool.submit(_run_task, t): t for t in tasks}
            for fut in as_completed(futures):
                yield _collect(fut.result, futures[fut], config, bars)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return
    for t in tasks:
        yield run_one(
            t.method,
            t.seed,
            t.table,
            t.config,
            fn=t.fn,
            on_evaluation=lambda n: bars.update(evals=n),
        )


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: exit when the harness process is gone.

    A harness killed with SIGKILL cannot shut its pool down; without this a
    worker would finish its run and then wait for work forever.
    """
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="bolt-pco64-parent-watch", daemon=True).start()


def _collect(
    result: Callable[[], RunOutcome], task: _Task, config: BenchConfig, bars: _Bars
) -> RunOutcome:
    """A worker's outcome; a crashed worker becomes a failed run without rows."""
    try:
        outcome = result()
    except Exception as err:
        outcome = RunOutcome(
            task.method,
            task.seed,
            _empty_records(),
            f"{type(err).__name__}: {err}".splitlines()[0][:500],
            traceback.format_exc(),
        )
    bars.update(evals=len(outcome.records))
    return outcome


def run_benchmark_cli(
    methods: str | None,
    seeds: int | None,
    budget: int | None,
    n_init: int | None,
    q: int,
    out: str | os.PathLike[str] | None,
    quick: bool,
    jobs: int,
    dask_scheduler: str | None,
    table: str | os.PathLike[str] | None,
    noise: str | None,
    progress: bool = True,
) -> str:
    """``bolt-pco64 bench``: resolve the options, run, return the text to print.

    ``--quick`` supplies :data:`QUICK` for the options not given. Returns the
    summary table and the plot's path.

    Raises:
        OutputDirError: If ``out`` cannot be written (before any run).
        ValueError: On bad options.
    """
    preset: dict[str, Any] = (
        dict(QUICK)
        if quick
        else {
            "methods": DEFAULT_METHODS,
            "seeds": 20,
            "budget": 60,
            "n_init": 10,
        }
    )
    names = (
        [m.strip() for m in methods.split(",") if m.strip()]
        if methods is not None
        else list(preset["methods"])
    )
    noise_value: float | str | None = None
    if noise is not None:
        if noise.strip().lower() == "measured":
            noise_value = "measured"
        else:
            try:
                noise_value = float(noise)
            except ValueError:
                raise ValueError(
                    f"Expected --noise 'measured' or a number, got {noise!r}."
                ) from None
    out_dir = (
        Path(out)
        if out is not None
        else Path("bench-results", "quick" if quick else "full")
    )
    args = {
        "methods": names,
        "seeds": seeds if seeds is not None else preset["seeds"],
        "budget": budget if budget is not None else preset["budget"],
        "n_init": n_init if n_init is not None else preset["n_init"],
        "q": q,
        "out": str(out_dir),
        "quick": quick,
        "jobs": jobs,
        "dask_scheduler": dask_scheduler,
        "table": None if table is None else str(table),
        "noise": noise_value,
    }
    t0 = time.perf_counter()
    result = run_benchmark(
        methods=names,
        seeds=args["seeds"],
        budget=args["budget"],
        n_init=args["n_init"],
        q=q,
        out=out_dir,
        table=table,
        noise=noise_value,
        jobs=jobs,
        dask_scheduler=dask_scheduler,
        progress=progress,
        arguments=args,
    )
    lines = [result.summary_markdown.rstrip()]
    if result.errors:
        lines.append("")
        lines.append(f"{len(result.errors)} run(s) failed (see meta.json):")
        lines += [f"  {k}: {v}" for k, v in result.errors.items()]
    resumed = len(result.summary) and (
        int(result.summary["runs"].sum() + result.summary["failed"].sum())
        - len(result.ran)
    )
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done, {resumed} resumed from {result.out}, "
        f"in {time.perf_counter() - t0:.0f} s."
    )
    lines.append(f"plot: {result.plot}")
    return "\n".join(lines)
