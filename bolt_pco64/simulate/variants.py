"""Stand-in variants: readings of the job that the published figures leave open.

A card publishes a handful of figures (pco64: rows, feasible count, best
configuration and value, its peak, the largest feasible peak). Several
standard readings of how the training job uses memory meet all of them and
still put the crash boundary in different places (``../shared/analysis`` of
the project; issue 23). Each :class:`Variant` is one such reading, written as
the stand-in model's own :class:`~bolt_pco64.simulate.spec.Assumptions` and
:class:`~bolt_pco64.simulate.spec.ModelConstants`, calibrated to the same
figures by the same procedure (:func:`~bolt_pco64.simulate.calibrate.
build_model`). The shipped variants' names are
:data:`bolt_pco64.standins.STANDIN_VARIANTS` (the first is the default); this
module says what each one reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bolt_pco64.instances import Instance
from bolt_pco64.simulate.spec import ASSUMPTIONS, Assumptions, ModelConstants
from bolt_pco64.standins import check_variant

__all__ = ["VARIANTS", "Variant", "variant_for"]


@dataclass(frozen=True)
class Variant:
    """One reading of an instance's training job.

    Attributes:
        name: The variant's name (``bolt-pco64 generate --variant NAME``,
            ``table="standin:NAME"``).
        summary: The reading in one line (written to the file's metadata).
        assumptions: What the model assumes about the job.
        constants: The model's fixed constants under this reading.
    """

    name: str
    summary: str
    assumptions: Assumptions
    constants: ModelConstants = field(default_factory=ModelConstants)


#: Every variant of every instance, by instance and name; the default first.
VARIANTS: dict[str, dict[str, Variant]] = {
    "pco64": {
        "mbs1": Variant(
            "mbs1",
            "DeepSpeed reading: micro-batches of 1 sequence everywhere; ZeRO-0 "
            "replicates the optimizer state without a pipeline",
            ASSUMPTIONS["pco64"],
        ),
    },
    "pco32": {
        "mbs1": Variant(
            "mbs1",
            "DeepSpeed reading: micro-batches of 1 sequence everywhere; ZeRO-0 "
            "replicates the optimizer state without a pipeline",
            ASSUMPTIONS["pco32"],
        ),
    },
    "pco16": {
        "accum": Variant(
            "accum",
            "DeepSpeed reading: grad_accum micro-batches per step; ZeRO-0 "
            "replicates the optimizer state without a pipeline",
            ASSUMPTIONS["pco16"],
        ),
    },
}


def variant_for(instance: Instance, name: str | None = None) -> Variant:
    """The variant ``name`` of ``instance`` (``None``: its default).

    Raises:
        ValueError: If the instance ships no such variant.
    """
    return VARIANTS[instance.name][check_variant(instance, name)]
