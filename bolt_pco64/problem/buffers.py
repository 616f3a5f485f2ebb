"""The table's columns held exactly as buffers; every output a new tensor.

A problem and its outcome constraint hold the columns they serve as torch
buffers (so ``.to(device)`` moves them with the module). ``_frozen``
keeps a column's float64 values exact whatever dtype the module is moved
to, and ``_gather`` is the one place a value becomes an output, a new
tensor in the dtype ``_result_dtype`` gives.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__: list[str] = []


def _frozen(values: Tensor) -> Tensor:
    """Float64 values stored as their int64 bit pattern.

    ``Module.to(dtype)`` converts floating buffers; the table's values must stay
    exact whatever dtype the problem is moved to, so they are kept as integers
    and viewed back as float64 when read.
    """
    return values.to(torch.float64).contiguous().view(torch.int64)


def _result_dtype(X: Tensor, default: torch.dtype) -> torch.dtype:
    return X.dtype if X.is_floating_point() else default


def _gather(bits: Tensor, rows: Tensor, dtype: torch.dtype) -> Tensor:
    """Values of a float64 column stored as ``bits`` at ``rows``: a new tensor.

    The one place a table value becomes an output. ``index_select`` always
    allocates, whatever ``rows``' shape (a 0-dim index would make ``bits[rows]``
    a *view* of the buffer), and the result is converted afterwards, so no
    output ever shares storage with a buffer: BoTorch's ``forward`` adds noise
    and negates in place, and a view would corrupt the table.

    Args:
        bits: An ``N``-dim int64 buffer holding float64 bit patterns.
        rows: A ``batch_shape``-dim long tensor of row indices.
        dtype: The floating dtype of the result.

    Returns:
        A ``batch_shape``-dim tensor of ``dtype`` on ``rows``' device.
    """
    flat = torch.index_select(bits.view(torch.float64), 0, rows.reshape(-1))
    return flat.to(dtype).reshape(rows.shape)
