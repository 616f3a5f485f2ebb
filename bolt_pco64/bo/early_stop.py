"""Early termination: stop a run whose steps so far show it will not beat the best.

After each training step a run has a throughput estimate and its standard
error (:mod:`bolt_pco64.tables.partial_runs`, the runner's estimators). A *policy* decides
from them whether to stop the run there; a stopped run costs only the steps it
ran (:meth:`bolt_pco64.tables.time_model.TimeModel.seconds_after_steps`). Two policies,
both plain functions of numbers, so they work in any loop (the harness's,
``bolt-pco64 bench --early-stop``, or a user's own):

**posterior** (:class:`PosteriorStop`): the rule of the public runner of this
problem (``apivich-h/oppa``, which writes the pco tables' columns), written from
its description. The model's
prediction at the configuration, ``N(prior_mean, prior_var)`` (a GP's
posterior at the point when the run was proposed), and the steps' estimate
``N(estimate, stderr**2)`` (the likelihood) are combined as two normals:

    var = 1 / (1 / prior_var + 1 / stderr**2),
    mean = var * (prior_mean / prior_var + estimate / stderr**2).

The run stops after a step where **all** of

1. the improvement criterion over the incumbent (the best throughput observed
   so far) is below ``threshold x |incumbent|`` under the posterior *and*
   under the likelihood alone: expected improvement
   ``sigma * (z Phi(z) + phi(z))`` with ``z = (mean - incumbent) / sigma``
   (``criterion="ei"``), or the UCB improvement
   ``max(mean + ucb_beta * sigma - incumbent, 0)`` (``criterion="ucb"``);
2. the estimate is below ``incumbent + margin x |incumbent|``;
3. the estimate used at least ``min_inliers`` inlier steps.

Without a model (a model-free method, or before the first fit) the prior is
flat (``prior_var = inf``): the posterior is the likelihood, and the rule
reads the steps alone. The runner's thresholds are absolute in its own unit;
here ``threshold`` and ``margin`` are relative to the incumbent so that one
default fits any table's unit. Without an incumbent (nothing feasible
observed yet) nothing is stopped.

**percentile** (:class:`PercentileStop`): Ax's
``PercentileEarlyStoppingStrategy`` (``ax/early_stopping/strategies/
percentile.py``) on steps: a run is stopped after step ``k`` when its estimate
there is *below* the ``percentile``-th percentile (linear interpolation, as
pandas' ``quantile``) of the estimates at step ``k`` of the runs with data
there, itself included, once

- ``k >= min_progression`` (Ax's ``min_progression``, in recorded steps,
  warm-up included), and
- at least ``min_curves`` runs have *completed* (not stopped, not crashed:
  Ax counts ``COMPLETED`` trials) and at least ``min_curves`` runs have an
  estimate at step ``k`` (Ax's check of the trials with data at the
  progression).

It needs no model, so it works with every method. The peers are the runs
whose result came in (completed ones at every step, stopped ones up to the
step they stopped at); Ax also counts the running trials' data to date, which
the harness leaves out so that what a decision sees changes only when a
result comes in.

The defaults live in one place, :data:`EARLY_STOP_DEFAULTS`; the registry of
policies by name is :data:`EARLY_STOP_POLICIES` (``"none"`` stops nothing).
Everything is NumPy on the CPU; arrays broadcast, so one call can decide every
step of a run at once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from bolt_pco64.params import POSITIVE_INT, Interval, check_param, check_params

__all__ = [
    "EARLY_STOP_DEFAULTS",
    "EARLY_STOP_POLICIES",
    "EarlyStopDefaults",
    "EarlyStopPolicy",
    "Evidence",
    "NoStop",
    "PercentileStop",
    "PosteriorStop",
    "StepEstimates",
    "expected_improvement",
    "get_policy",
    "normal_posterior",
    "ucb_improvement",
]

Criterion = Literal["ei", "ucb"]


@dataclass(frozen=True)
class EarlyStopDefaults:
    """The defaults of the early-termination policies (one place).

    Attributes:
        criterion: ``posterior``'s improvement criterion, ``"ei"`` or
            ``"ucb"`` (the runner's two).
        threshold: ``posterior`` stops when the criterion is below
            ``threshold x |incumbent|`` (the runner's default is 0.001 in its
            own unit; here relative: 0.1 % of the incumbent).
        margin: ``posterior`` stops only an estimate below ``incumbent +
            margin x |incumbent|`` (the runner's default: 0).
        min_inliers: ``posterior`` decides only from at least this many inlier
            steps (the runner's default: 5).
        ucb_beta: The UCB's width in standard deviations (the runner's
            default acquisition ``beta``: 1).
        percentile: ``percentile`` stops runs below this percentile of the
            runs at the same step (Ax's default: 50).
        min_progression: ``percentile`` decides only after this many recorded
            steps (warm-up included). 6 is the warm-up plus ``min_inliers``
            timed steps: the evidence ``posterior`` asks for.
        min_curves: ``percentile`` decides only once this many runs have
            completed, and this many have data at the step (Ax's default: 5).
    """

    criterion: Criterion = "ei"
    threshold: float = 1e-3
    margin: float = 0.0
    min_inliers: int = 5
    ucb_beta: float = 1.0
    percentile: float = 50.0
    min_progression: int = 6
    min_curves: int = 5


#: The defaults used when no other value is passed.
EARLY_STOP_DEFAULTS = EarlyStopDefaults()


def normal_posterior(
    prior_mean: ArrayLike, prior_var: ArrayLike, mean: ArrayLike, var: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The product of two normals, ``N(prior_mean, prior_var) x N(mean, var)``.

    A prior variance of ``inf`` is a flat prior: the result is ``(mean, var)``.
    Arrays broadcast.

    Returns:
        ``(posterior mean, posterior variance)``.
    """
    pm, pv, m, v = (
        np.asarray(a, dtype=np.float64) for a in (prior_mean, prior_var, mean, var)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = 1.0 / pv + 1.0 / v
        post_var = 1.0 / prec
        weighted = np.where(np.isinf(pv), 0.0, pm / pv) + m / v
        post_mean = post_var * weighted
    return post_mean, post_var


def expected_improvement(
    mean: ArrayLike, std: ArrayLike, best: ArrayLike
) -> NDArray[np.float64]:
    """``E[max(Y - best, 0)]`` for ``Y ~ N(mean, std**2)`` (``std = 0``: the
    plain improvement). Arrays broadcast."""
    m, s, b = (np.asarray(a, dtype=np.float64) for a in (mean, std, best))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (m - b) / s
        pdf = np.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)
        ei = s * (z * ndtr(z) + pdf)
    return np.where(s > 0, ei, np.maximum(m - b, 0.0))


def ucb_improvement(
    mean: ArrayLike, std: ArrayLike, best: ArrayLike, beta: float
) -> NDArray[np.float64]:
    """``max(mean + beta * std - best, 0)``. Arrays broadcast."""
    m, s, b = (np.asarray(a, dtype=np.float64) for a in (mean, std, best))
    return np.maximum(m + beta * s - b, 0.0)


@dataclass(frozen=True)
class StepEstimates:
    """One run's estimates after some steps, each a ``batch_shape``-dim array
    (e.g. one entry per step, for deciding every step at once).

    Attributes:
        steps: Recorded steps seen (warm-up included).
        throughput: The estimate (NaN: none yet; never stops).
        stderr: Its standard error.
        n_inliers: Inlier steps the estimate used.
    """

    steps: ArrayLike
    throughput: ArrayLike
    stderr: ArrayLike
    n_inliers: ArrayLike


def _no_peers() -> NDArray[np.float64]:
    return np.zeros((0, 1))


@dataclass(frozen=True)
class Evidence:
    """What the rest of the experiment says when a run is judged.

    Attributes:
        incumbent: The best throughput observed so far, ``None`` before the
            first feasible result.
        prior_mean: The model's predicted throughput at the run's
            configuration, ``None`` without a model (a flat prior).
        prior_var: Its variance (``> 0``), ``None`` without a model.
        peers: ``m x batch_shape``-dim array: the estimates of ``m`` other
            runs at the same steps as the judged run's, NaN where a run has no
            data at that step (``percentile``).
        completed: How many runs have completed (``percentile``'s
            ``min_curves``).
    """

    incumbent: float | None = None
    prior_mean: float | None = None
    prior_var: float | None = None
    peers: NDArray[np.float64] = field(default_factory=_no_peers)
    completed: int = 0


class EarlyStopPolicy:
    """A rule deciding, after a step, whether to stop a run.

    Attributes:
        name: The registry name (:data:`EARLY_STOP_POLICIES`).
        needs_prior: Whether :class:`Evidence`'s prior is read (the harness
            then asks the method's model for it).
        needs_peers: Whether :class:`Evidence`'s peers are read.
    """

    name: str = ""
    needs_prior: bool = False
    needs_peers: bool = False

    def stops(self, run: StepEstimates, evidence: Evidence) -> NDArray[np.bool_]:
        """``batch_shape``-dim bool array: stop after each of ``run``'s entries?"""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NoStop(EarlyStopPolicy):
    """Stops nothing (``--early-stop none``)."""

    name = "none"

    def stops(self, run: StepEstimates, evidence: Evidence) -> NDArray[np.bool_]:
        return np.zeros(np.shape(np.asarray(run.throughput)), dtype=bool)


#: Thresholds and widths: any finite number ``>= 0``.
_NON_NEGATIVE = Interval(Real, 0, None)


class PosteriorStop(EarlyStopPolicy):
    """The runner's posterior-improvement rule (see the module docstring).

    Args:
        criterion: ``"ei"`` or ``"ucb"``.
        threshold: Stop below ``threshold x |incumbent|`` (``>= 0``).
        margin: Stop only an estimate below ``incumbent + margin x |incumbent|``.
        min_inliers: Fewest inlier steps a decision uses (``>= 1``).
        ucb_beta: The UCB's width (``>= 0``).

    Raises:
        ValueError: On an invalid setting.
    """

    name = "posterior"
    needs_prior = True

    def __init__(
        self,
        criterion: Criterion = EARLY_STOP_DEFAULTS.criterion,
        threshold: float = EARLY_STOP_DEFAULTS.threshold,
        margin: float = EARLY_STOP_DEFAULTS.margin,
        min_inliers: int = EARLY_STOP_DEFAULTS.min_inliers,
        ucb_beta: float = EARLY_STOP_DEFAULTS.ucb_beta,
    ) -> None:
        if criterion not in ("ei", "ucb"):
            raise ValueError(f"Expected criterion 'ei' or 'ucb', got {criterion!r}.")
        check_param("threshold", threshold, _NON_NEGATIVE)
        check_param("margin", margin, Interval(Real))
        check_param("min_inliers", min_inliers, POSITIVE_INT)
        check_param("ucb_beta", ucb_beta, _NON_NEGATIVE)
        self.criterion: Criterion = criterion
        self.threshold, self.margin = float(threshold), float(margin)
        self.min_inliers, self.ucb_beta = int(min_inliers), float(ucb_beta)

    def __repr__(self) -> str:
        return (
            f"PosteriorStop(criterion={self.criterion!r}, threshold={self.threshold}, "
            f"margin={self.margin}, min_inliers={self.min_inliers}, "
            f"ucb_beta={self.ucb_beta})"
        )

    def _criterion(self, mean: NDArray, var: NDArray, best: float) -> NDArray:
        std = np.sqrt(var)
        if self.criterion == "ei":
            return expected_improvement(mean, std, best)
        return ucb_improvement(mean, std, best, self.ucb_beta)

    def stops(self, run: StepEstimates, evidence: Evidence) -> NDArray[np.bool_]:
        est = np.asarray(run.throughput, dtype=np.float64)
        if evidence.incumbent is None or not math.isfinite(evidence.incumbent):
            return np.zeros(est.shape, dtype=bool)
        best = float(evidence.incumbent)
        var = np.asarray(run.stderr, dtype=np.float64) ** 2
        if evidence.prior_mean is None or evidence.prior_var is None:
            prior_mean, prior_var = 0.0, math.inf
        else:
            prior_mean, prior_var = evidence.prior_mean, evidence.prior_var
        post_mean, post_var = normal_posterior(prior_mean, prior_var, est, var)
        bar = self.threshold * abs(best)
        with np.errstate(invalid="ignore"):
            out = (
                (self._criterion(post_mean, post_var, best) < bar)
                & (self._criterion(est, var, best) < bar)
                & (est < best + self.margin * abs(best))
                & (np.asarray(run.n_inliers) >= self.min_inliers)
            )
        return np.where(np.isfinite(est), out, False)


class PercentileStop(EarlyStopPolicy):
    """Ax's percentile rule on steps (see the module docstring).

    Args:
        percentile: Stop below this percentile of the runs at the same step
            (in ``[0, 100]``).
        min_progression: Decide only after this many recorded steps (``>= 1``).
        min_curves: Decide only once this many runs completed, and this many
            have data at the step (``>= 1``).

    Raises:
        ValueError: On an invalid setting.
    """

    name = "percentile"
    needs_peers = True

    def __init__(
        self,
        percentile: float = EARLY_STOP_DEFAULTS.percentile,
        min_progression: int = EARLY_STOP_DEFAULTS.min_progression,
        min_curves: int = EARLY_STOP_DEFAULTS.min_curves,
    ) -> None:
        check_param("percentile", percentile, Interval(Real, 0, 100))
        check_params(
            {"min_progression": min_progression, "min_curves": min_curves},
            dict.fromkeys(("min_progression", "min_curves"), POSITIVE_INT),
        )
        self.percentile = float(percentile)
        self.min_progression, self.min_curves = int(min_progression), int(min_curves)

    def __repr__(self) -> str:
        return (
            f"PercentileStop(percentile={self.percentile}, "
            f"min_progression={self.min_progression}, min_curves={self.min_curves})"
        )

    def stops(self, run: StepEstimates, evidence: Evidence) -> NDArray[np.bool_]:
        est = np.asarray(run.throughput, dtype=np.float64)
        if evidence.completed < self.min_curves:
            return np.zeros(est.shape, dtype=bool)
        peers = np.asarray(evidence.peers, dtype=np.float64)
        m = peers.shape[0] if peers.ndim else 0
        try:
            peers = peers.reshape(m, *est.shape)
        except ValueError:
            raise ValueError(
                f"Expected peers of shape (m, {', '.join(map(str, est.shape))}) for "
                f"estimates of shape {est.shape}, got {np.shape(evidence.peers)}."
            ) from None
        values = np.concatenate([peers, est[None]], axis=0)
        count = np.isfinite(values).sum(axis=0)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN steps
            bar = np.nanpercentile(values, self.percentile, axis=0)
            out = (
                (est < bar)
                & (np.asarray(run.steps) >= self.min_progression)
                & (count >= self.min_curves)
            )
        return np.where(np.isfinite(est), out, False)


#: The policies by name (``--early-stop``), each built with the defaults.
EARLY_STOP_POLICIES: Mapping[str, type[EarlyStopPolicy]] = MappingProxyType(
    {
        "none": NoStop,
        "posterior": PosteriorStop,
        "percentile": PercentileStop,
    }
)


def get_policy(policy: str | EarlyStopPolicy) -> EarlyStopPolicy:
    """A policy by name (with :data:`EARLY_STOP_DEFAULTS`), or ``policy`` itself.

    Raises:
        ValueError: If the name is not in :data:`EARLY_STOP_POLICIES`.
    """
    if isinstance(policy, EarlyStopPolicy):
        return policy
    try:
        return EARLY_STOP_POLICIES[policy]()
    except (KeyError, TypeError):
        raise ValueError(
            f"Expected an early-stop policy of {sorted(EARLY_STOP_POLICIES)}, got "
            f"{policy!r}."
        ) from None
