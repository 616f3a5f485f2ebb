"""The harness with methods that propose points of the box (issue 13)."""

from __future__ import annotations

import pytest
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench.proposals import resolve_proposal
from tests._synth import make_table


@pytest.fixture(scope="module")
def problem() -> PCO64:
    return PCO64(table=make_table(capacity=80.0))


def _tried(problem: PCO64, rows: list[int]) -> torch.Tensor:
    tried = torch.zeros(len(problem.table), dtype=torch.bool)
    tried[rows] = True
    return tried


def test_points_snap_with_the_problems_lookup_and_flag_repeats(
    problem: PCO64,
) -> None:
    cand = problem.candidates()
    tried = _tried(problem, [5])
    # Row 5 itself (tried), row 9 nudged off the lattice, row 9 again (same batch).
    lo, hi = problem.bounds
    points = torch.stack(
        [cand[5], (cand[9] + 0.2).clamp(lo, hi), (cand[9] - 0.1).clamp(lo, hi)]
    )
    p = resolve_proposal(points, problem, cand, tried, 3, "m")
    assert p.snapped
    assert p.rows == problem.lookup(points).tolist() == [5, 9, 9]
    assert p.repeat == [True, False, True]
    assert torch.equal(p.points, points.to(torch.float64))
    assert not tried[9]  # the caller's tried rows are left alone


def test_rows_keep_working_and_record_their_own_inputs(problem: PCO64) -> None:
    cand = problem.candidates()
    p = resolve_proposal(
        torch.tensor([3, 7]), problem, cand, _tried(problem, []), 2, "m"
    )
    assert not p.snapped
    assert p.rows == [3, 7]
    assert p.repeat == [False, False]
    assert torch.equal(p.points, cand[[3, 7]].to(torch.float64))
    # Rows must still be distinct and untried.
    with pytest.raises(ValueError, match="untried rows"):
        resolve_proposal([3], problem, cand, _tried(problem, [3]), 1, "m")
    with pytest.raises(ValueError, match="distinct rows"):
        resolve_proposal([4, 4], problem, cand, _tried(problem, []), 2, "m")


def test_float32_points_are_accepted(problem: PCO64) -> None:
    cand = problem.candidates()
    points = cand[[2]].to(torch.float32)
    p = resolve_proposal(points, problem, cand, _tried(problem, []), 1, "m")
    assert p.rows == [2]
    assert p.points.dtype == torch.float64


@pytest.mark.parametrize(
    ("points", "match"),
    [
        (torch.zeros(2, 8, dtype=torch.double), r"1 x 8 floating tensor of points"),
        (torch.zeros(8, dtype=torch.double), r"1 x 8 floating tensor of points"),
        (torch.full((1, 8), float("nan"), dtype=torch.double), "bad point"),
        (torch.full((1, 8), 100.0, dtype=torch.double), "bad point"),
        (torch.tensor([0.0]), "integer row indices"),
    ],
)
def test_bad_points_are_refused_naming_the_method(
    problem: PCO64, points: torch.Tensor, match: str
) -> None:
    cand = problem.candidates()
    with pytest.raises(ValueError, match=match) as err:
        resolve_proposal(points, problem, cand, _tried(problem, []), 1, "mine")
    assert "'mine'" in str(err.value)
