"""Published optimisation traces made on the measured tables (design §7).

The BoLT experiments published, for each run of an optimiser on a measured pco
table, every configuration evaluated, its observed throughput (the table value
plus Gaussian noise of sd ``noise_std``, 0.001) and its memory slack
``1 - peak_mem / gpu_memory`` (noise-free; exactly :data:`OOM_SLACK` for a run
that ran out of memory), and the noise-free table value of each trial's best
observation (``best_obs_true_all``). ``data/traces/README.md`` gives their
provenance, licence and every field's meaning; the files ship with the package
(:func:`bolt_pco64.tables.locations.trace_paths`).

:func:`read_trace` parses and validates one results file into a
:class:`TraceFile`; :func:`visited_rows` merges an instance's files into one
row per visited configuration, in canonical order: exact feasibility and peak
memory, the throughput's observed mean over ``k`` observations and, where a
trace gives it, its exact value. A file that is not one of these results files,
a configuration off the instance's grid, or two traces that disagree on a
configuration are refused with a :class:`TraceError` naming the file(s) and
what is wrong.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bolt_pco64 import instances
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance
from bolt_pco64.tables import locations

__all__ = [
    "OOM_SLACK",
    "TraceError",
    "TraceFile",
    "TraceTrial",
    "read_trace",
    "visited_rows",
]

#: The memory slack a trace records for a run that ran out of memory.
OOM_SLACK = -0.2
#: Header fields every results file has, with the types they must have.
_HEADER: dict[str, type | tuple[type, ...]] = {
    "problem": str,
    "acq_fn": str,
    "noise_std": (int, float),
    "no_repeats": bool,
    "optimal_value": (int, float),
    "trials": list,
}
#: Per-trial list fields with one entry per evaluation.
_PER_EVALUATION = ("candidates", "seen_y", "seen_c")
#: Per-trial list fields with one entry per reported step (``evaluations - s0``).
_PER_STEP = (
    "best_obs_x_all",
    "best_obs_true_all",
    "best_obs_regret_all",
    "simple_regret_all",
)


class TraceError(ValueError):
    """A trace file that is not a results file, or contradicts the instance or
    another trace."""


@dataclass(frozen=True)
class TraceTrial:
    """One trial (one optimiser run) of a results file.

    Attributes:
        seed: The trial's seed (its number).
        candidates: ``n x d`` int64 array, the encoded configuration of every
            evaluation, in the instance's input order.
        seen_y: ``n`` observed throughputs (noisy; not a measurement on OOM rows).
        seen_c: ``n`` memory slacks (exact; :data:`OOM_SLACK` for OOM).
        best_obs_x: ``m x d`` int64 array: the configuration of the best
            observation after evaluations ``0 .. n - m + s`` (entry ``s``).
        best_obs_true: ``m`` noise-free table values of ``best_obs_x``.
        best_obs_regret: ``m`` regrets ``optimal_value - best_obs_true``.
        simple_regret: ``m`` lowest true regrets among the configurations
            evaluated so far.
    """

    seed: int
    candidates: np.ndarray
    seen_y: np.ndarray
    seen_c: np.ndarray
    best_obs_x: np.ndarray
    best_obs_true: np.ndarray
    best_obs_regret: np.ndarray
    simple_regret: np.ndarray

    @property
    def feasible(self) -> np.ndarray:
        """``n`` bools: the evaluation ran (slack is not :data:`OOM_SLACK`)."""
        return self.seen_c != OOM_SLACK


@dataclass(frozen=True)
class TraceFile:
    """One validated results file.

    Attributes:
        path: The file read.
        instance: The instance it was made on.
        method: The optimiser (the header's ``acq_fn``: ``random``, ``tpe`` ...).
        noise_std: Sd of the noise added to every observed throughput.
        no_repeats: Whether the optimiser avoided re-evaluating a configuration.
        optimal_value: The measured table's best throughput.
        trials: The trials, in file order.
    """

    path: Path
    instance: Instance
    method: str
    noise_std: float
    no_repeats: bool
    optimal_value: float
    trials: tuple[TraceTrial, ...]


def _fail(path: Path, what: str) -> TraceError:
    return TraceError(f"trace {path}: {what}")


def _numbers(path: Path, where: str, value: object, shape_d: int | None) -> np.ndarray:
    """A list of numbers (or of ``shape_d``-long lists) as a float64 array."""
    if not isinstance(value, list):
        raise _fail(path, f"{where}: expected a list, got {type(value).__name__}")
    if shape_d is not None:
        for i, item in enumerate(value):
            if not isinstance(item, list) or len(item) != shape_d:
                raise _fail(
                    path,
                    f"{where}[{i}]: expected a list of {shape_d} numbers "
                    f"(expected shape ({len(value)}, {shape_d})), got {item!r}"[:300],
                )
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(path, f"{where}: expected numbers") from None
    expected = (len(value), shape_d) if shape_d is not None else (len(value),)
    if len(value) and arr.shape != expected:
        raise _fail(path, f"{where}: expected shape {expected}, got {arr.shape}")
    if len(value) == 0:
        arr = arr.reshape((0, shape_d) if shape_d is not None else (0,))
    if not np.isfinite(arr).all():
        raise _fail(path, f"{where}: expected finite numbers")
    return arr


def _configurations(
    path: Path, where: str, value: object, inst: Instance
) -> np.ndarray:
    arr = _numbers(path, where, value, inst.dim)
    for i, row in enumerate(arr):
        broken = inst.rule_violation(row.tolist())
        if broken is not None:
            raise _fail(
                path,
                f"{where}[{i}] = {[float(v) for v in row]} is not a {inst.name} "
                f"configuration: {broken}",
            )
    return arr.astype(np.int64)


def _trial(path: Path, k: int, raw: object, inst: Instance) -> TraceTrial:
    where = f"trials[{k}]"
    if not isinstance(raw, dict):
        raise _fail(path, f"{where}: expected an object, got {type(raw).__name__}")
    missing = [f for f in ("seed", *_PER_EVALUATION, *_PER_STEP) if f not in raw]
    if missing:
        raise _fail(path, f"{where}: missing field(s) {missing}")
    seed = raw["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise _fail(path, f"{where}.seed: expected an integer, got {seed!r}")
    x = _configurations(path, f"{where}.candidates", raw["candidates"], inst)
    y = _numbers(path, f"{where}.seen_y", raw["seen_y"], None)
    c = _numbers(path, f"{where}.seen_c", raw["seen_c"], None)
    if not len(x) == len(y) == len(c) > 0:
        raise _fail(
            path,
            f"{where}: expected candidates, seen_y and seen_c of one length > 0, "
            f"got {len(x)}, {len(y)}, {len(c)}",
        )
    bad = (c != OOM_SLACK) & ~((c > 0) & (c <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _fail(
            path,
            f"{where}.seen_c[{i}] = {c[i]}: expected a slack in (0, 1] or "
            f"{OOM_SLACK} (out of memory)",
        )
    bx = _configurations(path, f"{where}.best_obs_x_all", raw["best_obs_x_all"], inst)
    steps = [
        _numbers(path, f"{where}.{f}", raw[f], None)
        for f in ("best_obs_true_all", "best_obs_regret_all", "simple_regret_all")
    ]
    if any(len(s) != len(bx) for s in steps) or len(bx) > len(x):
        raise _fail(
            path,
            f"{where}: expected best_obs_x_all, best_obs_true_all, "
            f"best_obs_regret_all and simple_regret_all of one length <= "
            f"{len(x)} evaluations",
        )
    seen = {tuple(row) for row in x.tolist()}
    feasible = {
        tuple(row) for row, ok in zip(x.tolist(), c != OOM_SLACK, strict=True) if ok
    }
    for s, row in enumerate(bx.tolist()):
        if tuple(row) not in feasible:
            state = "never evaluated" if tuple(row) not in seen else "never ran"
            raise _fail(
                path,
                f"{where}.best_obs_x_all[{s}] = {row} is not a feasible evaluation "
                f"of the trial ({state})",
            )
    return TraceTrial(seed, x, y, c, bx, *steps)


def read_trace(
    path: str | os.PathLike[str], instance: str | Instance = DEFAULT_INSTANCE
) -> TraceFile:
    """Read and validate one results file made on ``instance``'s measured table.

    Args:
        path: The JSON results file.
        instance: The instance (name or :class:`~bolt_pco64.instances.Instance`);
            the file's ``problem`` must be its name.

    Returns:
        The :class:`TraceFile`.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        TraceError: If the file is not one of these results files, is another
            instance's, or holds a configuration off the instance's grid
            (bounds or hard rules, :meth:`~bolt_pco64.instances.Instance.rule_violation`),
            a slack that is neither in ``(0, 1]`` nor :data:`OOM_SLACK`, or a
            best observation that was not a feasible evaluation of its trial.
    """
    inst = instances.get_instance(instance)
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"trace file not found: {p}")
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _fail(
            p, f"not a results file (expected JSON; {type(err).__name__}: {err})"
        ) from err
    if not isinstance(raw, dict):
        raise _fail(
            p, f"not a results file (expected a JSON object, got {type(raw).__name__})"
        )
    missing = [f for f in _HEADER if f not in raw]
    if missing:
        raise _fail(p, f"not a results file (missing field(s) {missing})")
    for field, kind in _HEADER.items():
        value = raw[field]
        if not isinstance(value, kind) or (
            kind is not bool and isinstance(value, bool)
        ):
            raise _fail(p, f"{field}: expected {kind}, got {value!r}"[:200])
    if raw["problem"] != inst.name:
        raise _fail(p, f"expected a {inst.name} trace, got problem {raw['problem']!r}")
    noise = float(raw["noise_std"])
    if not (math.isfinite(noise) and noise > 0):
        raise _fail(p, f"noise_std: expected a finite number > 0, got {noise}")
    if not raw["trials"]:
        raise _fail(p, "trials: expected at least one trial, got none")
    trials = tuple(_trial(p, k, t, inst) for k, t in enumerate(raw["trials"]))
    return TraceFile(
        p.resolve(),
        inst,
        raw["acq_fn"],
        noise,
        raw["no_repeats"],
        float(raw["optimal_value"]),
        trials,
    )


def _agree(
    first: dict[tuple[int, ...], tuple[float, Path]],
    key: tuple[int, ...],
    value: float,
    path: Path,
    what: str,
) -> None:
    """Record ``value`` for ``key``, refusing a different one recorded before."""
    before = first.setdefault(key, (value, path))
    if before[0] != value:
        raise TraceError(
            f"traces disagree on the {what} of configuration {list(key)}: "
            f"{before[0]!r} in {before[1]}, {value!r} in {path}"
        )


@dataclass
class _Visits:
    """What the trace files say of each configuration they evaluated."""

    #: Memory slack and the file that gave it first.
    slack: dict[tuple[int, ...], tuple[float, Path]] = dataclasses.field(
        default_factory=dict
    )
    #: Noise-free throughput (``best_obs_true_all``) and its file.
    exact: dict[tuple[int, ...], tuple[float, Path]] = dataclasses.field(
        default_factory=dict
    )
    #: Sum of the observed throughputs of runs that fit.
    total: dict[tuple[int, ...], float] = dataclasses.field(default_factory=dict)
    #: Their number.
    count: dict[tuple[int, ...], int] = dataclasses.field(default_factory=dict)
    #: Sum of their noise variances.
    var: dict[tuple[int, ...], float] = dataclasses.field(default_factory=dict)


def _collect(files: Sequence[TraceFile]) -> _Visits:
    """Every evaluation of ``files``, checked for agreement (:func:`_agree`)."""
    v = _Visits()
    for f in files:
        for trial in f.trials:
            for row, y, c in zip(
                trial.candidates.tolist(),
                trial.seen_y.tolist(),
                trial.seen_c.tolist(),
                strict=True,
            ):
                key = tuple(row)
                _agree(v.slack, key, c, f.path, "memory slack")
                v.count.setdefault(key, 0)
                if c != OOM_SLACK:
                    v.total[key] = v.total.get(key, 0.0) + y
                    v.count[key] += 1
                    v.var[key] = v.var.get(key, 0.0) + f.noise_std**2
            for row, val in zip(
                trial.best_obs_x.tolist(), trial.best_obs_true.tolist(), strict=True
            ):
                _agree(v.exact, tuple(row), val, f.path, "exact throughput")
    return v


def _visited_frame(inst: Instance, v: _Visits) -> pd.DataFrame:
    """The frame :func:`visited_rows` returns, from the collected visits."""
    keys = sorted(v.slack)
    x = np.asarray(keys, dtype=np.float64)
    out = pd.DataFrame(
        {f"x_{name}": x[:, j] for j, name in enumerate(inst.input_columns)}
    )
    for j, spec in enumerate(inst.inputs):
        out[spec.name] = np.asarray(
            [spec.decode(int(val)) for val in x[:, j]], dtype=np.int64
        )
    for name, value in inst.context:
        out[name] = np.full(len(keys), value, dtype=np.int64)
    c = np.asarray([v.slack[key][0] for key in keys])
    feasible = c != OOM_SLACK
    out["ran_successfully"] = feasible
    out["peak_mem"] = np.where(feasible, inst.gpu_memory_gb * (1.0 - c), np.inf)
    k = np.asarray([v.count[key] for key in keys], dtype=np.int64)
    out["k"] = k
    with np.errstate(invalid="ignore", divide="ignore"):
        out["throughput_observed"] = np.where(
            k > 0,
            [v.total.get(key, np.nan) for key in keys] / np.maximum(k, 1),
            np.nan,
        )
        out["throughput_observed_se"] = np.where(
            k > 0,
            np.sqrt([v.var.get(key, np.nan) for key in keys]) / np.maximum(k, 1),
            np.nan,
        )
    out["throughput_exact"] = [v.exact.get(key, (np.nan,))[0] for key in keys]
    known = np.isfinite(out["throughput_exact"].to_numpy())
    out["throughput_mean"] = np.where(
        known, out["throughput_exact"], out["throughput_observed"]
    )
    out["throughput_se"] = np.where(known, 0.0, out["throughput_observed_se"])
    out["source"] = np.where(~feasible | known, "exact", "observed")
    return out


def visited_rows(
    instance: str | Instance = DEFAULT_INSTANCE,
    paths: Sequence[str | os.PathLike[str]] | None = None,
) -> pd.DataFrame:
    """One row per configuration the traces visited, in canonical order.

    Args:
        instance: The instance.
        paths: Its results files; ``None`` reads the shipped ones
            (:func:`bolt_pco64.tables.locations.trace_paths`).

    Returns:
        A DataFrame with, per visited configuration: the encoded inputs
        (``x_<input>``, float64, ``X`` order), the card's raw input and context
        columns (int64; ``zero_stage`` raw 0/2/3), ``ran_successfully``,
        ``peak_mem`` (``gpu_memory_gb * (1 - slack)``, exact; ``inf`` for OOM),
        ``k`` (observations; 0 for OOM rows, whose ``seen_y`` is not a
        measurement), ``throughput_observed`` (their mean), its standard error
        ``throughput_observed_se`` (``sqrt(sum noise_std**2) / k``),
        ``throughput_exact`` (the noise-free value where a trial's
        ``best_obs_true_all`` gives it, else NaN), ``throughput_mean`` and
        ``throughput_se`` (the exact value with 0, else the observed mean
        with its standard error; NaN for OOM rows) and ``source``: ``"exact"``
        where the throughput is exact or the run did not fit (nothing else to
        know), else ``"observed"``.

    Raises:
        FileNotFoundError: If a file does not exist.
        TraceError: If a file is refused by :func:`read_trace`, or two traces
            (or two entries of one) disagree on a configuration's slack or
            exact throughput (the message names the configuration and both
            files).
    """
    inst = instances.get_instance(instance)
    files = [
        read_trace(p, inst)
        for p in (locations.trace_paths(inst) if paths is None else paths)
    ]
    if not files:
        raise TraceError(f"expected at least one {inst.name} trace file, got none")
    return _visited_frame(inst, _collect(files))
