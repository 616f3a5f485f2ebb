"""The ``--readings`` scan of ``standin_fit.py``: memory readings near the
traces' one, each fitted to every visited row, kept as per-configuration
records that ``readings.csv`` is computed from (:func:`write_readings`).

Imported by ``standin_fit.py`` (``python benchmarks/<script>.py`` puts this
folder on ``sys.path``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import _constants_fit as fit
import numpy as np
import pandas as pd
from _standin_models import knob_columns

from bolt_pco64._io import atomic_write_text
from bolt_pco64.instances import get_instance
from bolt_pco64.tables.simulate.grid import candidate_configurations
from bolt_pco64.tables.simulate.spec import Microbatching, Zero0
from bolt_pco64.tables.traces import visited_rows

#: The records of the scan.
READING_RECORDS = "readings_rows.parquet"
#: The file :func:`write_readings` writes.
READINGS_FILE = "readings.csv"


class ScanReading(NamedTuple):
    """One memory reading of the scan: the traces' reading with these."""

    #: Micro-batching without a pipeline.
    unpipelined: Microbatching
    #: Micro-batching with one.
    pipelined: Microbatching
    #: How ZeRO stage 0 holds the optimizer.
    zero0: Zero0
    #: Vocabulary size.
    vocab: int


#: The choices the scan crosses, in :class:`ScanReading`'s order.
SCAN_CHOICES: tuple[tuple[Any, ...], ...] = (
    (
        Microbatching("count", 1),
        Microbatching("count", 2),
        Microbatching("size", 1),
    ),
    (
        Microbatching("per_stage", 2),
        Microbatching("per_stage", 4),
        Microbatching("count", 16),
        Microbatching("count", 32),
    ),
    ("distributed", "zero1"),
    (32000, 151936),
)
#: The readings the scan fits, in ``readings.csv``'s order.
SCAN: tuple[ScanReading, ...] = tuple(
    ScanReading(*c) for c in itertools.product(*SCAN_CHOICES)
)
#: The records' columns that name a reading (``readings.csv``'s first ones).
READING_COLUMNS = ("pp=1", "pp>1", "zero0", "vocab")


def reading_records(instance: str, scan: Sequence[ScanReading] = SCAN) -> pd.DataFrame:
    """Memory readings near the traces' one, each fitted to every visited row:
    one record per reading and grid configuration (module docstring)."""
    inst = get_instance(instance)
    rows = visited_rows(inst)
    grid = candidate_configurations(inst)
    where = {c.encoded(inst): i for i, c in enumerate(grid)}
    xkeys = [f"x_{n}" for n in inst.input_columns]
    idx = np.array([where[tuple(int(v) for v in r)] for r in rows[xkeys].to_numpy()])
    ran = rows["ran_successfully"].to_numpy(dtype=bool)
    measured = rows["peak_mem"].to_numpy(dtype=float)
    configs = pd.DataFrame([c.raw_cells() for c in grid])[knob_columns(inst)]
    configs["visited"] = np.isin(np.arange(len(grid)), idx)
    configs["card_best"] = (
        np.arange(len(grid)) == where[tuple(inst.published.best_config)]
    )
    truth_ran = pd.array([pd.NA] * len(grid), dtype="boolean")
    truth_ran[idx] = ran
    truth_peak = np.full(len(grid), np.nan)
    truth_peak[idx] = measured
    configs["ran_successfully"] = truth_ran
    configs["peak_mem"] = truth_peak
    start = fit.TRACE_READINGS[inst.name]
    frames = []
    for r in scan:
        a = replace(
            start.assumptions,
            micro_unpipelined=r.unpipelined,
            micro_pipelined=r.pipelined,
            zero0=r.zero0,
            vocab_size=r.vocab,
        )
        reading = replace(start, assumptions=a)
        basis = fit.memory_basis(inst, reading, grid)
        visited = fit.MemoryBasis(basis.base[idx], basis.terms[idx], basis.spread[idx])
        k, overhead, cap = fit.fit_memory(visited, measured, ran, reading.constants)
        frame = configs.copy()
        frame.insert(0, "capacity_gb", cap)
        names = (r.unpipelined.describe(), r.pipelined.describe(), r.zero0, r.vocab)
        for i, (column, value) in enumerate(zip(READING_COLUMNS, names, strict=True)):
            frame.insert(i, column, value)
        frame["predicted_peak_mem"] = fit.predict_peak(basis, fit.theta_of(k), overhead)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def reading_scores(group: pd.DataFrame) -> dict[str, float | int]:
    """One reading's row of ``readings.csv`` from its records.

    The median absolute peak error (GB) on the visited rows that ran, the
    feasibility agreement at the fitted capacity, the configurations of the
    whole grid under that capacity and the rank of the card's best among
    them (a card-calibrated cut needs it within the published feasible count).
    """
    peak = group["predicted_peak_mem"].to_numpy(dtype=float)
    cap = float(group["capacity_gb"].iloc[0])
    visited = group["visited"].to_numpy(dtype=bool)
    ran = group["ran_successfully"].to_numpy(dtype=bool, na_value=False)[visited]
    err = peak[visited][ran] - group["peak_mem"].to_numpy(dtype=float)[visited][ran]
    best = float(peak[group["card_best"].to_numpy(dtype=bool)][0])
    return {
        "peak_error_median_abs_gb": float(np.median(np.abs(err))),
        "feasibility_agreement": float(((peak[visited] <= cap) == ran).mean()),
        "capacity_gb": cap,
        "grid_under_capacity": int((peak <= cap).sum()),
        "best_rank": int((peak < best).sum()) + 1,
    }


def write_readings(folder: Path) -> list[Path]:
    """Write ``readings.csv`` from ``folder``'s scan records alone; returns
    its path."""
    rows = pd.read_parquet(folder / READING_RECORDS)
    out = []
    for (unpiped, piped, zero0, vocab), group in rows.groupby(
        list(READING_COLUMNS), sort=False
    ):
        named = dict(
            zip(READING_COLUMNS, (unpiped, piped, zero0, int(vocab)), strict=True)
        )
        out.append({**named, **reading_scores(group)})
    path = folder / READINGS_FILE
    atomic_write_text(path, pd.DataFrame.from_records(out).to_csv(index=False))
    return [path]
