"""Nearest-row lookup ("snapping") of points onto the table's configurations.

The rule (docs/architecture.md §2): each point snaps to the table row nearest to it by
Euclidean distance in the encoded input space, ties going to the earliest row in
canonical order. Distances are those of the float64 value of the point,
``sum_k (x_k - t_k) ** 2`` evaluated in float64 -- :func:`nearest_rows_reference`
is that rule written as a full ``n x N`` distance matrix, and
:class:`RowSnapper` returns identical indices without ever building it:

1. **Lattice fast path.** Table rows are integer points, and canonical order is
   lexicographic order, so a mixed-radix integer key of a row is sorted exactly
   like the rows. Each point is rounded coordinate-wise (halves round *down*)
   and its key is found by one gather from a dense ``key -> row`` table (or,
   for a very large bounding box, by binary search). When the
   rounded point is a row, it is the nearest row: every other lattice point is
   at least as far in every coordinate, and one that ties (a coordinate exactly
   half-way) is later in canonical order. Points whose coordinates are within
   ``1e-6`` of a half-way value without being on it go to the exact path, so
   that float rounding in the reference can never disagree.
2. **Chunked exact path.** The remaining points are processed in chunks whose
   ``chunk x N`` distance block stays under a fixed memory budget. Squared
   distances are computed with one matrix product (``|t|^2 - 2 x.t``), in
   float32 where the table's values are small enough for a float32 block to
   decide most points (:data:`FLOAT32_GAP_MAX`), else in float64; where the two
   smallest are separated by more than the product's error bound the argmin is
   certain, and the few rows where they are not are recomputed with the
   reference formula in float64, which settles ties by canonical order.

Memory is bounded by the chunk sizes, not by ``n x N``; everything runs on the
device of ``X``. :meth:`RowSnapper.nearest` also counts, in the same pass, the points
that were not configurations themselves and those that snapped far (more than one
lattice step from their rounded point); :class:`~bolt_pco64.problem.PCO` adds them to
its :class:`~bolt_pco64.problem.SnapCounts`.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["FAR_SNAP_DISTANCE", "RowSnapper", "Snap", "nearest_rows_reference"]

#: Points handled per step of the lattice fast path (its ``chunk x d`` temporaries
#: stay in cache: 1 << 16 was fastest of 1 << 12 ... 1 << 18 on CPU).
LATTICE_CHUNK = 1 << 16
#: Largest lattice box (product of the per-column ranges) for which the key
#: lookup is one gather from a dense ``key -> row`` table instead of a binary
#: search (8 MB of int64 at most; the published table's box has 29,160 keys).
DENSE_KEYS_MAX = 1 << 20
#: Bytes allowed for one ``chunk x N`` float64 distance block of the exact path
#: (a float32 block takes as many points, in half the bytes).
DISTANCE_BLOCK_BYTES = 1 << 23
#: Distance of a coordinate to a half-way value below which a point is "ambiguous".
HALF_MARGIN = 1e-6
#: Euclidean distance (encoded space) from the lattice point a point rounds to, to
#: the row it snaps to, beyond which the snap counts as far: one lattice step (a
#: real point rounding to a row, or next to one, is not far).
FAR_SNAP_DISTANCE = 1.0
#: Gap between the two smallest approximate squared distances that decides the
#: argmin for certain (the product's rounding error is below 1e-10 for the
#: coordinate ranges a table can have, see ``MAX_LOG2`` in :mod:`bolt_pco64.tables.table`).
GAP_TOLERANCE = 1e-6
#: Largest float32 gap tolerance for which the exact path computes its blocks in
#: float32 (about 1 % of uniform points in pco64's bounds fall within its 2.2e-3
#: and are recomputed; float32 halves the block's memory traffic).
FLOAT32_GAP_MAX = 1e-2


def _float32_gap(rows: Tensor) -> float:
    """A bound, doubled, on the float32 rounding error of ``|t|^2 - 2 x.t``.

    For integer rows ``t`` and points ``x`` inside their bounding box, with
    ``m_k`` the largest magnitude of column ``k``: ``|t|^2 <= sum m_k^2`` and
    ``sum |x_k t_k| <= sum m_k^2``, so each entry is a sum of ``d + 1`` terms of
    total magnitude at most ``S = 3 sum m_k^2``, and rounding ``x`` to float32
    adds at most ``2 sum |t_k| |x_k| 2^-24``. Each entry is then within
    ``(d + 2) 2^-24 S`` of its exact value; two entries whose float32 values
    differ by more than twice that (times a safety factor of 4) are ordered
    as their exact values.
    """
    m = rows.abs().amax(dim=0).to(torch.float64)
    scale = 3.0 * float(m.square().sum())
    return 8.0 * (rows.shape[1] + 2) * 2.0**-24 * scale


def nearest_rows_reference(X: Tensor, table: Tensor) -> Tensor:
    """The snapping rule written out with the full distance matrix.

    Args:
        X: A ``n x d``-dim tensor of points.
        table: A ``N x d``-dim tensor of table rows in canonical order.

    Returns:
        A ``n``-dim long tensor: for each point, the index of the nearest row by
        ``sum_k (x_k - t_k) ** 2`` in float64; the earliest row on a tie.
    """
    x = X.to(torch.float64)
    t = table.to(device=x.device, dtype=torch.float64)
    d2 = (x.unsqueeze(-2) - t).square().sum(dim=-1)
    return d2.argmin(dim=-1)


class RowSnapper(torch.nn.Module):
    """Maps points to the indices of their nearest table rows (see module docstring).

    The table is held as int64 buffers (``.to(device)`` moves them; a dtype
    change leaves them exact).

    Args:
        table: A ``N x d``-dim tensor of integer-valued rows, distinct and sorted
            lexicographically ascending (canonical order).
    """

    rows: Tensor
    keys: Tensor
    low: Tensor
    high: Tensor
    radix_weights: Tensor
    dense_rows: Tensor | None

    def __init__(self, table: Tensor) -> None:
        super().__init__()
        if table.ndim != 2 or table.shape[0] == 0:
            raise ValueError(
                f"Expected a non-empty `N x d` table, got shape {tuple(table.shape)}."
            )
        if not torch.equal(table, table.round()):
            raise ValueError("Expected integer-valued table rows.")
        rows = table.to(torch.int64)
        low = rows.min(dim=0).values
        high = rows.max(dim=0).values
        radix = high - low + 1
        weights = torch.ones_like(radix)
        for k in range(rows.shape[1] - 2, -1, -1):
            weights[k] = weights[k + 1] * radix[k + 1]
        keys = ((rows - low) * weights).sum(dim=-1)
        if not bool((keys[1:] > keys[:-1]).all()):
            raise ValueError(
                "Expected distinct rows in canonical (lexicographic) order."
            )
        self.register_buffer("rows", rows)
        self.register_buffer("keys", keys)
        self.register_buffer("low", low)
        self.register_buffer("high", high)
        self.register_buffer("radix_weights", weights)
        box = int((radix.to(torch.float64)).prod())
        dense = None
        if box <= DENSE_KEYS_MAX:
            dense = torch.full((box,), -1, dtype=torch.int64)
            dense[keys] = torch.arange(rows.shape[0])
        # Derived from ``keys``: moves with the module, not part of its state.
        self.register_buffer("dense_rows", dense, persistent=False)
        gap = _float32_gap(rows)
        #: The exact path's block dtype and the gap that decides its argmin.
        self.block_dtype = torch.float32 if gap <= FLOAT32_GAP_MAX else torch.float64
        self.gap = gap if gap <= FLOAT32_GAP_MAX else GAP_TOLERANCE

    @property
    def num_rows(self) -> int:
        return int(self.rows.shape[0])

    def forward(self, X: Tensor) -> Tensor:
        """Snap points to rows.

        Args:
            X: A ``batch_shape x d``-dim tensor (any real dtype; validated by the
                caller: finite, inside the table's bounding box).

        Returns:
            A ``batch_shape``-dim long tensor of row indices, on ``X``'s device.
        """
        return self.nearest(X).rows

    def nearest(self, X: Tensor) -> Snap:
        """Snap points to rows, counting the points moved and those snapped far.

        Args:
            X: A ``batch_shape x d``-dim tensor, as for :meth:`forward`.

        Returns:
            A :class:`Snap`: the ``batch_shape``-dim long row indices (on ``X``'s
            device), how many points were not a row themselves (``moved``), and
            how many of those lay more than one lattice step from their row,
            measured from the lattice point they round to (``far``).
        """
        d = self.rows.shape[1]
        flat = X.detach().reshape(-1, d)
        out = torch.empty(flat.shape[0], dtype=torch.int64, device=X.device)
        moved = far = 0
        for start in range(0, flat.shape[0], LATTICE_CHUNK):
            stop = min(start + LATTICE_CHUNK, flat.shape[0])
            x = flat[start:stop].to(torch.float64)
            rows, chunk_moved, chunk_far = self._snap_chunk(x)
            out[start:stop] = rows
            moved += chunk_moved
            far += chunk_far
        return Snap(out.reshape(X.shape[:-1]), moved, far)

    def _snap_chunk(self, x: Tensor) -> tuple[Tensor, int, int]:
        rounded = (x - 0.5).ceil_()
        # A no-op inside the bounding box; outside it (a caller that did not
        # validate), it keeps the key from aliasing another row: such a point is
        # then more than 0.5 from ``rounded`` and goes to the exact path.
        low = self.low.to(torch.float64)
        torch.maximum(rounded, low, out=rounded)
        torch.minimum(rounded, self.high.to(torch.float64), out=rounded)
        offset = torch.sub(x, rounded).abs_()
        # Keys are below 2**53 (see MAX_LOG2), so this product is exact in float64.
        key = rounded @ self.radix_weights.to(torch.float64)
        key -= float((self.low * self.radix_weights).sum())
        if self.dense_rows is not None:
            index = key.to(torch.int64).clamp_(0, self.dense_rows.shape[0] - 1)
            pos = self.dense_rows[index]
            hit = pos >= 0
            pos.clamp_(min=0)
        else:
            keys = self.keys.to(torch.float64)
            pos = torch.searchsorted(keys, key).clamp_(max=self.num_rows - 1)
            hit = keys[pos] == key
        # Most points are clear of every half-way value: one max decides them
        # (NaN-safe: a NaN offset is "not clear" and gets the full check).
        largest = offset.amax(dim=-1)
        check = (hit & ~(largest < 0.5 - HALF_MARGIN)).nonzero().squeeze(-1)
        if check.numel():
            near = offset[check]
            clear = ((near < 0.5 - HALF_MARGIN) | (near == 0.5)).all(dim=-1)
            hit[check] = clear
        # A point is a row itself iff it rounds onto one at offset 0.
        moved = x.shape[0] - int((hit & (largest == 0)).sum())
        if bool(hit.all()):
            return pos, moved, 0
        miss = (~hit).nonzero().squeeze(-1)
        found = self._nearest_exact(x[miss])
        pos[miss] = found
        # Integer points: the squared lattice distance is exact.
        steps = (rounded[miss] - self.rows[found].to(torch.float64)).square_()
        far = int((steps.sum(dim=-1) > FAR_SNAP_DISTANCE**2).sum())
        return pos, moved, far

    def _nearest_exact(self, x: Tensor) -> Tensor:
        """Exact nearest rows of ``n x d`` float64 points, in bounded-memory chunks.

        Blocks in :attr:`block_dtype`; points whose two nearest rows are
        within :attr:`gap` there go through float64 blocks, and those still
        undecided (near-ties) through the reference.
        """
        return self._nearest_blocks(x, self.block_dtype, self.gap)

    def _nearest_blocks(self, x: Tensor, dtype: torch.dtype, gap: float) -> Tensor:
        """The argmin of each ``chunk x N`` block of ``|t|^2 - 2 x.t`` in
        ``dtype``, where it leads the runner-up by more than ``gap``.

        The argmin of a block is NumPy's on the CPU (vectorised, about ten times
        torch's there), torch's elsewhere.
        """
        n_rows = self.num_rows
        out = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
        if n_rows == 1 or x.shape[0] == 0:
            return out
        exact = self.rows.to(torch.float64)
        table = exact.to(dtype)
        norms = table.square().sum(dim=-1)
        minus_two_t = -2.0 * table.T
        step = max(1, DISTANCE_BLOCK_BYTES // (8 * n_rows))
        buffer = torch.empty(
            min(step, x.shape[0]), n_rows, dtype=dtype, device=x.device
        )
        on_cpu = x.device.type == "cpu"
        unsure = torch.empty(x.shape[0], dtype=torch.bool, device=x.device)
        for start in range(0, x.shape[0], step):
            block = x[start : start + step]
            approx = buffer[: block.shape[0]]
            torch.addmm(norms, block.to(dtype), minus_two_t, out=approx)
            if on_cpu:
                idx = torch.from_numpy(approx.numpy().argmin(axis=-1))
            else:
                idx = approx.argmin(dim=-1)
            where = idx.unsqueeze(-1)
            best = approx.gather(1, where).squeeze(-1)
            approx.scatter_(1, where, float("inf"))
            second = approx.amin(dim=-1)
            torch.le(second - best, gap, out=unsure[start : start + len(idx)])
            out[start : start + block.shape[0]] = idx
        which = unsure.nonzero().squeeze(-1)
        if which.numel() == 0:
            return out
        if dtype != torch.float64:
            out[which] = self._nearest_blocks(x[which], torch.float64, GAP_TOLERANCE)
            return out
        # Near-ties: the reference, its ``n x N x d`` tensor within the budget.
        step = max(1, step // self.rows.shape[1])
        for start in range(0, which.numel(), step):
            chunk = which[start : start + step]
            out[chunk] = nearest_rows_reference(x[chunk], exact)
        return out


class Snap(NamedTuple):
    """What :meth:`RowSnapper.nearest` returns.

    Attributes:
        rows: A ``batch_shape``-dim long tensor of row indices.
        moved: How many points were not a row themselves.
        far: How many points snapped more than one lattice step away from the
            lattice point they round to.
    """

    rows: Tensor
    moved: int
    far: int
