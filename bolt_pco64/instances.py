"""The frozen descriptions of the pco instances (docs/architecture.md §4).

One :class:`Instance` holds everything that distinguishes pco16, pco32 and
pco64: the cluster, the GPU memory, the model, the input columns in order with
their encoding and bounds, the context columns, where the measured table is
published, the file names and the figures published about the measured table.
It is the single place an instance's numbers live: table loading and
validation, the problem classes, fetch, the stand-in generator, the harness
and the command line read it.

Sources: pco64 from its dataset card (``Glow-AI/pco64_tabular_data``); pco16
and pco32 from bolt-bench 0.2.0's source, which also states pco64's best as
0.270684453437186 (the card rounds it to 0.27068). The revision ``v0.1.0``
and the raw CSV names of pco16 and pco32 follow pco64's pattern (assumed: only
pco64's are published); ``fetch`` accepts whichever single table file the
dataset holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_INSTANCE",
    "INSTANCES",
    "OUTPUT_COLUMNS",
    "PCO16_INSTANCE",
    "PCO32_INSTANCE",
    "PCO64_INSTANCE",
    "ZERO_STAGES",
    "Encoding",
    "InputSpec",
    "Instance",
    "InstanceName",
    "ModelShape",
    "PublishedFigures",
    "get_instance",
]

InstanceName = Literal["pco16", "pco32", "pco64"]
#: The instance served where none is named (the package's namesake).
DEFAULT_INSTANCE: InstanceName = "pco64"
#: How an input column is searched: ``"log2"`` values are used as they are;
#: ``"ordinal"`` values are replaced by their position in ``InputSpec.levels``.
Encoding = Literal["log2", "ordinal"]

#: The output columns shared by every instance, in the cards' order.
OUTPUT_COLUMNS: tuple[str, ...] = (
    "ran_successfully",
    "throughput_mean",
    "throughput_std",
    "peak_mem_normalised",
    "overall_time",
    "all_time_steps",
    "peak_mem",
    "peak_mem_per_gpu",
)
#: Raw ZeRO stages of every instance; searched as their ordinal 0/1/2.
ZERO_STAGES: tuple[int, ...] = (0, 2, 3)


@dataclass(frozen=True)
class InputSpec:
    """One input column of ``X``.

    Attributes:
        name: The column's name in the table.
        low: Published lower bound of the *encoded* value.
        high: Published upper bound of the *encoded* value.
        encoding: ``"log2"`` (used as stored) or ``"ordinal"`` (the stored raw
            value's position in ``levels``).
        levels: The raw values of an ordinal column, in order (``()`` for log2).
    """

    name: str
    low: int
    high: int
    encoding: Encoding = "log2"
    levels: tuple[int, ...] = ()

    def encode(self, raw: int) -> int:
        """The encoded value of one raw cell."""
        return self.levels.index(raw) if self.encoding == "ordinal" else raw

    def decode(self, encoded: int) -> int:
        """The raw cell of one encoded value."""
        return self.levels[encoded] if self.encoding == "ordinal" else encoded


@dataclass(frozen=True)
class ModelShape:
    """The trained transformer (constant over an instance's rows).

    Attributes:
        num_layers: Transformer layers.
        num_attention_heads: Attention heads.
        hidden_size: Model width.
        ffn_hidden_size: MLP width.
        batch_size: Global batch, sequences per optimizer step.
        seq_length: Tokens per sequence.
    """

    num_layers: int
    num_attention_heads: int
    hidden_size: int
    ffn_hidden_size: int
    batch_size: int
    seq_length: int


@dataclass(frozen=True)
class PublishedFigures:
    """What is published about the measured table (``None``: not published).

    Attributes:
        rows: Number of configurations.
        feasible: Configurations that ran (``ran_successfully``).
        best_value: Best feasible ``throughput_mean``.
        best_config: The best configuration's *encoded* inputs, in input order.
        best_peak_mem_gb: ``peak_mem`` of the best configuration.
        max_feasible_peak_gb: Largest ``peak_mem`` of a run that fit.
    """

    rows: int
    feasible: int
    best_value: float
    best_config: tuple[int, ...]
    best_peak_mem_gb: float | None = None
    max_feasible_peak_gb: float | None = None


@dataclass(frozen=True)
class Instance:
    """A parallelism-configuration benchmark instance.

    Attributes:
        name: ``"pco16"``, ``"pco32"`` or ``"pco64"``.
        num_gpus: GPUs of the training job.
        num_hosts: Hosts they sit in (``num_gpus / num_hosts`` per host).
        gpu_memory_gb: Memory per GPU; ``peak_mem_normalised`` is
            ``peak_mem / gpu_memory_gb - 1``.
        model: The trained model and batch.
        inputs: The input columns in the order of ``X``'s last dimension.
        context: ``(column, value)`` pairs: columns constant over the table.
        dataset_id: The Hugging Face dataset of the measured table.
        dataset_revision: Its revision that ``fetch`` downloads.
        raw_csv_filename: Name of the raw sweep export (CSV).
        published: Figures published about the measured table.
        trace_files: The published optimisation traces made on the measured
            table (``data/traces/``; design §7), as paths relative to the
            traces folder. Their configurations are encoded inputs in ``X``
            order (pco16's knob order differs from pco64's, and so does its
            instance's ``inputs``).
    """

    name: InstanceName
    num_gpus: int
    num_hosts: int
    gpu_memory_gb: float
    model: ModelShape
    inputs: tuple[InputSpec, ...]
    context: tuple[tuple[str, int], ...]
    dataset_id: str
    dataset_revision: str
    raw_csv_filename: str
    published: PublishedFigures
    trace_files: tuple[str, ...] = ()

    # -- derived names ------------------------------------------------------

    @property
    def dim(self) -> int:
        """Number of inputs (the last dimension of ``X``)."""
        return len(self.inputs)

    @property
    def gpus_per_host(self) -> int:
        return self.num_gpus // self.num_hosts

    @property
    def input_columns(self) -> tuple[str, ...]:
        """Input column names, in ``X`` order."""
        return tuple(spec.name for spec in self.inputs)

    @property
    def context_columns(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.context)

    @property
    def columns(self) -> tuple[str, ...]:
        """All columns of the table: inputs, context, outputs."""
        return (*self.input_columns, *self.context_columns, *OUTPUT_COLUMNS)

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """Published ``(low, high)`` of every encoded input, in ``X`` order."""
        return tuple((spec.low, spec.high) for spec in self.inputs)

    @property
    def measured_filename(self) -> str:
        """File name of the installed measured table (``pco64.parquet``)."""
        return f"{self.name}.parquet"

    @property
    def standin_filename(self) -> str:
        """File name of the shipped stand-in (``pco64_simulated.parquet``)."""
        return f"{self.name}_simulated.parquet"

    @property
    def reconstructed_filename(self) -> str:
        """File name of the shipped reconstruction (``pco64_reconstructed.parquet``)."""
        return f"{self.name}_reconstructed.parquet"

    @property
    def env_table(self) -> str:
        """Environment variable naming a table file (``BOLT_PCO64_TABLE``)."""
        return f"BOLT_{self.name.upper()}_TABLE"

    def input_index(self, name: str) -> int:
        """Position of an input column in ``X``."""
        return self.input_columns.index(name)

    def raw_sizes(self, encoded: Sequence[int]) -> dict[str, int]:
        """Every knob's raw value, inputs and context, of one encoded configuration.

        Keys are the column names less ``log2_`` (``dp_size``, ...,
        ``zero_stage``): powers of two for the log2 columns, the raw ZeRO stage.
        """
        cells = {
            spec.name: spec.decode(int(v))
            for spec, v in zip(self.inputs, encoded, strict=True)
        }
        cells.update(self.context)
        return {
            name.removeprefix("log2_"): (value if name == "zero_stage" else 2**value)
            for name, value in cells.items()
        }

    def rule_violation(self, encoded: Sequence[int]) -> str | None:
        """The hard rule one encoded configuration breaks, or ``None``.

        The rules of every sweep (the grid of ``bolt_pco64.simulate.grid``):
        the encoded values lie in the published bounds; ``dp*tp*pp*cp`` is
        the number of GPUs; ``sp <= tp``; more than one model chunk only with
        ``pp > 1``; ZeRO stage 2 or 3 only with ``pp = 1``; ``pp * chunks``
        divides the number of layers.
        """
        if len(encoded) != self.dim:
            return f"expected {self.dim} inputs, got {len(encoded)}"
        for spec, v in zip(self.inputs, encoded, strict=True):
            if v != int(v) or not spec.low <= v <= spec.high:
                return (
                    f"{spec.name} = {v:g} is off the grid "
                    f"(expected an integer in [{spec.low}, {spec.high}])"
                )
        s = self.raw_sizes([int(v) for v in encoded])
        if s["dp_size"] * s["tp_size"] * s["pp_size"] * s["cp_size"] != self.num_gpus:
            return f"dp*tp*pp*cp = {self.num_gpus} GPUs is broken"
        if s["sp_size"] > s["tp_size"]:
            return "sp <= tp is broken"
        if s["num_model_chunks"] > 1 and s["pp_size"] == 1:
            return "more than one model chunk needs pp > 1"
        if s["zero_stage"] in ZERO_STAGES[1:] and s["pp_size"] > 1:
            return "ZeRO stage 2/3 needs pp = 1"
        if self.model.num_layers % (s["pp_size"] * s["num_model_chunks"]):
            return f"pp * chunks must divide the {self.model.num_layers} layers"
        return None


def _log2(name: str, low: int, high: int) -> InputSpec:
    return InputSpec(name, low, high)


_ZERO = InputSpec("zero_stage", 0, 2, "ordinal", ZERO_STAGES)

PCO64_INSTANCE = Instance(
    name="pco64",
    num_gpus=64,
    num_hosts=16,
    gpu_memory_gb=96.0,
    model=ModelShape(64, 64, 5120, 25600, 512, 8192),
    inputs=(
        _log2("log2_dp_size", 1, 6),
        _log2("log2_tp_size", 0, 2),
        _log2("log2_pp_size", 0, 4),
        _log2("log2_cp_size", 0, 2),
        _log2("log2_sp_size", 0, 2),
        _log2("log2_dp_bucket_size_mb", 6, 9),
        _ZERO,
        _log2("log2_num_model_chunks", 0, 2),
    ),
    context=(("log2_grad_accum_steps", 0),),
    dataset_id="Glow-AI/pco64_tabular_data",
    dataset_revision="v0.1.0",
    raw_csv_filename="data_64depth-64gpus.csv",
    published=PublishedFigures(
        rows=780,
        feasible=560,
        best_value=0.270684453437186,
        best_config=(4, 2, 0, 0, 2, 6, 1, 0),
        best_peak_mem_gb=74.2,
        max_feasible_peak_gb=79.3,
    ),
    trace_files=(
        "pco64/pco64_random_10trials_100iterations_results.json",
        "pco64/pco64_tpe_10trials_100iterations_results.json",
        "pco64/pco64_cmaes_10trials_100iterations_results.json",
    ),
)

PCO32_INSTANCE = Instance(
    name="pco32",
    num_gpus=32,
    num_hosts=8,
    gpu_memory_gb=96.0,
    model=ModelShape(40, 40, 5120, 17408, 512, 8192),
    inputs=(
        _log2("log2_dp_size", 1, 5),
        _log2("log2_tp_size", 0, 2),
        _log2("log2_pp_size", 0, 3),
        _log2("log2_cp_size", 0, 2),
        _log2("log2_sp_size", 0, 2),
        _log2("log2_dp_bucket_size_mb", 6, 9),
        _ZERO,
        _log2("log2_num_model_chunks", 0, 1),
    ),
    context=(("log2_grad_accum_steps", 0),),
    dataset_id="Glow-AI/pco32_tabular_data",
    dataset_revision="v0.1.0",
    raw_csv_filename="data_40depth-32gpus.csv",
    published=PublishedFigures(
        rows=379,
        feasible=339,
        best_value=0.469575911560675,
        best_config=(5, 0, 0, 0, 0, 8, 1, 0),
    ),
    trace_files=("pco32/pco32_random_10trials_50iterations_results.json",),
)

PCO16_INSTANCE = Instance(
    name="pco16",
    num_gpus=16,
    num_hosts=2,
    gpu_memory_gb=80.0,
    model=ModelShape(32, 32, 4096, 11008, 512, 2048),
    inputs=(
        _log2("log2_dp_size", 1, 4),
        _log2("log2_tp_size", 0, 3),
        _log2("log2_pp_size", 0, 3),
        _log2("log2_sp_size", 0, 3),
        _log2("log2_dp_bucket_size_mb", 6, 9),
        _ZERO,
        _log2("log2_num_model_chunks", 0, 2),
        _log2("log2_grad_accum_steps", 0, 3),
    ),
    context=(("log2_cp_size", 0),),
    dataset_id="Glow-AI/pco16_tabular_data",
    dataset_revision="v0.1.0",
    raw_csv_filename="data_32depth-16gpus.csv",
    published=PublishedFigures(
        rows=919,
        feasible=632,
        best_value=0.1489374720046964,
        best_config=(4, 0, 0, 0, 8, 1, 0, 2),
    ),
    trace_files=("pco16/pco16_random_10trials_100iterations_results.json",),
)

#: Every instance by name (a registry, not an ``if`` chain).
INSTANCES: dict[str, Instance] = {
    inst.name: inst for inst in (PCO16_INSTANCE, PCO32_INSTANCE, PCO64_INSTANCE)
}


def get_instance(name: str | Instance) -> Instance:
    """The instance called ``name`` (an :class:`Instance` is returned as is).

    Raises:
        ValueError: If no instance has that name.
    """
    if isinstance(name, Instance):
        return name
    try:
        return INSTANCES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Expected an instance name of {sorted(INSTANCES)}, got {name!r}."
        ) from None
