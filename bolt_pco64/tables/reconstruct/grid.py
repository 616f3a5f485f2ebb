"""The rows of a reconstructed table: the grid, as the traces show it.

pco64's card calls its 780 rows "the full candidate set", and exactly 780
configurations keep the hard rules of
:meth:`~bolt_pco64.instances.Instance.rule_violation` in its bounds: its rows are
that grid. pco32's and pco16's published sweeps have fewer rows (379 and 919)
than their grids (432 and 960), so which configurations are rows is inferred,
from each instance's own traces, by :func:`reconstruction_grid`:

1. **Row indices.** The published random search drew row *indices* of the
   measured table, in its canonical order; replaying the harness
   (:func:`bolt_pco64.tables.reconstruct.replay.replay`) names the index of every
   configuration it drew. The rows between two visited indices ``a < b`` are
   ``b - a - 1`` configurations lying, in canonical order, strictly between
   the two visited ones. Where the grid holds exactly that many there, they
   are the rows (``"pinned"``); where it holds none between two consecutive
   indices, none of them is a row.
2. **Layouts the sweep left out.** A gap that holds more grid configurations
   than rows is narrowed by the pipeline layouts (``(pp, chunks)``) the
   indices show absent: a layout with no row among the visited and pinned
   ones and at least one configuration that rule 1 excludes is not in the
   sweep (``"layout"``: the remaining candidates fill the gap).
3. **What stays open is ranked.** A gap still holding more candidates than
   rows keeps the candidates a trace visited (with any other method), then
   the candidates whose layout has the largest share of rows among the
   configurations rules 1-2 settle (the chance that the sweep kept such a
   configuration), ties drawn with :data:`GRID_SEED` (``"drawn"``): which of
   equally likely candidates the sweep lost, the traces cannot tell.

Without replayable random-search traces (no row indices), rule 2 runs on
layouts no trace visited (a layout of ``m`` rows escapes ``n`` uniform draws
with probability ``(1 - m / rows) ** n``) and rule 3 on the whole unvisited
grid. Rows no trace visited are *inferred* where the grid is (pco32, pco16);
pco64's are not (its card fixes its rows). :attr:`ReconstructionGrid.how`
says, per row, which rule put it there.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bolt_pco64.instances import Instance

__all__ = [
    "GRID_REASONS",
    "GRID_SEED",
    "ReconstructionGrid",
    "full_grid",
    "reconstruction_grid",
]

#: Seed of the draw of the runs lost from a sweep (rule 3).
GRID_SEED = 27379919
#: Why a configuration is a row (:attr:`ReconstructionGrid.how`).
GRID_REASONS: Mapping[str, str] = {
    "visited": "a trace evaluated it",
    "grid": "the grid holds exactly the published row count (the card's rows)",
    "pinned": "the only grid configuration(s) between two replayed row indices",
    "layout": "the only candidates between two replayed row indices once the "
    "layouts the indices show absent are dropped",
    "evidence": "a candidate between two replayed row indices that an "
    "out-of-memory neighbour mean shows ran",
    "drawn": "ranked (its layout's share of settled rows; ties drawn with "
    "GRID_SEED) among more candidates than rows in its gap",
}


@dataclass(frozen=True)
class ReconstructionGrid:
    """The rows of a reconstruction and how they were found.

    Attributes:
        X: ``N x d`` int64 array, the encoded configurations, canonical order.
        visited: ``N`` bools: a trace visited the configuration.
        inferred: ``N`` bools: the row's existence is inferred (unvisited, in a
            grid that the published row count does not fix).
        how: ``N`` strings, the key of :data:`GRID_REASONS` that put the row in.
        dropped_layouts: The ``(pp, chunks)`` layouts (raw sizes) rule 2 dropped.
        dropped_at_random: Candidates rule 3 left out.
        indexed: Rows whose index a replayed random-search trace names.
        open: ``M x d`` candidates of the gaps rule 3 decided (kept or not).
    """

    X: np.ndarray
    visited: np.ndarray
    inferred: np.ndarray
    how: np.ndarray
    dropped_layouts: tuple[tuple[int, int], ...]
    dropped_at_random: int
    indexed: int = 0
    open: np.ndarray | None = None

    def describe(self) -> str:
        """One line: the rule's outcome."""
        layouts = ", ".join(f"pp {p} x {c} chunks" for p, c in self.dropped_layouts)
        counts = ", ".join(
            f"{k} {int((self.how == k).sum())}"
            for k in GRID_REASONS
            if (self.how == k).any()
        )
        return (
            f"{len(self.X)} rows ({int(self.visited.sum())} visited, "
            f"{int(self.inferred.sum())} inferred; {counts}); row indices "
            f"replayed: {self.indexed}; layouts dropped: {layouts or 'none'}; "
            f"candidates left out at random: {self.dropped_at_random}"
        )


