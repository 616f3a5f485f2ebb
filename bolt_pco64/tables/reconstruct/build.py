"""Assembling and writing a reconstructed table (design §7).

One row per configuration of the reconstruction's grid
(:mod:`bolt_pco64.tables.reconstruct.grid`), the card's 17 columns and the
per-row :data:`~bolt_pco64.tables.validation.RECONSTRUCTION_COLUMNS`:

- visited rows: ``ran_successfully`` and ``peak_mem`` exact
  (``gpu_memory_gb * (1 - slack)``), ``throughput_mean`` exact
  (``source = "exact"``, standard error 0) where the harness's noise replays
  (:mod:`bolt_pco64.tables.reconstruct.replay`, :func:`replayed_rows`) or a trace
  gives the noise-free value, else the mean of ``k`` noisy observations
  (``"observed"``, ``noise_std / sqrt(k)``); a visited run that did not fit
  is ``"exact"``;
- the instance's published best configuration: its throughput is the
  published best value (standard error 0) where no trace gives it exactly
  (pco16's best was never visited: its row stays ``"imputed"`` for its
  peak memory, with the published throughput);
- unvisited rows: imputed (``"imputed"``) by
  :class:`~bolt_pco64.tables.reconstruct.impute.Imputer` fitted to the visited rows
  only, with its calibrated standard error and feasibility probability,
  rounded to :data:`~bolt_pco64.tables.reconstruct.impute.DECIMALS`; the rows the
  out-of-memory neighbour means settle
  (:mod:`bolt_pco64.tables.reconstruct.evidence`) run or not as they say (probability
  1 / 0), with the solved throughput (standard error 0); of the others, the
  most probable run, as many as the published feasible count needs
  (:func:`feasible_choice`);
- infeasible rows follow the card: throughput NaN, ``peak_mem`` inf,
  ``peak_mem_normalised`` the stand-in's pad
  (:data:`bolt_pco64.tables.simulate.generate.OOM_PAD`); feasible ones
  ``peak_mem / gpu_memory_gb - 1``;
- :data:`~bolt_pco64.tables.reconstruct.timing.MODELLED_COLUMNS` modelled
  (:mod:`bolt_pco64.tables.reconstruct.timing`).

A last column, ``grid_rule``, says why each configuration is a row
(:data:`~bolt_pco64.tables.reconstruct.grid.GRID_REASONS`). The parquet's key-value
metadata says ``source=reconstructed``, the generator version, the counts,
the grid rule's outcome, what replayed, what the neighbour means settled, the
calibration, which columns are modelled and the SHA-256 of every trace read.
The same traces give the same table, cell for cell, on one machine
(:func:`rebuild_shipped` rebuilds the shipped ones).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.stats import norm

from bolt_pco64 import instances
from bolt_pco64._io import atomic_write_parquet, atomic_write_text
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.reconstruct.evidence import NeighbourEvidence, neighbour_evidence
from bolt_pco64.tables.reconstruct.grid import ReconstructionGrid, reconstruction_grid
from bolt_pco64.tables.reconstruct.impute import DECIMALS, FIT_SEED, Imputer, encoded
from bolt_pco64.tables.reconstruct.replay import Replay, replay
from bolt_pco64.tables.reconstruct.timing import (
    MODELLED_COLUMNS,
    TIMING_SEED,
    modelled_columns,
)
from bolt_pco64.tables.simulate.generate import OOM_PAD
from bolt_pco64.tables.traces import read_trace, visited_rows
from bolt_pco64.tables.validation import (
    RECONSTRUCTION_COLUMNS,
    ROW_SOURCES,
    reconstruction_label,
)

__all__ = [
    "GENERATOR_VERSION",
    "RECONSTRUCTION_COLUMNS",
    "Reconstruction",
    "feasible_choice",
    "make_reconstruction",
    "rebuild_shipped",
    "register_reconstructions",
    "replay_traces",
    "replayed_rows",
    "write_reconstructed_table",
]

#: Version of the reconstruction (bumped whenever a shipped table changes).
GENERATOR_VERSION = "2.1.0"


@dataclass(frozen=True)
class Reconstruction:
    """A reconstructed table and its metadata.

    Attributes:
        frame: The table: the card's columns in order, then
            :data:`~bolt_pco64.tables.validation.RECONSTRUCTION_COLUMNS`; rows in canonical
            order.
        metadata: The parquet's key-value metadata.
    """

    frame: pd.DataFrame
    metadata: dict[str, str]


def _best_row(inst: Instance, X: np.ndarray) -> np.ndarray:
    """Row indices of the published best configuration in ``X`` (0 or 1)."""
    if inst.published is None:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero((np.asarray(inst.published.best_config) == X).all(axis=1))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def replay_traces(inst: Instance, files: Sequence[Path]) -> Replay:
    """The harness replayed on ``files`` (nothing where no count is published)."""
    if inst.published is None:
        return Replay()
    return replay([read_trace(p, inst) for p in files], inst.published.rows)


def replayed_rows(rows: pd.DataFrame, instance: Instance, rep: Replay) -> pd.DataFrame:
    """``rows`` (:func:`~bolt_pco64.tables.traces.visited_rows`) with the replayed values.

    A visited row that ran and whose noise replayed
    (:mod:`bolt_pco64.tables.reconstruct.replay`) gets its de-noised throughput,
    exact: ``source = "exact"``, standard error 0. A copy; other rows as they are.
    """
    out = rows.copy()
    keys = [tuple(int(v) for v in x) for x in encoded(out, instance).tolist()]
    value = np.array([rep.values.get(k, np.nan) for k in keys])
    ran = out["ran_successfully"].to_numpy(dtype=bool)
    hit = ran & np.isfinite(value)
    out.loc[hit, "throughput_mean"] = value[hit]
    out.loc[hit, "throughput_se"] = 0.0
    out.loc[hit, "source"] = "exact"
    return out


def _evidence(
    X: np.ndarray, rows: pd.DataFrame, inst: Instance, rep: Replay
) -> NeighbourEvidence:
    """:func:`~bolt_pco64.tables.reconstruct.evidence.neighbour_evidence` on the rows
    ``X`` from the visited ``rows`` and the replayed values."""
    at = {tuple(x): i for i, x in enumerate(np.asarray(X).tolist())}
    ran: dict[int, bool] = {}
    value: dict[int, float] = {}
    means: dict[int, float] = {}
    for x, ok in zip(
        encoded(rows, inst).astype(np.int64).tolist(),
        rows["ran_successfully"].to_numpy(dtype=bool),
        strict=True,
    ):
        i = at[tuple(x)]
        ran[i] = bool(ok)
        v = rep.values.get(tuple(x))
        if v is None:
            continue
        (value if ok else means)[i] = v
    if len(value) < sum(ran.values()):  # a row that ran without its value
        means = {}
    return neighbour_evidence(X, ran, value, means)


def feasible_choice(
    probability: np.ndarray, known: np.ndarray, ran: np.ndarray, target: int | None
) -> np.ndarray:
    """Which rows run, with the published feasible count ``target``.

    Rows with ``known`` feasibility keep ``ran``; of the others, the
    ``target - ran[known].sum()`` most probable (``probability``, ties in row
    order) run. ``target`` ``None``: those with probability > 0.5 run.

    Raises:
        ValueError: If ``target`` cannot be met (fewer known runs than
            ``target`` minus the unknown rows, or more known runs than it).
    """
    out = np.where(known, ran, probability > 0.5)
    if target is None:
        return out
    free = np.flatnonzero(~known)
    need = target - int(ran[known].sum())
    if not 0 <= need <= len(free):
        raise ValueError(
            f"Expected a published feasible count reachable from the traces, got "
            f"{target} with {int(ran[known].sum())} known runs and {len(free)} "
            "unknown rows."
        )
    order = free[np.argsort(-probability[free], kind="stable")]
    out[free] = False
    out[order[:need]] = True
    return out


@dataclass
class _Cells:
    """The per-row values of a reconstruction being assembled (``N`` rows)."""

    seen: np.ndarray  # visited by a trace
    ran: np.ndarray
    throughput: np.ndarray
    se: np.ndarray
    peak: np.ndarray
    probability: np.ndarray
    k: np.ndarray
    source: np.ndarray
    #: The imputed peak memory of unvisited rows (inf elsewhere).
    predicted_peak: np.ndarray


def _grid_and_evidence(
    inst: Instance, rows: pd.DataFrame, rep: Replay
) -> tuple[ReconstructionGrid, NeighbourEvidence]:
    """The grid (open candidates that neighbour means show ran are rows) and
    the neighbour evidence on it."""
    visited_X = encoded(rows, inst)
    grid = reconstruction_grid(inst, visited_X, rep.indices)
    if grid.open is not None and len(grid.open):
        # Candidates the neighbour means show ran are rows.
        wide = np.unique(np.concatenate([grid.X, grid.open]), axis=0)
        ev = _evidence(wide, rows, inst, rep)
        must = [tuple(x) for x in wide[ev.settled & ev.ran].tolist()]
        grid = reconstruction_grid(inst, visited_X, rep.indices, must)
    return grid, _evidence(grid.X, rows, inst, rep)


def _visited_cells(inst: Instance, rows: pd.DataFrame, X: np.ndarray) -> _Cells:
    """The cells of the grid rows ``X`` the visited ``rows`` give; the others
    imputed-to-be (no run, NaN throughput, inf peak, probability 0)."""
    n = len(X)
    key = {tuple(int(v) for v in x): i for i, x in enumerate(encoded(rows, inst))}
    at = np.array([key.get(tuple(x), -1) for x in X.tolist()])
    seen = at >= 0
    vis = rows.iloc[at[seen]].reset_index(drop=True)
    cells = _Cells(
        seen=seen,
        ran=np.zeros(n, dtype=bool),
        throughput=np.full(n, np.nan),
        se=np.full(n, np.nan),
        peak=np.full(n, np.inf),
        probability=np.zeros(n),
        k=np.zeros(n, dtype=np.int64),
        source=np.full(n, "imputed", dtype=object),
        predicted_peak=np.full(n, np.inf),
    )
    cells.ran[seen] = vis["ran_successfully"].to_numpy(dtype=bool)
    cells.throughput[seen] = vis["throughput_mean"].to_numpy()
    cells.se[seen] = vis["throughput_se"].to_numpy()
    cells.peak[seen] = vis["peak_mem"].to_numpy()
    cells.probability[seen] = cells.ran[seen].astype(np.float64)
    cells.k[seen] = vis["k"].to_numpy()
    cells.source[seen] = vis["source"].to_numpy()
    return cells


def _impute_unvisited(
    inst: Instance,
    rows: pd.DataFrame,
    X: np.ndarray,
    evidence: NeighbourEvidence,
    cells: _Cells,
) -> dict[str, float]:
    """Fill ``cells``'s unvisited rows (module docstring); returns the
    imputer's calibration (:attr:`~bolt_pco64.tables.reconstruct.impute.Imputer.scales`;
    empty where no row is imputed)."""
    seen = cells.seen
    if not (~seen).any():
        return {}
    imputer = Imputer(inst).fit(rows)
    pred = imputer.predict(X[~seen])
    idx = np.flatnonzero(~seen)
    p_all = np.ones(len(X))
    p_all[idx] = pred.feasible_probability
    if len(best_at := _best_row(inst, X)) == 1 and not seen[best_at[0]]:
        p_all[best_at[0]] = np.inf  # the published best ran
    target = None if inst.published is None else inst.published.feasible
    known = seen | evidence.settled
    cells.ran[evidence.settled] = evidence.ran[evidence.settled]
    fit = feasible_choice(p_all, known, cells.ran, target)[idx]
    cells.ran[idx] = fit
    cells.probability[idx] = np.round(
        pred.feasible_probability, DECIMALS["feasible_probability"]
    )
    floor = 10.0 ** -DECIMALS["throughput"]  # a run that fits has throughput
    tput = np.maximum(np.round(pred.throughput, DECIMALS["throughput"]), floor)
    cells.throughput[idx] = np.where(fit, tput, np.nan)
    cells.se[idx] = np.where(
        fit, np.round(pred.throughput_se, DECIMALS["throughput_se"]), np.nan
    )
    # Settled by the neighbour means: known to run (or not), and where it
    # ran, its throughput solved exactly.
    solved = evidence.settled[idx]
    cells.probability[idx[solved]] = evidence.ran[idx[solved]].astype(np.float64)
    exact = solved & evidence.ran[idx]
    cells.throughput[idx[exact]] = evidence.throughput[idx[exact]]
    cells.se[idx[exact]] = 0.0
    # A run that fits stays under the GPU's memory (a margin < 0).
    cap = inst.gpu_memory_gb - 10.0 ** -DECIMALS["peak_mem"]
    peak = np.minimum(np.round(pred.peak_mem, DECIMALS["peak_mem"]), cap)
    cells.peak[idx] = np.where(fit, peak, np.inf)
    cells.predicted_peak[idx] = peak
    return dict(imputer.scales)


def _pin_best(inst: Instance, X: np.ndarray, cells: _Cells) -> None:
    """The published best (the instance's figures; the traces' optimal_value
    agrees) pins its row's throughput where no trace gives it exactly."""
    best = _best_row(inst, X)
    if len(best) != 1 or cells.source[best[0]] == "exact":
        return
    i = int(best[0])
    if cells.seen[i] and not cells.ran[i]:
        raise ValueError(
            f"Expected the published best {list(inst.published.best_config)} "
            "to have run, got an out-of-memory run in the traces."
        )
    if not cells.seen[i]:
        cells.peak[i] = cells.predicted_peak[i]
    cells.ran[i], cells.throughput[i] = True, inst.published.best_value
    cells.se[i], cells.probability[i] = 0.0, 1.0
    if cells.seen[i]:
        cells.source[i] = "exact"


