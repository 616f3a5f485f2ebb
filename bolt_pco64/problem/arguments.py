"""What a problem's constructor accepts: the argument types and their checks.

Each check raises an error that names the argument ("Expected ..., got
..."); :class:`~bolt_pco64.problem.PCO` runs them before it reads the table
(the bounds, which are the table's, after).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import pandas as pd

from bolt_pco64.instances import Instance, get_instance
from bolt_pco64.params import is_noise_std
from bolt_pco64.problem.oom import OOM_POLICIES
from bolt_pco64.tables.table import Table

__all__ = ["NoiseStd", "TableLike"]

#: A problem's ``table`` argument, a path (parquet or raw CSV), a DataFrame, a
#: loaded :class:`~bolt_pco64.tables.table.Table`, or ``None`` for the default source
#: order (:func:`~bolt_pco64.tables.table.load_table`).
TableLike = str | os.PathLike[str] | pd.DataFrame | Table | None
#: A problem's ``noise_std`` argument, ``None`` (noiseless), a standard
#: deviation, or ``"measured"`` (each row's own measured noise).
NoiseStd = float | Literal["measured"] | None


def _is_constraint_noise(value: object) -> bool:
    """None, a float >= 0, or a list of one (BoTorch's per-constraint form)."""
    if isinstance(value, list):
        return len(value) == 1 and _is_constraint_noise(value[0])
    return value != "measured" and is_noise_std(value)


def _resolve_instance(
    fixed: Instance | None,
    class_name: str,
    instance: str | Instance | None,
    table: object,
) -> Instance:
    """The instance a problem serves.

    Args:
        fixed: The instance the class fixes (``PCO64``'s), or ``None`` (``PCO``).
        class_name: The class's name, for the messages.
        instance: The ``instance`` argument.
        table: The ``table`` argument (a loaded table names its instance).

    Raises:
        TypeError: If neither the class, ``instance`` nor ``table`` names one.
        ValueError: If ``instance`` is not the one the class fixes, or no
            instance has that name.
    """
    if instance is None:
        if fixed is not None:
            return fixed
        if isinstance(table, Table):
            return table.instance
        raise TypeError(
            "Expected `instance` (a name such as 'pco64' or an Instance) or a "
            f"loaded Table, got neither: {class_name} serves any instance "
            "(PCO(instance='pco16'), PCO(instance=Instance(...), table=path))."
        )
    inst = get_instance(instance)
    if fixed is not None and inst != fixed:
        raise ValueError(
            f"Expected `instance` to be None or {fixed.name}, the instance "
            f"{class_name} serves, got {inst.name!r}."
        )
    return inst


def _check_options(
    noise_std: object, constraint_noise_std: object, oom: object
) -> None:
    """Check ``noise_std``, ``constraint_noise_std`` and ``oom``, in that order.

    Raises:
        ValueError: Naming the first that is invalid.
    """
    if not is_noise_std(noise_std):
        raise ValueError(
            "Expected `noise_std` to be None, a float >= 0 or 'measured', "
            f"got {noise_std!r}."
        )
    if not _is_constraint_noise(constraint_noise_std):
        raise ValueError(
            "Expected `constraint_noise_std` to be None, a float >= 0 or a "
            f"list of one, got {constraint_noise_std!r}."
        )
    if oom not in OOM_POLICIES:
        raise ValueError(
            f"Expected `oom` to be one of {tuple(OOM_POLICIES)}, got {oom!r}."
        )


def _check_bounds(
    bounds: Sequence[Sequence[float]] | None, own_bounds: list[tuple[float, ...]]
) -> None:
    """Check that ``bounds`` is ``None`` or the table's own bounds.

    Raises:
        ValueError: If it is neither.
    """
    if bounds is not None and [tuple(map(float, b)) for b in bounds] != own_bounds:
        raise ValueError(
            "Expected `bounds` to be None or the table's bounds "
            f"{own_bounds}, got {bounds!r}: the bounds are the bounding box "
            "of the configurations; restrict the search in the optimizer."
        )