def full_grid(instance: Instance) -> np.ndarray:
    """Every encoded configuration in the bounds that keeps the hard rules.

    ``N x d`` int64 array in canonical order (ascending lexicographic): the
    instance's :meth:`~bolt_pco64.instances.Instance.grid`, which the
    stand-in's grid (``bolt_pco64.tables.simulate.grid``) reads too.
    """
    rows = instance.grid()
    return np.asarray(rows, dtype=np.int64).reshape(-1, instance.dim)


def _layouts(instance: Instance, X: np.ndarray) -> list[tuple[int, int]]:
    pp = instance.input_index("log2_pp_size")
    ch = instance.input_index("log2_num_model_chunks")
    return [(2 ** int(p), 2 ** int(c)) for p, c in zip(X[:, pp], X[:, ch], strict=True)]


def _draw(
    pool: np.ndarray, count: int, rng: np.random.Generator, keep: np.ndarray
) -> None:
    """Drop ``count`` of ``pool`` (indices into the grid) from ``keep``, at random."""
    if count > 0:
        keep[rng.choice(pool, size=count, replace=False)] = False


def _pin_gaps(
    keys: list[tuple[int, ...]],
    indices: Mapping[int, tuple[int, ...]],
    target: int,
    keep: np.ndarray,
    how: np.ndarray,
) -> tuple[list[tuple[int, np.ndarray]], np.ndarray]:
    """Rule 1: visited and pinned rows into ``keep`` / ``how``; returns the
    open gaps ``(rows needed, candidate positions)`` and the configurations
    between consecutive indices (excluded)."""
    at = {k: i for i, k in enumerate(keys)}
    anchors = sorted(indices.items())
    if anchors and (anchors[0][0] < 0 or anchors[-1][0] >= target):
        raise ValueError(
            f"Expected replayed row indices in [0, {target}), got "
            f"{anchors[0][0]}..{anchors[-1][0]}."
        )
    for _, x in anchors:
        keep[at[x]], how[at[x]] = True, "visited"
    positions = [-1, *(at[x] for _, x in anchors), len(keys)]
    rows = [-1, *(i for i, _ in anchors), target]
    gaps: list[tuple[int, np.ndarray]] = []
    excluded = np.zeros(len(keys), dtype=bool)
    for (p0, p1), (r0, r1) in zip(
        itertools.pairwise(positions),
        itertools.pairwise(rows),
        strict=True,
    ):
        need = r1 - r0 - 1
        cands = np.arange(p0 + 1, p1)
        if len(cands) < need:
            raise ValueError(
                f"Expected at least {need} grid configurations between replayed "
                f"rows {r0} and {r1}, got {len(cands)}: the instance's rules "
                "leave out configurations the measured table holds."
            )
        if len(cands) == need:
            keep[cands], how[cands] = True, "pinned"
        elif need == 0:
            excluded[cands] = True
        else:
            gaps.append((need, cands))
    return gaps, excluded


def _fill_gap(
    need: int,
    cands: np.ndarray,
    settled: tuple[np.ndarray, np.ndarray],
    layouts: list[tuple[int, int]],
    absent: list[tuple[int, int]],
    rate: Mapping[tuple[int, int], float],
    rng: np.random.Generator,
    out: tuple[np.ndarray, np.ndarray],
) -> tuple[int, list[int]]:
    """Rules 2-3 in one open gap: ``need`` rows of the positions ``cands``
    into ``out`` (``keep``, ``how``); ``settled`` are the visited and the
    ``must`` flags. Returns the candidates left out and the open ones."""
    is_visited, must = settled
    keep, how = out
    forced = cands[is_visited[cands] | must[cands]]
    if len(forced) > need:
        raise ValueError(
            f"Expected at most {need} visited configurations in a gap of the "
            f"replayed rows, got {len(forced)}."
        )
    keep[forced] = True
    how[forced] = np.where(is_visited[forced], "visited", "evidence")
    rest = np.array(
        [i for i in cands if not (is_visited[i] or must[i])], dtype=np.int64
    )
    narrowed = np.array([i for i in rest if layouts[i] not in absent], dtype=np.int64)
    left = need - len(forced)
    if len(narrowed) == left:
        keep[narrowed], how[narrowed] = True, "layout"
        return 0, rest.tolist()
    pool = narrowed if len(narrowed) > left else rest
    # The likeliest rows first: their layout's share of rows among the
    # configurations rules 1-2 settle; ties drawn.
    share = np.array([rate.get(layouts[i], 0.0) for i in pool])
    order = np.lexsort((rng.permutation(len(pool)), -share))
    picked = pool[order[:left]]
    keep[picked], how[picked] = True, "drawn"
    return len(pool) - left, rest.tolist()


