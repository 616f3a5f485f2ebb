"""The pco problems as OptunaHub benchmark problems (the optional ``optuna`` extra).

:class:`PCOProblem` follows OptunaHub's benchmark interface
(:class:`optunahub.benchmarks.BaseProblem` with
:class:`~optunahub.benchmarks.ConstrainedMixin`): a problem object is itself the
objective of ``study.optimize``::

    problem = PCOProblem("pco64")
    study = optuna.create_study(directions=problem.directions)
    study.optimize(problem, n_trials=40)

Its search space is one :class:`~optuna.distributions.IntDistribution` per
input column over the encoded levels of the loaded table; a combination that
is not a row snaps to the nearest row, as in the BoTorch problem; the
objective is ``throughput_mean`` and the constraint ``peak_mem_normalised``
(set on every trial); a crash reports as ``crash_report`` says
(:data:`~bolt_pco64.integrations.common.crash.CrashReport`), and the trial's
``user_attrs`` record the row that ran and its seconds (:data:`ROW_ATTR`,
:data:`ROW_PARAMS_ATTR`, :data:`FEASIBLE_ATTR`, :data:`SECONDS_ATTR`).
:class:`OptunaTPE`, :class:`OptunaGP` and :class:`OptunaRandom` are Optuna's
samplers as methods of the benchmark harness (:class:`OptunaMethod` over a
:class:`StudyProposer`). Each choice, and the measurements behind the
defaults: ``docs/optuna.md``.

The core package never imports this module; import it as
``bolt_pco64.integrations.optuna`` after ``pip install 'bolt_pco64[optuna]'``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import optuna
import optunahub
from optuna.distributions import BaseDistribution, IntDistribution
from optuna.samplers import BaseSampler
from optuna.study import StudyDirection
from optuna.trial import BaseTrial, TrialState
from torch import Tensor

from bolt_pco64.instances import Instance
from bolt_pco64.integrations.common import (
    CONSTRAINT_NAME,
    CRASH_REPORTS,
    DEFAULT_CRASH_REPORT,
    OBJECTIVE_NAME,
    AskTellBridge,
    BridgeMethod,
    CrashPolicy,
    CrashReport,
    Evaluation,
    TableRuns,
    check_crash_report,
    get_problem,
)
from bolt_pco64.problem import PCO, TableLike

__all__ = [
    "CONSTRAINT_NAME",
    "CRASH_REPORTS",
    "DEFAULT_CRASH_REPORT",
    "FEASIBLE_ATTR",
    "OBJECTIVE_NAME",
    "ROW_ATTR",
    "ROW_PARAMS_ATTR",
    "SAMPLERS",
    "SECONDS_ATTR",
    "AskTell",
    "CrashReport",
    "OptunaGP",
    "OptunaMethod",
    "OptunaRandom",
    "OptunaTPE",
    "PCOProblem",
    "SamplerName",
    "StudyProposer",
]

#: ``trial.user_attrs`` key of the canonical index of the row that ran.
ROW_ATTR = "row"
#: ``trial.user_attrs`` key of the row's encoded inputs (what ran, by name).
ROW_PARAMS_ATTR = "row_params"
#: ``trial.user_attrs`` key of whether the row ran (the card's ``ran_successfully``).
FEASIBLE_ATTR = "ran_successfully"
#: ``trial.user_attrs`` key of the run's wall-clock seconds under the time
#: model (:func:`~bolt_pco64.integrations.common.runs.run_seconds`: the start-up plus
#: ``overall_time``; a crash the start-up, the steps it recorded if any and the
#: step in which memory ran out).
SECONDS_ATTR = "run_seconds"


class PCOProblem(
    optunahub.benchmarks.ConstrainedMixin, optunahub.benchmarks.BaseProblem
):
    """A pco instance as an OptunaHub benchmark problem (see the module docstring).

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`, or a problem to serve as
            it is: :func:`~bolt_pco64.integrations.common.problem.get_problem`).
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources).
        crash_report: How a crashed row is reported: ``"placeholder"``,
            ``"missing"`` or ``"failed"``
            (:data:`~bolt_pco64.integrations.common.crash.CrashReport`).
        crash_value: The placeholder objective of a crash (``"placeholder"``
            only); default the table's worst feasible throughput
            (:class:`~bolt_pco64.integrations.common.crash.CrashPolicy`).

    Raises:
        ValueError: For an unknown instance or crash report, or (under
            ``"placeholder"``) a ``crash_value`` that is not a finite number.
    """

    def __init__(
        self,
        instance: str | Instance | PCO = "pco64",
        *,
        table: TableLike = None,
        crash_report: CrashReport = DEFAULT_CRASH_REPORT,
        crash_value: float | None = None,
    ) -> None:
        report = check_crash_report(crash_report)
        self.problem: PCO = get_problem(instance, table)
        self.policy = CrashPolicy.for_problem(self.problem, report, crash_value)
        self.runs = TableRuns(self.problem, scale="encoded")
        self.parameters = self.runs.parameters
        self._space: dict[str, BaseDistribution] = {
            name: IntDistribution(low, high)
            for name, (low, high) in self.parameters.bounds.items()
        }

    @property
    def crash_report(self) -> CrashReport:
        """How a crashed row is reported (the report of its ``policy``, a
        :class:`~bolt_pco64.integrations.common.crash.CrashPolicy`)."""
        return self.policy.report

    @property
    def crash_value(self) -> float:
        """The placeholder objective of a crash (the placeholder of its ``policy``, a
        :class:`~bolt_pco64.integrations.common.crash.CrashPolicy`)."""
        return self.policy.placeholder

    @property
    def instance(self) -> Instance:
        """The instance served."""
        return self.problem.instance

    @property
    def search_space(self) -> dict[str, BaseDistribution]:
        """One ``IntDistribution`` per input column, by name, in ``X`` order."""
        return dict(self._space)

    @property
    def directions(self) -> list[StudyDirection]:
        """``[MAXIMIZE]``: throughput is maximised."""
        return [StudyDirection.MAXIMIZE]

    def run(self, params: Mapping[str, Any]) -> Evaluation:
        """What running ``params`` reports: the snapped row and its outcome.

        ``params`` maps every knob to its encoded value (the search space's);
        it is run by :class:`~bolt_pco64.integrations.common.runs.TableRuns`
        (nearest row, as in the BoTorch problem).

        Raises:
            ValueError: If a knob is missing, or a value is not an integer of
                its distribution's range.
        """
        return self.runs(params)

    def row(self, params: Mapping[str, Any]) -> int:
        """The canonical index of the row ``params`` snaps to (see :meth:`run`)."""
        return self.parameters.row(params)

    def row_params(self, row: int) -> dict[str, int]:
        """The encoded inputs of table row ``row``, by name."""
        return self.parameters.of_row(row)

    def evaluate(self, params: dict[str, Any]) -> float:
        """The snapped row's throughput; a crash: the placeholder, or NaN."""
        objective = self.policy.objective(self.run(params))
        return math.nan if objective is None else objective

    def evaluate_constraints(self, params: dict[str, Any]) -> dict[str, float]:
        """``{CONSTRAINT_NAME: peak_mem_normalised}`` of the snapped row (``<= 0`` iff it ran)."""
        return {CONSTRAINT_NAME: self.run(params).margin}

    def __call__(self, trial: optuna.Trial) -> float:
        """The objective of ``study.optimize``: suggest, snap, record, report.

        Sets the constraint and the row's attributes on ``trial``, then returns
        the objective (NaN, hence a FAIL trial, for a crash under ``"failed"``).

        Raises:
            optuna.TrialPruned: For a crash under ``"missing"``.
        """
        params = {
            name: trial.suggest_int(name, dist.low, dist.high)  # type: ignore[attr-defined]
            for name, dist in self._space.items()
        }
        outcome = self.run(params)
        row = outcome.row
        state, value = self.report(trial, row, outcome.throughput, outcome.margin)
        if state == TrialState.PRUNED:
            raise optuna.TrialPruned(f"Row {row} ran out of memory.")
        return math.nan if value is None else value

    def report(
        self, trial: BaseTrial, row: int, observed: float, margin: float
    ) -> tuple[TrialState, float | None]:
        """Record an evaluation of ``row`` on ``trial`` and say how to tell it.

        Sets the constraint and :data:`ROW_ATTR`, :data:`ROW_PARAMS_ATTR`,
        :data:`FEASIBLE_ATTR` and :data:`SECONDS_ATTR` on ``trial``. For ask-and-tell:
        ``study.tell(trial, value, state=state)``.

        Args:
            trial: The trial that evaluated ``row``.
            row: The canonical index of the row that ran.
            observed: Its observed throughput, NaN for a crash.
            margin: Its ``peak_mem_normalised``.

        Returns:
            ``(state, value)``: COMPLETE with the objective (the placeholder for
            a crash under ``"placeholder"``), or FAIL (``"failed"``) / PRUNED
            (``"missing"``) with ``None``.
        """
        crashed = math.isnan(observed)
        trial.set_constraint(CONSTRAINT_NAME, float(margin))
        trial.set_user_attr(ROW_ATTR, int(row))
        trial.set_user_attr(ROW_PARAMS_ATTR, self.row_params(row))
        trial.set_user_attr(FEASIBLE_ATTR, not crashed)
        trial.set_user_attr(SECONDS_ATTR, float(self.runs.seconds[row]))
        if not crashed:
            return TrialState.COMPLETE, float(observed)
        value = self.policy.crash_objective
        if value is None:
            return TrialState.PRUNED, None
        if math.isnan(value):
            return TrialState.FAIL, None
        return TrialState.COMPLETE, value

    def __repr__(self) -> str:
        return f"PCOProblem({self.instance.name!r}, crash_report={self.crash_report!r})"


class StudyProposer:
    """An Optuna study as the ask-and-tell bridge's proposer.

    Implements :class:`~bolt_pco64.integrations.common.bridge.Proposer` for
    :class:`~bolt_pco64.integrations.common.bridge.AskTellBridge`: a proposal is a
    trial asked over the problem's search space; an adopted configuration is
    enqueued (``study.enqueue_trial``) and asked, so the sampler sees the same
    parameters; an outcome is recorded and told as the problem's crash policy
    says (:meth:`PCOProblem.report`).

    Args:
        problem: The Optuna problem (its search space, snapping and crash
            report).
        sampler: The Optuna sampler, seeded by the caller.
    """

    def __init__(self, problem: PCOProblem, sampler: BaseSampler) -> None:
        self.problem = problem
        # Optuna logs every study it creates at INFO; a harness run creates one
        # per run, so that line alone is held back (the user's levels stay).
        created = logging.getLogger("optuna")
        level = created.level
        created.setLevel(max(level, logging.WARNING))
        try:
            self.study = optuna.create_study(
                directions=problem.directions, sampler=sampler
            )
        finally:
            created.setLevel(level)

    def propose(self) -> tuple[optuna.Trial, Mapping[str, int]]:
        """A new trial over the search space and its parameters."""
        trial = self.study.ask(self.problem.search_space)
        return trial, trial.params

    def adopt(self, params: Mapping[str, int]) -> optuna.Trial:
        """A new trial of ``params``, enqueued so the sampler sees them."""
        self.study.enqueue_trial(dict(params))
        return self.study.ask(self.problem.search_space)

    def observe(self, trial: optuna.Trial, outcome: Evaluation) -> None:
        """Record ``outcome`` on ``trial`` and tell the study."""
        state, value = self.problem.report(
            trial, outcome.row, outcome.throughput, outcome.margin
        )
        self.study.tell(trial, value, state=state)


class AskTell:
    """An Optuna sampler choosing pco configurations through ask-and-tell.

    The loop of a user who evaluates configurations outside Optuna, in the
    harness's terms (points and rows): the
    :class:`~bolt_pco64.integrations.common.bridge.AskTellBridge` over a
    :class:`StudyProposer`. :meth:`ask` proposes points (a trial's suggested
    parameters, in ``X`` order; the evaluator snaps them to rows), :meth:`tell`
    reports the evaluations; a reported row that no pending trial ran becomes
    an enqueued trial of its own first, a row that a pending trial ran
    completes the oldest such trial.

    Args:
        problem: The Optuna problem (its search space, snapping and crash
            report).
        sampler: The Optuna sampler, seeded by the caller.
    """

    def __init__(self, problem: PCOProblem, sampler: BaseSampler) -> None:
        self.problem = problem
        self.proposer = StudyProposer(problem, sampler)
        self.bridge: AskTellBridge[optuna.Trial] = AskTellBridge(
            problem.runs, self.proposer
        )

    @property
    def study(self) -> optuna.Study:
        """The study the trials belong to."""
        return self.proposer.study

    @property
    def pending(self) -> list[int]:
        """The rows of the trials asked and not told yet, oldest first."""
        return self.bridge.pending

    def ask(self, q: int = 1) -> Tensor:
        """``q`` new trials' suggestions as a ``q x d``-dim float64 tensor.

        Raises:
            ValueError: If ``q < 1``.
        """
        return self.bridge.ask_points(q)

    def tell(
        self, rows: Sequence[int], y: Sequence[float], margin: Sequence[float]
    ) -> None:
        """Complete the study's trials that ran ``rows`` (enqueuing a trial for
        a row none ran), in the order the evaluations were made.

        The arguments and errors are the bridge's
        (:meth:`~bolt_pco64.integrations.common.bridge.AskTellBridge.tell_rows`).
        """
        self.bridge.tell_rows(rows, y, margin)


SamplerName = Literal["tpe", "gp", "random"]
#: Optuna's samplers offered as harness methods, by name. Each takes its seed
#: and keeps every other option at Optuna's default.
SAMPLERS: Mapping[str, Callable[[int], BaseSampler]] = MappingProxyType(
    {
        "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
        "gp": lambda seed: optuna.samplers.GPSampler(seed=seed),
        "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    }
)


class OptunaMethod(BridgeMethod):
    """An Optuna sampler as a harness method, through ask-and-tell.

    A :class:`~bolt_pco64.integrations.common.bridge.BridgeMethod` whose bridge's
    proposer is one Optuna study per run (:class:`StudyProposer`, kept in
    ``ctx.state`` under ``"optuna"``): the run's initial design is told as
    enqueued trials with the rows' parameters, afterwards the rows this
    method's trials ran; a point that snaps to a row already evaluated is a
    repeat under the harness's repeat policy (:mod:`bolt_pco64.bench.proposals`),
    and the trial is told that row's observation. The sampler is seeded by the
    first step's ``ctx.step_seed``. Optuna's proposal time (model fit and
    acquisition together) is recorded as acquisition time; the harness
    recommends the best observed configuration (Optuna's GP is not a BoTorch
    model it could re-condition).

    Args:
        sampler: ``"tpe"``, ``"gp"`` or ``"random"`` (:data:`SAMPLERS`).
        crash_report: How a crash is told to the sampler
            (:data:`~bolt_pco64.integrations.common.crash.CrashReport`).

    Raises:
        ValueError: For an unknown sampler or crash report.
    """

    state_key = "optuna"

    def __init__(
        self,
        sampler: SamplerName = "tpe",
        crash_report: CrashReport = DEFAULT_CRASH_REPORT,
    ) -> None:
        if sampler not in SAMPLERS:
            raise ValueError(
                f"Expected `sampler` in {sorted(SAMPLERS)}, got {sampler!r}."
            )
        super().__init__(crash_report)
        self.sampler: SamplerName = sampler

    def bridge(self, problem: PCO, seed: int) -> AskTellBridge[optuna.Trial]:
        """The bridge of one run: a study of ``problem`` with the seeded sampler."""
        optuna_problem = PCOProblem(problem, crash_report=self.crash_report)
        return AskTell(optuna_problem, SAMPLERS[self.sampler](seed)).bridge

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(sampler={self.sampler!r}, "
            f"crash_report={self.crash_report!r})"
        )


class _OneSampler(OptunaMethod):
    """An :class:`OptunaMethod` of one sampler, :attr:`sampler_name`."""

    sampler_name: ClassVar[SamplerName]

    def __init__(self, crash_report: CrashReport = DEFAULT_CRASH_REPORT) -> None:
        super().__init__(self.sampler_name, crash_report)


class OptunaTPE(_OneSampler):
    """``optuna_tpe``: Optuna's ``TPESampler`` (see :class:`OptunaMethod`)."""

    sampler_name = "tpe"


class OptunaGP(_OneSampler):
    """``optuna_gp``: Optuna's ``GPSampler`` (see :class:`OptunaMethod`)."""

    sampler_name = "gp"


class OptunaRandom(_OneSampler):
    """``optuna_random``: Optuna's ``RandomSampler`` over the box, snapped."""

    sampler_name = "random"
