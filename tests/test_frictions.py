"""Small API frictions of issue 30: a bare method name, the stand-in warning's
command and location, and an unwritable output folder's error."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bolt_pco64 import PCO16, SimulatedTableWarning
from bolt_pco64.bench import ComparisonSpec, OutputDirError, run_comparison
from bolt_pco64.bench.store import check_output_dir
from bolt_pco64.tables import table as table_module
from tests._synth import make_table
from tests._tables import small_frame


def _simulated(frame: object, path: Path) -> Path:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({b"source": b"simulated"}), path)
    return path


@pytest.fixture
def fresh_warnings() -> None:
    table_module.reset_simulated_warnings()


@pytest.mark.usefixtures("fresh_warnings")
def test_stand_in_warning_names_the_instances_fetch_and_the_callers_line(
    tmp_path: Path,
) -> None:
    path = _simulated(small_frame(seed=5, instance="pco16"), tmp_path / "s.parquet")
    with pytest.warns(SimulatedTableWarning, match="fetch --problem pco16") as record:
        PCO16(table=path)
    assert record[0].filename == __file__


@pytest.mark.usefixtures("fresh_warnings")
@pytest.mark.usefixtures("unrendered_figures")
def test_a_bare_method_name_is_one_method_and_warnings_name_the_callers_line(
    tmp_path: Path,
) -> None:
    path = _simulated(make_table(capacity=80.0), tmp_path / "synth.parquet")
    with pytest.warns(SimulatedTableWarning) as record:
        result = run_comparison(
            ComparisonSpec("random", seeds=1, budget=4, n_init=2),
            path,
            out=tmp_path / "out",
            progress=False,
        )
    assert set(result.records["method"]) == {"random"}
    own = [w for w in record if issubclass(w.category, SimulatedTableWarning)]
    assert [w.filename for w in own] == [__file__]


def test_unwritable_output_folder_is_named_not_the_probe_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check writes a temporary file; its error names the folder."""
    locked = tmp_path / "locked"
    locked.mkdir()

    def refuse(*, dir: str, prefix: str) -> object:
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}x1y2z3")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)
    with pytest.raises(OutputDirError) as err:
        check_output_dir(locked / "results")
    message = str(err.value)
    assert message == (
        f"Cannot write to output directory {str(locked / 'results')!r}: "
        f"Permission denied ({locked})"
    )
    with pytest.raises(OutputDirError, match=r"Permission denied'?$") as err:
        check_output_dir(locked)
    assert ".probe" not in str(err.value)
