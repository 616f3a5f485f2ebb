"""The protocol on one problem's records:
:func:`~bolt_pco64.bench.protocol.analysis.run_protocol` and its
:class:`~bolt_pco64.bench.protocol.analysis.ProtocolResult`.

Per method and endpoint an estimate with an interval (:func:`method_estimates`):

- a ``"time"`` endpoint: the Kaplan-Meier estimate (:func:`kaplan_meier`)
  of the share of runs that reached the target by the end of their runs,
  with its pointwise interval, and the Kaplan-Meier median time (``inf``
  when fewer than half reached it).
  On the evaluation axis every run is censored at the budget, so the
  estimate is the share of runs that got there;
- a ``"value"`` endpoint: the mean over runs with a percentile-bootstrap
  interval over the seeds
  (:func:`~bolt_pco64.bench.stats.bootstrap_mean_intervals`).

Only the seeds every declared method ran take part (the design is paired
by seed); the runs of other seeds are left out.

Then every pair of the declared family on every endpoint
(:func:`~bolt_pco64.bench.protocol.pairs.compare_pairs`) and the groups that
cannot be told apart (:mod:`~bolt_pco64.bench.protocol.groups`), unless the
comparison is a **smoke test**: fewer seeds shared by every method than
:func:`~bolt_pco64.bench.protocol.power.min_seeds` of the family, with which
no outcome could separate any pair. A smoke test keeps the per-method
estimates and makes no comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bolt_pco64.bench.protocol.design import PROTOCOL_DEFAULTS, ProtocolDesign
from bolt_pco64.bench.protocol.endpoints import (
    Endpoint,
    declared_endpoints,
    run_outcomes,
)
from bolt_pco64.bench.protocol.groups import letter_groups, letters_of
from bolt_pco64.bench.protocol.pairs import PAIR_COLUMNS, compare_pairs
from bolt_pco64.bench.protocol.power import detectable_effect, min_seeds
from bolt_pco64.bench.stats import bootstrap_mean_intervals, keyed_rng, method_order

__all__ = [
    "ESTIMATE_COLUMNS",
    "KaplanMeier",
    "ProtocolResult",
    "kaplan_meier",
    "method_estimates",
    "regret_levels",
    "run_protocol",
]

#: The columns of :func:`method_estimates` (and ``ProtocolResult.estimates``).
ESTIMATE_COLUMNS: tuple[str, ...] = (
    "endpoint",
    "method",
    "runs",
    "events",
    "estimate",
    "low",
    "high",
    "median_time",
    "letters",
)


@dataclass(frozen=True)
class KaplanMeier:
    """A Kaplan-Meier estimate of the share of runs that reached a target.

    Attributes:
        times: The distinct event times, ascending.
        reached: The estimated share reached by each of ``times``.
        share: The share reached by the end (0 without events).
        low: The lower end of its pointwise interval.
        high: The upper end.
        median: The median time (``inf`` when the estimate never passes
            one half).
    """

    times: np.ndarray
    reached: np.ndarray
    share: float
    low: float
    high: float
    median: float


def kaplan_meier(
    time: np.ndarray, event: np.ndarray, level: float = PROTOCOL_DEFAULTS.level
) -> KaplanMeier:
    """The Kaplan-Meier estimate of ``statsmodels``' ``SurvfuncRight``.

    The interval is the exponential-Greenwood (log-log) one of Kalbfleisch
    and Prentice (2002, "The Statistical Analysis of Failure Time Data",
    §1.3.1) from its Greenwood standard error, the one ``lifelines`` and R's
    ``survival`` use by default: inside ``[0, 1]``, and ``[0, 0]`` or
    ``[1, 1]`` at a share of 0 or 1 (the seeds say no more). The median is
    ``SurvfuncRight.quantile(0.5)``: the first time the estimated survival
    drops strictly below one half (SAS's convention).

    Args:
        time: ``runs``-dim times (events or censoring).
        event: ``runs``-dim bool, whether the run reached the target.
        level: Confidence level.
    """
    from scipy.stats import norm
    from statsmodels.duration.survfunc import SurvfuncRight

    t = np.asarray(time, dtype=np.float64)
    e = np.asarray(event, dtype=bool)
    if not e.any():
        return KaplanMeier(np.zeros(0), np.zeros(0), 0.0, 0.0, 0.0, math.inf)
    sf = SurvfuncRight(t, e.astype(np.int64))
    surv = float(sf.surv_prob[-1])
    se = float(sf.surv_prob_se[-1])
    if 0.0 < surv < 1.0 and math.isfinite(se) and se > 0:
        z = norm.ppf(0.5 + level / 2)
        spread = z * se / abs(surv * math.log(surv))
        s_low, s_high = surv ** math.exp(spread), surv ** math.exp(-spread)
    else:
        s_low = s_high = surv
    median = sf.quantile(0.5)
    return KaplanMeier(
        times=np.asarray(sf.surv_times, dtype=np.float64),
        reached=1.0 - np.asarray(sf.surv_prob, dtype=np.float64),
        share=1.0 - surv,
        low=1.0 - s_high,
        high=1.0 - s_low,
        median=float(median) if np.isfinite(median) else math.inf,
    )


@dataclass(frozen=True)
class ProtocolResult:
    """What the protocol found on one problem (all frames are plain pandas).

    Attributes:
        problem: The problem's name (a label).
        design: The declared design.
        methods: The declared family, in report order.
        seeds: The seeds every method ran.
        budget: Evaluations per run read.
        n_init: The initial design's size.
        endpoints: The endpoints, in report order.
        outcomes: One row per run
            (:func:`~bolt_pco64.bench.protocol.endpoints.run_outcomes`).
        estimates: One row per endpoint and method (:data:`ESTIMATE_COLUMNS`;
            ``letters`` empty in a smoke test).
        pairs: One row per endpoint and pair
            (:data:`~bolt_pco64.bench.protocol.pairs.PAIR_COLUMNS`; empty in a
            smoke test).
        groups: Per endpoint, the groups that cannot be told apart (best
            first; empty in a smoke test).
        levels: Runs per method at each regret level at the budget
            (:func:`regret_levels`).
        initial_hits: The seeds whose initial design holds the optimum.
        min_seeds: The fewest seeds with which a pair of the family can be
            separated at all.
        detectable: The paired standardised effect these seeds detect with
            the design's power (``inf`` in a smoke test).
        design_detectable: The same for the design's own number of seeds.
        left_out: Runs left out because not every method ran their seed.
    """

    problem: str
    design: ProtocolDesign
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    budget: int
    n_init: int
    endpoints: tuple[Endpoint, ...]
    outcomes: pd.DataFrame
    estimates: pd.DataFrame
    pairs: pd.DataFrame
    groups: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    levels: pd.DataFrame = field(default_factory=pd.DataFrame)
    initial_hits: tuple[int, ...] = ()
    min_seeds: int = 1
    detectable: float = math.inf
    design_detectable: float = math.inf
    left_out: int = 0

    @property
    def family_pairs(self) -> int:
        """Pairs per endpoint in the declared family."""
        k = len(self.methods)
        return k * (k - 1) // 2

    @property
    def smoke(self) -> bool:
        """Whether this is a smoke test (too few seeds to compare)."""
        return len(self.seeds) < self.min_seeds

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint called ``name``."""
        for e in self.endpoints:
            if e.name == name:
                return e
        raise KeyError(
            f"Expected one of {[e.name for e in self.endpoints]}, got {name!r}."
        )


def method_estimates(
    outcomes: pd.DataFrame,
    endpoint: Endpoint,
    methods: Sequence[str],
    design: ProtocolDesign = PROTOCOL_DEFAULTS,
) -> pd.DataFrame:
    """Each method's estimate on ``endpoint`` (see the module docstring).

    Returns:
        :data:`ESTIMATE_COLUMNS` but ``letters``, one row per method, best
        estimate first (a larger share reached, then an earlier median
        time; a lower mean), ties in ``methods``' order.
    """
    rows = []
    if endpoint.kind == "value":
        wide = outcomes.pivot(index="seed", columns="method", values=endpoint.name)
        mat = wide.reindex(columns=list(methods)).to_numpy(float).T
        low, high = bootstrap_mean_intervals(
            mat, design.level, design.resamples, keyed_rng(design.seed, endpoint.name)
        )
    for i, m in enumerate(methods):
        sub = outcomes[outcomes["method"] == m]
        x = sub[endpoint.name].to_numpy(float)
        row: dict[str, object] = {
            "endpoint": endpoint.name,
            "method": m,
            "runs": x.size,
        }
        if endpoint.kind == "time":
            ev = sub[f"{endpoint.name}_event"].to_numpy(bool)
            km = kaplan_meier(x, ev, design.level)
            row.update(
                events=int(ev.sum()),
                estimate=km.share,
                low=km.low,
                high=km.high,
                median_time=km.median,
            )
        else:
            row.update(
                events=x.size,
                estimate=float(x.mean()),
                low=float(low[i]),
                high=float(high[i]),
                median_time=math.nan,
            )
        rows.append(row)
    out = pd.DataFrame(rows, columns=[c for c in ESTIMATE_COLUMNS if c != "letters"])
    if endpoint.kind == "time":
        keys = list(
            zip(-out["estimate"], out["median_time"], range(len(out)), strict=True)
        )
    else:
        keys = list(zip(out["estimate"], range(len(out)), strict=True))
    order = sorted(range(len(out)), key=lambda i: keys[i])
    return out.iloc[order].reset_index(drop=True)


def regret_levels(
    outcomes: pd.DataFrame,
    optimal_value: float,
    methods: Sequence[str],
    top: int = 8,
) -> pd.DataFrame:
    """Runs per method at each regret level at the budget.

    The regret is quantised (it is a row's value), so the median over runs
    hides how many runs sit on each level. Levels are the final regret as a
    percentage of the optimal value, to two decimals; the ``top`` most
    common levels overall (ties to the lower level) are columns (by level),
    the rest one column ``"other"``.

    Returns:
        One row per method; columns ``method`` and one per level (labelled
        ``"0 %"``, ``"2.08 %"``, ...), counts of runs.
    """
    pct = np.round(100 * outcomes["final_regret"].to_numpy(float) / optimal_value, 2)
    frame = pd.DataFrame({"method": outcomes["method"].to_numpy(), "level": pct})
    # The most common levels, ties to the lower level: not pandas' own order
    # among equal counts, which changed between pandas 2 and 3.
    counts = frame["level"].value_counts()
    keep = sorted(sorted(counts.index, key=lambda v: (-counts[v], v))[:top])
    keep = [float(v) for v in keep]
    labels = {v: f"{v:g} %" for v in keep}
    frame["column"] = [labels.get(float(v), "other") for v in frame["level"]]
    table = pd.crosstab(frame["method"], frame["column"])
    cols = [labels[v] for v in keep] + (["other"] if "other" in table.columns else [])
    table = table.reindex(index=list(methods), columns=cols, fill_value=0).fillna(0)
    table = table.astype(np.int64).reset_index()
    table.columns.name = None
    return table


def _family(records: pd.DataFrame, methods: Sequence[str] | None) -> tuple[str, ...]:
    """The declared family: ``methods``, each with runs in ``records``, or
    every method of the records in order of appearance."""
    present = method_order(records, None) if "method" in records else []
    family = tuple(methods) if methods is not None else tuple(present)
    absent = [m for m in family if m not in present]
    if absent or len(family) < 1:
        raise ValueError(f"Expected methods among {present}, got {list(family)}.")
    return family


def _compare(
    outcomes: pd.DataFrame,
    endpoints: Sequence[Endpoint],
    family: tuple[str, ...],
    design: ProtocolDesign,
    smoke: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, tuple[tuple[str, ...], ...]]]:
    """Per endpoint the estimates with their letters, every pair and the
    groups (no pairs, groups or letters in a smoke test)."""
    estimates, pair_frames, groups = [], [], {}
    for e in endpoints:
        est = method_estimates(outcomes, e, family, design)
        if smoke:
            est["letters"] = ""
        else:
            pr = compare_pairs(outcomes, e, family, design)
            cut = [
                (a, b)
                for a, b, v in zip(pr["a"], pr["b"], pr["verdict"], strict=True)
                if v == "separated"
            ]
            groups[e.name] = letter_groups(list(est["method"]), cut)
            letters = letters_of(groups[e.name])
            est["letters"] = [letters[m] for m in est["method"]]
            pair_frames.append(pr)
        estimates.append(est)
    pairs = (
        pd.concat(pair_frames, ignore_index=True)
        if pair_frames
        else pd.DataFrame(columns=list(PAIR_COLUMNS))
    )
    all_estimates = pd.concat(estimates, ignore_index=True)[list(ESTIMATE_COLUMNS)]
    return all_estimates, pairs, groups