def _frame(inst: Instance, grid: ReconstructionGrid, cells: _Cells) -> pd.DataFrame:
    """The table: the card's columns, the reconstruction's, ``grid_rule``."""
    n, ran, pm = len(grid.X), cells.ran, cells.peak
    modelled = modelled_columns(inst, cells.throughput, pm, ran)
    data: dict[str, object] = {}
    for j, spec in enumerate(inst.inputs):
        data[spec.name] = np.array(
            [spec.decode(int(v)) for v in grid.X[:, j]], dtype=np.int64
        )
    for name, value in inst.context:
        data[name] = np.full(n, value, dtype=np.int64)
    data.update(
        ran_successfully=ran,
        throughput_mean=np.where(ran, cells.throughput, np.nan),
        peak_mem_normalised=np.where(ran, pm / inst.gpu_memory_gb - 1.0, OOM_PAD),
        peak_mem=np.where(ran, pm, np.inf),
        **modelled,
        source=cells.source.astype(str),
        throughput_se=np.where(ran, cells.se, np.nan),
        feasible_probability=cells.probability,
        n_observations=cells.k,
        inferred=grid.inferred,
    )
    data["grid_rule"] = grid.how
    return pd.DataFrame(
        {c: data[c] for c in (*inst.columns, *RECONSTRUCTION_COLUMNS, "grid_rule")}
    )


