"""The endpoints of the protocol and each run's outcome on them.

One row per run (method x seed) of :func:`run_outcomes`, from the harness's
per-evaluation records (:func:`~bolt_pco64.bench.records.record_columns`):

- **primary**, ``evals_to_<target>``: the evaluations a run took to reach a
  regret of at most ``target x optimal value`` (``optimum``: regret 0;
  ``1pct``: within 1 %), with ``<name>_event`` false and the time set to the
  budget when it did not (censored at the budget);
- **co-primary**, ``regret_auc``: the area under the regret curve after the
  initial design, as its mean over evaluations ``n_init + 1 .. budget``,
  divided by the optimal value (a regret before the first feasible
  evaluation counts as ``optimal - worst feasible``,
  :func:`~bolt_pco64.bench.stats.regret_fill`);
- **secondary**, ``ooms``: the run's crashes (out-of-memory evaluations)
  after the initial design; ``gpu_hours_to_<target>``: the GPU-hours spent
  when the target was reached, censored at the run's GPU-hours at the budget
  (only for records with a ``gpu_hours`` column).

Besides: ``initial_hit`` (the initial design, shared by every method of a
seed, already holds the optimum: every time-to-optimum of that seed is at
most ``n_init``) and ``final_regret`` (the regret at the budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from bolt_pco64.bench.protocol.design import PROTOCOL_DEFAULTS, ProtocolDesign
from bolt_pco64.bench.stats import method_order, regret_fill

__all__ = [
    "REQUIRED_COLUMNS",
    "Endpoint",
    "declared_endpoints",
    "run_outcomes",
    "target_tag",
]

#: The record columns the protocol reads (``gpu_hours`` is optional).
REQUIRED_COLUMNS: tuple[str, ...] = (
    "method",
    "seed",
    "iteration",
    "regret",
    "feasible",
)


@dataclass(frozen=True)
class Endpoint:
    """One endpoint: how a run's outcome is compared between two methods.

    Attributes:
        name: The column of :func:`run_outcomes` (a ``"time"`` endpoint also
            has ``<name>_event``).
        label: How the report names it.
        role: ``"primary"``, ``"co-primary"`` or ``"secondary"``.
        kind: ``"time"`` (time to an event, censored; earlier is better:
            compared by which method of a seed gets there first) or
            ``"value"`` (a number per run; lower is better: compared by the
            paired difference).
        margin: The equivalence margin of the paired effect (for a
            ``"time"`` endpoint a difference of shares of seeds, for a
            ``"value"`` endpoint in the endpoint's unit).
        unit: The unit of a value or time.
    """

    name: str
    label: str
    role: Literal["primary", "co-primary", "secondary"]
    kind: Literal["time", "value"]
    margin: float
    unit: str


def target_tag(target: float) -> str:
    """``"optimum"`` for 0, ``"1pct"`` for 0.01."""
    return "optimum" if target == 0 else f"{target * 100:g}pct"


def _target_label(target: float) -> str:
    return "the optimum" if target == 0 else f"within {target * 100:g} %"


def declared_endpoints(
    design: ProtocolDesign = PROTOCOL_DEFAULTS, cost: bool = True
) -> tuple[Endpoint, ...]:
    """The endpoints, in report order; ``cost=False`` leaves out GPU-hours."""
    out = [
        Endpoint(
            f"evals_to_{target_tag(t)}",
            f"evaluations to {_target_label(t)}",
            "primary",
            "time",
            design.first_margin,
            "evaluations",
        )
        for t in design.targets
    ]
    out.append(
        Endpoint(
            "regret_auc",
            "area under the regret curve after the initial design",
            "co-primary",
            "value",
            design.auc_margin,
            "mean regret / optimal value",
        )
    )
    out.append(
        Endpoint(
            "ooms",
            "crashes (OOM) per run after the initial design",
            "secondary",
            "value",
            design.oom_margin,
            "crashes",
        )
    )
    if cost:
        out += [
            Endpoint(
                f"gpu_hours_to_{target_tag(t)}",
                f"GPU-hours to {_target_label(t)}",
                "secondary",
                "time",
                design.first_margin,
                "GPU-hours",
            )
            for t in design.targets
        ]
    return tuple(out)


def _check_records(records: pd.DataFrame) -> None:
    if not isinstance(records, pd.DataFrame):
        raise TypeError(f"Expected records as a DataFrame, got {type(records)}.")
    missing = [c for c in REQUIRED_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(
            f"Expected record columns {list(REQUIRED_COLUMNS)}, missing {missing}."
        )
    if records.empty:
        raise ValueError("Expected at least one evaluation in the records, got none.")


def run_outcomes(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    n_init: int,
    budget: int,
    targets: Sequence[float] = PROTOCOL_DEFAULTS.targets,
) -> pd.DataFrame:
    """Each run's outcome on every endpoint (see the module docstring).

    Args:
        records: Per-evaluation records of complete runs.
        optimal_value: The problem's optimal value (``> 0``).
        worst_feasible_value: Its worst feasible value.
        n_init: The initial design's size (``0 <= n_init < budget``).
        budget: Evaluations per run read (every run must have made them).
        targets: Regret targets as fractions of the optimal value.

    Returns:
        One row per run, sorted by method (in order of appearance) and seed.

    Raises:
        ValueError: If a column is missing, a run is shorter than ``budget``
            or ``n_init`` is not in ``[0, budget)``.
    """
    _check_records(records)
    if not (math.isfinite(optimal_value) and optimal_value > 0):
        raise ValueError(f"Expected optimal_value > 0, got {optimal_value!r}.")
    if not 0 <= n_init < budget:
        raise ValueError(
            f"Expected 0 <= n_init < budget, got n_init={n_init}, budget={budget}."
        )
    fill = regret_fill(optimal_value, worst_feasible_value)
    cost = "gpu_hours" in records.columns and records["gpu_hours"].notna().all()
    order = method_order(records, None)
    recs = records.sort_values(["method", "seed", "iteration"], kind="stable")
    rows = []
    for (method, seed), run in recs.groupby(["method", "seed"], sort=False):
        if len(run) < budget or int(run["iteration"].iloc[budget - 1]) != budget:
            raise ValueError(
                f"Expected run {method}/{seed} to have evaluations 1..{budget}, "
                f"got {len(run)}."
            )
        run = run.iloc[:budget]
        regret = run["regret"].to_numpy(dtype=np.float64)
        regret = np.where(np.isnan(regret), fill, regret)
        feasible = run["feasible"].to_numpy(dtype=bool)
        row: dict[str, object] = {
            "method": method,
            "seed": int(seed),
            "initial_hit": bool(n_init > 0 and regret[n_init - 1] <= 0),
            "final_regret": float(regret[-1]),
        }
        hours = run["gpu_hours"].to_numpy(dtype=np.float64) if cost else None
        for t in targets:
            tag = target_tag(t)
            hit = regret <= t * optimal_value
            event = bool(hit.any())
            first = int(hit.argmax()) if event else budget - 1
            row[f"evals_to_{tag}"] = float(first + 1)
            row[f"evals_to_{tag}_event"] = event
            if hours is not None:
                row[f"gpu_hours_to_{tag}"] = float(hours[first])
                row[f"gpu_hours_to_{tag}_event"] = event
        row["regret_auc"] = float(regret[n_init:].mean() / optimal_value)
        row["ooms"] = float((~feasible[n_init:]).sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    rank = {m: i for i, m in enumerate(order)}
    out = out.sort_values(
        ["method", "seed"], key=lambda c: c.map(rank) if c.name == "method" else c
    )
    return out.reset_index(drop=True)
