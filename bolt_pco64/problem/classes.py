"""The problem class of each shipped instance.

:class:`~bolt_pco64.problem.PCO16`, :class:`~bolt_pco64.problem.PCO32` and
:class:`~bolt_pco64.problem.PCO64` are :class:`~bolt_pco64.problem.PCO`
with the instance fixed (plain classes, pickled by reference; their class
attributes state the instance's published figures, as BoTorch's test
functions do); any other :class:`~bolt_pco64.instances.Instance` (a user's own
cluster) is served by ``PCO(instance=..., table=...)`` itself.
:func:`~bolt_pco64.problem.problem_class` finds the class.
"""

from __future__ import annotations

from bolt_pco64.instances import (
    PCO16_INSTANCE,
    PCO32_INSTANCE,
    PCO64_INSTANCE,
    Instance,
    get_instance,
)
from bolt_pco64.problem.base import PCO

__all__ = ["PCO16", "PCO32", "PCO64", "problem_class"]


def _stated(
    inst: Instance,
) -> tuple[
    int, list[tuple[float, float]], float | None, list[tuple[float, ...]] | None
]:
    """An instance's published figures as BoTorch's class attributes: ``dim``,
    ``_bounds``, ``_optimal_value`` and ``_optimizers`` (a problem recomputes
    the last three from the table it serves)."""
    pub = inst.published
    return (
        inst.dim,
        [(float(lo), float(hi)) for lo, hi in inst.bounds],
        None if pub is None else pub.best_value,
        None if pub is None else [tuple(float(v) for v in pub.best_config)],
    )


class PCO64(PCO):
    r"""pco64: throughput of LLM training on 64 GPUs (16 hosts) by parallelism configuration.

    A 64-layer model (hidden 5120, FFN 25600, 64 heads, sequence 8192, batch
    512) on 96 GB GPUs. 8 inputs, in this order: ``log2_dp_size``,
    ``log2_tp_size``, ``log2_pp_size``, ``log2_cp_size``, ``log2_sp_size``,
    ``log2_dp_bucket_size_mb``, ``zero_stage`` (ordinal) and
    ``log2_num_model_chunks``. Published table (card): 780 rows, 560 feasible,
    best 0.270684453437186 at dp 16, tp 4, pp 1, cp 1, sp 4, bucket 64 MB,
    ZeRO 2, 1 chunk. See :class:`PCO` for the arguments.
    """

    instance = PCO64_INSTANCE
    dim, _bounds, _optimal_value, _optimizers = _stated(PCO64_INSTANCE)


class PCO32(PCO):
    r"""pco32: throughput of LLM training on 32 GPUs (8 hosts) by parallelism configuration.

    A 40-layer model (hidden 5120, FFN 17408, 40 heads, sequence 8192, batch
    512) on 96 GB GPUs; the 8 inputs of :class:`PCO64`, in the same order.
    Published (bolt-bench 0.2.0): 379 rows, 339 feasible, best
    0.469575911560675 at dp 32, tp 1, pp 1, cp 1, sp 1, bucket 256 MB, ZeRO 2,
    1 chunk. See :class:`PCO` for the arguments.
    """

    instance = PCO32_INSTANCE
    dim, _bounds, _optimal_value, _optimizers = _stated(PCO32_INSTANCE)


class PCO16(PCO):
    r"""pco16: throughput of LLM training on 16 GPUs (2 hosts) by parallelism configuration.

    A 32-layer model (hidden 4096, FFN 11008, 32 heads, sequence 2048, batch
    512) on 80 GB GPUs. Context parallelism is fixed at 1 (``log2_cp_size`` is
    context) and gradient accumulation varies instead: 8 inputs, in this order,
    ``log2_dp_size``, ``log2_tp_size``, ``log2_pp_size``, ``log2_sp_size``,
    ``log2_dp_bucket_size_mb``, ``zero_stage`` (ordinal),
    ``log2_num_model_chunks`` and ``log2_grad_accum_steps``. Published
    (bolt-bench 0.2.0): 919 rows, 632 feasible, best 0.1489374720046964 at
    dp 16, tp 1, pp 1, sp 1, bucket 256 MB, ZeRO 2, 1 chunk, 4 accumulation
    steps. See :class:`PCO` for the arguments.
    """

    instance = PCO16_INSTANCE
    dim, _bounds, _optimal_value, _optimizers = _stated(PCO16_INSTANCE)


#: The class of each shipped instance.
_NAMED_CLASSES: dict[Instance, type[PCO]] = {
    cls.instance: cls for cls in (PCO16, PCO32, PCO64)
}


def problem_class(instance: str | Instance) -> type[PCO]:
    """The problem class of an instance (``"pco16"`` -> :class:`PCO16`).

    A shipped instance has its named class; any other
    :class:`~bolt_pco64.instances.Instance` (a user's own cluster) is served
    by :class:`PCO` itself, given the instance:
    ``problem_class(inst)(instance=inst, table=path)`` builds either (a named
    class accepts its own instance).

    Raises:
        ValueError: If no instance has that name.
    """
    return _NAMED_CLASSES.get(get_instance(instance), PCO)
