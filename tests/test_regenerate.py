"""``bolt-pco64 report``: a result folder's report rewritten from its records."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bolt_pco64.bench import ComparisonSpec, run_comparison
from bolt_pco64.bench.costreport import COST_REPORT_FILES
from bolt_pco64.bench.regenerate import (
    REPORT_MARKER,
    folder_kind,
    regenerate,
    regenerate_comparison,
)
from bolt_pco64.cli import main
from tests import _fixtures

table_path = _fixtures.table_path

REPO = Path(__file__).resolve().parent.parent
#: The text files of a comparison's report (bit for bit from the records).
TEXT = (
    "summary.csv",
    "summary.md",
    "comparisons.csv",
    "cost_summary.md",
    "cost_ert.csv",
    "cost_comparisons.csv",
)


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory, table_path: Path) -> Path:
    out = tmp_path_factory.mktemp("cmp") / "out"
    run_comparison(
        ComparisonSpec(["random", "naive"], seeds=6, budget=8, n_init=4),
        table_path,
        out=out,
        progress=False,
    )
    return out


def test_report_rewrites_every_text_file_bit_for_bit(
    comparison: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(comparison, copy)
    for name in (*TEXT, "regret.png", "cost.png"):
        (copy / name).unlink()
    shutil.rmtree(copy / "runs")  # runs.parquet and meta.json are enough
    got = CliRunner().invoke(main, ["report", str(copy)])
    assert got.exit_code == 0, got.output
    assert "file(s) rewritten" in got.output
    for name in TEXT:
        assert (copy / name).read_bytes() == (comparison / name).read_bytes(), name
    for name in ("regret.png", "cost.png"):
        assert (copy / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_collection_is_rewritten_folder_by_folder(
    comparison: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(comparison, root / "b")
    (root / "a").mkdir()  # an empty folder is skipped
    assert folder_kind(root) == "collection"
    assert folder_kind(root / "b") == "comparison"
    written = regenerate(root)
    names = {p.name for p in written}
    assert {*TEXT, *COST_REPORT_FILES, "regret.png"} <= names
    assert all(p.parent == root / "b" for p in written)


def test_a_folder_without_records_is_one_clear_error(
    comparison: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    got = CliRunner().invoke(main, ["report", str(empty)])
    assert got.exit_code == 2
    assert "found none" in got.output
    lost = tmp_path / "lost"
    shutil.copytree(comparison, lost)
    (lost / "runs.parquet").unlink()
    with pytest.raises(ValueError, match="Expected the records"):
        regenerate_comparison(lost)
    old = tmp_path / "old"
    shutil.copytree(comparison, old)
    meta = json.loads((old / "meta.json").read_text())
    del meta["report"]
    (old / "meta.json").write_text(json.dumps(meta))
    got = CliRunner().invoke(main, ["report", str(old)])
    assert got.exit_code == 2
    assert "'report' block" in got.output
    assert "rerun it" in got.output


def test_a_script_marker_naming_no_script_is_refused(tmp_path: Path) -> None:
    (tmp_path / REPORT_MARKER).write_text(json.dumps({"script": "no_such_script"}))
    assert folder_kind(tmp_path) == "script"
    with pytest.raises(ValueError, match=r"benchmarks/no_such_script\.py"):
        regenerate(tmp_path)
    (tmp_path / REPORT_MARKER).write_text(json.dumps({"script": "../x"}))
    with pytest.raises(ValueError, match="to name a script"):
        regenerate(tmp_path)


def test_the_committed_default_comparison_regenerates_from_its_records(
    tmp_path: Path,
) -> None:
    results = REPO / "docs" / "results"
    if not (results / "runs.parquet").is_file():
        pytest.skip("docs/results/runs.parquet (the committed records) is absent")
    copy = tmp_path / "results"
    copy.mkdir()
    for name in ("meta.json", "runs.parquet"):
        shutil.copy(results / name, copy / name)
    regenerate_comparison(copy)
    for name in ("summary.csv", "comparisons.csv"):
        assert (copy / name).read_bytes() == (results / name).read_bytes(), name


def _texts(folder: Path) -> dict[str, bytes]:
    """Every text file under ``folder`` (relative path -> bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.suffix in {".csv", ".md"}
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "combined"),
    [(["--problem", "all"], "summary.md"), (["--standin", "all"], "robustness.md")],
)
def test_combined_roots_are_rewritten_bit_for_bit(
    tmp_path: Path, option: list[str], combined: str
) -> None:
    out = tmp_path / "out"
    args = ["bench", *option, "--methods", "random,naive", "--seeds", "2"]
    args += ["--budget", "4", "--n-init", "2", "--out", str(out), "--no-progress"]
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 0, ran.output
    before = _texts(out)
    kind = "family" if option[0] == "--problem" else "variants"
    assert folder_kind(out) == kind
    for path in out.rglob("*"):
        if path.suffix in {".csv", ".md", ".png"}:
            path.unlink()
    got = CliRunner().invoke(main, ["report", str(out)])
    assert got.exit_code == 0, got.output
    assert combined in before
    assert _texts(out) == before


