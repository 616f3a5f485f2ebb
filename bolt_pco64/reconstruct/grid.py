"""The rows of a reconstructed table: the grid, as the traces show it.

pco64's card calls its 780 rows "the full candidate set", and exactly 780
configurations keep the hard rules of
:meth:`~bolt_pco64.instances.Instance.rule_violation` in its bounds: its rows are
that grid. pco32's and pco16's published sweeps have fewer rows (379 and 919)
than their grids (432 and 960), so which configurations are rows must be
inferred. :func:`reconstruction_grid` does it with a rule that keeps every
configuration a trace visited and reaches the published row count:

1. **Pipeline layouts no trace visited are not in the sweep.** A layout is a
   ``(pp, chunks)`` pair. Random search draws rows uniformly from the table,
   so a layout of ``m`` rows escapes ``n`` draws with probability
   ``(1 - m / rows) ** n``: pco32's pp 4 with 2 chunks (40 configurations,
   600 draws) would escape with probability ~1e-29, pco16's pp 8 with 4
   chunks (16 configurations, 1100 draws) with ~5e-9. They are dropped
   (only while the grid exceeds the published row count).
2. **The rest of the gap is runs lost at random.** What remains (pco32: 13,
   pco16: 25 configurations) is not a multiple of the four bucket sizes that
   every launch rule treats alike, so no rule on the knobs explains it: as
   the stand-in does (``bolt_pco64.simulate.grid``), those configurations are
   drawn uniformly, with :data:`GRID_SEED`, among the unvisited ones. Which
   ones they are, the traces cannot tell.

Rows no trace visited are *inferred* where the grid was inferred (pco32,
pco16); pco64's unvisited rows are not (its card fixes its rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bolt_pco64.instances import Instance

__all__ = ["GRID_SEED", "ReconstructionGrid", "full_grid", "reconstruction_grid"]

#: Seed of the draw of the runs lost from a sweep (rule 2).
GRID_SEED = 27379919


@dataclass(frozen=True)
class ReconstructionGrid:
    """The rows of a reconstruction and how they were found.

    Attributes:
        X: ``N x d`` int64 array, the encoded configurations, canonical order.
        visited: ``N`` bools: a trace visited the configuration.
        inferred: ``N`` bools: the row's existence is inferred (unvisited, in a
            grid that the published row count does not fix).
        dropped_layouts: The ``(pp, chunks)`` layouts (raw sizes) rule 1
            dropped.
        dropped_at_random: Configurations rule 2 dropped.
    """

    X: np.ndarray
    visited: np.ndarray
    inferred: np.ndarray
    dropped_layouts: tuple[tuple[int, int], ...]
    dropped_at_random: int

    def describe(self) -> str:
        """One line: the rule's outcome."""
        layouts = ", ".join(f"pp {p} x {c} chunks" for p, c in self.dropped_layouts)
        return (
            f"{len(self.X)} rows ({int(self.visited.sum())} visited, "
            f"{int(self.inferred.sum())} inferred); unvisited layouts dropped: "
            f"{layouts or 'none'}; dropped at random: {self.dropped_at_random}"
        )


def full_grid(instance: Instance) -> np.ndarray:
    """Every encoded configuration in the bounds that keeps the hard rules.

    ``N x d`` int64 array in canonical order (ascending lexicographic): the
    instance's :meth:`~bolt_pco64.instances.Instance.grid`, which the
    stand-in's grid (``bolt_pco64.simulate.grid``) reads too.
    """
    rows = instance.grid()
    return np.asarray(rows, dtype=np.int64).reshape(-1, instance.dim)


def _layouts(instance: Instance, X: np.ndarray) -> list[tuple[int, int]]:
    pp = instance.input_index("log2_pp_size")
    ch = instance.input_index("log2_num_model_chunks")
    return [(2 ** int(p), 2 ** int(c)) for p, c in zip(X[:, pp], X[:, ch], strict=True)]


def reconstruction_grid(instance: Instance, visited: np.ndarray) -> ReconstructionGrid:
    """The reconstruction's rows: the grid, following the visited configurations.

    Args:
        instance: The instance (its ``published.rows`` is the target count).
        visited: ``V x d`` encoded configurations the traces visited.

    Raises:
        ValueError: If a visited configuration is off the grid, or the visited
            configurations outnumber the published rows.
    """
    grid = full_grid(instance)
    keys = [tuple(x) for x in grid.tolist()]
    seen = {tuple(int(v) for v in x) for x in np.asarray(visited).tolist()}
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
    is_visited = np.array([k in seen for k in keys])
    keep = np.ones(len(keys), dtype=bool)
    layouts = _layouts(instance, grid)
    dropped: list[tuple[int, int]] = []
    for layout in sorted(set(layouts)):
        members = np.array([lay == layout for lay in layouts])
        if is_visited[members].any():
            continue
        if keep.sum() - members.sum() >= target:
            keep &= ~members
            dropped.append(layout)
    excess = int(keep.sum()) - target
    if excess > 0:
        pool = np.flatnonzero(keep & ~is_visited)
        rng = np.random.default_rng([GRID_SEED, len(grid)])
        keep[rng.choice(pool, size=excess, replace=False)] = False
    inferred_grid = len(grid) != target
    return ReconstructionGrid(
        X=grid[keep],
        visited=is_visited[keep],
        inferred=(~is_visited[keep]) & inferred_grid,
        dropped_layouts=tuple(dropped),
        dropped_at_random=max(excess, 0),
    )
