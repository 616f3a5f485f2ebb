"""What a method proposes, and the evaluations it becomes.

A method returns one of

- **rows**: ``q`` distinct untried row indices (a long tensor or a sequence of
  ints), as the enumerating methods do; anything else (a tried row, a row out
  of range, a duplicate, the wrong count) ends the run with an error;
- **points**: a ``q x d`` floating tensor of points inside the problem's
  bounds, as a continuous BoTorch loop produces (``optimize_acqf`` over
  ``bounds``). The harness snaps each point with ``problem.lookup`` (nearest
  row, ties to the earliest row), as evaluating ``problem`` would. A point may
  snap to a row evaluated before in the run, or to the same row as an earlier
  point of its batch: that evaluation is a **repeat**.

Repeat policy (as a user of the snapping loop meets it): a repeat costs an
evaluation of the budget and its GPU-hours, like any other run of that
configuration, and returns the *same* observation as the row's first
evaluation (with noise too: the measurement is not redrawn). It is recorded
(``repeat`` is true) and counted in the summary (repeats per run); it never
improves the best feasible value.

Records keep what was proposed (``proposed_<input>`` columns): the point for
a point method, the row's own encoded inputs for a row method and for the
initial design. A record's ``row`` is always ``problem.lookup`` of its
proposed point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from bolt_pco64.problem import PCO64

__all__ = ["Proposal", "resolve_proposal"]


@dataclass(frozen=True)
class Proposal:
    """A method's proposal, resolved to table rows.

    Attributes:
        rows: The ``q`` row indices to evaluate, in order.
        points: ``q x d``-dim float64 tensor of the proposed points (for rows:
            the rows' encoded inputs).
        repeat: For each row, whether it was evaluated before in the run
            (earlier in this batch included).
        snapped: Whether the method returned points (``False``: rows).
    """

    rows: list[int]
    points: Tensor
    repeat: list[bool]
    snapped: bool


def resolve_proposal(
    proposed: object,
    problem: PCO64,
    candidates: Tensor,
    tried: Tensor,
    q: int,
    method: str,
) -> Proposal:
    """Turn a method's return value into the rows to evaluate.

    Args:
        proposed: What the method returned (rows or points, see the module
            docstring).
        problem: The run's problem (its ``lookup`` snaps points).
        candidates: ``N x d``-dim tensor of all configurations.
        tried: ``N``-dim bool tensor of the rows evaluated so far.
        q: How many evaluations were asked for.
        method: The method's name (for error messages).

    Returns:
        The :class:`Proposal`.

    Raises:
        ValueError: If ``proposed`` is neither ``q`` distinct untried rows nor a
            ``q x d`` floating tensor of finite points inside the bounds.
    """
    d = candidates.shape[-1]
    if isinstance(proposed, Tensor) and proposed.is_floating_point():
        if proposed.dim() != 2 or tuple(proposed.shape) != (q, d):
            raise ValueError(
                f"Expected method {method!r} to return integer row indices or a "
                f"{q} x {d} floating tensor of points, got {proposed.dtype} of "
                f"shape {tuple(proposed.shape)}."
            )
        points = proposed.detach().to(device="cpu", dtype=torch.float64)
        try:
            rows = [int(r) for r in problem.lookup(points).tolist()]
        except ValueError as err:
            raise ValueError(f"Method {method!r} proposed a bad point: {err}") from err
        seen = tried.clone()
        repeat = []
        for r in rows:
            repeat.append(bool(seen[r]))
            seen[r] = True
        return Proposal(rows, points, repeat, snapped=True)
    rows = _check_rows(proposed, tried, q, method)
    points = candidates[torch.tensor(rows, dtype=torch.long)].to(torch.float64)
    return Proposal(rows, points, [False] * len(rows), snapped=False)


def _check_rows(proposed: object, tried: Tensor, q: int, method: str) -> list[int]:
    try:
        idx = torch.as_tensor(proposed).reshape(-1)
    except Exception as err:
        raise ValueError(
            f"Expected method {method!r} to return row indices, got {type(proposed).__name__}."
        ) from err
    if idx.is_floating_point() or idx.is_complex() or idx.dtype == torch.bool:
        raise ValueError(
            f"Expected method {method!r} to return integer row indices, got {idx.dtype}."
        )
    new = [int(v) for v in idx.tolist()]
    if len(new) != q:
        raise ValueError(
            f"Expected method {method!r} to return {q} rows, got {len(new)}."
        )
    n = tried.numel()
    for r in new:
        if not 0 <= r < n or bool(tried[r]):
            raise ValueError(
                f"Expected method {method!r} to return untried rows in 0..{n - 1}, got {r}."
            )
    if len(set(new)) != len(new):
        raise ValueError(
            f"Expected method {method!r} to return distinct rows, got {new}."
        )
    return new
