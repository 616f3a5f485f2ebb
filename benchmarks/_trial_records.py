"""Per-trial records of the framework scripts (``ax_matrix.py``, ``optuna_crash.py``).

Each script writes, beside each of its per-run CSVs, the records of every
trial of those runs (``<name>_trials.parquet``, zstd, written atomically):
one row per trial, the script's run keys first, then the columns shared by
both scripts (:data:`LEADING_COLUMNS`, the knob columns, :data:`TRIAL_COLUMNS`),
then the script's own:

- ``trial``: the framework's index of the trial in its run (Ax's trial
  index, Optuna's ``trial.number``), in the order the trials were made;
- ``generator``: what proposed it: Ax's generation node (e.g.
  ``GenerationStep_0_Sobol``), or Optuna's sampler (``tpe``, ``gp``,
  ``random``), ``enqueued`` for a row of the initial design;
- ``proposed_<knob>``: the configuration the framework proposed, on the
  table's raw scale (a log2 knob its exponent, ``zero_stage`` its stage
  0/2/3: Optuna's encoded stage index is decoded); missing for a knob the
  run's instance does not have (a file may hold several instances);
- ``<knob>``: the table row that ran, named by its knob columns (so a record
  survives a reordering of the table's rows); missing where no row ran (an
  off-table suggestion that ``optuna_crash.py --off-table reject`` refused);
- ``on_table``: whether the proposed configuration is a row of the table
  (otherwise it snapped to the row that ran, or was refused);
- ``oom``: whether the row that ran ran out of memory; missing where no row
  ran;
- ``throughput``: the row's ``throughput_mean`` in the table, NaN for a
  crash or where no row ran (the run's regret is computed from it);
- ``reported``: the objective the framework was told: the throughput, the
  placeholder for a crash under the ``placeholder`` representation (and for
  a refused off-table suggestion), NaN where it was told none (a crash under
  ``missing`` or ``failed``);
- ``status``: the trial's final status (:data:`STATUS`): ``completed``,
  ``abandoned`` (Ax's failed-trial path), ``failed`` or ``pruned``
  (Optuna's FAIL and PRUNED);
- ``run_seconds``: the run's seconds under the package's time model
  (:func:`bolt_pco64.integrations.common.run_seconds`; Ax's step runtime,
  rounded to whole seconds), 0 where no row ran;
- ``optimal_value``: the table's best feasible throughput (the run's; the
  regret is relative to it).

Imported by the scripts of this folder (``python benchmarks/<script>.py`` puts
the folder on ``sys.path``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from bolt_pco64._io import atomic_write_parquet

if TYPE_CHECKING:  # --report reads records without importing torch
    from bolt_pco64.integrations.common import Parameters

#: The columns every record has after the run keys, before the knob columns.
LEADING_COLUMNS = ("trial", "generator")
#: The columns every record has after the knob columns.
TRIAL_COLUMNS = (
    "on_table",
    "oom",
    "throughput",
    "reported",
    "status",
    "run_seconds",
    "optimal_value",
)
#: The prefix of a proposed configuration's knob columns.
PROPOSED = "proposed_"
#: A trial's final status in the records, by the framework's name for it
#: (Ax's ``TrialStatus``, Optuna's ``TrialState``); any other name is kept,
#: in lower case.
STATUS: Mapping[str, str] = {
    "COMPLETED": "completed",  # Ax
    "COMPLETE": "completed",  # Optuna
    "ABANDONED": "abandoned",  # Ax
    "FAILED": "failed",  # Ax
    "FAIL": "failed",  # Optuna
    "PRUNED": "pruned",  # Optuna
}
_NULLABLE = {"on_table": "boolean", "oom": "boolean"}


def status_name(name: str) -> str:
    """The records' status of a trial whose framework status is ``name``."""
    return STATUS.get(name, name.lower())


