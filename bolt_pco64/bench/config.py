"""Every default of the harness, and the configuration that makes runs comparable.

The charge for a crashed run is not here: it is the table's
(:data:`bolt_pco64.table.CRASH_COST_FRACTION`), so that the harness and the
Ax adapter charge crashes alike.

This module imports nothing heavy (no torch, no BoTorch), so the command line
can show these defaults in ``--help`` without loading the BO stack.
"""

from __future__ import annotations

from dataclasses import dataclass

from bolt_pco64.params import POSITIVE_INT, check_param, is_noise_std

__all__ = [
    "DEFAULTS",
    "DEFAULT_METHODS",
    "QUICK",
    "QUICK_FAMILY",
    "BenchConfig",
    "BenchDefaults",
]


@dataclass(frozen=True)
class BenchDefaults:
    """The settings of a comparison when the caller gives none.

    Attributes:
        problem: The instance a comparison runs on when none is named.
        methods: Method names, in report order.
        seeds: Seeds per method (seeds ``0..seeds-1``).
        budget: Evaluations per run, initial design included.
        n_init: Size of the initial design shared by all methods of a seed.
        q: Batch size of each proposal.
        jobs: Local worker processes (1 = in the calling process).
        out: Output directory.
        reference: The method every other one is compared with, seed by seed,
            in the summary (``bolt_pco64.bench.report.compare_to_reference``).
        dask_connect_timeout_s: How long to try to reach a Dask scheduler
            before the run is refused.
    """

    problem: str = "pco64"
    methods: tuple[str, ...] = (
        "random",
        "qlognei",
        "qlogei",
        "ts",
        "naive",
        "gpc_ei",
        "tobit_ei",
        "gpc_pof",
    )
    seeds: int = 20
    budget: int = 40
    n_init: int = 10
    q: int = 1
    jobs: int = 1
    out: str = "bench-results/full"
    reference: str = "random"
    dask_connect_timeout_s: float = 10.0

    def describe(self) -> str:
        """``"3 methods (random, qlognei, ts) x 3 seeds x 30 evaluations"``."""
        return (
            f"{len(self.methods)} methods ({', '.join(self.methods)}) x "
            f"{self.seeds} seeds x {self.budget} evaluations"
        )


#: The default comparison: 8 methods x 20 seeds x 40 evaluations (quarters of
#: the budget at 10, 20, 30 and 40 evaluations).
DEFAULTS = BenchDefaults()
#: ``--quick``: 3 methods x 3 seeds x 30 evaluations.
QUICK = BenchDefaults(
    methods=("random", "qlognei", "ts"),
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
#: The default methods (``DEFAULTS.methods``).
DEFAULT_METHODS: tuple[str, ...] = DEFAULTS.methods


@dataclass(frozen=True)
class BenchConfig:
    """What makes runs comparable (stored with every run; resume checks it).

    Attributes:
        budget: Evaluations per run, initial design included.
        n_init: Size of the initial design (``1 <= n_init <= budget``).
        q: Batch size of each proposal.
        noise: ``None`` (noise-free), a float standard deviation, or
            ``"measured"`` (each row's ``throughput_std``).
    """

    budget: int = DEFAULTS.budget
    n_init: int = DEFAULTS.n_init
    q: int = DEFAULTS.q
    noise: float | str | None = None

    def check(self, n_rows: int | None = None) -> None:
        """Raise ``ValueError`` on an inconsistent configuration.

        Args:
            n_rows: The table's row count (the budget may not exceed it).
        """
        for name in ("budget", "n_init", "q"):
            check_param(name, getattr(self, name), POSITIVE_INT)
        if self.n_init > self.budget:
            raise ValueError(
                f"Expected n_init <= budget, got n_init={self.n_init} > budget={self.budget}."
            )
        if n_rows is not None and self.budget > n_rows:
            raise ValueError(
                f"Expected budget <= the table's {n_rows} rows, got {self.budget}."
            )
        if not is_noise_std(self.noise):
            raise ValueError(
                f"Expected noise None, 'measured' or a float >= 0, got {self.noise!r}."
            )
