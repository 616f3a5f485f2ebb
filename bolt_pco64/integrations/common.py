"""Framework-neutral pieces of the optimisation-framework adapters.

Everything an adapter (Ax, Optuna, or a new one such as Nevergrad or SMAC)
needs from a pco problem, without importing any framework:

- :func:`get_problem`: the one problem factory (an instance and a table, or a
  problem as it is);
- :class:`Parameters`: how a configuration is named as framework parameters
  (one integer parameter per knob, by its column name, valued on the
  ``"raw"`` or ``"encoded"`` scale) and the table row it snaps to;
- :func:`knob_levels`: the raw levels of each knob that the loaded table holds;
- :func:`run_seconds`: the time model's entry point, a run's wall-clock seconds
  per row (:class:`bolt_pco64.costs.TimeModel`: start-up plus the training
  loop; a crash start-up plus the step in which memory ran out);
- :class:`Evaluation` and :class:`TableRuns`: one evaluation of a
  configuration (row, ran, throughput, memory margin, seconds);
- :data:`CrashReport` and :class:`CrashPolicy`: the one vocabulary of how a
  crashed run reports to a framework (``"placeholder"``, ``"missing"``,
  ``"failed"``) and the placeholder it reports;
- :class:`AskTellBridge` (over a framework's :class:`Proposer`) and
  :class:`BridgeMethod`: a framework's ask-and-tell loop, and that loop as a
  method of the benchmark harness;
- :func:`expected_best_of_random_draws` and :func:`random_baseline`: the exact
  expected best feasible throughput of ``k`` table rows drawn without
  replacement (the baseline a method must beat).
"""

from __future__ import annotations

import math
import numbers
import warnings
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Generic, Literal, Protocol, TypeVar, get_args

import torch
from torch import Tensor

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.bench.contract import Method, RunContext
from bolt_pco64.costs import COST_DEFAULTS, TimeModel
from bolt_pco64.instances import InputSpec, Instance, get_instance
from bolt_pco64.params import POSITIVE_INT, Interval, check_param
from bolt_pco64.problem import PCO, TableLike, problem_class

__all__ = [
    "BASELINE_DRAWS",
    "CONSTRAINT_NAME",
    "CRASH_REPORTS",
    "DEFAULT_CRASH_REPORT",
    "DEPRECATED_CRASH_REPORTS",
    "OBJECTIVE_NAME",
    "AskTellBridge",
    "BridgeMethod",
    "CrashPolicy",
    "CrashReport",
    "Evaluation",
    "ParameterScale",
    "Parameters",
    "Proposer",
    "TableRuns",
    "check_crash_report",
    "expected_best_of_random_draws",
    "get_problem",
    "knob_levels",
    "random_baseline",
    "run_seconds",
]

#: The objective (maximised): the card's column.
OBJECTIVE_NAME = "throughput_mean"
#: The constraint: the card's column; a run fits in memory iff it is ``<= 0``.
CONSTRAINT_NAME = "peak_mem_normalised"
#: Number of random table rows whose expected best is the default baseline.
BASELINE_DRAWS = 5


# -- the problem ------------------------------------------------------------------


def get_problem(
    instance: str | Instance | PCO = "pco64", table: TableLike = None
) -> PCO:
    """The BoTorch problem an adapter serves: the one problem factory.

    Args:
        instance: ``"pco16"``, ``"pco32"`` or ``"pco64"``, an
            :class:`~bolt_pco64.instances.Instance`, or a problem, returned as
            it is.
        table: The table to serve, as for the BoTorch problem (a path, a
            DataFrame, a loaded table, or ``None`` for the default sources);
            must be ``None`` when ``instance`` is a problem.

    Raises:
        ValueError: For an unknown instance, or a problem given with a table.
    """
    if isinstance(instance, PCO):
        if table is not None:
            raise ValueError(
                "Expected no `table` with a problem (it serves its own), got "
                f"{type(table).__name__}."
            )
        return instance
    return problem_class(get_instance(instance))(table=table)