def configuration(
    parameters: Parameters, proposed: Mapping[str, object], row: int | None
) -> dict[str, object]:
    """The knob columns of one trial: ``proposed`` and the row that ran.

    Args:
        parameters: The served problem's parameters on the raw scale.
        proposed: The configuration proposed, by knob, on the raw scale.
        row: The canonical index of the row that ran; ``None`` if none ran.

    Returns:
        ``proposed_<knob>`` and ``<knob>`` (``None`` where no row ran), and
        ``on_table``.

    Raises:
        ValueError: If ``parameters`` are not on the raw scale.
    """
    if parameters.scale != "raw":
        raise ValueError(f"Expected raw-scale parameters, got {parameters.scale!r}.")
    names = parameters.names
    proposed_raw = {n: int(proposed[n]) for n in names}  # type: ignore[call-overload]
    snapped = parameters.of_row(parameters.row(proposed_raw))
    ran = parameters.of_row(row) if row is not None else dict.fromkeys(names)
    return {
        **{PROPOSED + n: proposed_raw[n] for n in names},
        **ran,
        "on_table": snapped == proposed_raw,
    }


def frame(records: Sequence[Mapping[str, object]], keys: Sequence[str]) -> pd.DataFrame:
    """The records as written: ``keys``, :data:`LEADING_COLUMNS`, the
    proposed and the run knob columns (in the order they first appear),
    :data:`TRIAL_COLUMNS` and any other column after them."""
    if not records:
        return pd.DataFrame(columns=[*keys, *LEADING_COLUMNS, *TRIAL_COLUMNS])
    out = pd.DataFrame.from_records(list(records))
    knobs = knob_columns(out)
    order = [
        *keys,
        *LEADING_COLUMNS,
        *(PROPOSED + k for k in knobs),
        *knobs,
        *TRIAL_COLUMNS,
    ]
    out = out[order + [c for c in out.columns if c not in order]]
    for name in [PROPOSED + k for k in knobs] + knobs:
        out[name] = out[name].astype("Int64")
    return out.astype(_NULLABLE)


def knob_columns(records: pd.DataFrame) -> list[str]:
    """The knob columns of ``records`` (those with a ``proposed_`` twin)."""
    return [
        c.removeprefix(PROPOSED)
        for c in records.columns
        if c.startswith(PROPOSED) and c.removeprefix(PROPOSED) in records.columns
    ]


def rows_run(trials: pd.DataFrame) -> list[tuple[int, ...]]:
    """The rows one run's ``trials`` ran, in trial order, each as its knob
    values (the knobs the run's instance has); no entry where none ran."""
    knobs = trials[knob_columns(trials)].dropna(axis=1, how="all")
    ran = knobs.notna().all(axis=1)
    return [tuple(int(v) for v in r) for r in knobs[ran].itertuples(index=False)]


def write(path: Path, records: pd.DataFrame, script: str) -> Path:
    """Write ``records`` to ``path`` atomically (zstd parquet; the key-value
    metadata names ``script``)."""
    return atomic_write_parquet(path, records, metadata={"script": script})


def read(path: Path, keys: Sequence[str]) -> pd.DataFrame:
    """The records at ``path``, checked to hold ``keys``,
    :data:`LEADING_COLUMNS` and :data:`TRIAL_COLUMNS`.

    Raises:
        ValueError: If the file is missing, not readable parquet, or lacks a
            column; the message names the file.
    """
    if not path.is_file():
        raise ValueError(
            f"Expected the per-trial records {str(path)!r}, got no such file."
        )
    try:
        records = pd.read_parquet(path)
    except Exception as err:  # pyarrow's errors have no common public base
        raise ValueError(
            f"Expected {str(path)!r} to be readable parquet (per-trial records), "
            f"got {type(err).__name__}: {err}"
        ) from None
    required = (*keys, *LEADING_COLUMNS, *TRIAL_COLUMNS)
    missing = [c for c in required if c not in records]
    if missing:
        raise ValueError(
            f"Expected {str(path)!r} to hold the columns {missing}, got "
            f"{list(records.columns)}."
        )
    return records


def nan_if_none(value: float | None) -> float:
    """``value`` as a float, NaN for ``None``."""
    return math.nan if value is None else float(value)
