"""The problem an adapter serves and how its configurations are named.

:func:`get_problem` (the one problem factory), :func:`knob_levels` and
:class:`Parameters` (a configuration as framework parameters, on the
``"raw"`` or ``"encoded"`` scale, and the table row it snaps to).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Literal, get_args

import torch

from bolt_pco64.instances import InputSpec, Instance, get_instance
from bolt_pco64.params import Interval, check_param
from bolt_pco64.problem import PCO, TableLike, problem_class

__all__ = [
    "CONSTRAINT_NAME",
    "OBJECTIVE_NAME",
    "ParameterScale",
    "Parameters",
    "get_problem",
    "knob_levels",
]

#: The objective (maximised), the card's column.
OBJECTIVE_NAME = "throughput_mean"
#: The constraint, the card's column; a run fits in memory iff it is ``<= 0``.
CONSTRAINT_NAME = "peak_mem_normalised"


def get_problem(
    instance: str | Instance | PCO = "pco64", table: TableLike = None
) -> PCO:
    """The BoTorch problem an adapter serves: the one problem factory.

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"``, an
            :class:`~bolt_pco64.instances.Instance`, or a problem, returned as
            it is.
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources);
            must be ``None`` when ``instance`` is a problem.

    Raises:
        ValueError: For an unknown instance, or a problem given with a table.
    """
    if isinstance(instance, PCO):
        if table is not None:
            raise ValueError(
                "Expected no `table` with a problem (it serves its own), got "
                f"{type(table).__name__}."
            )
        return instance
    inst = get_instance(instance)
    return problem_class(inst)(instance=inst, table=table)


def knob_levels(problem: PCO) -> dict[str, tuple[int, ...]]:
    """The raw levels of each knob found in ``problem``'s loaded table.

    Returns:
        A dict from input column name (in the order of the problem's ``X``) to
        its distinct raw values, sorted ascending (``zero_stage`` holds raw
        stages such as 0/2/3, not their ordinal codes).
    """
    frame = problem.table.frame
    return {
        spec.name: tuple(sorted({int(v) for v in frame[spec.name]}))
        for spec in problem.instance.inputs
    }


# -- parameters -------------------------------------------------------------------

#: The values a framework parameter takes, ``"raw"``, the table's own (a log2
#: knob its exponent, ``zero_stage`` its stage 0/2/3), or ``"encoded"``, the
#: BoTorch problem's ``X`` (``zero_stage`` its index 0..2 into the stages).
ParameterScale = Literal["raw", "encoded"]


def _raw_value(spec: InputSpec, value: object) -> int:
    """The raw integer level of one knob's value, checked."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    if not float(value).is_integer():
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    raw = int(value)
    if spec.encoding == "ordinal" and raw not in spec.levels:
        raise ValueError(
            f"Expected a value of {list(spec.levels)} for knob {spec.name!r}, got {raw}."
        )
    return raw


class Parameters:
    """How a configuration is named as framework parameters, and its table row.

    One integer parameter per knob, named after its input column, in ``X``
    order. On the ``"raw"`` scale (the default; Ax's) a value is the table's
    own (``zero_stage`` its raw stage); on the ``"encoded"`` scale (Optuna's,
    whose integer parameters are contiguous ranges) it is the BoTorch
    problem's ``X`` (``zero_stage`` its index into the stages) within the
    problem's bounds. Either way a configuration snaps to the nearest table
    row by :meth:`~bolt_pco64.problem.PCO.lookup`, as in the BoTorch problem.
    Extra keys are ignored.

    Args:
        problem: The BoTorch problem whose table is served.
        scale: ``"raw"`` or ``"encoded"`` (:data:`ParameterScale`).

    Raises:
        ValueError: For an unknown scale.
    """

    def __init__(self, problem: PCO, scale: ParameterScale = "raw") -> None:
        if scale not in get_args(ParameterScale):
            raise ValueError(
                f"Expected `scale` in {get_args(ParameterScale)}, got {scale!r}."
            )
        self.problem = problem
        self.scale: ParameterScale = scale
        self.specs: tuple[InputSpec, ...] = problem.instance.inputs
        bounds = problem.bounds.to(torch.int64).tolist()
        #: Per knob, the encoded ``(low, high)`` of the problem's bounds.
        self._bounds = {
            s.name: (bounds[0][j], bounds[1][j]) for j, s in enumerate(self.specs)
        }
        self._candidates: list[list[int]] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The parameters' names (the input columns, in ``X`` order)."""
        return tuple(s.name for s in self.specs)

    @property
    def bounds(self) -> dict[str, tuple[int, int]]:
        """Per parameter, the ``(low, high)`` of the problem's bounds on this scale."""
        if self.scale == "encoded":
            return dict(self._bounds)
        return {
            s.name: (s.decode(lo), s.decode(hi))
            for s, (lo, hi) in zip(self.specs, self._bounds.values(), strict=True)
        }

    def levels(self) -> dict[str, tuple[int, ...]]:
        """Per parameter, the values the loaded table holds on this scale, ascending."""
        raw = knob_levels(self.problem)
        if self.scale == "raw":
            return raw
        return {s.name: tuple(s.encode(v) for v in raw[s.name]) for s in self.specs}

    def encode(self, params: Mapping[str, object]) -> list[float]:
        """The encoded ``d`` inputs (the problem's ``X``) of one configuration.

        Raises:
            ValueError: If a knob has no value or a value that is not an
                integer of its scale (a raw ordinal value not one of its
                levels; an encoded value outside the problem's bounds).
        """
        missing = [s.name for s in self.specs if s.name not in params]
        if missing:
            raise ValueError(
                f"Expected a value for every knob, got none for {missing} in {dict(params)}."
            )
        if self.scale == "raw":
            return [float(s.encode(_raw_value(s, params[s.name]))) for s in self.specs]
        point = []
        for s in self.specs:
            value = params[s.name]
            check_param(
                s.name, value, Interval(numbers.Integral, *self._bounds[s.name])
            )
            point.append(float(value))  # type: ignore[arg-type]
        return point

    def row(self, params: Mapping[str, object]) -> int:
        """The canonical index of the table row one configuration snaps to."""
        x = torch.tensor([self.encode(params)], dtype=torch.float64)
        return int(self.problem.lookup(x)[0])

    def of_row(self, row: int) -> dict[str, int]:
        """The configuration of table row ``row``, by name, on this scale."""
        if self._candidates is None:
            self._candidates = self.problem.candidates().to(torch.int64).tolist()
        encoded = self._candidates[row]
        if self.scale == "encoded":
            return dict(zip(self.names, encoded, strict=True))
        return {s.name: s.decode(v) for s, v in zip(self.specs, encoded, strict=True)}
