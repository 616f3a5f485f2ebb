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
and 960 configurations, their published sweeps 379 and 919. Which
configurations the measured sweeps hold is what the reconstruction infers from
each instance's published traces (:mod:`bolt_pco64.tables.reconstruct.grid`: every
configuration a trace evaluated, then the rows the replayed row indices pin).
A stand-in that left out other configurations than the measured table would
refuse configurations the published traces evaluate, so the stand-in's rows
are the shipped reconstruction's rows (its configuration columns, read from
``locations.reconstructed_table_path``): the same configurations, in
canonical order, with no draw. :func:`missing_runs` counts the grid
configurations the sweep does not hold (pco16: 41, pco32: 53, pco64: 0).

pco16 is the exception (:data:`DRAWN_ROWS`): on the reconstruction's rows the
default (``accum``) variant's memory model lets dp16 ZeRO-3 configurations with
one or two accumulation steps run, which the measured table shows ran out of
memory, and they outrank the published best in every one of
``MAX_NOISE_DRAWS`` noise draws, so its calibration fails. Until the memory
calibration reads the visited rows' exact feasibility, pco16's stand-in keeps
the earlier rows: the grid less :func:`missing_runs` configurations drawn
uniformly (seed :data:`MISSING_RUNS_SEED`), never the published best.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bolt_pco64.instances import Instance
from bolt_pco64.tables import locations
from bolt_pco64.tables.simulate.spec import Config

__all__ = [
    "DRAWN_ROWS",
    "MISSING_RUNS_SEED",
    "candidate_configurations",
    "grid_configurations",
    "missing_runs",
]

#: Instances whose stand-in drops its missing runs at random (see above).
DRAWN_ROWS: frozenset[str] = frozenset({"pco16"})
#: Seed of the draw of the runs missing from a :data:`DRAWN_ROWS` sweep.
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
    """The stand-in's rows, in canonical order.

    The grid where it holds exactly the published rows (pco64); otherwise the
    rows of the instance's shipped reconstruction (the configurations the
    published traces show the measured table holds); for a
    :data:`DRAWN_ROWS` instance, the grid less :func:`missing_runs`
    configurations drawn with :data:`MISSING_RUNS_SEED`, never the
    published best.

    Raises:
        FileNotFoundError: If the grid is not the published rows and the
            installation lacks the shipped reconstruction.
        ValueError: If the reconstruction's rows are not published-row-count
            many distinct grid configurations.
    """
    grid = grid_configurations(instance)
    n_missing = missing_runs(instance, len(grid))
    if n_missing == 0:
        return grid
    if instance.name in DRAWN_ROWS:
        best = tuple(instance.published.best_config)
        pool = [i for i, c in enumerate(grid) if c.encoded(instance) != best]
        rng = np.random.default_rng([MISSING_RUNS_SEED, len(grid)])
        drop = set(rng.choice(pool, size=n_missing, replace=False).tolist())
        return [c for i, c in enumerate(grid) if i not in drop]
    path = locations.reconstructed_table_path(instance)
    if path is None:
        raise FileNotFoundError(
            f"The shipped reconstruction of {instance.name} is missing from the "
            "installation; its stand-in's rows are the reconstruction's rows."
        )
    names = [spec.name for spec in instance.inputs]
    frame = pd.read_parquet(path, columns=names)
    rows = {
        tuple(spec.encode(int(v)) for spec, v in zip(instance.inputs, raw, strict=True))
        for raw in frame.itertuples(index=False, name=None)
    }
    by_key = {c.encoded(instance): c for c in grid}
    off = sorted(rows - set(by_key))
    if off or len(rows) != instance.published.rows:
        raise ValueError(
            f"Expected {instance.published.rows} distinct {instance.name} grid "
            f"configurations in {path}, got {len(rows)} ({len(off)} off the grid)."
        )
    return [c for key, c in by_key.items() if key in rows]
