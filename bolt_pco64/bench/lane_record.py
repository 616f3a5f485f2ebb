"""How a stored run was made, in lanes or alone, and the error of a resume
that would mix the two.

A method that batches (:func:`~bolt_pco64.bench.lane_adapters.lane_adapter`) gives
different records in a lane (:func:`~bolt_pco64.bench.lanes.run_lane`) and
alone (:func:`~bolt_pco64.bench.run.run_one`); in lanes of any width >= 1 it
gives each seed the same records (a seed's records do not depend on its
lane-mates), and a method that cannot batch runs alone in a lane too. The
result store (:mod:`bolt_pco64.bench.store`) records :func:`made_by` with
each run and refuses a resume that would mix the two ways
(:class:`LaneSettingError`).
"""

from __future__ import annotations

from pathlib import Path

from bolt_pco64.bench.contract import Method

__all__ = ["LaneSettingError", "made_by", "width_text"]


def made_by(method: Method | None, lane_width: int | None) -> str:
    """How a run of ``method`` is made with ``lane_width``: ``"lanes"`` (in a
    lane, :func:`~bolt_pco64.bench.lanes.run_lane`) or ``"alone"``
    (:func:`~bolt_pco64.bench.run.run_one`, also in a lane for a method
    that cannot batch, :func:`~bolt_pco64.bench.lane_adapters.lane_support`).
    ``method`` ``None`` (not known here) is made in lanes whenever
    ``lane_width`` is set."""
    if lane_width is None:
        return "alone"
    if method is None:
        return "lanes"
    from bolt_pco64.bench.lane_adapters import lane_adapter

    return "lanes" if lane_adapter(method) is not None else "alone"


def width_text(lane_width: int | None) -> str:
    """A lane width as ``--lane-width`` takes it: ``"32"``, ``"none"``."""
    return "none" if lane_width is None else str(lane_width)


class LaneSettingError(ValueError):
    """An output directory holds runs of a method made another way than the
    lane setting asked for would make them (:func:`made_by`).

    Attributes:
        out: The directory.
        run: The file of the first such run.
        method: Its method.
        stored: The lane width its runs were made with (``None``: one run at
            a time).
        requested: The lane width asked for.
    """

    def __init__(
        self,
        out: Path,
        run: str,
        method: str,
        stored: int | None,
        requested: int | None,
    ) -> None:
        self.out = out
        self.run = run
        self.method = method
        self.stored = stored
        self.requested = requested
        super().__init__(self.message())

    def message(self, cli: bool = False) -> str:
        """The error in the library's words (``lane_width=None``), or with
        ``cli`` in the command line's (``--lane-width none``)."""

        def setting(width: int | None) -> str:
            if cli:
                return f"--lane-width {'none' if width is None else width}"
            return f"lane_width={width}"

        def how(width: int | None) -> str:
            way = "one run at a time" if width is None else "in lanes"
            return f"{way} ({setting(width)})"

        return (
            f"Expected the runs of {self.method} in {str(self.out)!r} made the way "
            f"{setting(self.requested)} makes them, got {self.run} made "
            f"{how(self.stored)}: {self.method}'s runs in lanes and one at a time "
            f"are different records. Pass {setting(self.stored)} to resume this "
            f"folder, or use another {'--out' if cli else 'out'}."
        )
