"""Groups of methods that cannot be told apart (a compact letter display).

Two methods are joined when their pair is not separated; the groups are the
maximal cliques of that graph (``networkx.find_cliques``): every two methods
of a group cannot be told apart, and a method may belong to several groups
(``a`` ~ ``b`` and ``b`` ~ ``c`` while ``a`` and ``c`` are separated gives
the groups ``{a, b}`` and ``{b, c}``: letters "a", "ab", "b"). This is the
compact letter display of multiple comparisons (Piepho 2004, "An algorithm
for a letter-based representation of all-pairwise comparisons", J. Comput.
Graph. Stat. 13:456-466): methods that share a letter are not separated.

Letters run in the order of the groups' best member by the endpoint's point
estimate, so "a" holds the best estimate; a method's place *inside* a group
is no ranking.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

__all__ = ["letter_groups", "letters_of"]


def letter_groups(
    order: Sequence[str], separated: Iterable[tuple[str, str]]
) -> tuple[tuple[str, ...], ...]:
    """The groups (maximal cliques of the not-separated graph), lettered in order.

    Args:
        order: The methods, best point estimate first.
        separated: The separated pairs (either order).

    Returns:
        The groups, the first holding ``order[0]``; each group's methods in
        ``order``'s order.
    """
    import networkx as nx

    rank = {m: i for i, m in enumerate(order)}
    cut = {frozenset(p) for p in separated}
    unknown = sorted({m for p in cut for m in p} - set(rank))
    if unknown:
        raise ValueError(
            f"Expected separated pairs among {list(order)}, got {unknown}."
        )
    graph = nx.Graph()
    graph.add_nodes_from(order)
    graph.add_edges_from(
        (a, b)
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if frozenset((a, b)) not in cut
    )
    cliques = [tuple(sorted(c, key=rank.__getitem__)) for c in nx.find_cliques(graph)]
    cliques.sort(key=lambda c: [rank[m] for m in c])
    if len(cliques) > len(string.ascii_lowercase):
        raise ValueError(f"Expected at most 26 groups, got {len(cliques)}.")
    return tuple(cliques)


def letters_of(groups: Sequence[Sequence[str]]) -> dict[str, str]:
    """Each method's letters (``"a"``, ``"ab"``, ...) from :func:`letter_groups`."""
    out: dict[str, str] = {}
    for letter, group in zip(string.ascii_lowercase, groups, strict=False):
        for m in group:
            out[m] = out.get(m, "") + letter
    return out
