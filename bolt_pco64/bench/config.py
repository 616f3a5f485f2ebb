"""Every default of the harness, and the configuration that makes runs comparable.

What a run and a crash cost is not here: it is the one time model,
:mod:`bolt_pco64.costs` (its defaults in ``COST_DEFAULTS``), which the
harness and the Ax and Optuna adapters all read.

The method names of the default and ``--quick`` comparisons are not written
here: they are the built-in methods marked so in
:data:`bolt_pco64.bench.methods.builtins.BUILTINS`, the one list of the methods.

This module imports nothing heavy (no torch, no BoTorch), so the command line
can show these defaults in ``--help`` without loading the BO stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

from bolt_pco64._deprecated import deprecated_names
from bolt_pco64.bench.clock import ClockBudget
from bolt_pco64.bench.methods import BUILTINS
from bolt_pco64.params import POSITIVE_INT, Interval, check_param, is_noise_std

#: The early-termination policies (``--early-stop``), by name: the keys of
#: :data:`bolt_pco64.bo.early_stop.EARLY_STOP_POLICIES` (not imported here: it
#: loads the BO stack).
EARLY_STOP_CHOICES: tuple[str, ...] = ("none", "posterior", "percentile")

#: A GPU-hour budget, a finite number > 0.
POSITIVE_REAL = Interval(Real, 0, None, closed="neither")

__all__ = [
    "DEFAULTS",
    "EARLY_STOP_CHOICES",
    "POSITIVE_REAL",
    "QUICK",
    "QUICK_FAMILY",
    "BenchConfig",
    "BenchDefaults",
    "resolve_budget",
]


@dataclass(frozen=True)
class BenchDefaults:
    """The settings of a comparison when the caller gives none.

    Attributes:
        problem: The instance a comparison runs on when none is named.
        methods: Method names, in report order (by default the built-in
            methods marked ``default`` in
            :data:`~bolt_pco64.bench.methods.builtins.BUILTINS`).
        seeds: Seeds per method (seeds ``0..seeds-1``).
        budget: Evaluations per run, initial design included.
        n_init: Size of the initial design shared by all methods of a seed.
        q: Batch size of each proposal.
        noise: Observation noise: ``None`` (noise-free), a standard
            deviation, or ``"measured"`` (each row's ``throughput_std``).
        workers: Runs in flight at once on the simulated clock, each on its
            own cluster of the instance's size (:mod:`bolt_pco64.bench.clock`).
        early_stop: The early-termination policy of every run
            (:data:`EARLY_STOP_CHOICES`; its settings are
            :data:`bolt_pco64.bo.early_stop.EARLY_STOP_DEFAULTS`).
        jobs: Local worker processes (1 = in the calling process).
        lane_width: Seeds of a method per lane of ``bolt-pco64 bench``
            (:mod:`bolt_pco64.bench.lanes`).
        out: Output directory.
        reference: The method every other one is compared with, seed by seed,
            in the summary (``bolt_pco64.bench.summary.compare_to_reference``).
        dask_connect_timeout_s: How long to try to reach a Dask scheduler
            before the run is refused.
    """

    problem: str = "pco64"
    methods: tuple[str, ...] = tuple(n for n, b in BUILTINS.items() if b.default)
    seeds: int = 20
    budget: int = 40
    n_init: int = 10
    q: int = 1
    noise: float | str | None = None
    workers: int = 1
    early_stop: str = "none"
    jobs: int = 1
    lane_width: int = 32
    out: str = "bench-results/full"
    reference: str = "random"
    dask_connect_timeout_s: float = 10.0

    def describe(self) -> str:
        """``"3 methods (random, qlognei, ts) x 3 seeds x 30 evaluations"``."""
        return (
            f"{len(self.methods)} methods ({', '.join(self.methods)}) x "
            f"{self.seeds} seeds x {self.budget} evaluations"
        )


#: The default comparison, 8 methods x 20 seeds x 40 evaluations (quarters of
#: the budget at 10, 20, 30 and 40 evaluations).
DEFAULTS = BenchDefaults()
#: ``--quick``: 3 methods x 3 seeds x 30 evaluations.
QUICK = BenchDefaults(
    methods=tuple(n for n, b in BUILTINS.items() if b.quick),
    seeds=3,
    budget=30,
    out="bench-results/quick",
)
#: ``--quick`` with ``--problem all``, on each problem: 3 methods x 3 seeds x
#: 20 evaluations (half of ``QUICK``'s BO steps per run, so that the three
#: problems together take a few minutes at most on a 2-core machine).
QUICK_FAMILY = BenchDefaults(
    methods=QUICK.methods,
    seeds=QUICK.seeds,
    budget=20,
    n_init=QUICK.n_init,
    out="bench-results/quick-all",
)
#: Deprecated: ``DEFAULT_METHODS`` is ``DEFAULTS.methods`` (one default, one name).
__getattr__ = deprecated_names(
    __name__, {"DEFAULT_METHODS": (lambda: DEFAULTS.methods, "DEFAULTS.methods")}
)


@dataclass(frozen=True)
class BenchConfig:
    """What makes runs comparable (stored with every run; resume checks it).

    A run's budget is either ``budget`` evaluations or ``budget_hours``
    GPU-hours (set ``budget=None`` with ``budget_hours``): a run on a
    GPU-hour budget evaluates until that many GPU-hours are consumed or no
    configuration is left (:mod:`bolt_pco64.bench.clock` says how the run
    that crosses the budget is charged).

    Attributes:
        budget: Evaluations per run, initial design included, or ``None``
            with ``budget_hours``.
        n_init: Size of the initial design (``1 <= n_init <= budget``).
        q: Batch size of each proposal.
        noise: ``None`` (noise-free), a float standard deviation, or
            ``"measured"`` (each row's ``throughput_std``).
        budget_hours: GPU-hours per run (of the instance's cluster), or
            ``None`` with ``budget``.
        workers: Runs in flight at once on the simulated clock.
        early_stop: The early-termination policy (:data:`EARLY_STOP_CHOICES`,
            :mod:`bolt_pco64.bench.early`).
    """

    budget: int | None = DEFAULTS.budget
    n_init: int = DEFAULTS.n_init
    q: int = DEFAULTS.q
    noise: float | str | None = DEFAULTS.noise
    budget_hours: float | None = None
    workers: int = DEFAULTS.workers
    early_stop: str = DEFAULTS.early_stop

    def max_evaluations(self, n_rows: int) -> int:
        """The most evaluations a run may make on a table of ``n_rows`` rows:
        ``budget``, or ``n_rows`` on a GPU-hour budget."""
        return self.budget if self.budget is not None else n_rows

    def clock_budget(self) -> ClockBudget:
        """The run's budget on the simulated clock."""
        if self.budget_hours is not None:
            return ClockBudget(gpu_hours=float(self.budget_hours))
        return ClockBudget(evaluations=self.budget)

    def describe_budget(self) -> str:
        """``"40 evaluations"`` or ``"500 GPU-hours"``."""
        if self.budget_hours is not None:
            return f"{self.budget_hours:g} GPU-hours"
        return f"{self.budget} evaluations"

    def check(self, n_rows: int | None = None) -> None:
        """Raise ``ValueError`` on an inconsistent configuration.

        Args:
            n_rows: The table's row count (the budget may not exceed it).
        """
        if (self.budget is None) == (self.budget_hours is None):
            raise ValueError(
                "Expected one of budget (evaluations) and budget_hours (GPU-hours), "
                f"got budget={self.budget!r} and budget_hours={self.budget_hours!r}."
            )
        if self.budget_hours is not None:
            check_param("budget_hours", self.budget_hours, POSITIVE_REAL)
        names = ("budget", "n_init", "q", "workers")
        for name in names if self.budget is not None else names[1:]:
            check_param(name, getattr(self, name), POSITIVE_INT)
        if self.budget is not None and self.n_init > self.budget:
            raise ValueError(
                f"Expected n_init <= budget, got n_init={self.n_init} > budget={self.budget}."
            )
        if n_rows is not None and self.n_init > n_rows:
            raise ValueError(
                f"Expected n_init <= the table's {n_rows} rows, got {self.n_init}."
            )
        if n_rows is not None and self.budget is not None and self.budget > n_rows:
            raise ValueError(
                f"Expected budget <= the table's {n_rows} rows, got {self.budget}."
            )
        if self.early_stop not in EARLY_STOP_CHOICES:
            raise ValueError(
                f"Expected early_stop one of {list(EARLY_STOP_CHOICES)}, got "
                f"{self.early_stop!r}."
            )
        if not is_noise_std(self.noise):
            raise ValueError(
                f"Expected noise None, 'measured' or a float >= 0, got {self.noise!r}."
            )


def resolve_budget(budget: int | None, budget_hours: float | None) -> int | None:
    """The evaluation budget of a comparison given as ``budget`` or ``budget_hours``.

    ``None`` for ``budget`` means ``DEFAULTS.budget`` without ``budget_hours``
    and no evaluation budget with it.

    Raises:
        ValueError: If both are given.
    """
    if budget is not None and budget_hours is not None:
        raise ValueError(
            "Expected one of budget (evaluations) and budget_hours (GPU-hours), "
            f"got budget={budget!r} and budget_hours={budget_hours!r}."
        )
    if budget is None and budget_hours is None:
        return DEFAULTS.budget
    return budget
