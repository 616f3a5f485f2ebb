"""Small hand-built tables of an instance's schema, for tests that need known numbers."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from bolt_pco64.instances import get_instance

PAD = 0.5
CAPACITY = 96.0

#: Raw input values of one configuration, in the instance's input order.
Config = tuple[int, ...]


def frame_from(
    configs: Sequence[Config],
    throughput: Sequence[float | None],
    peak_mem: Sequence[float] | None = None,
    steps: int = 3,
    *,
    throughput_std: Sequence[float] | None = None,
    overall_time: Sequence[float] | None = None,
    capacity: float = CAPACITY,
    pad: float = PAD,
    instance: str = "pco64",
) -> pd.DataFrame:
    """A raw-export frame: ``configs`` in raw units (zero_stage 0/2/3), ``None`` = OOM.

    ``configs`` hold the raw inputs of ``instance`` in its input order; its
    context columns get the instance's values.

    Unless given, peaks are 40, 43, 46, ... GB, ``throughput_std`` is 1% of the
    throughput and ``overall_time`` is 100 + row s; OOM rows get NaN, inf and
    ``pad`` where the card says so.
    """
    inst = get_instance(instance)
    n = len(configs)
    if peak_mem is None:
        peak_mem = [40.0 + 3.0 * i for i in range(n)]
    if throughput_std is None:
        throughput_std = [0.01 * t if t is not None else np.nan for t in throughput]
    if overall_time is None:
        overall_time = [100.0 + i for i in range(n)]
    rows = []
    columns = zip(
        configs, throughput, peak_mem, throughput_std, overall_time, strict=True
    )
    for i, (cfg, tp, pm, sd, ot) in enumerate(columns):
        ok = tp is not None
        step_times = (
            [1.0 / tp * (1 + 0.01 * ((i + j) % 3 - 1)) for j in range(steps)]
            if ok
            else []
        )
        rows.append(
            {
                **dict(zip(inst.input_columns, cfg, strict=True)),
                **dict(inst.context),
                "ran_successfully": ok,
                "throughput_mean": float(tp) if ok else np.nan,
                "throughput_std": float(sd) if ok else np.nan,
                "peak_mem_normalised": pm / capacity - 1 if ok else pad,
                "overall_time": float(ot) if ok else np.nan,
                "all_time_steps": str(step_times),
                "peak_mem": float(pm) if ok else np.inf,
                "peak_mem_per_gpu": str([float(pm), float(pm) - 1.0]) if ok else "[]",
            }
        )
    return pd.DataFrame(rows, columns=list(inst.columns))


def lattice(instance: str = "pco64") -> list[Config]:
    """A small box of raw configurations at the low end of the instance's bounds.

    Three levels of the first three inputs, two of the others, every level of an
    ordinal one (for pco64: 1,296 configurations).
    """
    axes = []
    for k, spec in enumerate(get_instance(instance).inputs):
        if spec.levels:
            axes.append(spec.levels)
        else:
            width = 2 if k < 3 else 1
            axes.append(tuple(range(spec.low, min(spec.high, spec.low + width) + 1)))
    return list(itertools.product(*axes))


def small_frame(
    seed: int = 0, n: int = 40, oom_share: float = 0.3, instance: str = "pco64"
) -> pd.DataFrame:
    """``n`` distinct random configurations of ``instance`` with random
    throughputs and OOMs.

    The rows are shuffled (not in canonical order) on purpose.
    """
    rng = np.random.default_rng(seed)
    space = lattice(instance)
    pick = rng.choice(len(space), size=n, replace=False)
    configs = [space[i] for i in pick]
    tps: list[float | None] = [
        None if rng.random() < oom_share else float(rng.uniform(0.05, 0.3))
        for _ in configs
    ]
    if all(t is None for t in tps):
        tps[0] = 0.1
    return frame_from(
        configs, tps, peak_mem=list(rng.uniform(20, 80, size=n)), instance=instance
    )


#: Seven raw configurations for the adapters' tests: bucket levels 6/8 (a gap),
#: ZeRO 0/3 only, cp constant. Canonical order A, B, G, C, D, F, E: the best
#: (0.30) is row 4, the worst feasible (0.05) row 5; B and E run out of memory.
HAND_CONFIGS: tuple[Config, ...] = (
    (1, 0, 0, 0, 0, 6, 0, 0),  # A: row 0
    (1, 1, 0, 0, 0, 8, 3, 0),  # B: row 1, OOM
    (2, 0, 1, 0, 0, 6, 0, 1),  # C: row 3
    (2, 1, 1, 0, 1, 8, 3, 1),  # D: row 4, the best
    (3, 2, 0, 0, 1, 6, 0, 0),  # E: row 6, OOM
    (3, 0, 2, 0, 0, 8, 0, 2),  # F: row 5, the worst feasible
    (1, 2, 2, 0, 2, 8, 3, 2),  # G: row 2
)
#: Their throughput, ``None`` where the run OOMs.
HAND_THROUGHPUT: tuple[float | None, ...] = (0.10, None, 0.20, 0.30, None, 0.05, 0.15)


def hand_frame(**kwargs: object) -> pd.DataFrame:
    """:data:`HAND_CONFIGS` as a raw-export frame (``kwargs``: :func:`frame_from`'s)."""
    return frame_from(HAND_CONFIGS, HAND_THROUGHPUT, **kwargs)  # type: ignore[arg-type]


def parquet_schema(path: Path) -> tuple[list[str], dict[bytes, bytes]]:
    """``path``'s columns and schema metadata, less the ``pandas`` entry: the
    writing releases' description of their dtypes, which they change (pandas 3
    writes a string column as ``large_string``, ``str``, and its version).

    A regenerated file is compared by this and by its frame as read.
    """
    schema = pq.read_schema(path)
    metadata = dict(schema.metadata)
    del metadata[b"pandas"]
    return schema.names, metadata
