"""The pco problems as OptunaHub benchmark problems (the optional ``optuna`` extra).

:class:`PCOProblem` follows OptunaHub's benchmark interface
(:class:`optunahub.benchmarks.BaseProblem` with
:class:`~optunahub.benchmarks.ConstrainedMixin`): a problem object is itself the
objective of ``study.optimize``::

    problem = PCOProblem("pco64")
    study = optuna.create_study(directions=problem.directions)
    study.optimize(problem, n_trials=40)

- **Search space** (:attr:`PCOProblem.search_space`): one
  :class:`~optuna.distributions.IntDistribution` per input column, named after
  it, over the column's encoded levels in the loaded table: the exponent of a
  log2 knob (``log2_tp_size`` 0..2 is tp 1, 2, 4), the ZeRO stage as its index
  0..2 into the stages 0/2/3 (the encoding of the BoTorch problem's ``X``; the
  precedent of OptunaHub's tabular benchmarks, which search each knob by its
  index). Never ``log=True``: a log-scaled integer proposes sizes that are not
  powers of two.
- **Snapping.** The table holds a small part of this box (the data-,
  tensor-, pipeline- and context-parallel sizes multiply to the GPU count). A
  combination that is not a row is evaluated at the nearest row, exactly as
  the BoTorch problem does (Euclidean distance in the encoded space, ties to
  the earliest row in canonical order), so the objective is a function of the
  suggested parameters, constant over each row's cell, and a sampler learns
  from every trial. The trial records what ran in ``trial.user_attrs``
  (:data:`ROW_ATTR`, :data:`ROW_PARAMS_ATTR`, :data:`FEASIBLE_ATTR`, and the
  run's seconds under the package's time model, :data:`SECONDS_ATTR`). Rows,
  runs and seconds come from :mod:`bolt_pco64.integrations.common`, shared
  with the Ax adapter. Why snapping rather than refusing off-table
  combinations: the README's Optuna section.
- **Objective and constraint.** The objective is the row's
  ``throughput_mean`` (maximised, :attr:`PCOProblem.directions`); the
  constraint :data:`CONSTRAINT_NAME` is its ``peak_mem_normalised`` (feasible
  iff ``<= 0``), set on every trial with ``trial.set_constraint`` before the
  objective is returned, as OptunaHub 0.5 problems do. Optuna >= 5 samplers
  (TPE, GP, NSGA-II) read constraints from the trial; passing
  ``constraints_func=problem.constraints_func`` as well is deprecated by
  both Optuna and OptunaHub and records the constraint a second time.
- **Crashes** (:data:`CrashReport`, the problem's ``crash`` argument). A row
  that ran out of memory has no throughput. It is reported as

  - ``"placeholder"`` (the default): a COMPLETE trial whose objective is
    :attr:`PCOProblem.crash_value` (the table's worst feasible throughput, the
    Ax adapter's convention) with its positive constraint. TPE ranks
    infeasible trials by constraint violation and never by that value; the
    GP sampler's objective model fits it (its incumbent counts only feasible
    trials), and its constraint model learns where crashes are;
  - ``"fail"``: the objective is NaN, which Optuna turns into a FAIL trial
    (the constraint is still recorded on it); every sampler ignores FAIL
    trials, so nothing learns where crashes are;
  - ``"pruned"``: a PRUNED trial with its constraint. TPE treats an
    infeasible pruned trial as it treats an infeasible complete one; the GP
    sampler ignores pruned trials.

  The choice was measured (``benchmarks/optuna_crash.py``, the README's
  Optuna section).

**Harness methods.** :class:`OptunaTPE` (``optuna_tpe``), :class:`OptunaGP`
(``optuna_gp``) and :class:`OptunaRandom` are Optuna's samplers as methods of
the benchmark harness (:class:`OptunaMethod`, through :class:`AskTell`); they
reach ``bolt-pco64 bench`` through the ``bolt_pco64.methods`` entry-point
group.

The core package never imports this module; import it as ``bolt_pco64.optuna``
after ``pip install 'bolt_pco64[optuna]'``.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, Literal, get_args

import optuna
import optunahub
import torch
from optuna.distributions import BaseDistribution, IntDistribution
from optuna.samplers import BaseSampler
from optuna.study import StudyDirection
from optuna.trial import BaseTrial, TrialState
from torch import Tensor

from bolt_pco64.bench.contract import Method, RunContext
from bolt_pco64.instances import Instance, get_instance
from bolt_pco64.integrations.common import (
    CONSTRAINT_NAME,
    OBJECTIVE_NAME,
    RunOutcome,
    TableRuns,
)
from bolt_pco64.params import POSITIVE_INT, Interval, check_param
from bolt_pco64.problem import PCO, TableLike, problem_class

__all__ = [
    "CONSTRAINT_NAME",
    "CRASH_REPORTS",
    "DEFAULT_CRASH",
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
]

#: How a crashed (OOM) row is reported to Optuna (see the module docstring).
CrashReport = Literal["placeholder", "fail", "pruned"]
#: Every crash representation.
CRASH_REPORTS: tuple[CrashReport, ...] = get_args(CrashReport)
#: The representation used unless ``crash`` says otherwise (measured:
#: ``benchmarks/optuna_crash.py``).
DEFAULT_CRASH: CrashReport = "placeholder"
#: ``trial.user_attrs`` key of the canonical index of the row that ran.
ROW_ATTR = "row"
#: ``trial.user_attrs`` key of the row's encoded inputs (what ran, by name).
ROW_PARAMS_ATTR = "row_params"
#: ``trial.user_attrs`` key of whether the row ran (the card's ``ran_successfully``).
FEASIBLE_ATTR = "ran_successfully"
#: ``trial.user_attrs`` key of the run's wall-clock seconds (the time model of
#: :func:`bolt_pco64.integrations.common.run_seconds`: a crash is charged a
#: fraction of the median feasible run).
SECONDS_ATTR = "run_seconds"


class PCOProblem(
    optunahub.benchmarks.ConstrainedMixin, optunahub.benchmarks.BaseProblem
):
    """A pco instance as an OptunaHub benchmark problem (see the module docstring).

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"`` (or an
            :class:`~bolt_pco64.instances.Instance`).
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources).
        crash: How a crashed row is reported: ``"placeholder"``, ``"fail"`` or
            ``"pruned"``.
        crash_value: The placeholder objective of a crash (``"placeholder"``
            only); default the table's worst feasible throughput.

    Raises:
        ValueError: For an unknown instance or crash representation, or a
            ``crash_value`` that is not a finite number.
    """

    def __init__(
        self,
        instance: str | Instance = "pco64",
        *,
        table: TableLike = None,
        crash: CrashReport = DEFAULT_CRASH,
        crash_value: float | None = None,
    ) -> None:
        if crash not in CRASH_REPORTS:
            raise ValueError(f"Expected `crash` in {CRASH_REPORTS}, got {crash!r}.")
        self.problem: PCO = problem_class(get_instance(instance))(table=table)
        if crash_value is None:
            crash_value = float(self.problem.worst_feasible_value)
        check_param("`crash_value`", crash_value, Interval(Real))
        self.crash: CrashReport = crash
        self.crash_value = float(crash_value)
        specs = self.problem.instance.inputs
        bounds = self.problem.bounds.to(torch.int64).tolist()
        self._space: dict[str, BaseDistribution] = {
            spec.name: IntDistribution(bounds[0][j], bounds[1][j])
            for j, spec in enumerate(specs)
        }
        self.runs = TableRuns(self.problem)
        self._candidates = self.problem.candidates().to(torch.int64).tolist()

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

    def run(self, params: Mapping[str, Any]) -> RunOutcome:
        """What running ``params`` reports: the snapped row and its outcome.

        ``params`` maps every knob to its encoded value (the search space's);
        the ZeRO index is decoded to its raw stage and the assignment is run by
        :class:`~bolt_pco64.integrations.common.TableRuns` (nearest row, as in
        the BoTorch problem).

        Raises:
            ValueError: If a knob is missing, or a value is not an integer of
                its distribution's range.
        """
        raw: dict[str, int] = {}
        for spec in self.instance.inputs:
            if spec.name not in params:
                raise ValueError(
                    f"Expected a value for every knob, got none for {spec.name!r} "
                    f"in {dict(params)}."
                )
            value = params[spec.name]
            dist = self._space[spec.name]
            levels = Interval(Integral, dist.low, dist.high)  # type: ignore[attr-defined]
            check_param(spec.name, value, levels)
            raw[spec.name] = spec.decode(int(value))
        return self.runs(raw)

    def row(self, params: Mapping[str, Any]) -> int:
        """The canonical index of the row ``params`` snaps to (see :meth:`run`)."""
        return self.run(params).row

    def row_params(self, row: int) -> dict[str, int]:
        """The encoded inputs of table row ``row``, by name."""
        return dict(zip(self._space, self._candidates[row], strict=True))

    def evaluate(self, params: dict[str, Any]) -> float:
        """The snapped row's throughput; a crash: the placeholder, or NaN."""
        outcome = self.run(params)
        if not outcome.ran and self.crash == "placeholder":
            return self.crash_value
        return outcome.throughput

    def evaluate_constraints(self, params: dict[str, Any]) -> dict[str, float]:
        """``{CONSTRAINT_NAME: peak_mem_normalised}`` of the snapped row (``<= 0`` iff it ran)."""
        return {CONSTRAINT_NAME: self.run(params).margin}

    def __call__(self, trial: optuna.Trial) -> float:
        """The objective of ``study.optimize``: suggest, snap, record, report.

        Sets the constraint and the row's attributes on ``trial``, then returns
        the objective (NaN, hence a FAIL trial, for a crash under ``"fail"``).

        Raises:
            optuna.TrialPruned: For a crash under ``"pruned"``.
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
            a crash under ``"placeholder"``), or FAIL / PRUNED with ``None``.
        """
        crashed = math.isnan(observed)
        trial.set_constraint(CONSTRAINT_NAME, float(margin))
        trial.set_user_attr(ROW_ATTR, int(row))
        trial.set_user_attr(ROW_PARAMS_ATTR, self.row_params(row))
        trial.set_user_attr(FEASIBLE_ATTR, not crashed)
        trial.set_user_attr(SECONDS_ATTR, float(self.runs.seconds[row]))
        if not crashed:
            return TrialState.COMPLETE, float(observed)
        if self.crash == "placeholder":
            return TrialState.COMPLETE, self.crash_value
        return (TrialState.FAIL if self.crash == "fail" else TrialState.PRUNED), None

    def __repr__(self) -> str:
        return f"PCOProblem({self.instance.name!r}, crash={self.crash!r})"


class AskTell:
    """An Optuna sampler choosing pco configurations through ask-and-tell.

    The loop of a user who evaluates configurations outside Optuna: :meth:`ask`
    proposes points (a trial's suggested parameters, in ``X`` order; the
    evaluator snaps them to rows), :meth:`tell` reports the evaluations. A
    reported row that no pending trial ran (an initial design chosen
    elsewhere) becomes a trial of its own first, enqueued with
    ``study.enqueue_trial`` so the sampler sees the same parameters; a row that
    a pending trial ran completes the oldest such trial, whether or not the
    row was evaluated before. Crashes are reported as the problem's ``crash``
    says (:meth:`PCOProblem.report`).

    Args:
        problem: The Optuna problem (its search space, snapping and crash
            representation).
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
        self._pending: deque[tuple[optuna.Trial, int]] = deque()

    @property
    def pending(self) -> list[int]:
        """The rows of the trials asked and not told yet, oldest first."""
        return [row for _, row in self._pending]

    def ask(self, q: int = 1) -> Tensor:
        """``q`` new trials' suggestions as a ``q x d``-dim float64 tensor.

        Raises:
            ValueError: If ``q < 1``.
        """
        check_param("`q`", q, POSITIVE_INT)
        space = self.problem.search_space
        points = []
        for _ in range(q):
            trial = self.study.ask(space)
            self._pending.append((trial, self.problem.row(trial.params)))
            points.append([float(trial.params[name]) for name in space])
        return torch.tensor(points, dtype=torch.float64)

    def tell(
        self, rows: Sequence[int], y: Sequence[float], margin: Sequence[float]
    ) -> None:
        """Report evaluations, in the order they were made.

        Args:
            rows: ``n`` canonical row indices.
            y: Their ``n`` observed throughputs, NaN for a crash.
            margin: Their ``n`` observed ``peak_mem_normalised``.

        Raises:
            ValueError: If the lengths differ.
        """
        rows, y, margin = list(rows), list(y), list(margin)
        if not len(rows) == len(y) == len(margin):
            raise ValueError(
                "Expected as many observations and margins as rows, got "
                f"{len(rows)} rows, {len(y)} observations and {len(margin)} margins."
            )
        for row, value, m in zip(rows, y, margin, strict=True):
            trial = self._take(int(row))
            state, told = self.problem.report(trial, int(row), float(value), float(m))
            self.study.tell(trial, told, state=state)

    def _take(self, row: int) -> optuna.Trial:
        """The oldest pending trial that ran ``row``, or a new enqueued one."""
        for k, (trial, r) in enumerate(self._pending):
            if r == row:
                del self._pending[k]
                return trial
        self.study.enqueue_trial(self.problem.row_params(row))
        return self.study.ask(self.problem.search_space)


SamplerName = Literal["tpe", "gp", "random"]
#: Optuna's samplers offered as harness methods, by name: each takes its seed
#: and keeps every other option at Optuna's default.
SAMPLERS: dict[str, Callable[[int], BaseSampler]] = {
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed),
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
}


class OptunaMethod(Method):
    """An Optuna sampler as a harness method, through ask-and-tell (:class:`AskTell`).

    Each run keeps one Optuna study in ``ctx.state``. At every step the
    evaluations the study has not seen are told: the run's initial design
    (shared by every method of the seed) as enqueued trials with the rows'
    parameters, afterwards the rows this method's trials ran. It then asks
    ``ctx.q`` trials and returns their parameters as points, which the harness
    snaps to rows; a point that snaps to a row already evaluated is a repeat
    under the harness's repeat policy (:mod:`bolt_pco64.bench.proposals`), and
    the trial is told that row's observation. The sampler is seeded by the
    first step's ``ctx.step_seed`` (so from the run's generator), which makes
    a run deterministic for its seed. Optuna's proposal time (model fit and
    acquisition together) is recorded as acquisition time; the harness
    recommends the best observed configuration (Optuna's GP is not a BoTorch
    model it could re-condition).

    Args:
        sampler: ``"tpe"``, ``"gp"`` or ``"random"`` (:data:`SAMPLERS`).
        crash: How a crash is told to the sampler (:data:`CrashReport`).

    Raises:
        ValueError: For an unknown sampler or crash representation.
    """

    def __init__(
        self, sampler: SamplerName = "tpe", crash: CrashReport = DEFAULT_CRASH
    ) -> None:
        if sampler not in SAMPLERS:
            raise ValueError(
                f"Expected `sampler` in {sorted(SAMPLERS)}, got {sampler!r}."
            )
        if crash not in CRASH_REPORTS:
            raise ValueError(f"Expected `crash` in {CRASH_REPORTS}, got {crash!r}.")
        self.sampler: SamplerName = sampler
        self.crash: CrashReport = crash

    def propose(self, ctx: RunContext) -> Tensor:
        """``ctx.q x d``-dim tensor of the sampler's next suggestions."""
        loop = ctx.state.get("optuna")
        if loop is None:
            problem = PCOProblem(
                ctx.problem.instance, table=ctx.problem.table, crash=self.crash
            )
            loop = AskTell(problem, SAMPLERS[self.sampler](ctx.step_seed))
            ctx.state["optuna"] = loop
            ctx.state["optuna_told"] = 0
        told = ctx.state["optuna_told"]
        loop.tell(
            ctx.rows[told:].tolist(), ctx.y[told:].tolist(), ctx.margin[told:].tolist()
        )
        ctx.state["optuna_told"] = ctx.rows.numel()
        return loop.ask(ctx.q)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sampler={self.sampler!r}, crash={self.crash!r})"


class OptunaTPE(OptunaMethod):
    """``optuna_tpe``: Optuna's ``TPESampler`` (see :class:`OptunaMethod`)."""

    def __init__(self, crash: CrashReport = DEFAULT_CRASH) -> None:
        super().__init__("tpe", crash)


class OptunaGP(OptunaMethod):
    """``optuna_gp``: Optuna's ``GPSampler`` (see :class:`OptunaMethod`)."""

    def __init__(self, crash: CrashReport = DEFAULT_CRASH) -> None:
        super().__init__("gp", crash)


class OptunaRandom(OptunaMethod):
    """``optuna_random``: Optuna's ``RandomSampler`` over the box, snapped."""

    def __init__(self, crash: CrashReport = DEFAULT_CRASH) -> None:
        super().__init__("random", crash)
