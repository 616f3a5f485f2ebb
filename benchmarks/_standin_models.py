"""The models ``standin_fit.py`` scores on held-out visited rows.

Each is a :class:`Predictor`: fitted to training rows, it gives the
``ran_successfully``, ``peak_mem`` and ``throughput_mean`` of held-out rows
(:func:`models` lists them by name). Imported by ``standin_fit.py``
(``python benchmarks/<script>.py`` puts this folder on ``sys.path``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import _constants_fit as fit
import numpy as np
import pandas as pd

from bolt_pco64.instances import Instance, get_instance
from bolt_pco64.tables.simulate.calibrate import StandinModel, build_model
from bolt_pco64.tables.simulate.variants import READINGS, Variant
from bolt_pco64.tables.standins import STANDIN_VARIANTS
from bolt_pco64.tables.traces import visited_rows

#: Efficiency the step-time fit starts from (stand-in 2.1's fitted value).
START_EFFICIENCY = 0.59


def standin_rows(model: StandinModel, rows: pd.DataFrame) -> pd.DataFrame:
    """A calibrated stand-in model's values at the visited configurations."""
    inst = model.instance
    where = {c.encoded(inst): i for i, c in enumerate(model.configs)}
    keys = [f"x_{n}" for n in inst.input_columns]
    idx = np.array([where[tuple(int(v) for v in r)] for r in rows[keys].to_numpy()])
    feasible = model.feasible[idx]
    peaks = np.array([p.max() for p in model.peaks])[idx]
    return pd.DataFrame(
        {
            "ran_successfully": feasible,
            "peak_mem": np.where(feasible, peaks, np.inf),
            "throughput_mean": np.where(
                feasible, model.estimate.throughput[idx], np.nan
            ),
        },
        index=rows.index,
    )


class Predictor(Protocol):
    """A model of the measured rows, scored on held-out rows."""

    def __call__(self, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
        """The model fitted to ``train``: its ``ran_successfully``,
        ``peak_mem`` and ``throughput_mean`` at ``test`` (one row per row of
        ``test``, in its order)."""
        ...


class AsShipped:
    """A stand-in variant as 2.1 shipped it (calibrated to the card): fits
    nothing, so its table is built once and ``train`` is not read.

    Args:
        instance: The instance.
        variant: The shipped reading with its 2.1 constants.
    """

    def __init__(self, instance: Instance, variant: Variant) -> None:
        self.instance = instance
        self.variant = variant

    @cached_property
    def model(self) -> StandinModel:
        """The calibrated stand-in (built on first use)."""
        return build_model(self.instance, 0, self.variant)

    def __call__(self, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
        return standin_rows(self.model, test)


@dataclass(frozen=True)
class StepTimeFitted:
    """A variant's step-time constants fitted to ``train``, calibrated to the
    card as the generator does: what 3.0 ships."""

    instance: Instance
    variant: Variant

    def __call__(self, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
        fitted = fit.fit_variant(
            self.instance,
            self.variant,
            train,
            efficiency=START_EFFICIENCY,
            memory=False,
        )
        return standin_rows(build_model(self.instance, 0, fitted.variant), test)


@dataclass(frozen=True)
class FullFit:
    """A reading with every constant fitted to ``train`` (memory, overhead,
    capacity, step time, efficiency), predicted without the card."""

    instance: Instance
    reading: Variant

    def __call__(self, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
        fitted = fit.fit_variant(
            self.instance, self.reading, train, efficiency=START_EFFICIENCY
        )
        return fit.predict(self.instance, fitted, test)


def models(instance: str) -> dict[str, Predictor]:
    """The models compared, by name, in the order of ``folds.csv``: each
    variant as 2.1 shipped it, as 3.0 ships it, then the full fit of the
    traces' reading and of each shipped one."""
    inst = get_instance(instance)
    shipped = READINGS[inst.name]
    out: dict[str, Predictor] = {
        f"2.1 {v} (as shipped)": AsShipped(inst, shipped[v])
        for v in STANDIN_VARIANTS[inst.name]
    }
    for name, v in shipped.items():
        out[f"3.0 {name} (step time fitted, card-calibrated)"] = StepTimeFitted(inst, v)
    readings = {"traces": fit.TRACE_READINGS[inst.name], **shipped}
    for name, reading in readings.items():
        out[f"3.0 fit, {name} reading"] = FullFit(inst, reading)
    return out


def knob_columns(instance: Instance) -> list[str]:
    """The raw columns that name a configuration (the records' row key)."""
    return [*instance.input_columns, *instance.context_columns]


def steptime_constants(instance: str) -> str:
    """The step-time constants of each shipped variant fitted to every visited row."""
    inst = get_instance(instance)
    rows = visited_rows(inst)
    lines = []
    for name, v in READINGS[inst.name].items():
        fitted = fit.fit_variant(
            inst, v, rows, efficiency=START_EFFICIENCY, memory=False
        )
        values = fit.steptime_vector(
            fitted.variant.assumptions, fitted.variant.constants, fitted.efficiency
        )
        named = {
            n: float(f"{x:.4g}")
            for (n, _, _), x in zip(fit.STEPTIME_CONSTANTS, values, strict=False)
        }
        lines.append(f"{inst.name} {name}: {named}")
    return "\n".join(lines)
