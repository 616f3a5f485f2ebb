"""The candidate set: which configurations the stand-in's sweep holds.

pco64's card says its 780 rows are "the full candidate set". Within the
published bounds, exactly 780 configurations satisfy these four rules, so the
stand-in's rows are this grid, in canonical order, with no draw:

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
table is this grid. Two further launch checks of Megatron-LM never bind in
pco64's bounds: ``pp * chunks`` divides the number of layers, and the number
of micro-batches is at least ``pp``.

pco32 and pco16 are not full grids under these rules (432 and 960
configurations, where their sweeps hold 379 and 919): see
:func:`omitted_reason` for what their stand-ins leave out and why.
"""

from __future__ import annotations

import itertools

from bolt_pco64.instances import ZERO_STAGES, Instance
from bolt_pco64.simulate.spec import Config

__all__ = ["candidate_configurations", "grid_configurations", "micro_batches"]


def micro_batches(
    cfg: Config, instance: Instance, micro_batch_size: int | None
) -> tuple[int, int]:
    """``(micro-batches per step, sequences per micro-batch)`` of ``cfg``.

    With a fixed micro-batch size ``b`` a data-parallel rank runs
    ``global_batch / (dp * b)`` micro-batches per step; with ``b = None`` the
    step runs ``grad_accum`` micro-batches of ``global_batch / (dp *
    grad_accum)`` sequences.
    """
    per_rank = instance.model.batch_size // cfg.dp
    if micro_batch_size is None:
        return cfg.grad_accum, max(1, per_rank // cfg.grad_accum)
    return max(1, per_rank // micro_batch_size), micro_batch_size


def _levels(instance: Instance, name: str) -> list[int]:
    """Raw levels of a column: an input's range, or a context column's value."""
    for spec in instance.inputs:
        if spec.name == name:
            return [spec.decode(v) for v in range(spec.low, spec.high + 1)]
    return [dict(instance.context)[name]]


def grid_configurations(instance: Instance) -> list[Config]:
    """Every configuration in ``instance``'s bounds that the four rules allow.

    Also requires ``pp * chunks`` to divide the number of layers (Megatron's
    launch check). Returned in canonical order (ascending encoded inputs).
    """
    gpus = instance.num_gpus
    layers = instance.model.num_layers
    out: list[Config] = []
    names = (
        "log2_dp_size",
        "log2_tp_size",
        "log2_pp_size",
        "log2_cp_size",
        "log2_sp_size",
        "log2_dp_bucket_size_mb",
        "zero_stage",
        "log2_num_model_chunks",
        "log2_grad_accum_steps",
    )
    for ldp, ltp, lpp, lcp, lsp, lb, zero, lch, lga in itertools.product(
        *(_levels(instance, n) for n in names)
    ):
        dp, tp, pp, cp = 2**ldp, 2**ltp, 2**lpp, 2**lcp
        if dp * tp * pp * cp != gpus or lsp > ltp:
            continue
        if lch > 0 and pp == 1:
            continue
        if zero in ZERO_STAGES[1:] and pp > 1:
            continue
        if layers % (pp * 2**lch):
            continue
        out.append(Config(dp, tp, pp, cp, 2**lsp, 2**lb, zero, 2**lch, 2**lga))
    return sorted(out, key=lambda c: c.encoded(instance))


def candidate_configurations(instance: Instance) -> list[Config]:
    """The stand-in's rows: the grid less what :func:`omitted_reason` omits."""
    return grid_configurations(instance)