def run_protocol(
    records: pd.DataFrame,
    optimal_value: float,
    worst_feasible_value: float,
    n_init: int,
    budget: int | None = None,
    methods: Sequence[str] | None = None,
    design: ProtocolDesign = PROTOCOL_DEFAULTS,
    problem: str = "",
) -> ProtocolResult:
    """The protocol on one problem's per-evaluation records.

    Args:
        records: Records of complete runs (:func:`~bolt_pco64.bench.records.record_columns`;
            the protocol reads ``method``, ``seed``, ``iteration``, ``regret``,
            ``feasible`` and, where present, ``gpu_hours``).
        optimal_value: The problem's optimal value.
        worst_feasible_value: Its worst feasible value (the regret before a
            run's first feasible evaluation).
        n_init: The initial design's size.
        budget: Evaluations per run read; default the fewest any run made.
        methods: The declared family, in report order; default every method
            of the records, in order of appearance.
        design: The declared levels, margins and power.
        problem: The problem's name, for the report.

    Returns:
        The :class:`ProtocolResult`.

    Raises:
        ValueError: If a method of ``methods`` has no runs, or see
            :func:`~bolt_pco64.bench.protocol.endpoints.run_outcomes`.
    """
    family = _family(records, methods)
    records = records[records["method"].isin(family)]
    if budget is None:
        budget = int(records.groupby(["method", "seed"])["iteration"].max().min())
    outcomes = run_outcomes(
        records, optimal_value, worst_feasible_value, n_init, budget, design.targets
    )
    cost = any(c.startswith("gpu_hours_to_") for c in outcomes.columns)
    endpoints = declared_endpoints(design, cost=cost)
    per_method = [set(outcomes.loc[outcomes["method"] == m, "seed"]) for m in family]
    seeds = tuple(sorted(set.intersection(*per_method)))
    shared = outcomes["seed"].isin(seeds)
    left_out = int((~shared).sum())
    outcomes = outcomes[shared].reset_index(drop=True)
    pairs_n = max(1, len(family) * (len(family) - 1) // 2)
    floor = min_seeds(pairs_n, design.alpha)
    smoke = len(seeds) < floor or len(family) < 2
    estimates, pairs, groups = _compare(outcomes, endpoints, family, design, smoke)
    hits = outcomes.groupby("seed")["initial_hit"].any()
    return ProtocolResult(
        problem=problem,
        design=design,
        methods=family,
        seeds=seeds,
        budget=budget,
        n_init=n_init,
        endpoints=endpoints,
        outcomes=outcomes,
        estimates=estimates,
        pairs=pairs,
        groups=groups,
        levels=regret_levels(outcomes, optimal_value, family),
        initial_hits=tuple(int(s) for s in hits.index[hits.to_numpy(bool)]),
        min_seeds=floor,
        detectable=(
            math.inf
            if smoke
            else detectable_effect(len(seeds), pairs_n, design.alpha, design.power)
        ),
        design_detectable=detectable_effect(
            len(design.seeds), pairs_n, design.alpha, design.power
        ),
        left_out=left_out,
    )