def test_every_test_the_reproducibility_document_cites_exists() -> None:
    text = (REPO / "docs" / "reproducibility.md").read_text()
    cited = re.findall(r"`(tests/\w+\.py)::(\w+)`", text)
    cited += [
        (file, name)
        for file, rest in re.findall(r"`(tests/\w+\.py)::\w+`((?:, `::\w+`)+)", text)
        for name in re.findall(r"::(\w+)", rest)
    ]
    assert len(cited) >= 10
    for file, name in cited:
        source = (REPO / file).read_text()
        assert re.search(rf"^def {name}\(", source, re.M), f"{file}::{name}"


def test_a_script_folder_is_rewritten_by_its_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ax")
    committed = REPO / "docs" / "results" / "ax"
    folder = tmp_path / "ax"
    folder.mkdir()
    for name in ("compare.csv", "matrix.csv", "matrix_pco64.csv"):
        shutil.copy(committed / name, folder / name)
    for name in ("compare_summary.csv", "matrix_summary.csv"):
        (folder / name).write_text("stale\n")
    (folder / REPORT_MARKER).write_text(json.dumps({"script": "ax_matrix"}))
    monkeypatch.chdir(REPO)
    written = regenerate(folder)
    assert sorted(p.name for p in written) == [
        "compare_summary.csv",
        "matrix_summary.csv",
    ]
    for name in ("compare_summary.csv", "matrix_summary.csv"):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


def test_a_comparison_folder_holding_other_results_rewrites_them_too(
    comparison: Path, tmp_path: Path
) -> None:
    top = tmp_path / "top"
    shutil.copytree(comparison, top)
    shutil.copytree(comparison, top / "inner")
    (top / "inner" / "summary.md").unlink()
    written = regenerate(top)
    assert top / "summary.md" in written
    assert top / "inner" / "summary.md" in written
    inner = (top / "inner" / "summary.md").read_bytes()
    assert inner == (comparison / "summary.md").read_bytes()


@pytest.mark.slow
def test_a_family_marker_naming_a_script_runs_it_after_the_family_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/results/prior: the family's summaries, then prior_paired.py's
    paired.md and paired.csv, each back byte for byte from the records."""
    committed = REPO / "docs" / "results" / "prior"
    if not (committed / "pco64" / "runs.parquet").is_file():
        pytest.skip("docs/results/prior's records are absent")
    folder = tmp_path / "prior"
    shutil.copytree(committed, folder)
    assert json.loads((folder / REPORT_MARKER).read_text())["script"] == "prior_paired"
    for name in ("paired.md", "paired.csv"):
        (folder / name).write_text("stale\n")
    monkeypatch.chdir(REPO)
    written = {p.name for p in regenerate(folder)}
    assert {"paired.md", "paired.csv", "summary.md"} <= written
    for name in ("paired.md", "paired.csv", "summary.csv", "summary.md"):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


def test_the_committed_trace_check_is_rewritten_from_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/results/trace-check: trace_check.py --report gives check.csv and
    check.md back byte for byte from the two record files and report.json."""
    committed = REPO / "docs" / "results" / "trace-check"
    if not (committed / "trace_records.parquet").is_file():
        pytest.skip("docs/results/trace-check's records are absent")
    folder = tmp_path / "trace-check"
    shutil.copytree(committed, folder)
    assert json.loads((folder / REPORT_MARKER).read_text())["script"] == "trace_check"
    for name in ("check.csv", "check.md"):
        (folder / name).write_text("stale\n")
    monkeypatch.chdir(REPO)
    written = regenerate(folder)
    assert sorted(p.name for p in written) == ["check.csv", "check.md"]
    for name in ("check.csv", "check.md"):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name