def _by_indices(
    grid: np.ndarray,
    keys: list[tuple[int, ...]],
    is_visited: np.ndarray,
    indices: Mapping[int, tuple[int, ...]],
    target: int,
    layouts: list[tuple[int, int]],
    must: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], int, list[int]]:
    """Rules 1-3 with row indices: ``keep``, ``how``, dropped layouts, drawn."""
    how = np.full(len(keys), "", dtype=object)
    keep = np.zeros(len(keys), dtype=bool)
    gaps, excluded = _pin_gaps(keys, indices, target, keep, how)
    certain = {layouts[i] for i in np.flatnonzero(keep)}
    absent = sorted({layouts[i] for i in np.flatnonzero(excluded)} - certain)
    rng = np.random.default_rng([GRID_SEED, len(keys)])
    rate = {
        lay: float(
            np.mean(
                [keep[i] for i in np.flatnonzero(keep | excluded) if layouts[i] == lay]
            )
        )
        for lay in {layouts[i] for i in np.flatnonzero(keep | excluded)}
    }
    drawn = 0
    open_: list[int] = []
    for need, cands in gaps:
        left_out, rest = _fill_gap(
            need,
            cands,
            (is_visited, must),
            layouts,
            absent,
            rate,
            rng,
            (keep, how),
        )
        drawn += left_out
        open_ += rest
    return keep, how, list(absent), drawn, open_


def _by_layouts(
    grid: np.ndarray,
    is_visited: np.ndarray,
    layouts: list[tuple[int, int]],
    target: int,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], int]:
    """Rules without row indices: unvisited layouts dropped while the count
    allows, the excess drawn at random. ``keep``, ``how``, dropped, excess."""
    keep = np.ones(len(grid), dtype=bool)
    dropped: list[tuple[int, int]] = []
    for layout in sorted(set(layouts)):
        members = np.array([lay == layout for lay in layouts])
        if is_visited[members].any():
            continue
        if keep.sum() - members.sum() >= target:
            keep &= ~members
            dropped.append(layout)
    excess = max(int(keep.sum()) - target, 0)
    _draw(
        np.flatnonzero(keep & ~is_visited),
        excess,
        np.random.default_rng([GRID_SEED, len(grid)]),
        keep,
    )
    how = np.where(is_visited, "visited", "drawn" if excess else "layout").astype(
        object
    )
    return keep, how, dropped, excess


def _visited_keys(
    instance: Instance,
    keys: list[tuple[int, ...]],
    visited: np.ndarray,
    indices: Mapping[int, tuple[int, ...]] | None,
) -> set[tuple[int, ...]]:
    """The visited configurations (and the indexed ones), checked against the
    grid's ``keys`` and the published row count."""
    seen = {tuple(int(v) for v in x) for x in np.asarray(visited).tolist()}
    if indices:
        seen |= set(indices.values())
    off = sorted(seen - set(keys))
    if off:
        raise ValueError(
            f"Expected visited configurations on the {instance.name} grid, got "
            f"{len(off)} off it (first {list(off[0])})."
        )
    target = instance.published.rows
    if len(seen) > target:
        raise ValueError(
            f"Expected at most {target} visited {instance.name} configurations "
            f"(its published rows), got {len(seen)}."
        )
    return seen


def reconstruction_grid(
    instance: Instance,
    visited: np.ndarray,
    indices: Mapping[int, tuple[int, ...]] | None = None,
    must: Sequence[tuple[int, ...]] = (),
) -> ReconstructionGrid:
    """The reconstruction's rows: the grid, following the visited configurations.

    Args:
        instance: The instance (its ``published.rows`` is the target count).
        visited: ``V x d`` encoded configurations the traces visited.
        indices: Row index -> encoded configuration, from replayed
            random-search traces (:attr:`bolt_pco64.tables.reconstruct.replay.Replay.indices`);
            ``None`` or empty: none replayed.
        must: Configurations other evidence shows are rows (they ran:
            :mod:`bolt_pco64.tables.reconstruct.evidence`); rule 3 keeps them first.

    Raises:
        ValueError: If a visited configuration is off the grid, the visited
            configurations outnumber the published rows, or the row indices
            contradict the grid.
    """
    grid = full_grid(instance)
    keys = [tuple(x) for x in grid.tolist()]
    seen = _visited_keys(instance, keys, visited, indices)
    target = instance.published.rows
    is_visited = np.array([k in seen for k in keys])
    layouts = _layouts(instance, grid)
    open_: list[int] = []
    if len(keys) == target:
        keep = np.ones(len(keys), dtype=bool)
        how = np.where(is_visited, "visited", "grid").astype(object)
        dropped, excess = [], 0
    elif indices:
        must_rows = {tuple(int(v) for v in x) for x in must}
        keep, how, dropped, excess, open_ = _by_indices(
            grid,
            keys,
            is_visited,
            indices,
            target,
            layouts,
            np.array([k in must_rows for k in keys], dtype=bool),
        )
        how[is_visited & keep] = "visited"
    else:
        keep, how, dropped, excess = _by_layouts(grid, is_visited, layouts, target)
    inferred_grid = len(grid) != target
    return ReconstructionGrid(
        X=grid[keep],
        visited=is_visited[keep],
        inferred=(~is_visited[keep]) & inferred_grid,
        how=how[keep].astype(str),
        dropped_layouts=tuple(dropped),
        dropped_at_random=excess,
        indexed=len(indices or {}),
        open=grid[np.asarray(sorted(open_), dtype=np.int64)].reshape(-1, grid.shape[1]),
    )
