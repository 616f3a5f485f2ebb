"""The memory constraint as a torch module: ``c(X) <= 0`` iff feasible."""

from __future__ import annotations

import torch
from torch import Tensor

from bolt_pco64.problem.buffers import _frozen, _gather, _result_dtype
from bolt_pco64.problem.points import validate_points
from bolt_pco64.snap import RowSnapper
from bolt_pco64.tables.table import Table

__all__ = ["PCOOutcomeConstraint"]


class PCOOutcomeConstraint(torch.nn.Module):
    r"""The memory constraint as a callable module: ``c(X) <= 0`` iff feasible.

    ``c(X)`` is the ``peak_mem_normalised`` of the table row each point snaps to:
    negative for a run that fit in memory, the table's fixed positive pad for one
    that ran out of memory. This is BoTorch's outcome-constraint convention
    (feasible iff ``c <= 0``). The table is held as buffers, so ``.to(device)``
    moves the lookup with the module.

    Args:
        table: A validated :class:`~bolt_pco64.table.Table`.
    """

    bounds: Tensor
    margin_bits: Tensor

    def __init__(self, table: Table) -> None:
        super().__init__()
        self.columns: tuple[str, ...] = table.instance.input_columns
        self.snapper = RowSnapper(table.X)
        self.register_buffer("bounds", table.bounds.clone())
        self.register_buffer(
            "margin_bits", _frozen(table.column("peak_mem_normalised"))
        )

    def lookup(self, X: Tensor) -> Tensor:
        """Row indices (``batch_shape``-dim long tensor) of ``batch_shape x d`` points."""
        validate_points(X, self.bounds, self.columns)
        return self.snapper(X)

    def forward(self, X: Tensor) -> Tensor:
        """Memory margin of the snapped rows.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds.

        Returns:
            A ``batch_shape``-dim tensor (X's dtype and device; the bounds' dtype
            for integer ``X``): ``<= 0`` iff the configuration fits in memory.
        """
        rows = self.lookup(X)
        return _gather(self.margin_bits, rows, _result_dtype(X, self.bounds.dtype))
