"""Replaying the published harness: which row each draw was, and its noise.

The published traces were made by the BoLT experiments' harness
(``bolt_exp/runners/test_w_botorch_pco.py`` of ``anonom799/bolt-experiments``)
on bolt-bench's problem (``bolt/problems/parallelism_config.py``). Two of its
random streams depend on nothing but a trial's seed and the table's row count,
so they can be replayed exactly:

- **the rows random search drew.** A trial seeds
  ``numpy.random.default_rng(seed)``, draws its initial design with
  ``rng.choice(rows, size=initial, replace=False)``, shuffles the list of the
  other row indices (``rng.shuffle``; used only when the design holds fewer
  than two runs that fit), then draws one row per iteration with
  ``rng.choice(rows, size=1, replace=False)`` from the whole table (repeats
  allowed unless ``no_repeats``). :func:`harness_indices` replays it, so a
  random-search trace names the *row index* of every configuration it drew.
  bolt-bench's candidates are the table's rows in its file order; on every
  published trace that order is the canonical one (ascending encoded inputs),
  so the rows no trace visited lie, in order, between visited ones
  (:mod:`bolt_pco64.tables.reconstruct.grid` uses it);
- **the observation noise.** A trial calls ``torch.manual_seed(seed)``, and
  each evaluation adds ``noise_std * torch.randn_like(f)`` to the table value
  (BoTorch's ``BaseTestProblem.forward``): one ``initial x 1`` draw for the
  design, then one ``1 x 1`` per iteration. Nothing else in the random, TPE and
  CMA-ES loops draws from torch, so :func:`harness_noise` replays it and
  ``seen_y - noise`` is the table value exactly -- for a run that did not fit,
  the value bolt-bench imputes there (the mean throughput of the feasible rows
  at the least Euclidean distance in the encoded inputs).

:func:`replay` accepts a replay only where the trace itself confirms it: the
de-noised value of every configuration is the same at every repeat and equals
the trace's noise-free ``best_obs_true_all`` where it gives one (within
:data:`TOLERANCE`), and the drawn indices give no index two configurations and
increase with the configuration. A trace the replay does not reproduce (another
harness, a hand-made file) is left as it is: its observed means are used.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from bolt_pco64.tables.traces import OOM_SLACK, TraceFile

__all__ = [
    "TOLERANCE",
    "Replay",
    "crash_share",
    "harness_indices",
    "harness_noise",
    "harness_trial",
    "replay",
]

#: Largest difference between two de-noised values of one configuration (or
#: one and the trace's noise-free value) that still counts as equal: float64
#: rounding of ``value + noise - noise``.
TOLERANCE = 1e-12


def harness_indices(rows: int, seed: int, initial: int, evaluations: int) -> np.ndarray:
    """The row indices the harness's random search draws in one trial.

    Args:
        rows: Rows of the table searched.
        seed: The trial's seed.
        initial: Size of the random initial design.
        evaluations: Evaluations of the trial (design included).

    Returns:
        ``evaluations`` int64 row indices, in draw order.
    """
    rng = np.random.default_rng(seed)
    first = rng.choice(rows, size=min(initial, evaluations), replace=False)
    chosen = {int(i) for i in first}
    rest = [i for i in range(rows) if i not in chosen]
    rng.shuffle(rest)  # the harness's reserve; it consumes the stream
    later = [
        int(rng.choice(rows, size=1, replace=False)[0])
        for _ in range(evaluations - len(first))
    ]
    return np.asarray([*first.tolist(), *later], dtype=np.int64)


def harness_noise(
    seed: int, initial: int, evaluations: int, noise_std: float
) -> np.ndarray:
    """The noise the harness adds to each observed throughput in one trial.

    Returns:
        ``evaluations`` float64 values, in evaluation order.
    """
    gen = torch.Generator().manual_seed(seed)
    n0 = min(initial, evaluations)
    parts = [torch.randn(n0, 1, dtype=torch.double, generator=gen)]
    parts += [
        torch.randn(1, 1, dtype=torch.double, generator=gen)
        for _ in range(evaluations - n0)
    ]
    return (noise_std * torch.cat(parts)).flatten().numpy()


@dataclass
class Replay:
    """What the replayed traces show (keys: encoded configurations).

    Attributes:
        values: De-noised value per configuration: the table's throughput
            where it ran, bolt-bench's imputed neighbour mean where it did not.
        indices: Row index per configuration, from random-search traces whose
            draws replay (empty if none does).
        replayed: Names of the files whose noise replayed.
        indexed: Names of the files whose draws replayed.
        refused: ``file: reason`` for each file that did not replay.
    """

    values: dict[tuple[int, ...], float] = field(default_factory=dict)
    indices: dict[int, tuple[int, ...]] = field(default_factory=dict)
    replayed: list[str] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def _denoised(trace: TraceFile, initial: int) -> dict[tuple[int, ...], float] | str:
    """De-noised values of one file, or why the replay fails."""
    out: dict[tuple[int, ...], float] = {}
    for trial in trace.trials:
        n = len(trial.candidates)
        noise = harness_noise(trial.seed, initial, n, trace.noise_std)
        for x, y in zip(trial.candidates.tolist(), trial.seen_y - noise, strict=True):
            key = tuple(x)
            if key in out and abs(out[key] - y) > TOLERANCE:
                return f"de-noised values of {list(key)} differ ({out[key]!r}, {y!r})"
            out.setdefault(key, float(y))
        for x, v in zip(trial.best_obs_x.tolist(), trial.best_obs_true, strict=True):
            if abs(out.get(tuple(x), np.inf) - v) > TOLERANCE:
                return f"de-noised value of {x} is not its noise-free value {v!r}"
    return out


def _indexed(
    trace: TraceFile, rows: int, initial: int
) -> dict[int, tuple[int, ...]] | str:
    """Row index per configuration of one random-search file, or why not."""
    found: dict[int, tuple[int, ...]] = {}
    for trial in trace.trials:
        n = len(trial.candidates)
        # The design grows past ``initial`` only when it holds < 2 runs that fit.
        if int((trial.seen_c[:initial] != OOM_SLACK).sum()) < 2:
            return "an initial design extended past its size"
        drawn = harness_indices(rows, trial.seed, initial, n)
        for i, x in zip(drawn.tolist(), trial.candidates.tolist(), strict=True):
            if found.setdefault(i, tuple(x)) != tuple(x):
                return f"row {i} drawn as {list(found[i])} and {x}"
    order = sorted(found)
    if any(found[a] >= found[b] for a, b in itertools.pairwise(order)):
        return "the drawn rows are not in canonical order"
    return found


def replay(files: Sequence[TraceFile], rows: int, initial: int = 10) -> Replay:
    """Replay the harness on ``files`` made on a table of ``rows`` rows.

    Args:
        files: The validated results files of one instance.
        rows: The measured table's row count (the instance's published rows).
        initial: The harness's initial design size (its default, 10: every
            published trace's ``initial_random_samples``).

    Returns:
        The :class:`Replay`. A file contributes only what replays (see the
        module docstring); files that disagree with each other are refused.
    """
    out = Replay()
    for f in files:
        got = _denoised(f, initial)
        if isinstance(got, str):
            out.refused.append(f"{f.path.name}: {got}")
            continue
        clash = [
            k
            for k, v in got.items()
            if k in out.values and abs(out.values[k] - v) > TOLERANCE
        ]
        if clash:
            out.refused.append(f"{f.path.name}: disagrees on {list(clash[0])}")
            continue
        for k, v in got.items():
            out.values.setdefault(k, v)
        out.replayed.append(f.path.name)
        if f.method != "random" or f.no_repeats:
            continue
        idx = _indexed(f, rows, initial)
        if isinstance(idx, str):
            out.refused.append(f"{f.path.name} (rows): {idx}")
            continue
        merged = {**out.indices}
        if any(merged.setdefault(i, x) != x for i, x in idx.items()):
            out.refused.append(f"{f.path.name} (rows): disagrees with another file")
            continue
        order = sorted(merged)
        if any(merged[a] >= merged[b] for a, b in itertools.pairwise(order)):
            out.refused.append(f"{f.path.name} (rows): order clashes with another file")
            continue
        out.indices = merged
        out.indexed.append(f.path.name)
    return out


def harness_trial(
    feasible: np.ndarray, seed: int, initial: int, iterations: int
) -> np.ndarray:
    """The rows one random-search trial of the harness evaluates, in order.

    As :func:`harness_indices`, on a table whose rows (canonical order) run
    where ``feasible`` (``N`` bools), with the harness's extension of a
    design holding fewer than two runs: rows popped from the end of the
    shuffled reserve until two have run (they count as design).
    """
    ok = np.asarray(feasible, dtype=bool)
    rows = len(ok)
    rng = np.random.default_rng(seed)
    idx = [int(i) for i in rng.choice(rows, size=initial, replace=False)]
    chosen = set(idx)
    rest = [i for i in range(rows) if i not in chosen]
    rng.shuffle(rest)
    while int(ok[idx].sum()) < 2 and rest:
        idx.append(int(rest.pop()))
    idx += [int(rng.choice(rows, size=1, replace=False)[0]) for _ in range(iterations)]
    return np.asarray(idx, dtype=np.int64)


def crash_share(
    feasible: np.ndarray, seeds: Sequence[int], initial: int, iterations: int
) -> float:
    """Share of the harness's random-search evaluations that do not run.

    Replays one trial per seed (:func:`harness_trial`) on a table whose rows,
    in canonical order, run where ``feasible`` (``N`` bools).
    """
    ok = np.asarray(feasible, dtype=bool)
    drawn = [ok[harness_trial(ok, int(s), initial, iterations)] for s in seeds]
    return float(np.mean(~np.concatenate(drawn)))
