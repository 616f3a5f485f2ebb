"""Every example runs as written (as a subprocess, with a tiny budget)."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests._fixtures import png_size
from tests._synth import make_table

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _run(name: str, *args: str, cwd: Path) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_every_example_is_run_by_a_test() -> None:
    tests = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    untested = [p.name for p in EXAMPLES.glob("*.py") if f'"{p.name}"' not in tests]
    assert untested == []


@pytest.mark.slow
def test_quickstart(tmp_path: Path) -> None:
    out = _run("quickstart.py", cwd=tmp_path)
    # Expected figures read from the shipped default table directly, with pandas.
    raw = pd.read_parquet(REPO / "data" / "pco64_reconstructed.parquet")  # the default
    feasible = raw["ran_successfully"].astype(bool)
    best = raw.loc[raw["throughput_mean"].where(feasible).idxmax()]
    n_oom = int((~feasible).sum())
    assert f"{len(raw)} configurations, {int(feasible.sum())} run, {n_oom} OOM" in out
    assert f"optimal throughput {best['throughput_mean']:.5f}" in out
    margin = best["peak_mem_normalised"]
    assert re.search(
        rf"{best['throughput_mean']:.5f}\s+{margin:.3f}\s+True\s+{best['peak_mem']:.1f}",
        out,
    )
    # Each evaluated row: NaN throughput, not feasible, inf peak and NaN time
    # exactly where the run ran out of memory.
    _check_quickstart_rows(out, crashes=True)


def _check_quickstart_rows(out: str, crashes: bool) -> None:
    """Each evaluated row: NaN throughput, not feasible, a positive margin, inf
    peak and NaN time exactly where the run ran out of memory; one such row
    shown if the table has any."""
    rows = re.findall(
        r"(\S+)\s+(-?\d+\.\d+)\s+(True|False)\s+(\S+)\s+(\S+)$", out, re.M
    )
    assert len(rows) == (4 if crashes else 3)
    for thr, margin, feas, mem, time_s in rows:
        oom = feas == "False"
        assert (thr == "nan", mem == "inf", time_s == "nan") == (oom, oom, oom)
        assert (float(margin) > 0) == oom
    assert sum(feas == "False" for *_, feas, _, _ in rows) == (1 if crashes else 0)


def _quickstart_in_process(
    table: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    monkeypatch.setattr(sys, "argv", ["quickstart.py", "--table", str(table)])
    runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="__main__")
    return capsys.readouterr().out


@pytest.mark.parametrize("crashes", [True, False], ids=["with OOMs", "without"])
def test_quickstart_shows_a_crash_on_any_table(
    crashes: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On a small synthetic table (its rows in another order, so that no row
    number could pick the OOM) and on one where everything fits."""
    frame = make_table(capacity=80.0 if crashes else 1e6).sample(
        frac=1.0, random_state=5
    )
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    out = _quickstart_in_process(path, monkeypatch, capsys)
    n_oom = int((~frame["ran_successfully"]).sum())
    assert (n_oom > 0) == crashes
    assert f"{len(frame)} configurations, {len(frame) - n_oom} run, {n_oom} OOM" in out
    _check_quickstart_rows(out, crashes)
    assert ("no OOM to show" in out) == (not crashes)


@pytest.mark.slow
def test_constrained_bo(tmp_path: Path) -> None:
    out = _run("constrained_bo.py", "--budget", "12", "--n-init", "10", cwd=tmp_path)
    iterations = re.findall(r"^iteration\s+(\d+): row\s+(\d+)", out, flags=re.M)
    assert [int(i) for i, _ in iterations] == [11, 12]
    done = re.search(r"regret (\d+\.\d+); (\d+) of 12 evaluations", out)
    assert done is not None
    optimum = re.search(r"optimum (\d+\.\d+)", out)
    assert optimum is not None
    assert 0.0 <= float(done.group(1)) < float(optimum.group(1))


