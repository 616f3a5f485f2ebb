"""Small hand-built tables of the card's schema, for tests that need known numbers."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bolt_pco64.table import COLUMNS

PAD = 0.5
CAPACITY = 96.0

Config = tuple[int, int, int, int, int, int, int, int]


def frame_from(
    configs: Sequence[Config],
    throughput: Sequence[float | None],
    peak_mem: Sequence[float] | None = None,
    steps: int = 3,
) -> pd.DataFrame:
    """A raw-export frame: ``configs`` in raw units (zero_stage 0/2/3), ``None`` = OOM."""
    if peak_mem is None:
        peak_mem = [40.0 + 3.0 * i for i in range(len(configs))]
    rows = []
    for i, (cfg, tp, pm) in enumerate(zip(configs, throughput, peak_mem, strict=True)):
        ok = tp is not None
        step_times = (
            [1.0 / tp * (1 + 0.01 * ((i + j) % 3 - 1)) for j in range(steps)]
            if ok
            else []
        )
        rows.append(
            {
                **dict(zip(COLUMNS[:8], cfg, strict=True)),
                "log2_grad_accum_steps": 0,
                "ran_successfully": ok,
                "throughput_mean": float(tp) if ok else np.nan,
                "throughput_std": 0.01 * float(tp) if ok else np.nan,
                "peak_mem_normalised": pm / CAPACITY - 1 if ok else PAD,
                "overall_time": 100.0 + i if ok else np.nan,
                "all_time_steps": str(step_times),
                "peak_mem": pm if ok else np.inf,
                "peak_mem_per_gpu": str([float(pm), float(pm) - 1.0]) if ok else "[]",
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def small_frame(seed: int = 0, n: int = 40, oom_share: float = 0.3) -> pd.DataFrame:
    """``n`` distinct random configurations with random throughputs and OOMs.

    The rows are shuffled (not in canonical order) on purpose.
    """
    rng = np.random.default_rng(seed)
    space = list(
        itertools.product(
            range(1, 4),
            range(3),
            range(3),
            range(2),
            range(2),
            range(6, 8),
            (0, 2, 3),
            range(2),
        )
    )
    pick = rng.choice(len(space), size=n, replace=False)
    configs = [space[i] for i in pick]
    tps: list[float | None] = [
        None if rng.random() < oom_share else float(rng.uniform(0.05, 0.3))
        for _ in configs
    ]
    if all(t is None for t in tps):
        tps[0] = 0.1
    return frame_from(configs, tps, peak_mem=list(rng.uniform(20, 80, size=n)))
