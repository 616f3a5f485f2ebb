"""What an out-of-memory configuration evaluates to: the ``oom=`` policies.

``"nan"`` (the default and the contract: NaN, a crash) keeps the column as
measured; ``"impute"`` (the anchor bolt-bench's rule) fills each row that
ran out of memory from its nearest rows that ran. A problem applies its
policy once, when it is built, to the columns it serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor

__all__ = ["OOM_POLICIES", "OOMPolicy"]

# The ``oom=`` values; public, and documented, as bolt_pco64.problem.OOMPolicy.
OOMPolicy = Literal["nan", "impute"]

#: Out-of-memory rows imputed per step (bounds the ``chunk x N`` distance block).
_IMPUTE_CHUNK = 1024


def _keep_nan(values: Tensor, X: Tensor, ran: Tensor) -> Tensor:
    """The ``"nan"`` policy: the column as measured (NaN where the row OOMed)."""
    return values


def _impute_nearest_feasible(values: Tensor, X: Tensor, ran: Tensor) -> Tensor:
    """The ``"impute"`` policy (the anchor bolt-bench's rule).

    Each row that did not run gets the mean of ``values`` over the rows that
    ran and lie nearest to it (Euclidean distance in the encoded space; all
    the equidistant nearest ones). Squared distances of integer rows are
    integers, exact in float64, so ties are found exactly.

    Args:
        values: An ``N``-dim float64 column.
        X: The ``N x d``-dim encoded rows.
        ran: An ``N``-dim bool tensor, True where the row ran (did not OOM).

    Returns:
        A new ``N``-dim float64 tensor, ``values`` where the row ran.
    """
    out = values.clone()
    oom = (~ran).nonzero().squeeze(-1)
    if oom.numel() == 0 or not bool(ran.any()):
        return out
    x = X.to(torch.float64)
    done, done_values = x[ran], values[ran]
    for start in range(0, oom.numel(), _IMPUTE_CHUNK):
        idx = oom[start : start + _IMPUTE_CHUNK]
        d2 = (x[idx].unsqueeze(-2) - done).square().sum(dim=-1)
        nearest = d2 == d2.amin(dim=-1, keepdim=True)
        total = torch.where(nearest, done_values, 0.0).sum(dim=-1)
        out[idx] = total / nearest.sum(dim=-1)
    return out


# Each policy's fill, by name; public, and documented, as
# bolt_pco64.problem.OOM_POLICIES.
OOM_POLICIES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "nan": _keep_nan,
    "impute": _impute_nearest_feasible,
}
