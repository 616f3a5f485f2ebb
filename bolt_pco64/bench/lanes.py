"""Lanes: one method's seeds run in lock-step as one batched computation.

A *lane* is ``K`` seeds of one method (``bolt-pco64 bench --lane-width K``).
Each seed keeps its own :class:`~bolt_pco64.bench.loop.RunLoop` (its clock,
generators, initial design, evaluations and records, exactly as
:func:`~bolt_pco64.bench.run.run_one` makes them); the lane only changes
*how the proposals are computed*: every seed's loop runs until it asks its
method for the next evaluations, and when every seed still running has
asked, the lane's :class:`~bolt_pco64.bench.lane_adapters.LaneAdapter` answers all
of them at once:

- the GPs of every seed are fitted together
  (:func:`~bolt_pco64.bo.batched.fit_gps`: batched, per-seed stopping, a
  failed seed refits alone);
- each seed's GPs are served from their training Cholesky, factored once
  (:class:`~bolt_pco64.bo.factors.FactorModel`): BoTorch's acquisition
  functions (qLogNEI, qLogEI, probability of feasibility) run on it
  unchanged; ``qlognei`` and ``naive`` evaluate qLogNEI at every candidate
  at once (:func:`~bolt_pco64.bo.factors.q1_values`, BoTorch's values for
  ``q = 1`` without pending points; otherwise BoTorch's own
  ``optimize_acqf_discrete``); its quasi-MC samples are the ones BoTorch
  draws from the step's seed, which the seed's own generator draws (keyed by
  seed and step); the default recommendation (highest posterior mean) comes
  from the same factors (:func:`~bolt_pco64.bo.factors.best_by_posterior_mean`);
- the methods keep their definitions: the same models (each seed's
  hyperparameters are the maximum of its own marginal likelihood, from its
  own warm start) and the same acquisition functions.

A method no adapter knows (``random``, which has nothing to batch; Optuna,
Ax, ``tobit_ei``'s variational model, a user's method) runs seed by seed as
today (:func:`~bolt_pco64.bench.run.run_one`), and
:func:`~bolt_pco64.bench.lane_adapters.lane_support`
says why; :func:`split_lanes` gives such a method one task per seed.

The seeds' loops are threads that run **one at a time** (a baton passes
between them and the lane), so nothing runs concurrently and a seed's
records depend only on the seed: the lane answers its seeds in seed order,
and every batched computation treats each seed's slice alike.
Every thread pool (torch's, and the BLAS and OpenMP pools of NumPy, SciPy
and torch, through ``threadpoolctl``) is pinned to one thread while a
lane runs (:func:`~bolt_pco64.bench.run.one_thread_everywhere`).

Records: each seed's :class:`~bolt_pco64.bench.records.RunOutcome` is
today's (same columns); ``fit_seconds`` is the seed's share of the lane's
batched fit (the lane's fit time over the seeds fitted), ``acq_seconds``
the seed's own acquisition time.

Work splits by method x lane (:func:`split_lanes`): a :class:`LaneTask` is
self-contained (picklable for ``--jobs`` processes and Dask), and
:func:`run_lane_task` returns one outcome per seed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bolt_pco64.bench.contract import Method, Prediction, Proposed, RunContext
from bolt_pco64.bench.lane_adapters import (
    lane_adapter,
    lane_recommend,
    lane_support,
)
from bolt_pco64.bench.loop import RunLoop
from bolt_pco64.bench.records import RunOutcome
from bolt_pco64.bench.run import (
    Task,
    initial_design_size,
    one_thread_everywhere,
    run_one,
)
from bolt_pco64.bench.spec import BenchConfig

if TYPE_CHECKING:
    from torch import Tensor

    from bolt_pco64.tables.table import Table

__all__ = [
    "DEFAULT_LANE_WIDTH",
    "LaneTask",
    "lane_tasks",
    "run_lane",
    "run_lane_task",
    "split_lanes",
]

logger = logging.getLogger(__name__)

#: Seeds per lane of :func:`run_lane_task` and :func:`lane_tasks` by default.
DEFAULT_LANE_WIDTH = 32


# --------------------------------------------------------------------------
# The lane: the seeds' loops, one at a time, answered together
# --------------------------------------------------------------------------


class _Fiber:
    """A function run in a thread that runs only while the lane waits for it
    (a coroutine on a thread): :meth:`resume` runs it until it calls
    :meth:`ask` or returns."""

    def __init__(self, fn: Callable[[], RunOutcome], name: str) -> None:
        self._fn = fn
        self._go = threading.Semaphore(0)
        self._back = threading.Semaphore(0)
        self.request: RunContext | None = None
        self.reply: Proposed | Exception | None = None
        self.result: RunOutcome | None = None
        self.error: BaseException | None = None
        self.done = False
        #: The seed's own seconds of the last answer (its share of the fit
        #: and its acquisition), what its records' timing columns hold.
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._started = False

    def _main(self) -> None:
        self._go.acquire()
        try:
            self.result = self._fn()
        except BaseException as err:  # pragma: no cover - RunLoop catches method errors
            self.error = err
        finally:
            self.done = True
            self._back.release()

    def resume(self, reply: Proposed | Exception | None = None) -> None:
        """Run the fiber until its next :meth:`ask` or its end."""
        self.reply = reply
        self.request = None
        if not self._started:
            self._started = True
            self._thread.start()
        self._go.release()
        self._back.acquire()

    def ask(self, ctx: RunContext) -> Proposed:
        """Called in the fiber: hand ``ctx`` to the lane, wait for the answer."""
        self.request = ctx
        self._back.release()
        self._go.acquire()
        reply = self.reply
        if isinstance(reply, Exception):
            raise reply
        assert reply is not None
        return reply


class _SeedMethod(Method):
    """What a seed's :class:`~bolt_pco64.bench.loop.RunLoop` sees: the
    method, whose proposals come from the lane."""

    def __init__(self, method: Method, fiber: _Fiber) -> None:
        self.method = method
        self.fiber = fiber
        self.n_init = method.n_init

    def new_state(self) -> Any:
        return self.method.new_state()

    def propose(self, ctx: RunContext) -> Proposed:
        out = self.fiber.ask(ctx)
        #: Read by RunLoop.propose instead of the wall time of the call,
        #: which includes the lane-mates' work.
        self.propose_seconds = self.fiber.seconds
        return out

    def recommend(self, ctx: RunContext) -> int | None:
        return lane_recommend(self.method, ctx)

    def predict(self, ctx: RunContext, X: Tensor) -> Prediction | None:
        return self.method.predict(ctx, X)

    def objective_model(self, ctx: RunContext) -> Any:
        return self.method.objective_model(ctx)


def run_lane(
    method: str,
    seeds: Sequence[int],
    table: Table,
    config: BenchConfig,
    fn: Method,
    on_evaluation: Callable[[int], None] | None = None,
) -> list[RunOutcome]:
    """Run ``method`` from each of ``seeds`` as one lane; never raises for a
    failing method.

    Args:
        method: The method's name (recorded).
        seeds: The lane's seeds (distinct).
        table: The problem's table.
        config: The comparison's settings (as for
            :func:`~bolt_pco64.bench.run.run_one`).
        fn: The method.
        on_evaluation: Called with 1 after each evaluation of any seed.

    Returns:
        One :class:`~bolt_pco64.bench.records.RunOutcome` per seed, in the
        order of ``seeds``, each what :func:`~bolt_pco64.bench.run.run_one`
        records (same columns).

    Raises:
        ValueError: If ``seeds`` repeats a seed, or as
            :func:`~bolt_pco64.bench.run.run_one`.
    """
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"Expected distinct seeds in a lane, got {seeds}.")
    config.check_rows(len(table))
    adapter = lane_adapter(fn)
    if adapter is None:
        logger.info(
            "%s runs seed by seed in its lane: %s.", method, lane_support(fn) or "-"
        )
        with one_thread_everywhere():
            return [
                run_one(method, s, table, config, fn=fn, on_evaluation=on_evaluation)
                for s in seeds
            ]
    n_init = initial_design_size(fn, config.n_init, config.budget, method)
    with one_thread_everywhere():
        fibers: list[_Fiber] = []
        for s in seeds:
            loop = RunLoop(method, s, table, config, on_evaluation)
            fiber = _Fiber(lambda: None, f"lane-{method}-{s}")  # type: ignore[arg-type,return-value]
            seed_method = _SeedMethod(fn, fiber)
            fiber._fn = _bind(loop, seed_method, n_init)
            fibers.append(fiber)
        for f in fibers:
            f.resume()
        while True:
            waiting = [f for f in fibers if not f.done]
            if not waiting:
                break
            ctxs = [f.request for f in waiting]
            assert all(c is not None for c in ctxs)
            try:
                replies = adapter.propose_lane(ctxs)  # type: ignore[arg-type]
            except Exception as err:  # the lane's computation failed: each seed alone
                logger.warning(
                    "lane of %s failed (%s); its seeds propose alone", method, err
                )
                replies = adapter.per_seed(ctxs, lambda i, c: fn.propose(c))  # type: ignore[arg-type]
            for k, (f, reply) in enumerate(zip(waiting, replies, strict=True)):
                ctx = ctxs[k]
                assert ctx is not None
                f.seconds = ctx.fit_seconds + adapter.acq_seconds[k]
                f.resume(reply)
    out = []
    for f in fibers:
        if f.error is not None:  # pragma: no cover - RunLoop catches method errors
            raise f.error
        assert f.result is not None
        out.append(f.result)
    return out


def _bind(loop: RunLoop, method: Method, n_init: int) -> Callable[[], RunOutcome]:
    return lambda: loop.execute(method, n_init)


# --------------------------------------------------------------------------
# Tasks: method x lane
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LaneTask:
    """One lane to execute, self-contained so that a worker can run it.

    Attributes:
        method: The method's name.
        seeds: The lane's seeds.
        table: The problem's table.
        config: The comparison's settings.
        fn: The method.
    """

    method: str
    seeds: tuple[int, ...]
    table: Table
    config: BenchConfig
    fn: Method = field(compare=False)

    @property
    def size(self) -> int:
        """Runs in this task."""
        return len(self.seeds)


def run_lane_task(task: LaneTask | Task) -> list[RunOutcome]:
    """Worker entry point: the outcomes of a :class:`LaneTask` (or of a plain
    :class:`~bolt_pco64.bench.run.Task`, as a list of one)."""
    if isinstance(task, Task):
        return [run_one(task.method, task.seed, task.table, task.config, fn=task.fn)]
    return run_lane(task.method, task.seeds, task.table, task.config, task.fn)


def lane_tasks(tasks: Sequence[Task], lane_width: int) -> list[LaneTask]:
    """:class:`~bolt_pco64.bench.run.Task` s (one run each, as a comparison
    plans them) as method x lane :class:`LaneTask` s (:func:`split_lanes`:
    each method's seeds, in order, cut into lanes of ``lane_width``; a method
    that cannot batch gets one per seed). Every task of one call shares its
    table and settings (a comparison's tasks on one table do)."""
    if not tasks:
        return []
    fns = {t.method: t.fn for t in tasks}
    first = tasks[0]
    return split_lanes(
        [(t.method, t.seed) for t in tasks],
        first.table,
        first.config,
        fns.__getitem__,
        lane_width,
    )


def split_lanes(
    todo: Sequence[tuple[str, int]],
    table: Table,
    config: BenchConfig,
    methods: Callable[[str], Method],
    lane_width: int = DEFAULT_LANE_WIDTH,
) -> list[LaneTask]:
    """The runs ``todo`` as method x lane tasks.

    Each method's seeds (in the order of ``todo``) are cut into as few lanes
    of at most ``lane_width`` as they need, of sizes that differ by one at
    most (100 seeds in lanes of 32: 25 each, not 32, 32, 32 and 4); a method
    that runs seed by seed (:func:`~bolt_pco64.bench.lane_adapters.lane_support`)
    gets one task per seed. The lanes come first, the single runs after
    them, so that ``--jobs`` and Dask workers fill the end of the work with
    short tasks (a seed's records do not depend on its lane, so the cut
    changes only the time).

    Args:
        todo: ``(method, seed)`` pairs to run.
        table: The table.
        config: The settings.
        methods: The method of a name (e.g.
            :func:`~bolt_pco64.bench.methods.registry.get_method`).
        lane_width: Seeds per lane, ``>= 1``.

    Raises:
        ValueError: If ``lane_width`` is not an integer >= 1.
    """
    if (
        isinstance(lane_width, bool)
        or not isinstance(lane_width, int)
        or lane_width < 1
    ):
        raise ValueError(f"Expected lane_width an integer >= 1, got {lane_width!r}.")
    by_method: dict[str, list[int]] = {}
    for m, s in todo:
        by_method.setdefault(m, []).append(int(s))
    lanes: list[LaneTask] = []
    singles: list[LaneTask] = []
    for m, seeds in by_method.items():
        fn = methods(m)
        width = lane_width if lane_adapter(fn) is not None else 1
        n_lanes = -(-len(seeds) // width)
        size, extra = divmod(len(seeds), n_lanes)
        start = 0
        for k in range(n_lanes):
            stop = start + size + (k < extra)
            task = LaneTask(m, tuple(seeds[start:stop]), table, config, fn)
            (lanes if width > 1 else singles).append(task)
            start = stop
    return lanes + singles
