"""``bolt-pco64 report``: a result folder's report rewritten from its records."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from click.testing import CliRunner

from bolt_pco64.bench import ComparisonSpec, run_comparison
from bolt_pco64.bench.regenerate import (
    REPORT_MARKER,
    folder_kind,
    regenerate,
    regenerate_comparison,
    script_folders,
)
from bolt_pco64.bench.report.cost.page import COST_REPORT_FILES
from bolt_pco64.cli import main
from bolt_pco64.instances import get_instance
from bolt_pco64.tables.reconstruct.impute import cross_validate
from bolt_pco64.tables.traces import visited_rows
from tests import _fixtures
from tests._fixtures import NearestRow
from tests._scripts import load_script

#: The checkout's rewrite of every report, the scripts' files included.
regenerate_all = load_script("report_results").regenerate_all

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


def _read_csv_exactly(path: Path) -> pd.DataFrame:
    """A CSV read back with every float as written: pandas 3 parses floats
    exactly by default (and deprecates the option); older ones need
    ``float_precision="round_trip"`` (1.5's default differs in the last bit)."""
    if int(pd.__version__.split(".")[0]) >= 3:
        return pd.read_csv(path)
    return pd.read_csv(path, float_precision="round_trip")


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory, table_path: Path) -> Path:
    """Random and naive, six seeds of six evaluations; its figures unrendered
    (the tests below rewrite the report, and read its text)."""
    out = tmp_path_factory.mktemp("cmp") / "out"
    with _fixtures.figures_unrendered():
        run_comparison(
            ComparisonSpec(["random", "naive"], seeds=6, budget=6, n_init=4),
            table_path,
            out=out,
            progress=False,
        )
    return out


@pytest.mark.slow
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


@pytest.mark.usefixtures("unrendered_figures")
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
        regenerate_all(tmp_path)
    (tmp_path / REPORT_MARKER).write_text(json.dumps({"script": "../x"}))
    with pytest.raises(ValueError, match="to name a script"):
        regenerate(tmp_path)


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_the_package_leaves_a_script_s_files_to_the_checkout(
    comparison: Path, tmp_path: Path
) -> None:
    """``bolt-pco64 report`` runs no code of a checkout: a script's folder
    keeps its files, its comparisons are rewritten, and the command names the
    folder and the checkout's script that rewrites it."""
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / REPORT_MARKER).write_text(json.dumps({"script": "trace_check"}))
    (folder / "check.md").write_text("left as it is\n")
    shutil.copytree(comparison, folder / "inner")
    written = regenerate(folder)
    assert folder / "inner" / "summary.md" in written
    assert all(p.parent != folder for p in written)
    assert (folder / "check.md").read_text() == "left as it is\n"
    assert script_folders(tmp_path) == [(folder, "trace_check")]
    got = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert got.exit_code == 0, got.output
    assert f"{folder} (trace_check)" in got.output
    meta = json.loads((folder / "inner" / "meta.json").read_text())
    named = f"table of {folder / 'inner'}: {meta['problem']}, {meta['table']['source']}"
    assert named in got.output
    assert f"({meta['table']['rows']} rows, " in got.output
    assert "report_results.py DIR rewrites them" in got.output
    only = tmp_path / "only"
    only.mkdir()
    (only / REPORT_MARKER).write_text(json.dumps({"script": "trace_check"}))
    got = CliRunner().invoke(main, ["report", str(only)])
    assert got.exit_code == 0, got.output
    assert "0 file(s) rewritten" in got.output


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
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
@pytest.mark.filterwarnings(
    "ignore::bolt_pco64.tables.table.ReconstructedTableWarning",
    "ignore::bolt_pco64.tables.table.SimulatedTableWarning",
)  # the family's and the variants' default tables, served on purpose
@pytest.mark.parametrize(
    ("option", "combined"),
    [(["--problem", "all"], "summary.md"), (["--standin", "all"], "robustness.md")],
)
@pytest.mark.usefixtures("unrendered_figures")
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


