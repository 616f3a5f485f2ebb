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

    Like a BoTorch problem's ``forward``, a call adds the observation noise
    (:attr:`noise_std`, the problem's ``constraint_noise_std``) unless
    ``noise=False``: ``c(X) = -f.evaluate_slack(X)``, draw for draw.

    Args:
        table: A validated :class:`~bolt_pco64.tables.table.Table`.
        noise_std: ``None`` (noiseless) or the standard deviation of the
            Gaussian noise a call adds.

    Attributes:
        noise_std (float | None): The noise's standard deviation (the problem
            sets it with its ``constraint_noise_std``).
    """

    bounds: Tensor
    margin_bits: Tensor

    def __init__(self, table: Table, noise_std: float | None = None) -> None:
        super().__init__()
        self.columns: tuple[str, ...] = table.instance.input_columns
        self.noise_std = noise_std
        self.snapper = RowSnapper(table.X)
        self.register_buffer("bounds", table.bounds.clone())
        self.register_buffer(
            "margin_bits", _frozen(table.column("peak_mem_normalised"))
        )

    def lookup(self, X: Tensor) -> Tensor:
        """Row indices (``batch_shape``-dim long tensor) of ``batch_shape x d`` points."""
        validate_points(X, self.bounds, self.columns)
        return self.snapper(X)

    def forward(self, X: Tensor, noise: bool = True) -> Tensor:
        """Memory margin of the snapped rows.

        Args:
            X: A ``batch_shape x d``-dim tensor of points inside the bounds
                (any real values: each snaps to its nearest configuration).
            noise: If True, subtract ``noise_std`` times standard Gaussian noise
                (the global torch generator, as in BoTorch: seed it with
                ``torch.manual_seed``), so that ``c(X)`` is minus BoTorch's
                noisy slack.

        Returns:
            A ``batch_shape``-dim tensor (X's dtype and device; the bounds' dtype
            for integer ``X``): ``<= 0`` iff the configuration fits in memory.
        """
        margin = self.margin(self.lookup(X), _result_dtype(X, self.bounds.dtype))
        if noise and self.noise_std is not None:
            margin -= self.noise_std * torch.randn_like(margin)
        return margin

    def margin(self, rows: Tensor, dtype: torch.dtype) -> Tensor:
        """The noiseless margin of rows (a ``batch_shape``-dim long tensor), a
        new tensor of ``dtype``."""
        return _gather(self.margin_bits, rows, dtype)
