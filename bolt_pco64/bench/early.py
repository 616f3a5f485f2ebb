"""Early termination on the harness's simulated clock (``--early-stop``).

A run's steps end at known times on the clock (its start plus
:meth:`~bolt_pco64.tables.time_model.TimeModel.seconds_after_steps`), and after each step
the policy (:mod:`bolt_pco64.bo.early_stop`) judges the run from its partial
estimate (:class:`~bolt_pco64.tables.partial_runs.PartialRuns`) and from what the
experiment knows then: the incumbent (best observed throughput), the runs
whose result came in, and the model's prediction at the configuration.

**Exactly after each step.** What a decision sees changes only when a result
comes in. :meth:`EarlyStopper.plan`, called whenever the clock is about to
move, finds each running job's first step (ending after now) at which the
policy stops it with what is known now, and shortens
(:meth:`~bolt_pco64.bench.clock.SimulatedClock.shorten`) only those whose stop
comes no later than the next result: until then nothing changes, so the
decision is the one a check after every step would make. The others are
judged again after that result. A check at a step that ends at time ``t``
sees the results that came in before ``t``.

**What a stopped run costs and reports.** It is charged start-up plus the
steps it ran and ends early on the clock (its worker frees then). Its result
is the partial estimate at its last step (plus the harness's noise draw for
the row, when ``noise`` is set, as for a complete run); the method sees it in
``ctx.y`` like any other observation (why the estimate and not a censored
"below x": ``docs/early-termination.md``); its standard error is not passed
on. A stopped run does not count as *found* in the records'
``best_feasible`` and ``regret``.

**The prior** of ``posterior`` is the method's prediction
(:meth:`~bolt_pco64.bench.contract.Method.predict`) when it proposed the
configuration: its model's posterior mean and variance (of the latent
function) there. Methods without a model (``predict`` returns ``None``), and
the initial design, have a flat prior: the rule reads the steps alone
(``bolt_pco64.bo.early_stop``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from numpy.typing import NDArray

from bolt_pco64.bo.early_stop import (
    EarlyStopPolicy,
    Evidence,
    StepEstimates,
    get_policy,
)

if TYPE_CHECKING:
    from bolt_pco64.bench.clock import Job, SimulatedClock
    from bolt_pco64.bench.contract import Prediction
    from bolt_pco64.tables.partial_runs import PartialRuns

__all__ = ["EarlyStopper", "StepResult", "prediction_prior"]


@dataclass(frozen=True)
class StepResult:
    """How an evaluation ended.

    Attributes:
        obs: What it reports (the partial estimate of a stopped run).
        steps_run: Recorded steps it ran (0 for a crash).
        stopped: Whether it was stopped early.
    """

    obs: float
    steps_run: int
    stopped: bool


def prediction_prior(
    prediction: Prediction | None, q: int
) -> list[tuple[float, float] | None]:
    """Each of ``q`` configurations' prior ``(mean, variance)`` from a
    method's :class:`~bolt_pco64.bench.contract.Prediction` there (the
    variance kept positive); ``None`` each without one.

    Raises:
        ValueError: If the prediction does not hold ``q`` means and variances.
    """
    if prediction is None:
        return [None] * q
    mean = torch.as_tensor(prediction[0]).reshape(-1)
    var = torch.as_tensor(prediction[1]).reshape(-1)
    if mean.numel() != q or var.numel() != q:
        raise ValueError(
            f"Expected a prediction of {q} means and variances, got "
            f"{mean.numel()} and {var.numel()}."
        )
    return list(zip(mean.tolist(), var.clamp_min(1e-300).tolist(), strict=True))


class EarlyStopper:
    """One run's early termination on its clock (see the module docstring).

    Args:
        policy: A policy or its name (:data:`~bolt_pco64.bo.early_stop.EARLY_STOP_POLICIES`).
        partial: The partial runs of the run's table (shared by every run on
            it; only read).
    """

    def __init__(self, policy: str | EarlyStopPolicy, partial: PartialRuns) -> None:
        self.policy = get_policy(policy)
        self.partial = partial
        n = partial.n_steps
        est = partial.every_step
        width = est.throughput.shape[1]
        beyond = np.arange(width)[None, :] > n[:, None]
        self._thr = np.where(beyond, np.nan, est.throughput)
        self._se = est.stderr
        self._inl = est.n_inliers
        self._seconds = est.seconds
        self._hours = est.gpu_hours
        self._width = width
        self._stops: dict[int, int] = {}  # job id -> steps it stops after
        self._peers: list[NDArray[np.float64]] = []
        self._completed = 0
        self._best = -np.inf

    @property
    def active(self) -> bool:
        """Whether the policy can stop anything."""
        return self.policy.name != "none"

    @property
    def needs_prior(self) -> bool:
        """Whether the policy reads the model's prediction."""
        return self.policy.needs_prior

    def plan(self, clock: SimulatedClock[Any], true_y: torch.Tensor) -> None:
        """Shorten the running jobs that the policy stops before the next result.

        Args:
            clock: The run's clock, about to advance.
            true_y: ``N``-dim tensor of the rows' true throughput (to recover
                each job's noise draw from its observation).
        """
        if not self.active:
            return
        running = clock.running
        if not running:
            return
        next_end = min(j.end for j in running)
        stops = []
        for job in running:
            if job.id in self._stops:
                continue
            found = self._first_stop(job, clock.now, float(true_y[job.item.row]))
            if found is not None:
                stops.append(found)
        if not stops:
            return
        soonest = min(next_end, min(t for t, _, _ in stops))
        for t, job, k in stops:
            if t <= soonest:
                r = job.item.row
                clock.shorten(job, float(self._seconds[r, k]), float(self._hours[r, k]))
                self._stops[job.id] = k

    def _first_stop(
        self, job: Job[Any], now: float, true: float
    ) -> tuple[float, Job[Any], int] | None:
        r = job.item.row
        n = int(self.partial.n_steps[r])
        if not self.partial.feasible[r] or n < 2:
            return None
        ks = np.arange(1, n)
        ends = job.start + self._seconds[r, ks]
        offset = job.item.obs - true
        prior = getattr(job.item, "prior", None)
        evidence = Evidence(
            incumbent=float(self._best) if np.isfinite(self._best) else None,
            prior_mean=None if prior is None else prior[0],
            prior_var=None if prior is None else prior[1],
            peers=self._peer_matrix()[:, ks],
            completed=self._completed,
        )
        run = StepEstimates(
            steps=ks,
            throughput=self._thr[r, ks] + offset,
            stderr=self._se[r, ks],
            n_inliers=self._inl[r, ks],
        )
        mask = self.policy.stops(run, evidence) & (ends > now)
        if not mask.any():
            return None
        i = int(np.argmax(mask))
        return float(job.start + self._seconds[r, ks[i]]), job, int(ks[i])

    def _peer_matrix(self) -> NDArray[np.float64]:
        if not self._peers:
            return np.full((0, self._width), np.nan)
        return np.stack(self._peers)

    def result(self, job: Job[Any], obs: float, true: float) -> StepResult:
        """What ``job`` reports now that it ended; records it as evidence.

        Args:
            job: The job that ended.
            obs: The observation drawn for its row (a complete run's).
            true: The row's true throughput (NaN for a crash).
        """
        r = job.item.row
        n = int(self.partial.n_steps[r])
        k = self._stops.pop(job.id, None)
        if k is None:
            out = StepResult(obs, n if self.partial.feasible[r] else 0, False)
            if self.partial.feasible[r]:
                self._completed += 1
        else:
            out = StepResult(float(self._thr[r, k] + (obs - true)), k, True)
        if self.partial.feasible[r]:
            offset = obs - true
            curve = self._thr[r] + offset
            curve[out.steps_run + 1 :] = np.nan
            self._peers.append(curve)
        if np.isfinite(out.obs):
            self._best = max(self._best, out.obs)
        return out
