"""Small synthetic pco64-schema tables for the BO and harness tests.

They follow the card's schema and invariants (design section 1) but are far
smaller than the published table, so GP fits and whole runs take little time.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from bolt_pco64.table import COLUMNS

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
    rows = []
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
        ok = mem < capacity
        steps = [round(1 / thr, 6)] * 3 if ok else []
        rows.append(
            {
                "log2_dp_size": d,
                "log2_tp_size": t,
                "log2_pp_size": p,
                "log2_cp_size": c,
                "log2_sp_size": s,
                "log2_dp_bucket_size_mb": b,
                "zero_stage": z,
                "log2_num_model_chunks": k,
                "log2_grad_accum_steps": 0,
                "ran_successfully": ok,
                "throughput_mean": thr if ok else np.nan,
                "throughput_std": 0.001 if ok else np.nan,
                "peak_mem_normalised": mem / capacity - 1 if ok else PAD,
                "overall_time": 600.0 + 100 * d if ok else np.nan,
                "all_time_steps": str(steps),
                "peak_mem": mem if ok else np.inf,
                "peak_mem_per_gpu": str([mem] * 2) if ok else "[]",
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))
