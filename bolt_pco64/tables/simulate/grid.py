"""The candidate set: which configurations the stand-in's sweep holds.

pco64's card says its 780 rows are "the full candidate set". Within the
published bounds, exactly 780 configurations keep the hard rules of
:meth:`~bolt_pco64.instances.Instance.rule_violation` (the instance's
:meth:`~bolt_pco64.instances.Instance.grid`, which the reconstruction's grid
reads too), so the stand-in's rows are this grid, in canonical order, with no
draw:

1. ``dp * tp * pp * cp`` is the number of GPUs;
2. ``sp <= tp``: sequence parallelism splits the regions tensor parallelism
   leaves replicated, inside the tensor-parallel group (Korthikanti et al.
   2022), so it needs at least as many TP ranks;
3. more than one model chunk only with ``pp > 1``: interleaving splits a
   pipeline stage's layers into chunks (Narayanan et al. 2021);
4. ZeRO stage 2 or 3 only with ``pp = 1``: DeepSpeed's pipeline engine
   rejects ZeRO-2/3 with pipeline parallelism (``PipelineEngine.__init__``
   asserts ``zero_optimization_stage() < 2``).

That the count is exactly the card's 780 is strong evidence that the measured
table is this grid. One further launch check of Megatron-LM is applied,
``pp * chunks`` dividing the number of layers; it never binds in pco64's
bounds (it removes pco32's 8 stages with 2 chunks, 40 layers).

pco32 and pco16 are not full grids under these rules: their grids hold 432
and 960 configurations, their published sweeps 379 and 919. The gaps, 53 and
41, are both ``1 (mod 4)``. Every launch check of the frameworks treats the
four bucket sizes alike (the bucket only sizes a communication buffer), so
any rule-based omission removes a multiple of four configurations: the gaps
cannot come from launch rules alone. The stand-ins therefore model them as
what the measured sweeps most plausibly lost: runs that left no row for a
reason unrelated to memory (a failed launch, a node failure, lost logs). The
stand-in omits :func:`missing_runs` configurations per instance (the grid's
size less the published rows), drawn uniformly (seed
:data:`MISSING_RUNS_SEED`, independent of the noise seed), never the
published best; pco64 omits none (its card: "the full candidate set").
"""

from __future__ import annotations

import numpy as np

from bolt_pco64.instances import Instance
from bolt_pco64.tables.simulate.spec import Config

__all__ = [
    "MISSING_RUNS_SEED",
    "candidate_configurations",
    "grid_configurations",
    "missing_runs",
]

#: Seed of the draw of the runs missing from a sweep (not the noise seed).
MISSING_RUNS_SEED = 919379


def grid_configurations(instance: Instance) -> list[Config]:
    """Every configuration of ``instance``'s grid
    (:meth:`~bolt_pco64.instances.Instance.grid`), in canonical order."""
    return [Config.from_encoded(instance, x) for x in instance.grid()]


def missing_runs(instance: Instance, grid_size: int | None = None) -> int:
    """Runs missing from the instance's published sweep: the grid's size less
    the published rows (pco16: 41, pco32: 53, pco64: 0), never below 0.

    ``grid_size``: the grid's size where the caller has it (else computed).
    """
    size = len(instance.grid()) if grid_size is None else grid_size
    return max(size - instance.published.rows, 0)


def candidate_configurations(instance: Instance) -> list[Config]:
    """The stand-in's rows: the grid less the runs missing from the sweep.

    :func:`missing_runs` configurations (0 for pco64) are drawn uniformly
    with :data:`MISSING_RUNS_SEED`, never the published best. Canonical order.
    """
    grid = grid_configurations(instance)
    n_missing = missing_runs(instance, len(grid))
    if n_missing == 0:
        return grid
    best = tuple(instance.published.best_config)
    pool = [i for i, c in enumerate(grid) if c.encoded(instance) != best]
    rng = np.random.default_rng([MISSING_RUNS_SEED, len(grid)])
    drop = set(rng.choice(pool, size=n_missing, replace=False).tolist())
    return [c for i, c in enumerate(grid) if i not in drop]
