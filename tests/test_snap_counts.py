"""Far snaps are counted from a comparison's records and reported at its end."""

from __future__ import annotations

import pandas as pd

from bolt_pco64.bench.report.tables import snap_counts


def _records() -> pd.DataFrame:
    # Two inputs; rows are the configurations evaluated, proposed_* the points.
    return pd.DataFrame(
        {
            "method": ["rows", "rows", "box", "box", "box"],
            "a": [1.0, 2.0, 1.0, 2.0, 3.0],
            "b": [0.0, 1.0, 0.0, 1.0, 2.0],
            "proposed_a": [1.0, 2.0, 1.0, 2.4, 5.2],  # box: exact, near, far
            "proposed_b": [0.0, 1.0, 0.0, 1.0, 2.0],
        }
    )


def test_rows_are_never_moved_and_box_points_are_counted_by_distance() -> None:
    counts = snap_counts(_records()).set_index("method")
    assert counts.loc["rows"].tolist() == [2, 0, 0]
    # 2.4 rounds to 2, the row itself: moved but not far; 5.2 rounds to 5,
    # two lattice steps from the row's 3: far.
    assert counts.loc["box"].tolist() == [3, 2, 1]


def test_the_terminal_names_each_method_whose_points_moved() -> None:
    from bolt_pco64.cli.bench_lines import snap_lines as _snap_lines

    lines = _snap_lines(_records())
    assert len(lines) == 1
    assert lines[0].startswith("snaps of box: 3 points evaluated: 2 snapped")
    assert "1 of them far" in lines[0]
