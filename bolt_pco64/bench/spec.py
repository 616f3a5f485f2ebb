"""One description of a comparison, every default of the harness, checked once.

- :class:`BenchConfig`: what makes runs comparable (budget or GPU-hours,
  initial design, batch size, noise, workers, early stopping); stored with
  every run, resume checks it; checked when it is made.
- :class:`ComparisonSpec`: a comparison: a :class:`BenchConfig` plus the
  methods, the seeds and the reference method of the paired comparisons;
  checked when it is made (methods looked up, no duplicate, a method's own
  ``n_init`` within the budget).
- :class:`Preset`: what the default comparison and ``--quick`` change
  (:data:`DEFAULTS`, :data:`QUICK`, :data:`QUICK_FAMILY`): methods, seeds,
  budget, lane width and output directory; :meth:`Preset.spec` makes the
  checked spec.

The default comparison is the protocol's design
(:mod:`bolt_pco64.bench.protocol.design`): the 8 default methods (random and
the 7 BoTorch model methods), the 100 seeds :data:`~bolt_pco64.bench.protocol.design.PROTOCOL_SEEDS`
(1000-1099, seeds that did not choose the protocol), 100 evaluations per run,
each method's seeds run in lanes of :data:`DEFAULT_LANE_WIDTH`
(:mod:`bolt_pco64.bench.lanes`). The command line
(``bolt-pco64 bench``), :class:`ComparisonSpec`'s defaults,
:func:`~bolt_pco64.bench.comparison.run_comparison`'s lane width and
``benchmarks/rerun_results.sh``'s ``default`` section all read it from here.

What a run and a crash cost is not here: it is the one time model,
:mod:`bolt_pco64.tables.time_model` (its defaults in ``COST_DEFAULTS``). The method
names of the default and ``--quick`` comparisons are the built-in methods
marked so in :data:`bolt_pco64.bench.methods.catalog.BUILTINS`.

This module imports nothing heavy (no torch, no BoTorch), so the command line
can show these defaults in ``--help`` without loading the BO stack.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from bolt_pco64.bench.clock import ClockBudget
from bolt_pco64.bench.contract import initial_design_size
from bolt_pco64.bench.methods import BUILTINS
from bolt_pco64.bench.methods.registry import check_methods, get_method, method_registry
from bolt_pco64.bench.protocol.design import PROTOCOL_DEFAULTS, PROTOCOL_SEEDS
from bolt_pco64.params import (
    POSITIVE_INT,
    Interval,
    check_param,
    check_seeds,
    is_noise_std,
)

__all__ = [
    "DEFAULTS",
    "DEFAULT_BUDGET",
    "DEFAULT_LANE_WIDTH",
    "DEFAULT_OUT",
    "DEFAULT_REFERENCE",
    "EARLY_STOP_CHOICES",
    "POSITIVE_REAL",
    "QUICK",
    "QUICK_FAMILY",
    "BenchConfig",
    "ComparisonSpec",
    "ComparisonSpecError",
    "Preset",
    "check_reference",
    "seeds_text",
]

#: The early-termination policies (``--early-stop``), by name: the keys of
#: :data:`bolt_pco64.bo.early_stop.EARLY_STOP_POLICIES` (not imported here: it
#: loads the BO stack).
EARLY_STOP_CHOICES: tuple[str, ...] = ("none", "posterior", "percentile")

#: A GPU-hour budget, a finite number > 0.
POSITIVE_REAL = Interval(Real, 0, None, closed="neither")

#: Evaluations per run (initial design included) when neither a budget nor
#: GPU-hours are given: the protocol's (100).
DEFAULT_BUDGET: int = PROTOCOL_DEFAULTS.budget
#: Seeds per lane of the default comparison and of
#: :func:`~bolt_pco64.bench.comparison.run_comparison` (``None`` there: one run
#: at a time, :func:`~bolt_pco64.bench.run.run_one`).
DEFAULT_LANE_WIDTH = 32
#: The method every other one is compared with, where it is compared.
DEFAULT_REFERENCE = "random"
#: Where a comparison is written when no ``out`` is given.
DEFAULT_OUT = "bench-results/full"


class ComparisonSpecError(ValueError):
    """A comparison setting refused by :class:`ComparisonSpec` (alone, or
    against a table's row count in
    :func:`~bolt_pco64.bench.comparison.run_comparison`)."""


@dataclass(frozen=True, kw_only=True)
class BenchConfig:
    """What makes runs comparable (stored with every run; resume checks it);
    checked when it is made.

    A run's budget is either ``budget`` evaluations or ``budget_hours``
    GPU-hours: a run on a GPU-hour budget evaluates until that many GPU-hours
    are consumed or no configuration is left (:mod:`bolt_pco64.bench.clock`
    says how the run that crosses the budget is charged).

    Attributes:
        budget: Evaluations per run, initial design included; ``None`` is
            :data:`DEFAULT_BUDGET` unless ``budget_hours`` is given.
        n_init: Size of the initial design shared by the methods of a seed
            (``1 <= n_init <= budget``).
        q: Batch size of each proposal.
        noise: ``None`` (noise-free), a float standard deviation, or
            ``"measured"`` (each row's ``throughput_std``).
        budget_hours: GPU-hours per run (of the instance's cluster) instead
            of ``budget`` (not both).
        workers: Runs in flight at once on the simulated clock, each on its
            own cluster of the instance's size.
        early_stop: The early-termination policy (:data:`EARLY_STOP_CHOICES`,
            :mod:`bolt_pco64.bench.early`; its settings are
            :data:`bolt_pco64.bo.early_stop.EARLY_STOP_DEFAULTS`).

    Raises:
        ValueError: On an inconsistent configuration.
    """

    budget: int | None = None
    n_init: int = 10
    q: int = 1
    noise: float | str | None = None
    budget_hours: float | None = None
    workers: int = 1
    early_stop: str = "none"

    def __post_init__(self) -> None:
        if self.budget is not None and self.budget_hours is not None:
            raise ValueError(
                "Expected one of budget (evaluations) and budget_hours (GPU-hours), "
                f"got budget={self.budget!r} and budget_hours={self.budget_hours!r}."
            )
        if self.budget is None and self.budget_hours is None:
            object.__setattr__(self, "budget", DEFAULT_BUDGET)
        if self.budget_hours is not None:
            check_param("budget_hours", self.budget_hours, POSITIVE_REAL)
        names = ("budget", "n_init", "q", "workers")
        for name in names if self.budget is not None else names[1:]:
            check_param(name, getattr(self, name), POSITIVE_INT)
        if self.budget is not None and self.n_init > self.budget:
            raise ValueError(
                f"Expected n_init <= budget, got n_init={self.n_init} > budget={self.budget}."
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

    def check_rows(self, n_rows: int) -> None:
        """Refuse a table of ``n_rows`` rows: fewer than ``n_init`` or the budget.

        Raises:
            ValueError: If the table is too small for the settings.
        """
        if self.n_init > n_rows:
            raise ValueError(
                f"Expected n_init <= the table's {n_rows} rows, got {self.n_init}."
            )
        if self.budget is not None and self.budget > n_rows:
            raise ValueError(
                f"Expected budget <= the table's {n_rows} rows, got {self.budget}."
            )

    def as_config(self) -> BenchConfig:
        """The run settings alone (a :class:`ComparisonSpec`'s, say)."""
        return BenchConfig(
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(BenchConfig)}
        )


@dataclass(frozen=True, kw_only=True)
class ComparisonSpec(BenchConfig):
    """What a comparison compares and how; checked once, when it is made.

    The run settings are :class:`BenchConfig`'s (keywords); ``methods`` and
    ``seeds`` may be given by position. The checked values replace the given
    ones: ``methods`` becomes a tuple of names (a bare string is one method,
    never its letters), ``seeds`` a tuple of seeds, ``budget`` the
    evaluation budget and ``reference`` a compared method. Use
    :func:`dataclasses.replace` to vary one setting
    (``replace(spec, budget=None, budget_hours=500)`` for a GPU-hour budget).

    Attributes:
        methods: Names in :data:`~bolt_pco64.bench.methods.registry.METHODS` (or the
            ``bolt_pco64.methods`` entry points), distinct, in report order.
        seeds: A number ``N`` (seeds ``0..N-1``) or explicit distinct seeds;
            by default the protocol's :data:`~bolt_pco64.bench.protocol.design.PROTOCOL_SEEDS` (1000-1099).
        reference: The method the summary compares every other one with over
            the shared seeds, one of ``methods``; ``None``:
            :data:`DEFAULT_REFERENCE` where it is compared, else the first.
        registry: Where ``methods`` are looked up (Ax's style): names to
            methods (a :class:`~bolt_pco64.bench.contract.Method` or a function);
            ``None`` for :func:`~bolt_pco64.bench.methods.registry.method_registry`'s
            (registered, built-in and entry-point methods). The checked spec
            holds the mapping its methods were found in; not compared, not
            recorded.

    Raises:
        ComparisonSpecError: On unknown or repeated methods, a reference not
            compared, bad seeds, inconsistent settings or a method's own
            ``n_init`` beyond the budget.
        TypeError: If ``seeds`` is a bool.
    """

    methods: str | Sequence[str] = field(
        default=tuple(n for n, b in BUILTINS.items() if b.default), kw_only=False
    )
    seeds: int | Sequence[int] = field(default=tuple(PROTOCOL_SEEDS), kw_only=False)
    reference: str | None = None
    registry: Mapping[str, object] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        given = [self.methods] if isinstance(self.methods, str) else self.methods
        found = method_registry() if self.registry is None else self.registry
        _set(self, registry=found)
        try:
            super().__post_init__()
            names = tuple(check_methods(list(given), found))
            _set(self, methods=names, seeds=tuple(check_seeds(self.seeds)))
            for m in names:
                initial_design_size(get_method(m, found), self.n_init, self.budget, m)
            _set(self, reference=check_reference(self.reference, names))
        except ValueError as err:
            raise ComparisonSpecError(str(err)) from err

    @property
    def config(self) -> BenchConfig:
        """What makes the runs comparable (stored with each run; resume checks it)."""
        return self.as_config()

    def check_rows(self, n_rows: int) -> None:
        """Refuse a table of ``n_rows`` rows: fewer than the budget or ``n_init``.

        Raises:
            ComparisonSpecError: If the table is too small for the settings.
        """
        try:
            super().check_rows(n_rows)
        except ValueError as err:
            raise ComparisonSpecError(str(err)) from err

    def describe(self) -> str:
        """``"3 methods (random, qlognei, ts) x 3 seeds (0-2) x 30 evaluations"``."""
        return (
            f"{len(self.methods)} methods ({', '.join(self.methods)}) x "
            f"{len(self.seeds)} seeds ({seeds_text(self.seeds)}) x "
            f"{self.describe_budget()}"
        )


def seeds_text(seeds: Sequence[int]) -> str:
    """Seeds as the command line's ``--seeds`` reads them back: runs of
    consecutive seeds as ranges, the rest listed (``"1000-1099"``,
    ``"3,5,9"``, ``"0-4,7"``); one seed alone is ``"7-7"`` (a bare ``7`` is
    a count there)."""
    parts: list[str] = []
    ordered = [int(s) for s in seeds]
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j > i or len(ordered) == 1:
            parts.append(f"{ordered[i]}-{ordered[j]}")
        else:
            parts.append(str(ordered[i]))
        i = j + 1
    return ",".join(parts)


def _set(spec: ComparisonSpec, **values: object) -> None:
    """Store checked values on a frozen spec (during ``__post_init__`` only)."""
    for name, value in values.items():
        object.__setattr__(spec, name, value)


def check_reference(reference: str | None, names: Sequence[str]) -> str:
    """The reference method of the paired comparisons: one of ``names``
    (``None``: :data:`DEFAULT_REFERENCE` where compared, else the first).

    Raises:
        ValueError: If ``reference`` is given and is not among ``names``.
    """
    if reference is None:
        return DEFAULT_REFERENCE if DEFAULT_REFERENCE in names else names[0]
    if reference not in names:
        raise ValueError(
            f"Expected reference to be one of the compared methods "
            f"({', '.join(names)}), got {reference!r}."
        )
    return reference


@dataclass(frozen=True)
class Preset:
    """What a named comparison changes from :class:`ComparisonSpec`'s defaults.

    Attributes:
        methods: Method names, in report order.
        seeds: Seeds per method: a number ``N`` (seeds ``0..N-1``) or the
            seeds themselves.
        budget: Evaluations per run, initial design included.
        out: Its output directory.
        lane_width: Seeds per lane (:mod:`bolt_pco64.bench.lanes`), ``None``
            for one run at a time.
    """

    methods: tuple[str, ...]
    seeds: int | tuple[int, ...]
    budget: int
    out: str
    lane_width: int | None = DEFAULT_LANE_WIDTH

    @property
    def seed_list(self) -> tuple[int, ...]:
        """The seeds themselves."""
        seeds = self.seeds
        return tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)

    def spec(self, **settings: Any) -> ComparisonSpec:
        """The checked spec: this preset's values, replaced by the ``settings``
        given (``None`` values are not given)."""
        given = {k: v for k, v in settings.items() if v is not None}
        mine: dict[str, Any] = {"methods": self.methods, "seeds": self.seeds}
        if "budget_hours" not in given:
            mine["budget"] = self.budget
        return ComparisonSpec(**{**mine, **given})

    def describe(self) -> str:
        """``"3 methods (random, qlognei, ts) x 3 seeds (0-2) x 30 evaluations"``."""
        return (
            f"{len(self.methods)} methods ({', '.join(self.methods)}) x "
            f"{len(self.seed_list)} seeds ({seeds_text(self.seed_list)}) x "
            f"{self.budget} evaluations"
        )


def _default(name: str) -> Any:
    (found,) = (f for f in dataclasses.fields(ComparisonSpec) if f.name == name)
    return found.default


#: The default comparison (the protocol's design) runs 8 methods (random and
#: the 7 BoTorch model methods) x 100 seeds (1000-1099) x 100 evaluations, in
#: lanes of 32 seeds.
DEFAULTS = Preset(_default("methods"), _default("seeds"), DEFAULT_BUDGET, DEFAULT_OUT)
#: ``--quick``: a smoke test, 3 methods x 3 seeds (0-2) x 30 evaluations (too
#: few seeds to compare: the report says so).
QUICK = Preset(
    tuple(n for n, b in BUILTINS.items() if b.quick), 3, 30, "bench-results/quick"
)
#: ``--quick`` with ``--problem all``, on each problem: 3 methods x 3 seeds x
#: 20 evaluations (half of ``QUICK``'s BO steps per run, so that the three
#: problems together take a few minutes at most on a 2-core machine).
QUICK_FAMILY = Preset(QUICK.methods, QUICK.seeds, 20, "bench-results/quick-all")
