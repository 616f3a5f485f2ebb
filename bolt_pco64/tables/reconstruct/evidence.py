"""What the out-of-memory observations say about rows no trace visited.

bolt-bench reports, at a configuration that ran out of memory, the mean
throughput of the feasible rows at the least Euclidean distance from it (in
the encoded inputs; ties within ``1e-9``). With the harness's noise replayed
(:mod:`bolt_pco64.tables.reconstruct.replay`), that mean is known exactly for every
visited out-of-memory configuration, and it constrains its unvisited
neighbours. :func:`neighbour_evidence` walks each such configuration's
distance levels outward, up to the first level holding a row that ran or
might have run, and applies three rules until none changes anything:

- every row at that level is known (visited or settled): nothing new (the
  known mean is checked against the reported one);
- the rows known to have run there already give the reported mean: the
  unknown rows there did not run (had one run, it would be in the mean);
- they do not, and exactly one unknown row is there: it ran, with the
  throughput that makes the mean (``mean * (k + 1) - sum``).

Anything else stays open. The rules are exact up to float rounding
(:data:`MATCH`); a reported mean that no rule can reach is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["MATCH", "TIE", "NeighbourEvidence", "neighbour_evidence"]

#: Two throughput means this close are equal (float rounding only).
MATCH = 1e-9
#: Two distances this close tie (bolt-bench's ``TIE_TOL``).
TIE = 1e-9


@dataclass(frozen=True)
class NeighbourEvidence:
    """Rows of a grid the neighbour means settle.

    Attributes:
        ran: ``N`` bools: the row ran (meaningful where ``settled``).
        settled: ``N`` bools: the evidence settles an unvisited row.
        throughput: ``N`` floats: the throughput it solves for (NaN where none).
        conflicts: Visited out-of-memory rows whose known neighbours give
            another mean than the one reported (should be none).
    """

    ran: np.ndarray
    settled: np.ndarray
    throughput: np.ndarray
    conflicts: int


def neighbour_evidence(
    X: np.ndarray,
    known_ran: Mapping[int, bool],
    known_value: Mapping[int, float],
    oom_means: Mapping[int, float],
) -> NeighbourEvidence:
    """Settle unvisited rows of ``X`` from out-of-memory neighbour means.

    Args:
        X: ``N x d`` encoded rows of the table (its grid).
        known_ran: Row -> whether it ran, for the visited rows.
        known_value: Row -> exact throughput, for visited rows that ran.
        oom_means: Row -> the de-noised mean reported at a visited row that
            ran out of memory.

    Returns:
        The :class:`NeighbourEvidence`.
    """
    Xf = np.asarray(X, dtype=np.float64)
    n = len(Xf)
    ran = np.zeros(n, dtype=bool)
    status = np.full(n, -1, dtype=np.int64)  # -1 unknown, 0 no, 1 ran
    value = np.full(n, np.nan)
    for i, r in known_ran.items():
        status[i] = int(r)
    for i, v in known_value.items():
        value[i] = v
    settled = np.zeros(n, dtype=bool)
    levels = {}
    for r in oom_means:
        d = np.sqrt(((Xf - Xf[r]) ** 2).sum(axis=1))
        d[r] = np.inf
        levels[r] = d
    conflicts: set[int] = set()
    changed = True
    while changed:
        changed = False
        for r, target in oom_means.items():
            d = levels[r]
            for level in np.unique(np.round(d[np.isfinite(d)] / TIE) * TIE):
                at = np.flatnonzero(np.abs(d - level) <= TIE)
                ran_at = at[status[at] == 1]
                open_at = at[status[at] == -1]
                if len(ran_at) == 0 and len(open_at) == 0:
                    continue
                if np.isnan(value[ran_at]).any():
                    break  # a row that ran without a known value: no rule
                total = float(value[ran_at].sum())
                match = len(ran_at) > 0 and abs(total / len(ran_at) - target) <= MATCH
                if len(open_at) == 0:
                    if not match:
                        conflicts.add(r)
                elif match:
                    status[open_at], settled[open_at] = 0, True
                    changed = True
                elif len(ran_at) > 0 and len(open_at) == 1:
                    solved = target * (len(ran_at) + 1) - total
                    if solved > 0:  # a throughput; else the rule does not apply
                        j = open_at[0]
                        status[j], settled[j], value[j] = 1, True, solved
                        changed = True
                break
    ran = status == 1
    return NeighbourEvidence(
        ran=ran,
        settled=settled,
        throughput=np.where(settled & ran, value, np.nan),
        conflicts=len(conflicts),
    )
