"""Candidate points checked before they snap: errors that name the input."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["validate_points"]


def validate_points(
    X: object, bounds: Tensor, columns: Sequence[str] | None = None
) -> Tensor:
    """Check candidate points and return them (as a tensor).

    Args:
        X: A ``batch_shape x d``-dim tensor, real or integer dtype.
        bounds: The ``2 x d``-dim bounds of the problem.
        columns: The ``d`` input names, used in error messages (a problem
            passes its instance's ``input_columns``); ``None`` names them
            ``input 0``, ``input 1``, ...

    Returns:
        ``X`` itself.

    Raises:
        TypeError: If ``X`` is not a tensor, or is boolean or complex.
        ValueError: If the last dimension is not ``d``, an entry is NaN/inf, or a
            point lies outside the bounds; the message names the first offending
            entry, its input and its exact value (``X[0, 0] = 6.000000001
            outside [1.0, 6.0] (log2_dp_size)``).
    """
    if not isinstance(X, Tensor):
        raise TypeError(f"Expected `X` to be a torch.Tensor, got {type(X).__name__}.")
    if X.dtype == torch.bool or X.is_complex():
        raise TypeError(f"Expected `X` with a real or integer dtype, got {X.dtype}.")
    d = bounds.shape[-1]
    names = list(columns) if columns is not None else [f"input {k}" for k in range(d)]
    if X.ndim == 0 or X.shape[-1] != d:
        raise ValueError(
            f"Expected `X` to have shape `batch_shape x {d}`, got {tuple(X.shape)}."
        )
    if X.numel() == 0:
        return X
    # Fast path, one pass: per-column min and max inside the bounds means every
    # entry is finite and inside them (a NaN makes both NaN and fails the test).
    low, high = torch.aminmax(X.detach().reshape(-1, d), dim=0)
    lo = bounds[0].to(device=X.device, dtype=torch.float64)
    hi = bounds[1].to(device=X.device, dtype=torch.float64)
    if bool(((low.to(torch.float64) >= lo) & (high.to(torch.float64) <= hi)).all()):
        return X
    x = X.detach()
    if x.is_floating_point():
        finite = torch.isfinite(x)
        if not bool(finite.all()):
            where = tuple(int(i) for i in (~finite).nonzero()[0])
            raise ValueError(
                f"Expected finite values in `X`, got X{list(where)} = "
                f"{x[where].item()!r} ({names[where[-1]]})."
            )
    x = x.to(torch.float64)
    outside = (x < lo) | (x > hi)
    if bool(outside.any()):
        where = tuple(int(i) for i in outside.nonzero()[0])
        k = where[-1]
        raise ValueError(
            "Expected `X` to be within the bounds of the test problem, got "
            f"X{list(where)} = {x[where].item()!r} outside [{lo[k].item()!r}, "
            f"{hi[k].item()!r}] ({names[k]})."
        )
    return X