def _set_description(calibration: Mapping[str, float]) -> str:
    """The metadata's description of the feasibility prediction set."""
    if "feasibility_set" not in calibration:
        return "none (no row imputed)"
    t = calibration["feasibility_set"]
    if not np.isfinite(t):
        return (
            "95 % prediction set of an imputed row's feasibility: both outcomes "
            "everywhere (too few visited rows to calibrate it at 95 %)"
        )
    return (
        "95 % prediction set of an imputed row's feasibility, on its margin "
        "z = Phi^-1(feasible_probability) before rounding: 'runs' where "
        f"z >= {-t:.6g} (probability >= 1 - {norm.cdf(t):.6g}), 'fails' where "
        f"z <= {t:.6g} (<= {norm.cdf(t):.6g}); "
        + ("neither between (an empty set)" if t < 0 else "both between")
        + f"; {t:.6g} is the conformal threshold of the visited rows' "
        "leave-one-out margins; visited and settled rows (probability 1 or 0) "
        "are exact"
    )


def _metadata(
    inst: Instance,
    frame: pd.DataFrame,
    grid: ReconstructionGrid,
    rep: Replay,
    evidence: NeighbourEvidence,
    calibration: Mapping[str, float],
    files: Sequence[Path],
) -> dict[str, str]:
    """The parquet's key-value metadata of a reconstruction (module docstring)."""
    scales = ", ".join(f"{k} {v:.6g}" for k, v in calibration.items())
    counts = {
        s: int((frame["source"] == s).sum()) for s in ("exact", "observed", "imputed")
    }
    return {
        "source": "reconstructed",
        "generator": "bolt_pco64.reconstruct",  # the label the shipped files record
        "generator_version": GENERATOR_VERSION,
        "instance": inst.name,
        "description": reconstruction_label(
            counts["exact"], counts["observed"], counts["imputed"]
        ),
        "counts.exact": str(counts["exact"]),
        "counts.observed": str(counts["observed"]),
        "counts.imputed": str(counts["imputed"]),
        "counts.inferred": str(int(grid.inferred.sum())),
        "grid": grid.describe(),
        "replay": (
            f"noise replayed: {', '.join(rep.replayed) or 'none'}; row indices "
            f"replayed: {', '.join(rep.indexed) or 'none'}; not replayed: "
            f"{'; '.join(rep.refused) or 'none'}"
        ),
        "counts.feasible": str(int(frame["ran_successfully"].sum())),
        "calibration": (
            "leave-one-out factors of the imputed standard errors, probit slope "
            "of the feasibility probability and conformal threshold of its 95 % "
            f"prediction set: {scales or 'none (no row imputed)'}"
        ),
        "prediction_set": _set_description(calibration),
        "evidence": (
            f"out-of-memory neighbour means settle {int(evidence.settled.sum())} "
            f"unvisited rows ({int((evidence.settled & evidence.ran).sum())} ran, "
            "throughput solved); conflicts: "
            f"{evidence.conflicts}"
        ),
        "modelled_columns": ",".join(MODELLED_COLUMNS),
        "fit_seed": str(FIT_SEED),
        "timing_seed": str(TIMING_SEED),
        "traces": ";".join(f"{p.name}:{_sha256(p)}" for p in files),
    }