@pytest.mark.slow
def test_compare_acquisitions(tmp_path: Path) -> None:
    out = _run(
        "compare_acquisitions.py",
        "--methods", "random,qlognei", "--seeds", "1", "--budget", "12",
        "--out", str(tmp_path / "cmp"),
        cwd=tmp_path,
    )  # fmt: skip
    assert "| random | 1 |" in out
    assert "| qlognei | 1 |" in out
    assert "Smoke test: no comparison" in out  # one seed compares nothing
    assert f"regret plot: {tmp_path / 'cmp' / 'regret.png'}" in out
    assert min(png_size(tmp_path / "cmp" / "regret.png")) >= 100


@pytest.mark.slow
def test_cost_workers(tmp_path: Path) -> None:
    out = _run(
        "cost_workers.py",
        "--seeds", "1", "--budget-hours", "60", "--workers", "2", "--n-init", "4",
        "--out", str(tmp_path / "cw"),
        cwd=tmp_path,
    )  # fmt: skip
    # The time model's own description, then both workers used by each method.
    assert "a run costs start-up" in out
    table = re.search(r"^worker\s+0\s+1$", out, flags=re.M)
    assert table is not None, out
    assert (tmp_path / "cw" / "cost_summary.md").read_text() in out
    assert min(png_size(tmp_path / "cw" / "cost.png")) >= 100


@pytest.mark.slow
def test_early_termination(tmp_path: Path) -> None:
    out = _run(
        "early_termination.py", "--budget-hours", "40", "--n-init", "4",
        "--out", str(tmp_path / "et"),
        cwd=tmp_path,
    )  # fmt: skip
    steps = [int(k) for k in re.findall(r"^after\s+(\d+) steps:", out, flags=re.M)]
    assert steps, out
    assert steps == list(range(1, len(steps) + 1))
    runs = dict(re.findall(r"^\s*(none|posterior): (\d+) runs", out, flags=re.M))
    assert set(runs) == {"none", "posterior"}, out
    stopped = re.search(r"^\s*none: \d+ runs, (\d+) stopped", out, flags=re.M)
    assert stopped is not None
    assert stopped.group(1) == "0"  # no policy, no stop
    for policy in ("none", "posterior"):
        assert (tmp_path / "et" / policy / "summary.md").exists()


@pytest.mark.slow
def test_informed_prior(tmp_path: Path) -> None:
    out = _run("informed_prior.py", "--steps", "2", cwd=tmp_path)
    assert len(re.findall(r"^step \d: row\s+\d+ -> ", out, flags=re.M)) == 2
    assert re.search(r"after 5 runs$", out, flags=re.M), out
    # The named parameters of both prior means, each printed with a value.
    assert re.search(r"^throughput: flop_time \S+, ", out, flags=re.M), out
    assert re.search(r"^memory: bytes_weights \S+, ", out, flags=re.M), out


@pytest.mark.slow
def test_custom_method(tmp_path: Path) -> None:
    out = _run(
        "custom_method.py", "--seeds", "1", "--budget", "6", "--n-init", "4",
        "--out", str(tmp_path / "cm"),
        cwd=tmp_path,
    )  # fmt: skip
    assert out.startswith("True\n")  # registered
    assert "| lowest_memory_first | 1 |" in out
    records = pd.read_parquet(tmp_path / "cm" / "runs.parquet")
    mine = records[records["method"] == "lowest_memory_first"].sort_values("iteration")
    # After the shared initial design the oracle method never picks a crash.
    assert mine["feasible"].iloc[4:].all()
    assert len(mine) == 6


@pytest.mark.slow
def test_mixed_optimizers(tmp_path: Path) -> None:
    # One proposal a loop after the design: the docs build runs three
    # (docs/sphinxext/gallery.py).
    out = _run("mixed_optimizers.py", "--budget", "9", "--n-init", "8", cwd=tmp_path)
    proposals = re.findall(
        r"\(configuration: (True|False), repeat: (True|False)\)", out
    )
    assert len(proposals) == 2  # two loops, one proposal each
    assert all(row == "True" for row, _ in proposals)  # the grid's own terms
    assert all(repeat == "False" for _, repeat in proposals)  # exclude=X_tried
    assert re.search(r"snaps: \d+ points evaluated: 0 snapped", out)
