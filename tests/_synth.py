"""Small synthetic pco64-schema tables for the BO and harness tests.

They follow the card's schema and invariants (docs/architecture.md §1) but are far
smaller than the published table, so GP fits and whole runs take little time.
"""

from __future__ import annotations

import itertools

import pandas as pd

from tests._tables import frame_from

PAD = 1.0


def make_table(
    dp: int = 3,
    tp: int = 2,
    pp: int = 2,
    sp: int = 2,
    buckets: int = 1,
    chunks: int = 1,
    capacity: float = 96.0,
) -> pd.DataFrame:
    """A table over a small grid with a smooth throughput and an OOM region.

    Peak memory grows with the data-parallel size and shrinks with sharding;
    a row is feasible iff its peak memory is below ``capacity`` (GB). The
    throughput grows with dp, so the best rows border the OOM region. With the
    defaults (72 rows) 65 rows are feasible.
    """
    configs, throughput, peaks, times = [], [], [], []
    grid = itertools.product(
        range(dp),
        range(tp),
        range(pp),
        range(1),
        range(sp),
        range(6, 6 + buckets),
        (0, 2, 3),
        range(chunks),
    )
    for d, t, p, c, s, b, z, k in grid:
        zo = (0, 2, 3).index(z)
        mem = 58 + 22 * d - 9 * t - 8 * p - 7 * zo - 4 * s + 3 * k + b
        thr = 0.1 + 0.03 * d - 0.02 * (t - 1) ** 2 - 0.015 * p + 0.01 * s - 0.005 * zo
        thr += 0.002 * k - 0.001 * (b - 6)
        configs.append((d, t, p, c, s, b, z, k))
        throughput.append(thr if mem < capacity else None)
        peaks.append(float(mem))
        times.append(600.0 + 100 * d)
    return frame_from(
        configs,
        throughput,
        peaks,
        throughput_std=[0.001] * len(configs),
        overall_time=times,
        capacity=capacity,
        pad=PAD,
    )
