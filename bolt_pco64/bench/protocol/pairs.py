"""Every pair of methods on one endpoint: which seeds differ, the test, Holm,
the equivalence test and the seeds the observed effect would need.

Pairs are over the seeds both methods ran (a seed's methods share its
initial design, so the seed is the unit of pairing). Per seed a score ``d``
with **negative favouring the first method** ``a``:

- a ``"time"`` endpoint (:class:`~bolt_pco64.bench.protocol.endpoints.Endpoint`)
  scores ``-1`` where ``a`` reaches the target strictly first, ``+1`` where
  ``b`` does and 0 otherwise (both at the same time, neither, or the one
  that reached it did so after the other's run ended). With one run per
  method and seed, this *is* the seed-stratified log-rank test: in a stratum
  of two runs, the first event contributes ``O - E = +-1/2`` with variance
  ``1/4`` when the other run is still at risk and nothing otherwise, so the
  stratified statistic is ``(n_a - n_b)**2 / (n_a + n_b)`` over the seeds
  where one method is first: McNemar's statistic on "first". The protocol
  uses its exact (conditional, binomial) form,
  ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``;
- a ``"value"`` endpoint scores ``a - b`` and is tested with the two-sided
  Wilcoxon signed-rank test (:func:`~bolt_pco64.bench.stats.signed_rank_p`,
  Pratt's treatment of zeros).

The effect is the mean score with a percentile-bootstrap interval over the
seeds (seeded by the
endpoint; every pair's interval comes from the same resamples of the
seeds, :func:`~bolt_pco64.bench.stats.bootstrap_mean_intervals`). Holm's
procedure (:func:`holm`) runs over the endpoint's declared family, every pair of the declared
methods, both for the difference test and for the equivalence test (two
one-sided paired t-tests against ``+-margin``, ``statsmodels``'
``ttost_paired``). A pair's verdict is ``"separated"`` (Holm-adjusted
p < alpha; ``better`` names the method favoured on more seeds),
``"equivalent"`` (not separated, and the adjusted equivalence p < alpha) or
``"inconclusive"``. ``seeds_needed`` is what the observed effect would need
for the design's power (:mod:`~bolt_pco64.bench.protocol.power`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bolt_pco64.bench.protocol.design import PROTOCOL_DEFAULTS, ProtocolDesign
from bolt_pco64.bench.protocol.endpoints import Endpoint
from bolt_pco64.bench.protocol.power import mcnemar_seeds, paired_t_seeds
from bolt_pco64.bench.stats import bootstrap_mean_intervals, keyed_rng, signed_rank_p

__all__ = [
    "PAIR_COLUMNS",
    "compare_pairs",
    "equivalence_p",
    "first_scores",
    "holm",
    "paired_scores",
]

#: The columns of :func:`compare_pairs`.
PAIR_COLUMNS: tuple[str, ...] = (
    "endpoint",
    "a",
    "b",
    "seeds",
    "a_better",
    "b_better",
    "tied",
    "effect",
    "low",
    "high",
    "p_value",
    "p_holm",
    "p_equivalence",
    "verdict",
    "better",
    "seeds_needed",
)


def first_scores(
    time_a: np.ndarray, event_a: np.ndarray, time_b: np.ndarray, event_b: np.ndarray
) -> np.ndarray:
    """Per seed, ``-1`` where ``a``'s event comes strictly first, ``+1`` where
    ``b``'s does, else 0.

    A run whose event came at ``t`` is first when the other's event came
    later or the other's run was censored at or after ``t`` (a censored run
    is at risk at its censoring time).
    """
    ta, tb = np.asarray(time_a, float), np.asarray(time_b, float)
    ea, eb = np.asarray(event_a, bool), np.asarray(event_b, bool)
    a_first = ea & ((ta < tb) | ((ta == tb) & ~eb))
    b_first = eb & ((tb < ta) | ((tb == ta) & ~ea))
    return np.where(a_first, -1.0, np.where(b_first, 1.0, 0.0))


def paired_scores(
    outcomes: pd.DataFrame, endpoint: Endpoint, a: str, b: str
) -> np.ndarray:
    """The per-seed scores of ``a`` against ``b`` (negative favours ``a``) over
    the seeds both ran, in seed order."""
    wide = _wide(outcomes, endpoint, [a, b])
    return _scores(wide, endpoint, a, b)


def _wide(
    outcomes: pd.DataFrame, endpoint: Endpoint, methods: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """``seeds x methods`` frames of the endpoint's columns, over the seeds
    every one of ``methods`` ran."""
    cols = [endpoint.name]
    if endpoint.kind == "time":
        cols.append(f"{endpoint.name}_event")
    sub = outcomes[outcomes["method"].isin(methods)]
    out = {
        c: sub.pivot(index="seed", columns="method", values=c)
        .reindex(columns=list(methods))
        .dropna()
        .sort_index()
        for c in cols
    }
    return out


def _scores(
    wide: dict[str, pd.DataFrame], endpoint: Endpoint, a: str, b: str
) -> np.ndarray:
    n = endpoint.name
    if endpoint.kind == "time":
        t, e = wide[n], wide[f"{n}_event"].astype(bool)
        return first_scores(t[a], e[a], t[b], e[b])
    v = wide[n]
    return v[a].to_numpy(float) - v[b].to_numpy(float)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values, in the input's order.

    The ``i``-th smallest of ``m`` p-values is multiplied by ``m - i + 1``,
    made non-decreasing and capped at 1: a pair is separated at family-wise
    level ``alpha`` iff its adjusted p-value is below ``alpha``. (The same
    numbers as ``statsmodels.stats.multitest.multipletests(method="holm")``,
    which also runs a full garbage collection on every call: 0.3 s each
    with the statistics libraries loaded.)
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"Expected p-values in [0, 1], got {p.tolist()}.")
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.minimum(np.maximum.accumulate(p[order] * np.arange(m, 0, -1)), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def equivalence_p(scores: np.ndarray, margin: float) -> float:
    """p-value of the two one-sided paired t-tests that the mean score lies
    within ``(-margin, margin)`` (``statsmodels``' ``ttost_paired``).

    With every score equal (no spread) the answer is certain: 0 inside the
    margin, 1 outside it.
    """
    d = np.asarray(scores, float)
    if d.size < 2 or np.all(d == d[0]):
        return 0.0 if d.size and abs(d[0]) < margin else 1.0
    from statsmodels.stats.weightstats import ttost_paired

    return float(ttost_paired(d, np.zeros_like(d), -margin, margin)[0])


def _test_p(scores: np.ndarray, kind: str) -> float:
    if kind == "value":
        return signed_rank_p(scores)
    from statsmodels.stats.contingency_tables import mcnemar

    na, nb = int((scores < 0).sum()), int((scores > 0).sum())
    if na + nb == 0:
        return 1.0
    return float(mcnemar([[0, na], [nb, 0]], exact=True).pvalue)


def _needed(scores: np.ndarray, kind: str, pairs: int, design: ProtocolDesign) -> float:
    n = scores.size
    if kind == "time":
        return mcnemar_seeds(
            float((scores < 0).sum()) / n,
            float((scores > 0).sum()) / n,
            pairs,
            design.alpha,
            design.power,
        )
    sd = float(scores.std(ddof=1)) if n > 1 else 0.0
    mean = float(scores.mean())
    if mean == 0.0:
        return math.inf
    effect = mean / sd if sd > 0 else math.inf
    return paired_t_seeds(effect, pairs, design.alpha, design.power)


def compare_pairs(
    outcomes: pd.DataFrame,
    endpoint: Endpoint,
    methods: Sequence[str],
    design: ProtocolDesign = PROTOCOL_DEFAULTS,
) -> pd.DataFrame:
    """Every pair of ``methods`` on ``endpoint`` (the declared family).

    Args:
        outcomes: :func:`~bolt_pco64.bench.protocol.endpoints.run_outcomes`.
        endpoint: The endpoint.
        methods: The declared family's methods, in report order (pairs
            ``(a, b)`` with ``a`` before ``b``).
        design: Levels, margins, power and the bootstrap's settings.

    Returns:
        The columns :data:`PAIR_COLUMNS`, one row per pair; the seeds are
        those every method of ``methods`` ran.
    """
    pairs = list(itertools.combinations(methods, 2))
    if not pairs:
        return pd.DataFrame(columns=list(PAIR_COLUMNS))
    wide = _wide(outcomes, endpoint, methods)
    scores = np.array([_scores(wide, endpoint, a, b) for a, b in pairs]).reshape(
        len(pairs), -1
    )
    n = scores.shape[1]
    if n == 0:
        raise ValueError(
            f"Expected seeds shared by every method of {list(methods)}, got none."
        )
    low, high = bootstrap_mean_intervals(
        scores, design.level, design.resamples, keyed_rng(design.seed, endpoint.name)
    )
    out = pd.DataFrame(
        {
            "endpoint": endpoint.name,
            "a": [a for a, _ in pairs],
            "b": [b for _, b in pairs],
            "seeds": n,
            "a_better": (scores < 0).sum(axis=1),
            "b_better": (scores > 0).sum(axis=1),
            "tied": (scores == 0).sum(axis=1),
            "effect": scores.mean(axis=1),
            "low": low,
            "high": high,
        }
    )
    out["p_value"] = [_test_p(d, endpoint.kind) for d in scores]
    out["p_holm"] = holm(out["p_value"])
    out["p_equivalence"] = holm([equivalence_p(d, endpoint.margin) for d in scores])
    out["seeds_needed"] = [
        _needed(d, endpoint.kind, len(pairs), design) for d in scores
    ]
    separated = out["p_holm"] < design.alpha
    equivalent = ~separated & (out["p_equivalence"] < design.alpha)
    out["verdict"] = np.where(
        separated, "separated", np.where(equivalent, "equivalent", "inconclusive")
    )
    a_wins = (out["a_better"] > out["b_better"]) | (
        (out["a_better"] == out["b_better"]) & (out["effect"] < 0)
    )
    out["better"] = np.where(separated, np.where(a_wins, out["a"], out["b"]), "")
    return out[list(PAIR_COLUMNS)]
