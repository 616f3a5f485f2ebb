"""The frozen descriptions of the pco instances (docs/architecture.md §4).

One :class:`Instance` holds everything that distinguishes pco16, pco32 and
pco64: the cluster, the GPU memory, the model, the input columns (knobs, :data:`KNOBS`)
in order with their encoding and bounds, the context columns, the hard rules of its grid
(:meth:`Instance.rule_violation`, :meth:`Instance.grid`), the throughput unit, where the
measured table is published, the shipped files (stand-in variants, reconstruction,
traces) and the figures published about the measured table. It is the single place an
instance's numbers live: table loading and validation, the problem classes, fetch, the
stand-in generator, the reconstruction, the harness and the command line read it, and
every per-instance mapping of the package derives from :data:`INSTANCES`. An instance of
another cluster is one more :class:`Instance` (``bolt_pco64.instance_file`` reads one
from TOML): the problem
(:func:`bolt_pco64.problem_class <bolt_pco64.problem.problem_class>`,
``PCO(instance=...)``), the loaders and the harness serve it with its table.

Sources: pco64 from its dataset card (``Glow-AI/pco64_tabular_data``); pco16
and pco32 from bolt-bench 0.2.0's source, which also states pco64's best as
0.270684453437186 (the card rounds it to 0.27068). The revision ``v0.1.0``
and the raw CSV names of pco16 and pco32 follow pco64's pattern (assumed: only
pco64's are published); ``fetch`` accepts whichever single table file the
dataset holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = [
    "ABSENT_KNOBS",
    "DEFAULT_INSTANCE",
    "INSTANCES",
    "KNOBS",
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
    "ThroughputUnit",
    "get_instance",
]

InstanceName = Literal["pco16", "pco32", "pco64"]
#: The instance served where none is named (the package's namesake).
DEFAULT_INSTANCE: InstanceName = "pco64"
#: How an input column is searched. ``"log2"`` values are used as they are;
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

#: Every knob a table may hold, by column name, and its one spelling in raw
#: units (:meth:`Instance.raw_sizes`, :func:`bolt_pco64.tables.table.decode_inputs`,
#: the stand-in's ``Config`` and the prior's ``Layout`` fields). A column is an
#: input or a context column of an instance; a knob an instance holds in
#: neither is absent (:data:`ABSENT_KNOBS`).
KNOBS: Mapping[str, str] = MappingProxyType(
    {
        "log2_dp_size": "dp",
        "log2_tp_size": "tp",
        "log2_pp_size": "pp",
        "log2_cp_size": "cp",
        "log2_sp_size": "sp",
        "log2_dp_bucket_size_mb": "bucket_mb",
        "zero_stage": "zero_stage",
        "log2_num_model_chunks": "chunks",
        "log2_grad_accum_steps": "grad_accum_steps",
    }
)
#: The raw value of a knob that an instance holds neither as an input nor as
#: context: a size of 1, ZeRO stage 0. (``bucket_mb`` has no neutral value:
#: an instance always holds it.)
ABSENT_KNOBS: Mapping[str, int] = MappingProxyType(
    {
        "dp": 1,
        "tp": 1,
        "pp": 1,
        "cp": 1,
        "sp": 1,
        "zero_stage": 0,
        "chunks": 1,
        "grad_accum_steps": 1,
    }
)

#: What a table's ``throughput_mean`` counts (*inferred* for the shipped
#: instances: the cards give no unit). ``"samples/s/gpu"``: sequences per
#: second per GPU, ``global_batch / (num_gpus * step_s)``; ``"steps/s"``:
#: optimizer steps per second, ``1 / step_s`` (the runner's own unit).
ThroughputUnit = Literal["samples/s/gpu", "steps/s"]


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
        dataset_id: The Hugging Face dataset of the measured table (``""``:
            none; ``fetch`` refuses the instance).
        dataset_revision: Its revision that ``fetch`` downloads.
        raw_csv_filename: Name of the raw sweep export (CSV; ``""``: none).
        published: Figures published about the measured table (``None``:
            none; the problem then states no class-level optimum, and ``info``
            checks nothing).
        trace_files: The published optimisation traces made on the measured
            table (``data/traces/``; design §7), as paths relative to the
            traces folder. Their configurations are encoded inputs in ``X``
            order (pco16's knob order differs from pco64's, and so does its
            instance's ``inputs``).
        throughput_unit: What ``throughput_mean`` counts
            (:data:`ThroughputUnit`; inferred for the shipped instances, see
            :data:`bolt_pco64.tables.simulate.spec.ASSUMPTIONS`).
        standin_variants: The shipped simulated stand-in's variants (the
            first is the default, :attr:`standin_filename`; the others in
            ``<name>_simulated_<variant>.parquet``); ``()``: none ships.

    Raises:
        ValueError: If the description is inconsistent (the message names the
            field): an input or context column that is not a known knob
            (:data:`KNOBS`) or appears twice, bounds out of order, an ordinal
            input whose levels do not match its bounds, GPUs not a multiple of
            the hosts, or no ``log2_dp_bucket_size_mb`` column.
    """

    name: str
    num_gpus: int
    num_hosts: int
    gpu_memory_gb: float
    model: ModelShape
    inputs: tuple[InputSpec, ...]
    context: tuple[tuple[str, int], ...] = ()
    dataset_id: str = ""
    dataset_revision: str = ""
    raw_csv_filename: str = ""
    published: PublishedFigures | None = None
    trace_files: tuple[str, ...] = ()
    throughput_unit: ThroughputUnit = "samples/s/gpu"
    standin_variants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem is not None:
            raise ValueError(
                f"Expected a consistent instance {self.name!r}: {problem}."
            )

    def _problem(self) -> str | None:
        """What is inconsistent in the description, or ``None``."""
        if not self.name or not self.name.isidentifier():
            return f"name must be an identifier, got {self.name!r}"
        for field_name in ("num_gpus", "num_hosts"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or value < 1:
                return f"{field_name} must be an integer >= 1, got {value!r}"
        if self.num_gpus % self.num_hosts:
            return (
                f"num_gpus ({self.num_gpus}) must be a multiple of num_hosts "
                f"({self.num_hosts})"
            )
        if not self.gpu_memory_gb > 0:
            return f"gpu_memory_gb must be > 0, got {self.gpu_memory_gb!r}"
        columns = [*self.input_columns, *self.context_columns]
        for column in columns:
            if column not in KNOBS:
                return f"column {column!r} is not a known knob (one of {list(KNOBS)})"
            if columns.count(column) > 1:
                return f"column {column!r} appears twice in inputs and context"
        if "log2_dp_bucket_size_mb" not in columns:
            return "log2_dp_bucket_size_mb must be an input or a context column"
        for spec in self.inputs:
            if spec.low > spec.high:
                return f"input {spec.name!r} has low {spec.low} > high {spec.high}"
            if spec.encoding == "ordinal" and not (
                spec.low >= 0 and spec.high < len(spec.levels)
            ):
                return (
                    f"ordinal input {spec.name!r} needs a level for each encoded "
                    f"value {spec.low}..{spec.high}, got levels {list(spec.levels)}"
                )
        if self.throughput_unit not in ("samples/s/gpu", "steps/s"):
            return (
                "throughput_unit must be 'samples/s/gpu' or 'steps/s', got "
                f"{self.throughput_unit!r}"
            )
        return None

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
        """All columns of the table (inputs, context, outputs)."""
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

    def standin_variant_filename(self, variant: str) -> str:
        """File name of one of the shipped stand-in variants
        (``pco64_simulated_zero1.parquet``; the default variant's is
        :attr:`standin_filename`)."""
        if self.standin_variants and variant == self.standin_variants[0]:
            return self.standin_filename
        return f"{self.name}_simulated_{variant}.parquet"

    @property
    def shipped_files(self) -> tuple[str, ...]:
        """The package data files of the instance, relative to ``data/``: its
        stand-in variants, its reconstruction (where traces ship) and traces."""
        standins = tuple(
            self.standin_variant_filename(v) for v in self.standin_variants
        )
        recon = (self.reconstructed_filename,) if self.trace_files else ()
        traces = tuple(f"traces/{t}" for t in self.trace_files)
        return (*standins, *recon, *traces)

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

        Keys are the knobs' spellings (:data:`KNOBS`: ``dp``, ..., ``chunks``,
        ``grad_accum_steps``), in input then context order: sizes for the
        log2 columns, the raw ZeRO stage. Knobs the instance holds in neither
        are left out (:data:`ABSENT_KNOBS` gives their values).
        """
        cells = {
            spec.name: spec.decode(int(v))
            for spec, v in zip(self.inputs, encoded, strict=True)
        }
        cells.update(self.context)
        return {
            KNOBS[name]: (value if name == "zero_stage" else 2**value)
            for name, value in cells.items()
        }

    def rule_violation(self, encoded: Sequence[int]) -> str | None:
        """The hard rule one encoded configuration breaks, or ``None``.

        The rules of every sweep (:meth:`grid`): the encoded values lie in the
        published bounds; ``dp*tp*pp*cp`` is the number of GPUs; ``sp <= tp``;
        more than one model chunk only with ``pp > 1``; ZeRO stage 2 or 3 only
        with ``pp = 1``; ``pp * chunks`` divides the number of layers. A knob
        the instance does not hold takes its :data:`ABSENT_KNOBS` value.
        """
        if len(encoded) != self.dim:
            return f"expected {self.dim} inputs, got {len(encoded)}"
        for spec, v in zip(self.inputs, encoded, strict=True):
            if v != int(v) or not spec.low <= v <= spec.high:
                return (
                    f"{spec.name} = {v:g} is off the grid "
                    f"(expected an integer in [{spec.low}, {spec.high}])"
                )
        s = ABSENT_KNOBS | self.raw_sizes([int(v) for v in encoded])
        if s["dp"] * s["tp"] * s["pp"] * s["cp"] != self.num_gpus:
            return f"dp*tp*pp*cp = {self.num_gpus} GPUs is broken"
        if s["sp"] > s["tp"]:
            return "sp <= tp is broken"
        if s["chunks"] > 1 and s["pp"] == 1:
            return "more than one model chunk needs pp > 1"
        if s["zero_stage"] in ZERO_STAGES[1:] and s["pp"] > 1:
            return "ZeRO stage 2/3 needs pp = 1"
        if self.model.num_layers % (s["pp"] * s["chunks"]):
            return f"pp * chunks must divide the {self.model.num_layers} layers"
        return None

    def grid(self) -> list[tuple[int, ...]]:
        """Every encoded configuration in the bounds that keeps the hard rules.

        In canonical order (ascending lexicographic). pco64's is its card's
        780 rows ("the full candidate set"); the sweeps of pco32 and pco16
        hold fewer rows than their grids (``bolt_pco64.tables.simulate.grid``,
        ``bolt_pco64.tables.reconstruct.grid``). Computed once per instance
        (the instance is frozen); each call returns a new list.
        """
        grid = self.__dict__.get("_grid")
        if grid is None:
            ranges = [range(spec.low, spec.high + 1) for spec in self.inputs]
            grid = tuple(
                x for x in itertools.product(*ranges) if self.rule_violation(x) is None
            )
            object.__setattr__(self, "_grid", grid)
        return list(grid)


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
    throughput_unit="samples/s/gpu",
    standin_variants=("mbs1", "perrank", "zero1"),
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
    throughput_unit="samples/s/gpu",
    standin_variants=("mbs1", "perrank"),
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
    throughput_unit="steps/s",
    standin_variants=("accum", "zero1"),
)

#: Every instance by name (a registry, not an ``if`` chain).
INSTANCES: Mapping[str, Instance] = MappingProxyType(
    {inst.name: inst for inst in (PCO16_INSTANCE, PCO32_INSTANCE, PCO64_INSTANCE)}
)


def get_instance(
    name: str | Instance, registry: Mapping[str, Instance] | None = None
) -> Instance:
    """The instance called ``name`` (an :class:`Instance` is returned as is).

    Args:
        name: An instance name, or an :class:`Instance`.
        registry: Where names are looked up: instances by name (Ax's style),
            ``None`` for the package's, :data:`INSTANCES`.

    Raises:
        ValueError: If no instance has that name.
    """
    if isinstance(name, Instance):
        return name
    found = INSTANCES if registry is None else registry
    try:
        return found[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Expected an instance name of {sorted(found)}, got {name!r}."
        ) from None
