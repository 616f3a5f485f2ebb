"""What a report says about its table and its cost unit.

The cost is labelled "simulated GPU-hours" where the table is the
simulated stand-in, "modelled GPU-hours" where it is the reconstruction from
published traces (its run times come from the time model, not from a trace)
and "GPU-hours" otherwise (:func:`cost_label`).

Everything the report says about the table is a :class:`TableFacts`, which
``meta.json`` keeps (under ``report``): the report is a function of the
records and ``meta.json`` alone, so :func:`~bolt_pco64.bench.regenerate.regenerate`
rewrites it from them, without the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from bolt_pco64.bench.problems import instance_of

if TYPE_CHECKING:
    from bolt_pco64.tables.table import Table

__all__ = [
    "TableFacts",
    "cost_label",
    "standin_caveats",
]


@dataclass(frozen=True)
class TableFacts:
    """What a comparison's report says about its table (kept in ``meta.json``).

    Attributes:
        name: The instance's name (``"pco64"``).
        is_simulated: Whether the table is the simulated stand-in.
        source_name: The table file's name (not its full path: summaries are
            shared and committed), or ``"<DataFrame>"``.
        source_kind: How the table was found (:class:`~bolt_pco64.tables.table.TableSource`).
        time_model: The time model's description
            (:meth:`~bolt_pco64.tables.time_model.TimeModel.describe`).
        is_reconstructed: Whether the table is a reconstruction from the
            published traces (its ``overall_time`` and step times are
            modelled). ``meta.json`` files written before this field existed
            read as ``source_kind == "reconstructed"``.
    """

    name: str
    is_simulated: bool
    source_name: str
    source_kind: str
    time_model: str
    is_reconstructed: bool = False

    @classmethod
    def of(cls, table: Table | TableFacts) -> TableFacts:
        """The facts of ``table`` (``table`` itself if it is facts already)."""
        if isinstance(table, TableFacts):
            return table
        from bolt_pco64.tables.time_model import TimeModel

        path = table.source.path
        return cls(
            name=instance_of(table).name,
            is_simulated=bool(table.is_simulated),
            source_name=path.name if path is not None else "<DataFrame>",
            source_kind=str(table.source.kind),
            time_model=TimeModel(table).describe(),
            is_reconstructed=bool(table.is_reconstructed),
        )

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> TableFacts:
        """The facts :meth:`as_meta` wrote.

        Raises:
            ValueError: If a field is missing.
        """
        fields = cls.__dataclass_fields__
        required = [k for k in fields if k != "is_reconstructed"]
        missing = sorted(set(required) - set(meta))
        if missing:
            raise ValueError(
                f"Expected table facts {sorted(required)}, missing {missing}."
            )
        return cls(
            **{k: meta[k] for k in required},
            is_reconstructed=bool(
                meta.get("is_reconstructed", meta["source_kind"] == "reconstructed")
            ),
        )

    def as_meta(self) -> dict[str, Any]:
        """A JSON-ready dict (:meth:`from_meta` reads it back)."""
        return asdict(self)


def cost_label(table: Table | TableFacts) -> str:
    """``"simulated GPU-hours"`` for the simulated stand-in, ``"modelled
    GPU-hours"`` for the reconstruction (its run times are the time model's),
    else ``"GPU-hours"``."""
    if table.is_simulated:
        return "simulated GPU-hours"
    return "modelled GPU-hours" if table.is_reconstructed else "GPU-hours"


def standin_caveats(
    methods: Sequence[str], registry: Mapping[str, object] | None = None
) -> list[str]:
    """The sentences that methods ask a stand-in summary to carry
    (a method's optional ``standin_caveat``), each once, in method order.

    ``registry``: where the methods are looked up (``None``: the registered
    and built-in ones, :data:`~bolt_pco64.bench.methods.registry.METHODS`; no entry
    point is loaded to write a report).
    """
    from bolt_pco64.bench.methods.registry import METHODS

    found_in = METHODS if registry is None else registry
    found = [getattr(found_in.get(m), "standin_caveat", None) for m in methods]
    return list(dict.fromkeys(c for c in found if c))
