"""``bolt-pco64 info``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from bolt_pco64.cli import main
from tests._tables import frame_from


def test_info_reports_table_rows_bounds_and_best(tmp_path: Path) -> None:
    configs = [
        (1, 0, 0, 0, 0, 6, 0, 0),
        (4, 2, 0, 0, 2, 6, 2, 0),
        (2, 1, 1, 0, 1, 7, 3, 1),
    ]
    path = tmp_path / "mine.csv"
    frame_from(configs, [0.1, 0.25, None], peak_mem=[30.0, 74.2, 99.0]).to_csv(
        path, index=False
    )
    result = CliRunner().invoke(main, ["info", "--table", str(path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert str(path) in out
    assert "rows:       3" in out
    assert "feasible:   2 (1 ran out of memory)" in out
    assert "log2_dp_size             1 .. 4" in out
    assert "dp=16, tp=4, pp=1, cp=1, sp=4, bucket_mb=64, zero_stage=2, chunks=1" in out
    assert "throughput_mean = 0.25000" in out
    assert "peak_mem        = 74.2 GB" in out
    assert "SIMULATED" not in out


def test_info_errors_are_one_line_with_exit_2(
    tmp_path: Path, frame: pd.DataFrame
) -> None:
    missing = CliRunner().invoke(main, ["info", "--table", str(tmp_path / "none.csv")])
    assert missing.exit_code == 2
    assert len(missing.output.strip().splitlines()) == 1
    assert "none.csv" in missing.output
    broken_path = tmp_path / "broken.csv"
    frame.assign(zero_stage=1).to_csv(broken_path, index=False)
    broken = CliRunner().invoke(main, ["info", "--table", str(broken_path)])
    assert broken.exit_code == 2
    assert len(broken.output.strip().splitlines()) == 1
    assert "zero_stage" in broken.output
    assert "row 0" in broken.output
