"""How many seeds a comparison needs, and the fewest with which it can say anything.

Every figure is at the first (most stringent) step of Holm's procedure over
an endpoint's family of ``pairs`` pairs, ``alpha / pairs``: a pair whose
effect reaches the power there is separated whatever the other pairs show.

- :func:`min_seeds`: the fewest seeds at which a pair *can* be separated at
  all. The exact paired tests of the protocol (the sign test behind the
  seed-stratified log-rank, and the signed-rank test) have their smallest
  p-value, ``2 / 2**n``, when every one of ``n`` seeds favours the same
  method; below ``log2(2 * pairs / alpha)`` seeds even that outcome is not
  significant, so the power is 0 against every alternative. A comparison
  with fewer seeds is a smoke test.
- :func:`paired_t_seeds`: the seeds a paired standardised effect ``d``
  (mean / standard deviation of the per-seed differences) needs, from the
  paired t-test's power (``statsmodels.stats.power.TTestPower``); the
  signed-rank test's asymptotic relative efficiency against it is 0.955 for
  normal differences and at least 0.864 for any, so this is the right order
  for the rank test too.
- :func:`mcnemar_seeds`: the seeds a paired binary outcome needs, from the
  shares ``p10`` and ``p01`` of seeds on which only the one or only the other
  method succeeds (Connor 1987, "Sample size for testing differences in
  proportions for the paired-sample design", Biometrics 43:207-211):
  ``n = (z(1-a/2) sqrt(psi) + z(power) sqrt(psi - delta**2))**2 / delta**2``,
  ``psi = p10 + p01``, ``delta = p10 - p01``.
- :func:`detectable_effect`: the smallest paired standardised effect ``n``
  seeds detect with the power.
"""

from __future__ import annotations

import math

from scipy.stats import norm

from bolt_pco64.bench.protocol.design import PROTOCOL_DEFAULTS
from bolt_pco64.params import OPEN_UNIT, POSITIVE_INT, check_param

__all__ = [
    "detectable_effect",
    "mcnemar_seeds",
    "min_seeds",
    "pair_alpha",
    "paired_t_seeds",
]


def pair_alpha(pairs: int, alpha: float = PROTOCOL_DEFAULTS.alpha) -> float:
    """``alpha / pairs``: the level of Holm's first step over ``pairs`` pairs."""
    check_param("pairs", pairs, POSITIVE_INT)
    check_param("alpha", alpha, OPEN_UNIT)
    return alpha / pairs


def min_seeds(pairs: int, alpha: float = PROTOCOL_DEFAULTS.alpha) -> int:
    """The fewest seeds whose most one-sided outcome is significant at
    :func:`pair_alpha` (two-sided exact sign test: ``2 / 2**n <= alpha / pairs``)."""
    return max(1, math.ceil(math.log2(2.0 / pair_alpha(pairs, alpha)) - 1e-12))


def paired_t_seeds(
    effect: float,
    pairs: int,
    alpha: float = PROTOCOL_DEFAULTS.alpha,
    power: float = PROTOCOL_DEFAULTS.power,
) -> float:
    """Seeds for ``power`` against the paired standardised effect ``effect``.

    Returns:
        An integer-valued float, at least :func:`min_seeds`; ``inf`` for an
        effect of 0 (or not finite).
    """
    check_param("power", power, OPEN_UNIT)
    floor = min_seeds(pairs, alpha)
    d = abs(float(effect))
    if not math.isfinite(d) or d == 0.0:
        return math.inf
    from statsmodels.stats.power import TTestPower

    try:
        n = float(
            TTestPower().solve_power(
                effect_size=d,
                alpha=pair_alpha(pairs, alpha),
                power=power,
                alternative="two-sided",
            )
        )
    except (ValueError, RuntimeError):  # a huge effect: below any sample
        n = float(floor)
    if not math.isfinite(n):
        n = float(floor)
    return float(max(floor, math.ceil(n)))


def mcnemar_seeds(
    p10: float,
    p01: float,
    pairs: int,
    alpha: float = PROTOCOL_DEFAULTS.alpha,
    power: float = PROTOCOL_DEFAULTS.power,
) -> float:
    """Seeds for ``power`` against discordant shares ``p10`` and ``p01`` (Connor 1987).

    Returns:
        An integer-valued float, at least :func:`min_seeds`; ``inf`` when
        ``p10 == p01``.
    """
    for name, v in (("p10", p10), ("p01", p01)):
        if not 0.0 <= v <= 1.0 or not math.isfinite(v):
            raise ValueError(f"Expected {name} to be a share in [0, 1], got {v!r}.")
    if p10 + p01 > 1.0 + 1e-12:
        raise ValueError(f"Expected p10 + p01 <= 1, got {p10} + {p01}.")
    check_param("power", power, OPEN_UNIT)
    delta, psi = p10 - p01, p10 + p01
    if delta == 0.0:
        return math.inf
    za = norm.ppf(1.0 - pair_alpha(pairs, alpha) / 2.0)
    zb = norm.ppf(power)
    n = (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta**2, 0.0))) ** 2
    return float(max(min_seeds(pairs, alpha), math.ceil(n / delta**2)))


def detectable_effect(
    seeds: int,
    pairs: int,
    alpha: float = PROTOCOL_DEFAULTS.alpha,
    power: float = PROTOCOL_DEFAULTS.power,
) -> float:
    """The paired standardised effect ``seeds`` seeds detect with ``power``
    (``inf`` below :func:`min_seeds` or 2 seeds)."""
    check_param("seeds", seeds, POSITIVE_INT)
    check_param("power", power, OPEN_UNIT)
    if seeds < max(2, min_seeds(pairs, alpha)):
        return math.inf
    from statsmodels.stats.power import TTestPower

    return float(
        TTestPower().solve_power(
            nobs=seeds,
            alpha=pair_alpha(pairs, alpha),
            power=power,
            alternative="two-sided",
        )
    )