def knob_levels(problem: PCO) -> dict[str, tuple[int, ...]]:
    """The raw levels of each knob found in ``problem``'s loaded table.

    Returns:
        A dict from input column name (in the order of the problem's ``X``) to
        its distinct raw values, sorted ascending (``zero_stage`` holds raw
        stages such as 0/2/3, not their ordinal codes).
    """
    frame = problem.table.frame
    return {
        spec.name: tuple(sorted({int(v) for v in frame[spec.name]}))
        for spec in problem.instance.inputs
    }


# -- parameters -------------------------------------------------------------------

#: The values a framework parameter takes: ``"raw"``, the table's own (a log2
#: knob its exponent, ``zero_stage`` its stage 0/2/3), or ``"encoded"``, the
#: BoTorch problem's ``X`` (``zero_stage`` its index 0..2 into the stages).
ParameterScale = Literal["raw", "encoded"]


def _raw_value(spec: InputSpec, value: object) -> int:
    """The raw integer level of one knob's value, checked."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    if not float(value).is_integer():
        raise ValueError(
            f"Expected an integer value for knob {spec.name!r}, got {value!r}."
        )
    raw = int(value)
    if spec.encoding == "ordinal" and raw not in spec.levels:
        raise ValueError(
            f"Expected a value of {list(spec.levels)} for knob {spec.name!r}, got {raw}."
        )
    return raw


class Parameters:
    """How a configuration is named as framework parameters, and its table row.

    One integer parameter per knob, named after its input column, in ``X``
    order. On the ``"raw"`` scale (the default; Ax's) a value is the table's
    own (``zero_stage`` its raw stage); on the ``"encoded"`` scale (Optuna's,
    whose integer parameters are contiguous ranges) it is the BoTorch
    problem's ``X`` (``zero_stage`` its index into the stages) within the
    problem's bounds. Either way a configuration snaps to the nearest table
    row by :meth:`~bolt_pco64.problem.PCO.lookup`, as in the BoTorch problem.
    Extra keys are ignored.

    Args:
        problem: The BoTorch problem whose table is served.
        scale: ``"raw"`` or ``"encoded"`` (:data:`ParameterScale`).

    Raises:
        ValueError: For an unknown scale.
    """

    def __init__(self, problem: PCO, scale: ParameterScale = "raw") -> None:
        if scale not in get_args(ParameterScale):
            raise ValueError(
                f"Expected `scale` in {get_args(ParameterScale)}, got {scale!r}."
            )
        self.problem = problem
        self.scale: ParameterScale = scale
        self.specs: tuple[InputSpec, ...] = problem.instance.inputs
        bounds = problem.bounds.to(torch.int64).tolist()
        #: Per knob, the encoded ``(low, high)`` of the problem's bounds.
        self._bounds = {
            s.name: (bounds[0][j], bounds[1][j]) for j, s in enumerate(self.specs)
        }
        self._candidates: list[list[int]] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The parameters' names: the input columns, in ``X`` order."""
        return tuple(s.name for s in self.specs)

    @property
    def bounds(self) -> dict[str, tuple[int, int]]:
        """Per parameter, the ``(low, high)`` of the problem's bounds on this scale."""
        if self.scale == "encoded":
            return dict(self._bounds)
        return {
            s.name: (s.decode(lo), s.decode(hi))
            for s, (lo, hi) in zip(self.specs, self._bounds.values(), strict=True)
        }

    def levels(self) -> dict[str, tuple[int, ...]]:
        """Per parameter, the values the loaded table holds on this scale, ascending."""
        raw = knob_levels(self.problem)
        if self.scale == "raw":
            return raw
        return {s.name: tuple(s.encode(v) for v in raw[s.name]) for s in self.specs}

    def encode(self, params: Mapping[str, object]) -> list[float]:
        """The encoded ``d`` inputs (the problem's ``X``) of one configuration.

        Raises:
            ValueError: If a knob has no value or a value that is not an
                integer of its scale (a raw ordinal value not one of its
                levels; an encoded value outside the problem's bounds).
        """
        missing = [s.name for s in self.specs if s.name not in params]
        if missing:
            raise ValueError(
                f"Expected a value for every knob, got none for {missing} in {dict(params)}."
            )
        if self.scale == "raw":
            return [float(s.encode(_raw_value(s, params[s.name]))) for s in self.specs]
        point = []
        for s in self.specs:
            value = params[s.name]
            check_param(
                s.name, value, Interval(numbers.Integral, *self._bounds[s.name])
            )
            point.append(float(value))  # type: ignore[arg-type]
        return point

    def row(self, params: Mapping[str, object]) -> int:
        """The canonical index of the table row one configuration snaps to."""
        x = torch.tensor([self.encode(params)], dtype=torch.float64)
        return int(self.problem.lookup(x)[0])

    def of_row(self, row: int) -> dict[str, int]:
        """The configuration of table row ``row``, by name, on this scale."""
        if self._candidates is None:
            self._candidates = self.problem.candidates().to(torch.int64).tolist()
        encoded = self._candidates[row]
        if self.scale == "encoded":
            return dict(zip(self.names, encoded, strict=True))
        return {s.name: s.decode(v) for s, v in zip(self.specs, encoded, strict=True)}


class _ParameterRows(Parameters):
    """Deprecated: :class:`Parameters` on the raw scale, called as :meth:`row`."""

    def __call__(self, params: Mapping[str, object]) -> int:
        return self.row(params)


# -- runs ---------------------------------------------------------------------------


def run_seconds(
    problem: PCO, startup_seconds: float = COST_DEFAULTS.startup_seconds
) -> Tensor:
    """``N``-dim tensor: wall-clock seconds of evaluating each table row.

    The time model's entry point for adapters, the harness's own
    (:attr:`bolt_pco64.costs.TimeModel.run_seconds`): a run takes the
    start-up plus its ``overall_time``; a crash the start-up plus the step in
    which memory ran out.

    Raises:
        ValueError: If ``startup_seconds`` is not a finite number >= 0.
        TableError: If the table has no usable run times.
    """
    return TimeModel(problem.table, startup_seconds).run_seconds


@dataclass(frozen=True)
class Evaluation:
    """What one evaluation of a configuration reports.

    Attributes:
        row: Canonical index of the table row the configuration snapped to.
        ran: Whether the run fit in memory (``False``: a crash).
        throughput: ``throughput_mean`` (as observed); NaN for a crash.
        margin: ``peak_mem_normalised`` (positive for a crash).
        seconds: Wall-clock seconds the run took (:func:`run_seconds`).
    """

    row: int
    ran: bool
    throughput: float
    margin: float
    seconds: float


class TableRuns:
    """Evaluations of configurations against a problem's table.

    Args:
        problem: The BoTorch problem whose table is served.
        startup_seconds: The time model's start-up of every run and crash
            (:func:`run_seconds`).
        scale: The scale of the configurations (:class:`Parameters`).
    """

    def __init__(
        self,
        problem: PCO,
        startup_seconds: float = COST_DEFAULTS.startup_seconds,
        scale: ParameterScale = "raw",
    ) -> None:
        self.parameters = Parameters(problem, scale)
        self.seconds = run_seconds(problem, startup_seconds)
        table = problem.table
        self._ran = table.feasible
        self._throughput = table.column("throughput_mean")
        self._margin = table.column("peak_mem_normalised")

    def __call__(self, params: Mapping[str, object]) -> Evaluation:
        """The outcome of running one configuration (see :class:`Parameters`)."""
        return self.of_row(self.parameters.row(params))

    def of_row(self, row: int) -> Evaluation:
        """The outcome of running table row ``row``, as the table holds it."""
        ran = bool(self._ran[row])
        return Evaluation(
            row=row,
            ran=ran,
            throughput=float(self._throughput[row]) if ran else math.nan,
            margin=float(self._margin[row]),
            seconds=float(self.seconds[row]),
        )

    def observed(self, row: int, throughput: float, margin: float) -> Evaluation:
        """An evaluation of row ``row`` as observed (noise included); NaN: a crash."""
        return Evaluation(
            row=int(row),
            ran=not math.isnan(throughput),
            throughput=float(throughput),
            margin=float(margin),
            seconds=float(self.seconds[row]),
        )


# -- crashes ------------------------------------------------------------------------

#: How a crashed (out-of-memory) run reports to a framework; every adapter
#: maps it onto its own trial states:
#:
#: - ``"placeholder"``: a completed trial, its constraint observed and its
#:   objective the policy's placeholder (:class:`CrashPolicy`);
#: - ``"missing"``: its constraint observed and no objective (Ax: a completed
#:   trial without the objective's data; Optuna: a PRUNED trial);
#: - ``"failed"``: a failed trial no model learns from (Ax: NaN objective, so
#:   ABANDONED; Optuna: FAIL).
CrashReport = Literal["placeholder", "missing", "failed"]
#: Every crash report.
CRASH_REPORTS: tuple[CrashReport, ...] = get_args(CrashReport)
#: The report used unless told otherwise (measured: the README's Ax and
#: Optuna sections).
DEFAULT_CRASH_REPORT: CrashReport = "placeholder"
#: Former spellings, accepted with a ``DeprecationWarning``: Ax's
#: ``"abandoned"``, Optuna's ``"fail"`` and ``"pruned"``.
DEPRECATED_CRASH_REPORTS: Mapping[str, CrashReport] = MappingProxyType(
    {"abandoned": "failed", "fail": "failed", "pruned": "missing"}
)


def check_crash_report(
    value: object, name: str = "`crash_report`", stacklevel: int = 3
) -> CrashReport:
    """``value`` as a :data:`CrashReport` (a former spelling mapped, with a warning).

    Raises:
        ValueError: If ``value`` is no crash report, current or former.
    """
    if value in CRASH_REPORTS:
        return value  # type: ignore[return-value]
    if isinstance(value, str) and value in DEPRECATED_CRASH_REPORTS:
        new = DEPRECATED_CRASH_REPORTS[value]
        warnings.warn(
            f"{name}={value!r} is deprecated and will be removed in a future 0.x "
            f"release; use {new!r}.",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        return new
    raise ValueError(f"Expected {name} to be one of {CRASH_REPORTS}, got {value!r}.")


def renamed_crash_keyword(
    crash_report: object, crash: object | None, stacklevel: int = 4
) -> CrashReport:
    """The crash report given as ``crash_report`` or, deprecated, as ``crash``."""
    if crash is None:
        return check_crash_report(crash_report, stacklevel=stacklevel)
    warnings.warn(
        "`crash` is deprecated and will be removed in a future 0.x release; use "
        "`crash_report`.",
        DeprecationWarning,
        stacklevel=stacklevel - 1,
    )
    return check_crash_report(crash, stacklevel=stacklevel)


@dataclass(frozen=True)
class CrashPolicy:
    """What a crash reports as its objective: the one placeholder policy.

    Attributes:
        report: How a crash reports (:data:`CrashReport`; a former spelling is
            mapped, with a warning).
        placeholder: The objective of a crash under ``"placeholder"``; every
            adapter's default is the table's worst feasible throughput
            (:meth:`for_problem`).

    Raises:
        ValueError: For an unknown report, or a placeholder that is not a
            finite number under ``"placeholder"``.
    """

    report: CrashReport = DEFAULT_CRASH_REPORT
    placeholder: float = math.nan

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "report", check_crash_report(self.report, stacklevel=4)
        )
        if self.report == "placeholder":
            check_param("`crash_value`", self.placeholder, Interval(numbers.Real))
        object.__setattr__(self, "placeholder", float(self.placeholder))

    @classmethod
    def for_problem(
        cls,
        problem: PCO,
        report: CrashReport = DEFAULT_CRASH_REPORT,
        placeholder: float | None = None,
    ) -> CrashPolicy:
        """The policy whose placeholder defaults to ``problem``'s worst feasible throughput."""
        if placeholder is None:
            placeholder = float(problem.worst_feasible_value)
        return cls(report, placeholder)

    @property
    def crash_objective(self) -> float | None:
        """What a crash reports as its objective: the placeholder, ``None``
        (``"missing"``: no objective) or NaN (``"failed"``)."""
        if self.report == "placeholder":
            return self.placeholder
        return None if self.report == "missing" else math.nan

    def objective(self, outcome: Evaluation) -> float | None:
        """The objective ``outcome`` reports: its throughput, or :attr:`crash_objective`."""
        return outcome.throughput if outcome.ran else self.crash_objective


# -- ask and tell -------------------------------------------------------------------

T = TypeVar("T")


class Proposer(Protocol[T]):
    """A framework's side of ask-and-tell: what a new adapter implements.

    ``T`` is the framework's handle of one trial (an Optuna ``Trial``, a
    Nevergrad candidate, ...). Parameters are on the bridge's scale
    (:class:`Parameters`).
    """

    def propose(self) -> tuple[T, Mapping[str, int]]:
        """A new trial and the configuration it suggests."""
        ...

    def adopt(self, params: Mapping[str, int]) -> T:
        """A new trial of ``params``, a configuration evaluated elsewhere."""
        ...

    def observe(self, trial: T, outcome: Evaluation) -> None:
        """Report ``outcome`` of ``trial`` to the framework (its crash policy applied)."""
        ...


class AskTellBridge(Generic[T]):
    """A framework's ask-and-tell loop over pco configurations.

    :meth:`ask` proposes a configuration (the proposer's trial, remembered
    with the row it snaps to); :meth:`tell` reports an evaluation. An
    evaluation of a row that no pending trial ran (an initial design chosen
    elsewhere) becomes a trial of its own first (:meth:`Proposer.adopt`); a
    row that a pending trial ran completes the oldest such trial, whether or
    not the row was evaluated before.

    Args:
        runs: The table's runs (its :class:`Parameters` fix the scale).
        proposer: The framework's side (:class:`Proposer`).
    """

    def __init__(self, runs: TableRuns, proposer: Proposer[T]) -> None:
        self.runs = runs
        self.parameters = runs.parameters
        self.proposer = proposer
        self._pending: deque[tuple[T, int]] = deque()

    @property
    def pending(self) -> list[int]:
        """The rows of the trials asked and not told yet, oldest first."""
        return [row for _, row in self._pending]

    def ask(self) -> dict[str, int]:
        """A new trial's configuration (it snaps to a row when evaluated)."""
        trial, params = self.proposer.propose()
        self._pending.append((trial, self.parameters.row(params)))
        return dict(params)

    def tell(self, configuration: Mapping[str, int], outcome: Evaluation) -> None:
        """Report ``outcome``, the evaluation of ``configuration``."""
        self.proposer.observe(self._take(outcome.row, configuration), outcome)

    def ask_points(self, q: int) -> Tensor:
        """``q`` new trials' configurations as a ``q x d``-dim float64 ``X``.

        Raises:
            ValueError: If ``q < 1``.
        """
        check_param("`q`", q, POSITIVE_INT)
        points = [self.parameters.encode(self.ask()) for _ in range(q)]
        return torch.tensor(points, dtype=torch.float64)

    def tell_rows(
        self, rows: Sequence[int], y: Sequence[float], margin: Sequence[float]
    ) -> None:
        """Report evaluations of table rows, in the order they were made.

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
            outcome = self.runs.observed(int(row), float(value), float(m))
            self.tell(self.parameters.of_row(outcome.row), outcome)

    def _take(self, row: int, configuration: Mapping[str, int]) -> T:
        """The oldest pending trial that ran ``row``, or an adopted new one."""
        for k, (trial, r) in enumerate(self._pending):
            if r == row:
                del self._pending[k]
                return trial
        return self.proposer.adopt(configuration)


@dataclass
class _BridgeState:
    """A harness run's bridge and how many of its evaluations were told."""

    bridge: AskTellBridge
    told: int = 0


class BridgeMethod(Method, ABC):
    """A framework's ask-and-tell loop (:class:`AskTellBridge`) as a harness method.

    Each run keeps one bridge in ``ctx.state``. At every step the evaluations
    the bridge has not seen are told (the run's initial design, shared by
    every method of the seed, then the rows this method's trials ran); then
    ``ctx.q`` configurations are asked and returned as points, which the
    harness snaps to rows. A subclass says how to build its bridge
    (:meth:`bridge`), seeded by the first step's ``ctx.step_seed``, which
    makes a run deterministic for its seed. The harness recommends the best
    observed configuration.

    Args:
        crash_report: How a crash is told to the framework (:data:`CrashReport`).

    Raises:
        ValueError: For an unknown crash report.
    """

    #: The ``ctx.state`` key of a run's bridge.
    state_key = "bridge"

    def __init__(self, crash_report: CrashReport = DEFAULT_CRASH_REPORT) -> None:
        self.crash_report: CrashReport = check_crash_report(crash_report, stacklevel=4)

    @abstractmethod
    def bridge(self, problem: PCO, seed: int) -> AskTellBridge:
        """A new bridge over ``problem`` for one run, seeded by ``seed``."""

    def propose(self, ctx: RunContext) -> Tensor:
        """``ctx.q x d``-dim tensor of the framework's next configurations."""
        state = ctx.state.get(self.state_key)
        if state is None:
            state = _BridgeState(self.bridge(ctx.problem, ctx.step_seed))
            ctx.state[self.state_key] = state
        told = state.told
        state.bridge.tell_rows(
            ctx.rows[told:].tolist(), ctx.y[told:].tolist(), ctx.margin[told:].tolist()
        )
        state.told = ctx.rows.numel()
        return state.bridge.ask_points(ctx.q)


def expected_best_of_random_draws(
    values: Sequence[float], feasible: Sequence[bool], draws: int = BASELINE_DRAWS
) -> float:
    """Expected best feasible value among ``draws`` rows drawn without replacement.

    Every row is equally likely; a draw without a feasible row counts as the
    worst feasible value. Computed exactly: with ``N`` rows, ``F`` feasible and
    their values sorted ascending ``v_1 <= ... <= v_F``, the best is at most
    ``v_j`` with probability ``C(N - F + j, k) / C(N, k)`` (``k`` the number of
    draws, at most ``N``).

    Args:
        values: ``N`` values (ignored where infeasible).
        feasible: ``N`` flags.
        draws: Rows drawn, ``>= 1``.

    Raises:
        ValueError: If ``draws < 1``, the lengths differ or no row is feasible.
    """
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"Expected `draws` to be an int >= 1, got {draws!r}.")
    if len(values) != len(feasible):
        raise ValueError(
            f"Expected as many feasibility flags as values, got {len(feasible)} and {len(values)}."
        )
    ok = sorted(float(v) for v, f in zip(values, feasible, strict=True) if f)
    if not ok:
        raise ValueError("Expected at least one feasible row, got none.")
    n, k = len(values), min(draws, len(values))
    total = math.comb(n, k)
    below = n - len(ok)
    expected, previous = 0.0, 0.0
    for j, value in enumerate(ok, start=1):
        cdf = math.comb(below + j, k) / total
        expected += value * (cdf - previous)
        previous = cdf
    return expected


def random_baseline(problem: PCO, draws: int = BASELINE_DRAWS) -> float:
    """Expected best feasible throughput of ``draws`` random rows of ``problem``'s table.

    :func:`expected_best_of_random_draws` on the table's ``throughput_mean``
    and ``ran_successfully``.
    """
    frame = problem.table.frame
    return expected_best_of_random_draws(
        frame["throughput_mean"].tolist(),
        [bool(f) for f in frame["ran_successfully"]],
        draws,
    )


__getattr__ = deprecated_names(
    __name__,
    {
        "RunOutcome": (
            lambda: Evaluation,
            "bolt_pco64.integrations.common.Evaluation (bolt_pco64.bench's "
            "RunOutcome is a harness run)",
        ),
        "ParameterRows": (
            lambda: _ParameterRows,
            "bolt_pco64.integrations.common.Parameters(problem).row",
        ),
    },
)