def make_reconstruction(
    instance: str | Instance = DEFAULT_INSTANCE,
    paths: Sequence[str | os.PathLike[str]] | None = None,
) -> Reconstruction:
    """Reconstruct ``instance``'s table from its traces.

    Args:
        instance: The instance.
        paths: Its trace files; ``None``: the shipped ones.

    Raises:
        FileNotFoundError: If a trace file does not exist.
        bolt_pco64.tables.traces.TraceError: If a trace is refused (see
            :func:`bolt_pco64.tables.traces.visited_rows`).
        ValueError: If the visited rows do not fit the instance's grid.
    """
    inst = instances.get_instance(instance)
    files = [Path(p) for p in (locations.trace_paths(inst) if paths is None else paths)]
    rows = visited_rows(inst, files)
    rep = replay_traces(inst, files)
    rows = replayed_rows(rows, inst, rep)
    grid, evidence = _grid_and_evidence(inst, rows, rep)
    cells = _visited_cells(inst, rows, grid.X)
    calibration = _impute_unvisited(inst, rows, grid.X, evidence, cells)
    _pin_best(inst, grid.X, cells)
    frame = _frame(inst, grid, cells)
    meta = _metadata(inst, frame, grid, rep, evidence, calibration, files)
    return Reconstruction(frame, meta)


