"""Parameter checks, written once (scikit-learn's ``validate_params`` / ``Interval`` model).

An :class:`Interval` states the allowed values of a number;
:func:`check_params` checks several arguments against their constraints and
raises the package's one message form, ``"Expected <name> to be <what>,
got <value>."``. The checks that recur across modules (seeds, a batch size
against the choices left, tensor shapes) are functions here, so every
module refuses bad input with the same words. Nothing heavy is imported: the
command line uses this module too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from torch import Tensor

__all__ = [
    "OPEN_UNIT",
    "POSITIVE_INT",
    "Interval",
    "check_batch_size",
    "check_param",
    "check_params",
    "check_seeds",
    "check_shape",
    "is_noise_std",
]


@dataclass(frozen=True)
class Interval:
    """The numbers of one type within bounds.

    Attributes:
        kind: ``Integral`` (an ``int``, never a ``bool``) or ``Real`` (a
            finite ``int`` or ``float``, never a ``bool``).
        left: The lower bound, ``None`` for none.
        right: The upper bound, ``None`` for none.
        closed: Which bounds belong to the interval.
    """

    kind: type[Integral] | type[Real]
    left: float | None = None
    right: float | None = None
    closed: Literal["left", "right", "both", "neither"] = "both"

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        v = float(value)  # type: ignore[arg-type]
        if not math.isfinite(v):
            return False
        if self.left is not None:
            inside = (
                v >= self.left if self.closed in ("left", "both") else v > self.left
            )
            if not inside:
                return False
        if self.right is not None:
            inside = (
                v <= self.right if self.closed in ("right", "both") else v < self.right
            )
            if not inside:
                return False
        return True

    def describe(self) -> str:
        """``"an integer >= 1"``, ``"a number in (0, 1)"``, ..."""
        noun = "an integer" if self.kind is Integral else "a number"
        lo, hi = self.left, self.right
        if lo is not None and hi is not None:
            a = "[" if self.closed in ("left", "both") else "("
            b = "]" if self.closed in ("right", "both") else ")"
            return f"{noun} in {a}{lo:g}, {hi:g}{b}"
        if lo is not None:
            op = ">=" if self.closed in ("left", "both") else ">"
            return f"{noun} {op} {lo:g}"
        if hi is not None:
            op = "<=" if self.closed in ("right", "both") else "<"
            return f"{noun} {op} {hi:g}"
        return noun


#: Counts (budgets, batch sizes, worker processes, resamples).
POSITIVE_INT = Interval(Integral, 1, None)
#: Probabilities and levels strictly between 0 and 1.
OPEN_UNIT = Interval(Real, 0, 1, closed="neither")


def is_noise_std(value: object) -> bool:
    """Whether ``value`` is a valid ``noise_std``: None, a float >= 0 or ``"measured"``."""
    return value is None or value == "measured" or value in Interval(Real, 0, None)


def check_param(name: str, value: object, constraint: Interval) -> None:
    """Raise ``ValueError("Expected <name> to be <constraint>, got <value>.")``
    unless ``value`` is in ``constraint``."""
    if value not in constraint:
        raise ValueError(
            f"Expected {name} to be {constraint.describe()}, got {value!r}."
        )


def check_params(
    values: Mapping[str, object], constraints: Mapping[str, Interval]
) -> None:
    """Check each named value against its constraint, in ``constraints``' order.

    Raises:
        ValueError: For the first value outside its constraint.
    """
    for name, constraint in constraints.items():
        check_param(name, values[name], constraint)


def check_seeds(seeds: int | Sequence[int]) -> list[int]:
    """A number ``N`` (seeds ``0..N-1``) or explicit distinct seeds ``>= 0``.

    Raises:
        TypeError: If ``seeds`` is a bool.
        ValueError: If ``N < 1`` or the seeds are empty, repeated or negative.
    """
    if isinstance(seeds, bool):
        raise TypeError(f"Expected an int or a sequence of ints, got {seeds!r}.")
    if isinstance(seeds, int):
        check_param("seeds", seeds, POSITIVE_INT)
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out or len(set(out)) != len(out) or min(out) < 0:
        raise ValueError(f"Expected distinct seeds >= 0, got {list(seeds)}.")
    return out


def check_batch_size(q: object, m: int) -> None:
    """A batch of ``q`` distinct picks among ``m`` choices: an integer ``1 <= q <= m``.

    Raises:
        ValueError: ``"Expected q to be an integer in [1, <m>], got <q>."``
    """
    check_param("q", q, Interval(Integral, 1, m))


def check_shape(name: str, tensor: Tensor, shape: Sequence[int | str]) -> None:
    """``tensor`` has ``shape``; a ``str`` entry (``"n"``, ``"d"``) is any size.

    Raises:
        ValueError: ``"Expected <name> of shape n x 8, got (3, 7)."``
    """
    got = tuple(tensor.shape)
    ok = len(got) == len(shape) and all(
        isinstance(s, str) or g == s for g, s in zip(got, shape, strict=True)
    )
    if not ok:
        want = " x ".join(str(s) for s in shape)
        raise ValueError(f"Expected {name} of shape {want}, got {got}.")
