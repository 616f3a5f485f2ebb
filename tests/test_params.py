"""The parameter checks of bolt_pco64.params, used by every module."""

from __future__ import annotations

import math
import re
from numbers import Integral, Real
from pathlib import Path

import pytest
import torch

from bolt_pco64.bench import BenchConfig, make_backend
from bolt_pco64.params import (
    Interval,
    check_batch_size,
    check_param,
    check_seeds,
    check_shape,
    is_noise_std,
)


@pytest.mark.parametrize(
    ("interval", "inside", "outside", "words"),
    [
        (Interval(Integral, 1, None), [1, 7], [0, 1.0, True, "2"], "an integer >= 1"),
        (Interval(Real, 0, 1, "neither"), [0.5, 1e-9], [0, 1, math.nan, True],
         "a number in (0, 1)"),
        (Interval(Real, 0, None), [0, 2.5], [-1e-9, math.inf], "a number >= 0"),
        (Interval(Integral, 1, 5), [1, 5], [0, 6], "an integer in [1, 5]"),
    ],
)  # fmt: skip
def test_an_interval_holds_its_numbers_and_says_which(
    interval: Interval, inside: list[object], outside: list[object], words: str
) -> None:
    assert all(v in interval for v in inside)
    assert not any(v in interval for v in outside)
    assert interval.describe() == words
    with pytest.raises(ValueError, match=r"^Expected budget to be .*, got 0\.$"):
        check_param("budget", 0, Interval(Integral, 1, None))


def test_every_module_refuses_a_bad_count_in_the_same_words() -> None:
    for refuse in (
        lambda: BenchConfig(budget=0).check(),
        lambda: make_backend(jobs=0),
    ):
        with pytest.raises(ValueError, match="to be an integer >= 1, got 0"):
            refuse()


def test_batch_size_and_shape_checks_name_what_is_wrong() -> None:
    check_batch_size(3, 3)
    for q in (0, 4, True):
        with pytest.raises(
            ValueError, match=r"Expected q to be an integer in \[1, 3\]"
        ):
            check_batch_size(q, 3)
    check_shape("X", torch.zeros(4, 8), ("n", 8))
    with pytest.raises(ValueError, match=r"Expected X of shape n x 8, got \(4, 7\)"):
        check_shape("X", torch.zeros(4, 7), ("n", 8))


def test_seeds_and_noise() -> None:
    assert check_seeds(3) == [0, 1, 2]
    assert check_seeds([5, 2]) == [5, 2]
    for bad in (0, [1, 1], [-1], []):
        with pytest.raises(ValueError, match="seeds"):
            check_seeds(bad)
    assert [is_noise_std(v) for v in (None, "measured", 0.0, 2)] == [True] * 4
    assert [is_noise_std(v) for v in (-1.0, math.nan, "x", True)] == [False] * 4


#: Integer checks that keep their own form, and why.
_OWN_FORM = {
    # A non-integer seed is a TypeError there (the generator's contract).
    "tables/simulate/generate.py",
}


def test_no_module_hand_rolls_an_integer_check() -> None:
    """Every scalar integer check goes through :func:`check_param` (one
    message form): no ``isinstance(x, bool) or not isinstance(x, int)``
    outside ``params.py``."""
    package = Path(__file__).resolve().parent.parent / "bolt_pco64"
    hand_rolled = re.compile(
        r"isinstance\(\w+, bool\) or not isinstance\(\w+, \(?int\b"
    )
    offenders = [
        f"{path.relative_to(package).as_posix()}:{n}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "params.py"
        and path.relative_to(package).as_posix() not in _OWN_FORM
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if hand_rolled.search(line)
    ]
    assert not offenders, offenders
