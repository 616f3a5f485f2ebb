"""The design of the protocol: its seeds, budget, levels and margins (one place).

Imports nothing heavy, so the comparison's specification and the command line
can read :data:`PROTOCOL_SEEDS` and :data:`PROTOCOL_DEFAULTS` without loading
the statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROTOCOL_DEFAULTS", "PROTOCOL_SEEDS", "ProtocolDesign"]

#: The seeds of the default comparison, 100 seeds that did not choose the
#: protocol (the seeds 0-19 of the earlier comparisons did: the findings that
#: motivated it were read off them). The power analysis behind 100 is in
#: ``docs/protocol.md``.
PROTOCOL_SEEDS: range = range(1000, 1100)


@dataclass(frozen=True)
class ProtocolDesign:
    """What the protocol declares before it sees a result.

    Attributes:
        seeds: The seeds of the default comparison.
        budget: Evaluations per run of the default comparison.
        alpha: Family-wise error rate of each endpoint (Holm over its pairs).
        power: The power the "seeds needed" figures aim at.
        targets: Regret targets of the time-to-target endpoints, as a
            fraction of the optimal value (0: the optimum itself).
        first_margin: Equivalence margin of a time-to-target endpoint: the
            share of seeds on which one method reaches the target first,
            minus the share on which the other does.
        auc_margin: Equivalence margin of the area under the regret curve
            (its mean after the initial design, as a fraction of the
            optimal value).
        oom_margin: Equivalence margin of the crashes per run.
        level: Confidence level of the intervals.
        resamples: Bootstrap resamples of an interval.
        seed: Base seed of the bootstrap.
    """

    seeds: range = PROTOCOL_SEEDS
    budget: int = 100
    alpha: float = 0.05
    power: float = 0.8
    targets: tuple[float, ...] = (0.0, 0.01)
    first_margin: float = 0.1
    auc_margin: float = 0.0025
    oom_margin: float = 1.0
    level: float = 0.95
    resamples: int = 9999
    seed: int = 0


#: The design used when no other is passed.
PROTOCOL_DEFAULTS = ProtocolDesign()
