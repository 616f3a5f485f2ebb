"""benchmarks/standin_fit.py keeps per-row records; ``bolt-pco64 report``
rewrites its folds.csv, summary.csv and readings.csv from them.

Tiny cases only (a slice of the visited rows, a cheap model beside the real
2.1 table and the traces' full fit, two readings of the scan): the study on
the 643 rows is the script's own run.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from bolt_pco64.bench.regenerate import REPORT_MARKER
from bolt_pco64.instances import Instance, get_instance
from bolt_pco64.tables.reconstruct.impute import encoded
from bolt_pco64.tables.simulate.grid import candidate_configurations
from bolt_pco64.tables.traces import visited_rows
from tests._fixtures import NearestRow
from tests._scripts import load_script

#: The checkout's rewrite of every report, the scripts' files included.
regenerate_all = load_script("report_results").regenerate_all

REPO = Path(__file__).resolve().parent.parent
#: The committed folder: its files' columns are what the script writes.
COMMITTED = REPO / "docs" / "results" / "standin3"


@pytest.fixture(scope="module")
def standin_fit() -> ModuleType:
    """benchmarks/standin_fit.py as a module."""
    return load_script("standin_fit")


class Nearest:
    """A cheap model: each held-out row gets its nearest training row's
    feasibility, throughput and peak (:class:`tests._fixtures.NearestRow`)."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance

    def __call__(self, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
        imp = NearestRow(self.instance)(train)(encoded(test, self.instance))
        return pd.DataFrame(
            {
                "ran_successfully": imp.feasible,
                "peak_mem": np.where(imp.feasible, imp.peak_mem, np.inf),
                "throughput_mean": np.where(imp.feasible, imp.throughput, np.nan),
            }
        )


def _columns(path: Path) -> list[str]:
    return list(pd.read_csv(path, nrows=0).columns)


#: The traces' reading fully fitted: a least-squares fit per fold (seconds).
FULL_FIT = "3.0 fit, traces reading"


@pytest.mark.parametrize(
    ("full_fit", "readings"),
    [(False, 1), pytest.param(True, 2, marks=pytest.mark.slow)],
    ids=["cheap models", "full fit"],
)
def test_a_standin_fit_folder_is_rewritten_from_its_records(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    standin_fit: ModuleType,
    full_fit: bool,
    readings: int,
) -> None:
    """The held-out study (a 2.1 table as shipped, the traces' reading fully
    fitted where ``full_fit``, and a cheap model on every eighth visited row,
    three folds) and ``readings`` readings of the scan into one folder: the
    records and the marker hold what the files are computed from, the files
    have the committed columns and the figures of a direct scoring, and
    ``regenerate`` gives them back byte for byte."""
    script = standin_fit
    inst = get_instance("pco64")
    rows = visited_rows(inst).iloc[::8]
    every = script.models(inst.name)
    shipped = next(name for name in every if "as shipped" in name)
    predictors = {shipped: every[shipped]}
    if full_fit:
        predictors[FULL_FIT] = every[FULL_FIT]
    predictors["nearest"] = Nearest(inst)
    folder = tmp_path / "standin3"
    script.run(folder, inst.name, 3, 0, predictors, rows)
    scan = script.SCAN[:readings]
    script.scan_readings(folder, inst.name, scan)

    marker = json.loads((folder / REPORT_MARKER).read_text())
    assert marker["script"] == "standin_fit"
    assert (marker["instance"], marker["folds"], marker["seed"]) == ("pco64", 3, 0)
    # The scan kept the held-out study's part of the marker.
    assert list(marker["seconds"]) == list(predictors)
    assert marker["readings"]["instance"] == "pco64"

    # One record per model and visited row, keyed by the card's knob columns,
    # with the row's truth, in the fold it was held out in.
    records = pd.read_parquet(folder / "rows.parquet")
    key = [*inst.input_columns, *inst.context_columns]
    truth = ["ran_successfully", "peak_mem", "throughput_mean"]
    fold = script.fold_of(len(rows), 3, 0)
    counts = np.bincount(fold, minlength=3)
    assert counts.max() - counts.min() <= 1
    assert records.groupby("model", sort=False).size().to_dict() == dict.fromkeys(
        predictors, len(rows)
    )
    for (model, f), group in records.groupby(["model", "fold"], sort=False):
        held = rows[fold == f]
        pd.testing.assert_frame_equal(
            group[[*key, *truth]].reset_index(drop=True),
            held[[*key, *truth]].reset_index(drop=True),
            obj=f"{model} fold {f}",
        )

    # The files have today's columns, and the figures of scoring each model
    # directly on its held-out rows.
    for name in ("folds.csv", "summary.csv"):
        assert _columns(folder / name) == _columns(COMMITTED / name), name
    folds = pd.read_csv(folder / "folds.csv")
    assert list(folds["model"]) == [m for _ in range(3) for m in predictors]
    for (model, f), figures in folds.set_index(["model", "fold"]).iterrows():
        test = fold == f
        direct = script.scores(rows[test], predictors[model](rows[~test], rows[test]))
        assert figures.to_dict() == pytest.approx(direct, nan_ok=True), (model, f)
    summary = pd.read_csv(folder / "summary.csv", index_col="model")
    means = folds.drop(columns="fold").groupby("model").mean()
    pd.testing.assert_frame_equal(summary, means.loc[list(predictors)], rtol=1e-12)

    # The scan: one record per reading and grid configuration, the visited
    # ones with their truth; readings.csv has today's columns and readings.
    readings = pd.read_parquet(folder / "readings_rows.parquet")
    grid = len(candidate_configurations(inst))
    assert len(readings) == len(scan) * grid
    visited = visited_rows(inst)
    names = ["pp=1", "pp>1", "zero0", "vocab"]
    for _, group in readings.groupby(names, sort=False):
        assert len(group) == grid
        assert int(group["card_best"].sum()) == 1
        seen = group[group["visited"]].merge(
            visited[[*key, *truth]], on=key, suffixes=("", "_trace")
        )
        assert len(seen) == len(visited)
        assert (seen["ran_successfully"] == seen["ran_successfully_trace"]).all()
        np.testing.assert_array_equal(seen["peak_mem"], seen["peak_mem_trace"])
        ran = visited["ran_successfully"].to_numpy(dtype=bool)
        assert group["capacity_gb"].iloc[0] >= visited["peak_mem"][ran].max()
    table = pd.read_csv(folder / "readings.csv")
    assert _columns(folder / "readings.csv") == _columns(COMMITTED / "readings.csv")
    committed = pd.read_csv(COMMITTED / "readings.csv")
    pd.testing.assert_frame_equal(table[names], committed[names].head(len(scan)))

    # Run nothing: the three files come back byte for byte from the records,
    # by the script's report (the full fit: through the checkout's rewrite of
    # every report, which runs the script's --report in a subprocess).
    files = ("folds.csv", "summary.csv", "readings.csv")
    written = {name: (folder / name).read_bytes() for name in files}
    for name in files:
        (folder / name).write_text("stale\n")
    monkeypatch.chdir(REPO)
    rewrite = regenerate_all if full_fit else script.report
    assert sorted(p.name for p in rewrite(folder)) == sorted(files)
    for name, content in written.items():
        assert (folder / name).read_bytes() == content, name


@pytest.mark.slow
def test_a_standin_fit_report_refuses_what_it_cannot_compute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin_fit: ModuleType
) -> None:
    script = standin_fit
    inst = get_instance("pco64")
    rows = visited_rows(inst).iloc[::20]
    folder = tmp_path / "standin3"
    with pytest.raises(ValueError, match=r"report\.json', got no such file"):
        script.report(folder)
    with pytest.raises(ValueError, match=r"Expected model 'short' to give"):
        script.run(
            folder, inst.name, 2, 0, {"short": lambda train, test: test.iloc[:1]}, rows
        )
    script.run(folder, inst.name, 2, 0, {"nearest": Nearest(inst)}, rows)
    # Records that lack a fold the marker names.
    records = pd.read_parquet(folder / "rows.parquet")
    records[records["fold"] == 0].to_parquet(folder / "rows.parquet")
    with pytest.raises(ValueError, match=r"on folds \[0, 1\], got \[0\]"):
        script.report(folder)
    monkeypatch.chdir(REPO)
    with pytest.raises(ValueError, match=r"on folds \[0, 1\], got \[0\]"):
        regenerate_all(folder)
    # Another script's folder is not written over.
    other = tmp_path / "other"
    other.mkdir()
    (other / REPORT_MARKER).write_text('{"script": "trace_check"}\n')
    with pytest.raises(ValueError, match='"script": "standin_fit"'):
        script.run(other, inst.name, 2, 0, {"nearest": Nearest(inst)}, rows)
    assert not (other / "rows.parquet").exists()
