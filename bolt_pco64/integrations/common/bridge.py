"""A framework's ask-and-tell loop over pco configurations, framework-neutral.

:class:`Proposer` (the framework's side, what a new adapter writes),
:class:`AskTellBridge` (the loop) and :class:`BridgeMethod` (the loop as a
method of the benchmark harness).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import torch
from torch import Tensor

from bolt_pco64.bench.contract import Method, RunContext
from bolt_pco64.integrations.common.crash import (
    DEFAULT_CRASH_REPORT,
    CrashReport,
    check_crash_report,
)
from bolt_pco64.integrations.common.runs import Evaluation, TableRuns
from bolt_pco64.params import POSITIVE_INT, check_param
from bolt_pco64.problem import PCO

__all__ = ["AskTellBridge", "BridgeMethod", "Proposer"]

#: The framework's handle of one proposal (a trial).
T = TypeVar("T")


class Proposer(Protocol[T]):
    """A framework's side of ask-and-tell: what a new adapter implements.

    ``T`` is the framework's handle of one trial (an Optuna ``Trial``, a
    Nevergrad candidate, ...). Parameters are on the bridge's scale
    (:class:`~bolt_pco64.integrations.common.problem.Parameters`).
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
        runs: The table's runs (its :class:`~bolt_pco64.integrations.common.problem.Parameters` fix the scale).
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
        crash_report: How a crash is told to the framework
            (:data:`~bolt_pco64.integrations.common.crash.CrashReport`).

    Raises:
        ValueError: For an unknown crash report.
    """

    #: The ``ctx.state`` key of a run's bridge.
    state_key = "bridge"

    def __init__(self, crash_report: CrashReport = DEFAULT_CRASH_REPORT) -> None:
        self.crash_report: CrashReport = check_crash_report(crash_report)

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