def write_reconstructed_table(
    path: str | os.PathLike[str],
    instance: str | Instance = DEFAULT_INSTANCE,
    paths: Sequence[str | os.PathLike[str]] | None = None,
) -> Path:
    """Write ``instance``'s reconstruction to ``path`` as parquet, atomically.

    The traces are read and checked first: a refused trace raises before
    anything is written, and a failed write leaves nothing behind
    (``bolt_pco64._io.atomic_write_parquet``). Arguments as
    :func:`make_reconstruction`.

    Returns:
        The path written.
    """
    rec = make_reconstruction(instance, paths)
    return atomic_write_parquet(path, rec.frame, rec.metadata)


def register_reconstructions(paths: Sequence[str | os.PathLike[str]]) -> Path:
    """Write the reconstruction registry from the reconstructed tables ``paths``.

    For the package's maintainers, after regenerating the shipped tables: each
    table's :func:`~bolt_pco64.tables.standins.content_fingerprint` is recorded with
    its instance, generator version, file name and counts
    (:mod:`bolt_pco64.tables.reconstruct.registry`), so that any form of it (a CSV
    export of the card's columns alone included) is recognised. Written
    atomically; returns the registry's path.
    """
    # Imported here: table sits above this module's other imports.
    from bolt_pco64.tables.reconstruct.registry import (
        reconstruction_registry,
        registry_path,
    )
    from bolt_pco64.tables.table import load_table

    entries: dict[str, dict[str, str]] = {}
    for path in paths:
        p = Path(path)
        meta = pq.read_schema(p).metadata or {}
        name = meta.get(b"instance", b"").decode()
        table = load_table(p, instance=name)
        entries[table.fingerprint] = {
            "instance": name,
            "generator_version": meta.get(b"generator_version", b"").decode(),
            "file": p.name,
            **{s: meta.get(f"counts.{s}".encode(), b"").decode() for s in ROW_SOURCES},
        }
    target = registry_path()
    text = json.dumps(dict(sorted(entries.items())), indent=2) + "\n"
    atomic_write_text(target, text)
    reconstruction_registry.cache_clear()  # the next look-up reads the new file
    return target


def rebuild_shipped(folder: str | os.PathLike[str] | None = None) -> list[Path]:
    """Rebuild every shipped reconstruction from the shipped traces, and the
    registry: the one command behind ``bolt-pco64 generate --problem all
    --from-traces shipped`` (bit for bit the shipped files on one machine).

    Args:
        folder: Where the tables are written; ``None``: the package's data
            files (:func:`bolt_pco64.tables.locations.reconstructed_table_path`), else
            a checkout's ``data/``.
            The registry is rewritten only when they go there.

    Returns:
        The tables written, then the registry if rewritten.
    """
    written: list[Path] = []
    for inst in instances.INSTANCES.values():
        if not inst.trace_files:
            continue
        if folder is not None:
            target = Path(folder) / inst.reconstructed_filename
        elif (shipped := locations.reconstructed_table_path(inst)) is not None:
            target = shipped
        elif (checkout := locations.checkout_data_dir()) is not None:
            target = checkout / inst.reconstructed_filename
        else:
            raise FileNotFoundError(
                "Expected a data folder to rebuild the shipped reconstructions "
                "in (a checkout's data/ or the package's), got none."
            )
        written.append(write_reconstructed_table(target, inst))
    if folder is None:
        written.append(register_reconstructions(written))
    return written
