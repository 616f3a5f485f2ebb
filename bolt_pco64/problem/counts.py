"""What a problem's evaluations snapped, counted: :class:`SnapCounts`.

Only some integer points of the bounds are configurations (780 of pco64's
29,160), so a point an optimizer proposes may evaluate another configuration.
A problem counts, for every point its objective evaluates (``f(X)``,
``f.evaluate_true(X)``), whether the point was a configuration itself and
whether it snapped far from it (:data:`~bolt_pco64.problem.FAR_SNAP_DISTANCE`),
in the same pass as the snap; a run reports the counts at its end.
"""

from __future__ import annotations

from dataclasses import dataclass

from bolt_pco64.snap import Snap

__all__ = ["SnapCounts"]


@dataclass
class SnapCounts:
    """Counts of the points a problem's objective evaluated, since it was built
    or :meth:`reset`.

    Constraint evaluations, :meth:`~bolt_pco64.problem.PCO.lookup`,
    :meth:`~bolt_pco64.problem.PCO.project` and
    :meth:`~bolt_pco64.problem.PCO.is_configuration` are not counted (a loop
    evaluating the objective and the constraint at one point counts it once).

    Attributes:
        points: Points evaluated.
        moved: Points that were not a configuration themselves (they evaluate
            the configuration they snap to).
        far: Moved points that snapped more than
            :data:`~bolt_pco64.problem.FAR_SNAP_DISTANCE` from the lattice point
            they round to: probably not the point their optimizer meant.
    """

    points: int = 0
    moved: int = 0
    far: int = 0

    def add(self, snap: Snap) -> None:
        """Count the points of one snap."""
        self.points += int(snap.rows.numel())
        self.moved += snap.moved
        self.far += snap.far

    def reset(self) -> None:
        """Start counting again from zero."""
        self.points = self.moved = self.far = 0

    def __str__(self) -> str:
        return (
            f"{self.points} points evaluated: {self.moved} snapped to another "
            f"configuration, {self.far} of them far (more than one lattice step)"
        )