def _stale_columns(path: Path, columns: list[str]) -> None:
    """Overwrite ``columns`` of the CSV ``path`` with a value no run gives."""
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows[columns] = "-1"
    rows.to_csv(path, index=False)


def test_a_script_folder_is_rewritten_by_its_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/results/ax: ax_matrix.py --report gives every per-replication CSV
    and summary back byte for byte from the per-trial records."""
    committed = REPO / "docs" / "results" / "ax"
    folder = tmp_path / "ax"
    shutil.copytree(committed, folder)
    assert json.loads((folder / REPORT_MARKER).read_text())["script"] == "ax_matrix"
    rows = ("compare.csv", "matrix.csv", "matrix_pco64.csv")
    derived = ["trials", "completed", "abandoned", "oom_share", "repeats", "regret"]
    for name in rows:
        _stale_columns(folder / name, derived)
    for name in ("compare_summary.csv", "matrix_summary.csv"):
        (folder / name).write_text("stale\n")
    monkeypatch.chdir(REPO)
    written = regenerate_all(folder)
    summaries = ("compare_summary.csv", "matrix_summary.csv")
    assert sorted(p.name for p in written) == sorted([*rows, *summaries])
    for name in (*rows, *summaries):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.slow
def test_the_committed_optuna_crash_results_are_rewritten_from_their_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/results/optuna (its harness/ comparison aside): optuna_crash.py
    --report gives every per-run CSV and summary back byte for byte from the
    per-trial records and the runs' seconds."""
    pytest.importorskip("optuna")
    committed = REPO / "docs" / "results" / "optuna"
    folder = tmp_path / "optuna"
    folder.mkdir()
    for path in committed.iterdir():
        if path.is_file():
            shutil.copy(path, folder / path.name)
    assert json.loads((folder / REPORT_MARKER).read_text())["script"] == "optuna_crash"
    names = ("crash_representation", "off_table_gp", "off_table_tpe")
    derived = ["trials", "runs", "oom_share", "repeats", "regret_half", "regret"]
    for name in names:
        _stale_columns(folder / f"{name}_runs.csv", derived)
        (folder / f"{name}.csv").write_text("stale\n")
    monkeypatch.chdir(REPO)
    written = regenerate_all(folder)
    files = [f"{name}{part}.csv" for name in names for part in ("", "_runs")]
    assert sorted(p.name for p in written) == sorted(files)
    for name in files:
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
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
@pytest.mark.usefixtures("unrendered_figures")
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
    written = {p.name for p in regenerate_all(folder)}
    assert {"paired.md", "paired.csv", "summary.md"} <= written
    for name in ("paired.md", "paired.csv", "summary.csv", "summary.md"):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.slow
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
    written = regenerate_all(folder)
    assert sorted(p.name for p in written) == ["check.csv", "check.md"]
    for name in ("check.csv", "check.md"):
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.slow
def test_a_short_trace_check_reports_only_the_checkpoints_its_runs_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness budget below a checkpoint leaves that checkpoint out of the
    check (it has no harness runs to compare), instead of failing."""
    committed = REPO / "docs" / "results" / "trace-check"
    if not (committed / "trace_records.parquet").is_file():
        pytest.skip("docs/results/trace-check's records are absent")
    folder = tmp_path / "trace-check"
    shutil.copytree(committed, folder)
    harness = pd.read_parquet(folder / "harness_records.parquet")
    harness[harness["iteration"] <= 40].to_parquet(folder / "harness_records.parquet")
    marker = json.loads((folder / REPORT_MARKER).read_text())
    (folder / REPORT_MARKER).write_text(json.dumps({**marker, "budget": 40}))
    monkeypatch.chdir(REPO)
    regenerate_all(folder)
    short = pd.read_csv(folder / "check.csv")
    full = pd.read_csv(committed / "check.csv")
    assert set(full["evaluations"]) > {10, 30}
    assert set(short["evaluations"]) == {10, 30}
    assert "| 60 |" not in (folder / "check.md").read_text()


@pytest.fixture(scope="module")
def reconstruction_cv() -> ModuleType:
    """benchmarks/reconstruction_cv.py as a module (with its sibling modules)."""
    return load_script("reconstruction_cv")


#: Cheap stand-ins for the script's GP models (one without peak memory).
CHEAP_MODELS = {
    "nearest": lambda name: NearestRow(get_instance(name)),
    "nearest_no_memory": lambda name: NearestRow(get_instance(name), peak_mem=False),
}


@pytest.mark.slow
def test_a_reconstruction_cv_script_folder_is_rewritten_from_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reconstruction_cv: ModuleType
) -> None:
    """reconstruction_cv.py with cheap models: cv_rows.parquet and report.json
    after a run and a rerun of one instance (the other's records kept), and
    --report gives cv.csv and cv.md back byte for byte from them."""
    script = reconstruction_cv
    folder = tmp_path / "reconstruction"
    script.run(folder, ["pco32", "pco16"], 3, 0, CHEAP_MODELS)
    first = _read_csv_exactly(folder / "cv.csv")
    script.run(folder, ["pco16"], 3, 0, CHEAP_MODELS)
    marker = json.loads((folder / REPORT_MARKER).read_text())
    assert marker["script"] == "reconstruction_cv"
    assert (marker["folds"], marker["seed"]) == (3, 0)
    keys = [f"{i}/{m}" for i in ("pco32", "pco16") for m in CHEAP_MODELS]
    assert list(marker["seconds"]) == keys
    records = pd.read_parquet(folder / "cv_rows.parquet")
    visited = {name: len(visited_rows(name)) for name in ("pco32", "pco16")}
    counts = records.groupby(["instance", "model"], sort=False).size()
    assert counts.to_dict() == {
        (i, m): visited[i] for i in ("pco32", "pco16") for m in CHEAP_MODELS
    }
    no_memory = records.groupby("model")["predicted_peak_mem"].agg(
        lambda s: bool(s.isna().all())
    )
    assert no_memory.to_dict() == {"nearest": False, "nearest_no_memory": True}
    # A record names its visited row by the card's knob columns (row order).
    inst = get_instance("pco16")
    key = [*inst.input_columns, *inst.context_columns]
    mine = records[(records["instance"] == "pco16") & (records["model"] == "nearest")]
    pd.testing.assert_frame_equal(
        mine[key].reset_index(drop=True), visited_rows("pco16")[key]
    )
    cv = _read_csv_exactly(folder / "cv.csv")
    assert list(cv.columns) == list(first.columns)
    assert list(cv.columns) == [
        "instance",
        "model",
        "visited_rows",
        "feasibility_accuracy",
        "throughput_spearman",
        "median_relative_error",
        "peak_mem_median_abs_error_gb",
        "coverage_95",
        "peak_mem_coverage_95",
        "feasibility_coverage_95",
        "feasibility_brier",
        "feasibility_accuracy_at_count",
        "feasibility_mean_probability",
        "share_ran",
        "seconds",
    ]
    assert cv["seconds"].tolist() == list(marker["seconds"].values())
    # The kept instance's figures are its first run's; the rerun's are the
    # same deterministic fit's.
    scores = [c for c in cv.columns if c != "seconds"]
    pd.testing.assert_frame_equal(cv[scores], first[scores])
    # And they are the cross-validation's own figures.
    rows = visited_rows("pco32")
    direct = cross_validate(
        rows, get_instance("pco32"), NearestRow(get_instance("pco32")), "nearest", 3, 0
    )
    assert cv.loc[0, "feasibility_accuracy"] == pytest.approx(
        direct.feasibility_accuracy
    )
    assert cv.loc[0, "peak_mem_median_abs_error_gb"] == pytest.approx(
        direct.peak_mem_median_abs_error
    )
    written = {name: (folder / name).read_bytes() for name in ("cv.csv", "cv.md")}
    for name in written:
        (folder / name).write_text("stale\n")
    monkeypatch.chdir(REPO)
    assert sorted(p.name for p in regenerate_all(folder)) == ["cv.csv", "cv.md"]
    for name, content in written.items():
        assert (folder / name).read_bytes() == content, name


@pytest.mark.slow
def test_a_reconstruction_cv_script_reruns_one_model_and_keeps_the_other(
    tmp_path: Path, reconstruction_cv: ModuleType
) -> None:
    script = reconstruction_cv
    folder = tmp_path / "reconstruction"
    script.run(folder, ["pco32"], 3, 0, CHEAP_MODELS)
    before = pd.read_parquet(folder / "cv_rows.parquet")
    # The kept model's records lost their prediction sets (written before
    # them): a model with probabilities cannot be kept so.
    legacy = before.drop(columns=["predicted_set_runs", "predicted_set_fails"])
    legacy.to_parquet(folder / "cv_rows.parquet")
    only = {"nearest_no_memory": CHEAP_MODELS["nearest_no_memory"]}
    with pytest.raises(ValueError, match=r"models \['nearest'\].*rerun them"):
        script.run(folder, ["pco32"], 3, 0, only)
    before.to_parquet(folder / "cv_rows.parquet")
    script.run(folder, ["pco32"], 3, 0, only)
    after = pd.read_parquet(folder / "cv_rows.parquet")
    # The same deterministic records, in the same order: one kept, one rerun.
    pd.testing.assert_frame_equal(after, before)
    marker = json.loads((folder / REPORT_MARKER).read_text())
    assert list(marker["seconds"]) == [f"pco32/{m}" for m in CHEAP_MODELS]


def test_a_reconstruction_cv_script_keeps_only_records_it_can_report(
    tmp_path: Path, reconstruction_cv: ModuleType
) -> None:
    script = reconstruction_cv
    folder = tmp_path / "reconstruction"
    script.run(folder, ["pco32"], 3, 0, CHEAP_MODELS)
    with pytest.raises(ValueError, match="made with 4 folds and seed 0, got 3 folds"):
        script.run(folder, ["pco16"], 4, 0, CHEAP_MODELS)
    # A folder with a summary but no records (written before they were kept).
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    shutil.copy(folder / "cv.csv", legacy / "cv.csv")
    with pytest.raises(ValueError, match=r"keep the rows of \['pco32'\]"):
        script.run(legacy, ["pco16"], 3, 0, CHEAP_MODELS)
    assert not (legacy / "cv_rows.parquet").exists()


def test_a_script_marker_is_read_only_for_its_own_script(tmp_path: Path) -> None:
    from bolt_pco64.bench.regenerate import read_script_marker

    marker = tmp_path / REPORT_MARKER
    marker.write_text(json.dumps({"script": "trace_check", "seeds": 3}))
    assert read_script_marker(marker, "trace_check") == {
        "script": "trace_check",
        "seeds": 3,
    }
    with pytest.raises(ValueError, match=re.escape('to hold {"script": "standin_fit"')):
        read_script_marker(marker, "standin_fit")
    marker.write_text("[1, 2]")
    with pytest.raises(ValueError, match="to hold a JSON object"):
        read_script_marker(marker, "trace_check")


@pytest.mark.usefixtures("unrendered_figures")
def test_a_report_section_added_to_the_list_is_written_from_the_records(
    comparison: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plug-in point of the report: every section of REPORT_SECTIONS is
    written after the summary page, from the same context."""
    from bolt_pco64.bench.report import pages
    from bolt_pco64.bench.report.context import ReportContext

    seen: list[ReportContext] = []

    def runs_per_method(ctx: ReportContext) -> None:
        seen.append(ctx)
        counts = ctx.records.groupby("method", sort=False)["seed"].nunique()
        (ctx.out / "runs_per_method.csv").write_text(counts.to_csv())

    monkeypatch.setattr(
        pages, "REPORT_SECTIONS", [*pages.REPORT_SECTIONS, runs_per_method]
    )
    folder = tmp_path / "cmp"
    shutil.copytree(comparison, folder)
    regenerate(folder)
    (ctx,) = seen
    assert ctx.out == folder
    assert list(ctx.methods) == ["random", "naive"]
    assert (folder / "cost_summary.md").is_file()
    written = pd.read_csv(folder / "runs_per_method.csv")
    assert written.to_dict("list") == {"method": ["random", "naive"], "seed": [6, 6]}
