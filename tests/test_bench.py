"""The benchmark harness: records, files, resume, faults and backends."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from click.testing import CliRunner

from bolt_pco64 import PCO64, SimulatedTableWarning
from bolt_pco64.bench import (
    ComparisonSpec,
    OutputDirError,
    RunContext,
    register_method,
    run_comparison,
)
from bolt_pco64.bench.run import record_columns
from bolt_pco64.cli import main
from bolt_pco64.instances import INSTANCES, PCO64_INSTANCE
from bolt_pco64.tables.locations import bundled_table_path
from bolt_pco64.tables.time_model import COST_DEFAULTS, TimeModel
from tests import _fixtures
from tests._tables import small_frame

REPO = Path(__file__).resolve().parent.parent
TIMING = ["fit_seconds", "acq_seconds"]


table_path = _fixtures.table_path
registry = _fixtures.registry


def _run(out: Path, table: Path, **kw):
    """A comparison on ``table``: ``kw`` are spec settings, but ``jobs``,
    ``dask_scheduler`` and ``progress`` go to ``run_comparison``."""
    settings = {"seeds": 2, "budget": 8, "n_init": 4, **kw}
    runner = ("jobs", "dask_scheduler", "progress")
    options = {"progress": False, **{k: settings.pop(k) for k in runner if k in kw}}
    return run_comparison(ComparisonSpec(**settings), table, out=out, **options)


@pytest.mark.slow
def test_records_files_and_fair_initial_design(tmp_path: Path, table_path: Path):
    res = _run(tmp_path / "out", table_path, methods=["random", "qlognei", "naive"])
    rec = res.records
    assert list(rec.columns) == list(record_columns(PCO64_INSTANCE))
    assert len(rec) == 3 * 2 * 8
    methods = ["random", "qlognei", "naive"]
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert sorted(summary["method"]) == sorted(methods)
    md = (tmp_path / "out" / "summary.md").read_text()
    assert all(f"| {m} |" in md for m in methods), md
    assert min(_fixtures.png_size(tmp_path / "out" / "regret.png")) >= 100
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert (meta["problem"], meta["status"]) == ("pco64", "complete")
    on_disk = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    pd.testing.assert_frame_equal(on_disk, rec, check_dtype=False)

    f = PCO64(table=table_path)
    opt = f.optimal_value
    # Feasible rows: start-up plus the loop; crashes: the time model's (tested
    # in test_costs).
    seconds = f.table.column("overall_time").numpy() + COST_DEFAULTS.startup_seconds
    cost = seconds * PCO64_INSTANCE.num_gpus / 3600
    oom_cost = TimeModel(f.table).gpu_hours.numpy()
    for (_, seed), run in rec.groupby(["method", "seed"]):
        assert run["iteration"].tolist() == list(range(1, 9))
        assert run["row"].nunique() == 8
        # Every method starts from the same initial design for a seed.
        first = rec[(rec.method == "random") & (rec.seed == seed)]["row"].tolist()[:4]
        assert run["row"].tolist()[:4] == first
        X = torch.tensor(
            run[list(f.table.frame.columns[:8])].to_numpy(), dtype=torch.double
        )
        assert torch.equal(f.lookup(X), torch.tensor(run["row"].to_numpy()))
        truth = f.evaluate_true(X).numpy()
        np.testing.assert_array_equal(run["throughput"].to_numpy(), truth)
        assert (run["feasible"].to_numpy() == ~np.isnan(truth)).all()
        best = np.fmax.accumulate(np.where(np.isnan(truth), -np.inf, truth))
        best = np.where(np.isinf(best), np.nan, best)
        np.testing.assert_array_equal(run["best_feasible"].to_numpy(), best)
        np.testing.assert_allclose(run["regret"].to_numpy(), opt - best)
        rows = run["row"].to_numpy()
        per = np.where(np.isnan(truth), oom_cost[rows], cost[rows])
        np.testing.assert_allclose(run["run_gpu_hours"].to_numpy(), per)
        # One worker: runs back to back, the meter is the cumulative cost.
        np.testing.assert_allclose(run["gpu_hours"].to_numpy(), np.cumsum(per))
        ends = np.cumsum(per) * 3600 / PCO64_INSTANCE.num_gpus
        np.testing.assert_allclose(run["sim_end_s"].to_numpy(), ends)
        np.testing.assert_allclose(run["sim_start_s"].to_numpy()[1:], ends[:-1])
        assert (run["worker"] == 0).all()
        assert (run["fit_seconds"].iloc[:4] == 0).all()

    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["status"] == "complete"
    assert meta["errors"] == {}
    assert meta["versions"]["botorch"]
    assert str(table_path.resolve()) in meta["table"]["source"]
    assert len(meta["runs"]["complete"]) == 6
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["method"].tolist() == ["random", "qlognei", "naive"]
    assert "| qlognei |" in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.slow
def test_same_seed_gives_bit_identical_records(tmp_path: Path, table_path: Path):
    a = _run(tmp_path / "a", table_path, methods=["ts"], seeds=[5])
    b = _run(tmp_path / "b", table_path, methods=["ts"], seeds=[5])
    pd.testing.assert_frame_equal(
        a.records.drop(columns=TIMING), b.records.drop(columns=TIMING), check_exact=True
    )


@pytest.mark.slow
def test_rerun_resumes_and_skips_complete_runs(
    tmp_path: Path, table_path: Path, registry
) -> None:
    calls: list[int] = []

    @register_method("counting")
    def counting(ctx: RunContext) -> torch.Tensor:
        calls.append(ctx.seed)
        return ctx.untried[: ctx.q]

    out = tmp_path / "out"
    first = _run(out, table_path, methods=["random", "counting"], seeds=2)
    assert len(calls) == 2 * 4
    assert sorted(first.ran) == [
        ("counting", 0),
        ("counting", 1),
        ("random", 0),
        ("random", 1),
    ]
    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    # Same directory, one more seed: only the new runs execute.
    again = _run(out, table_path, methods=["random", "counting"], seeds=3)
    assert len(calls) == 3 * 4
    assert sorted(again.ran) == [("counting", 2), ("random", 2)]
    for name, ns in mtimes.items():
        assert (out / "runs" / name).stat().st_mtime_ns == ns
    assert len(again.records) == 2 * 3 * 8
    # A different configuration is refused before any run.
    with pytest.raises(ValueError, match="use another --out"):
        _run(out, table_path, methods=["counting"], budget=9)
    assert len(calls) == 3 * 4


@pytest.mark.slow
def test_failing_method_keeps_its_rows_and_others_complete(
    tmp_path: Path, table_path: Path, registry
) -> None:
    @register_method("flaky")
    def flaky(ctx: RunContext) -> torch.Tensor:
        if ctx.rows.numel() >= 6:
            raise RuntimeError("GP fit exploded (test)")
        return ctx.untried[: ctx.q]

    @register_method("cheater")
    def cheater(ctx: RunContext) -> torch.Tensor:
        return ctx.rows[:1]  # an already evaluated row

    out = tmp_path / "out"
    res = _run(out, table_path, methods=["flaky", "random", "cheater"], seeds=2)
    meta = json.loads((out / "meta.json").read_text())
    assert set(meta["errors"]) == {"flaky/0", "flaky/1", "cheater/0", "cheater/1"}
    assert "RuntimeError: GP fit exploded (test)" in meta["errors"]["flaky/0"]
    assert "untried rows" in meta["errors"]["cheater/1"]
    assert meta["runs"]["complete"] == ["random/0", "random/1"]
    rec = pd.read_parquet(out / "runs.parquet")
    assert (rec[rec.method == "flaky"].groupby("seed").size() == 6).all()
    assert (rec[rec.method == "random"].groupby("seed").size() == 8).all()
    row = res.summary.set_index("method").loc["flaky"]
    assert (row["runs"], row["failed"]) == (0, 2)
    # Failed runs are retried on a rerun; here they fail again, random is skipped.
    again = _run(out, table_path, methods=["flaky", "random", "cheater"], seeds=2)
    assert sorted(m for m, _ in again.ran) == ["cheater", "cheater", "flaky", "flaky"]


def test_a_comparison_whose_every_run_fails_reports_it(
    tmp_path: Path, table_path: Path, registry
) -> None:
    """Every run failing is a result to report (the protocol has nothing to
    compare), not an error of the report."""

    @register_method("always_fails")
    def always_fails(ctx: RunContext) -> torch.Tensor:
        raise RuntimeError("no proposal (test)")

    out = tmp_path / "out"
    res = _run(out, table_path, methods=["always_fails"], seeds=2)
    meta = json.loads((out / "meta.json").read_text())
    assert set(meta["errors"]) == {"always_fails/0", "always_fails/1"}
    assert meta["runs"]["complete"] == []
    summary = (out / "summary.md").read_text()
    assert "no method has a complete run" in summary
    assert res.summary.set_index("method").loc["always_fails", "failed"] == 2


@pytest.mark.slow
def test_backends_give_identical_records(tmp_path: Path, table_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    kw = {"methods": ["random", "qlognei"], "seeds": [0, 3], "budget": 7}
    local = _run(tmp_path / "local", table_path, **kw)
    procs = _run(tmp_path / "procs", table_path, jobs=2, **kw)
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address=None,
    ) as cluster:
        dask = _run(
            tmp_path / "dask",
            table_path,
            dask_scheduler=cluster.scheduler_address,
            **kw,
        )
    expected = local.records.drop(columns=TIMING)
    assert len(expected) == 2 * 2 * 7
    for other in (procs, dask):
        assert other.errors == {}
        pd.testing.assert_frame_equal(
            other.records.drop(columns=TIMING), expected, check_exact=True
        )


def test_unwritable_out_is_one_line_error_before_any_run(
    tmp_path: Path, table_path: Path, registry
) -> None:
    calls: list[int] = []
    register_method("spy", lambda ctx: calls.append(1) or ctx.untried[: ctx.q])
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "--methods",
            "spy",
            "--seeds",
            "1",
            "--budget",
            "5",
            "--n-init",
            "2",
            "--table",
            str(table_path),
            "--out",
            str(blocker / "results"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: Cannot write to output directory")
    assert calls == []
    with pytest.raises(OutputDirError):
        _run(blocker / "x", table_path, methods=["spy"])
    if os.geteuid() != 0:  # root writes into read-only folders anyway
        ro = tmp_path / "read-only"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            with pytest.raises(OutputDirError, match="Cannot write"):
                _run(ro, table_path, methods=["spy"])
        finally:
            ro.chmod(0o700)
    assert calls == []


def _bench_subprocess(
    methods: str, seeds: int, table_path: Path, out: Path
) -> tuple[list[str], dict[str, str]]:
    """Command line and environment of a ``bolt-pco64 bench`` child process."""
    cmd = [
        sys.executable, "-m", "bolt_pco64", "bench", "--methods", methods,
        "--seeds", str(seeds), "--budget", "30", "--n-init", "5",
        "--table", str(table_path), "--out", str(out), "--no-progress",
    ]  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return cmd, env


def _temporaries(out: Path) -> list[Path]:
    """Temporary files of the atomic writer in ``out`` and ``out/runs``."""
    return [p for folder in (out, out / "runs") for p in folder.glob(".*.tmp")]


def _kill_during_a_write(cmd: list[str], env: dict[str, str], out: Path) -> bool:
    """Start ``cmd``, SIGKILL it as soon as a temporary file appears after 3 runs.

    Returns whether the kill landed while the write was under way: a killed
    writer cannot remove its temporary file, so one is left on disk.
    """
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            runs = out / "runs"
            done = len(list(runs.glob("*.parquet"))) if runs.is_dir() else 0
            if done >= 3 and _temporaries(out):
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.0005)
        assert proc.poll() is None or proc.returncode == -signal.SIGKILL, (
            "the benchmark finished before it could be killed"
        )
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return bool(_temporaries(out))


#: Seeds of the interrupted benchmark: enough runs left after the third for
#: the kill to land during a write.
KILLED_SEEDS = 12


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")  # the uninterrupted run's report
def test_sigkill_during_a_write_leaves_valid_files_and_rerun_completes(
    tmp_path: Path, table_path: Path
) -> None:
    # The kill can land just after the write it aimed at; retry (bounded)
    # until it lands during one, which a leftover temporary file proves.
    for attempt in range(6):
        out = tmp_path / f"out{attempt}"
        cmd, env = _bench_subprocess("random", KILLED_SEEDS, table_path, out)
        if _kill_during_a_write(cmd, env, out):
            break
    else:
        pytest.fail("no SIGKILL landed during a write in 6 attempts")

    # Everything that exists under its final name is complete and readable.
    finished = sorted((out / "runs").glob("*.parquet"))
    assert 3 <= len(finished) < KILLED_SEEDS
    for p in finished:
        t = pq.read_table(p)
        assert t.num_rows == 30
        assert t.schema.metadata[b"status"] == b"complete"
    if (out / "runs.parquet").exists():
        assert pq.read_table(out / "runs.parquet").num_rows % 30 == 0
    json.loads((out / "meta.json").read_text())

    mtimes = {p.name: p.stat().st_mtime_ns for p in finished}
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    done = KILLED_SEEDS - len(finished)
    assert f"{done} run(s) done, {len(finished)} resumed" in rerun.stdout
    for name, ns in mtimes.items():
        assert (out / "runs" / name).stat().st_mtime_ns == ns
    assert not list(out.glob(".*.tmp"))
    assert not list((out / "runs").glob(".*.tmp"))
    rec = pd.read_parquet(out / "runs.parquet")
    assert len(rec) == KILLED_SEEDS * 30
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete"
    assert len(meta["runs"]["complete"]) == KILLED_SEEDS
    # The resumed result equals an uninterrupted one.
    ref = _run(
        tmp_path / "ref",
        table_path,
        methods=["random"],
        seeds=KILLED_SEEDS,
        budget=30,
        n_init=5,
    )
    pd.testing.assert_frame_equal(
        rec.drop(columns=TIMING),
        ref.records.drop(columns=TIMING),
        check_dtype=False,
        check_exact=True,
    )
    assert math.isclose(float(rec["regret"].min()), float(ref.records["regret"].min()))


def test_bad_settings_are_refused(tmp_path: Path, table_path: Path) -> None:
    with pytest.raises(ValueError, match="Expected methods"):
        _run(tmp_path, table_path, methods=["nope"])
    with pytest.raises(ValueError, match="n_init <= budget"):
        _run(tmp_path, table_path, methods=["random"], n_init=9, budget=8)
    with pytest.raises(ValueError, match="budget <= the table's 72 rows"):
        _run(tmp_path, table_path, methods=["random"], budget=73)
    with pytest.raises(ValueError, match="a method name"):
        register_method("bad name/")


@pytest.mark.slow
def test_measured_noise_is_seeded_shared_and_keeps_regret_true(
    tmp_path: Path, table_path: Path, registry
) -> None:
    register_method("first_untried", lambda ctx: ctx.untried[: ctx.q])
    res = _run(
        tmp_path / "n",
        table_path,
        methods=["random", "first_untried"],
        noise="measured",
    )
    rec = res.records
    f = PCO64(table=table_path)
    X = torch.tensor(
        rec[list(f.table.frame.columns[:8])].to_numpy(), dtype=torch.double
    )
    truth = f.evaluate_true(X).numpy()
    feas = ~np.isnan(truth)
    assert (np.isnan(rec["throughput"].to_numpy()) == ~feas).all()
    assert (rec["throughput"].to_numpy()[feas] != truth[feas]).all()
    # best_feasible / regret use the true values, so regret is never negative.
    assert (rec["regret"].dropna() >= 0).all()
    assert set(rec["best_feasible"].dropna()) <= set(truth[feas])
    # Same seed: the shared initial design sees the same noisy values.
    a = rec[(rec.method == "random") & (rec.seed == 1)]["throughput"].to_numpy()[:4]
    b = rec[(rec.method == "first_untried") & (rec.seed == 1)]["throughput"].to_numpy()[
        :4
    ]
    np.testing.assert_array_equal(a, b)
    again = _run(tmp_path / "m", table_path, methods=["random"], noise="measured")
    pd.testing.assert_frame_equal(
        again.records.drop(columns=TIMING),
        rec[rec.method == "random"].reset_index(drop=True).drop(columns=TIMING),
    )


@pytest.mark.slow
def test_ctrl_c_finalises_files_as_interrupted(
    tmp_path: Path, table_path: Path
) -> None:
    out = tmp_path / "out"
    # 6 seeds (12 runs): the interrupt lands after 3 runs with many to go, also
    # when a loaded machine lets the child run far ahead of this loop.
    cmd, env = _bench_subprocess("random,ts", 6, table_path, out)
    # A suite started in the background (`cmd &` in a script) inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: the child gets
    # SIGINT's default back, as a terminal's foreground job has it.
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "runs").is_dir() and len(list((out / "runs").glob("*.parquet"))) >= 3:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the benchmark finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Aborted!" not in err
    assert "rerun the same command with the same --out" in " ".join(err.split())
    resume = err.strip().splitlines()[-1].strip()
    assert resume.startswith("bolt-pco64 bench --methods random,ts --seeds 6 ")
    assert resume.endswith(f"--out {out}")
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted"
    complete = len(meta["runs"]["complete"])
    assert 3 <= complete < 12
    assert len(pd.read_parquet(out / "runs.parquet")) == 30 * complete


def test_dask_without_distributed_is_a_one_line_error_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "distributed" else real(name, *a),
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "--quick",
            "--dask-scheduler",
            "tcp://127.0.0.1:1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "bolt_pco64[dask]" in result.output
    assert not out.exists()


def _tree(root: Path) -> list[str]:
    """Every path under ``root`` (relative), to compare before and after."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing table", "Error: --table: "),
        ("garbage table", "Error: --table: "),
        ("invalid BOLT_PCO64_TABLE", "Error: BOLT_PCO64_TABLE: "),
        ("unreachable Dask scheduler", "Cannot reach the Dask scheduler"),
        ("noise", "Invalid value for '--noise'"),
        ("methods", "Invalid value for '--methods'"),
    ],
)
def test_refused_bench_leaves_the_file_system_as_it_was(
    tmp_path: Path,
    table_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    expected: str,
) -> None:
    out = tmp_path / "o3"
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1 this is not a parquet file")
    args = ["bench", "--methods", "random", "--seeds", "1", "--budget", "5"]
    args += ["--n-init", "2", "--out", str(out), "--no-progress"]
    if case == "missing table":
        args += ["--table", str(tmp_path / "nonexistent.parquet")]
    elif case == "garbage table":
        args += ["--table", str(garbage)]
    elif case == "invalid BOLT_PCO64_TABLE":
        monkeypatch.setenv("BOLT_PCO64_TABLE", str(garbage))
    elif case == "unreachable Dask scheduler":
        pytest.importorskip("distributed")
        from bolt_pco64.bench import backends

        monkeypatch.setattr(backends, "DASK_CONNECT_TIMEOUT_S", 1.0)
        args += ["--table", str(table_path), "--dask-scheduler", "tcp://127.0.0.1:1"]
    elif case == "noise":
        args += ["--table", str(table_path), "--noise", "-1"]
    else:
        args += ["--table", str(table_path), "--methods", "random,nope"]
    before = _tree(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert _tree(tmp_path) == before
    if case in ("noise", "methods"):
        return
    if "table" in case:
        assert (
            "garbage" if "garbage" in case or "BOLT" in case else "nonexistent"
        ) in (result.output)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output


def test_noise_and_methods_messages_speak_command_line_terms() -> None:
    noise = CliRunner().invoke(main, ["bench", "--noise", "-1"])
    assert noise.exit_code == 2
    assert (
        "Invalid value for '--noise': expected 'measured' or a number >= 0, got -1"
        in noise.output
    )
    methods = CliRunner().invoke(main, ["bench", "--methods", "random,nope"])
    assert methods.exit_code == 2
    assert "Invalid value for '--methods'" in methods.output
    assert "got nope" in methods.output
    assert "Expected" not in noise.output + methods.output


@pytest.mark.slow
def test_cost_is_labelled_simulated_only_on_the_stand_in(
    tmp_path: Path, table_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    labels: list[str] = []
    save = Figure.savefig

    def spy(self: Figure, *args: object, **kwargs: object) -> None:
        labels.extend(ax.get_xlabel() for ax in self.axes)
        save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    kw = {"methods": ["random"], "seeds": 1, "budget": 5, "n_init": 2}
    measured = _run(tmp_path / "m", table_path, **kw)
    assert "| GPU-hours (median) |" in measured.summary_markdown
    assert "simulated" not in measured.summary_markdown.lower()
    # Simple and inference regret against evaluations; then the cost
    # report's plot: against GPU-hours and wall-clock.
    wall = "simulated wall-clock hours"
    # (then the protocol's Kaplan-Meier figure, written last)
    assert labels[:4] == ["evaluations", "evaluations", "GPU-hours (cumulative)", wall]
    labels.clear()
    with warnings.catch_warnings():  # the stand-in warns once per process
        warnings.simplefilter("ignore", SimulatedTableWarning)
        # the stand-in is no longer the default (issue 27): asked for by path
        standin = run_comparison(
            ComparisonSpec(**kw),
            bundled_table_path("pco64"),
            out=tmp_path / "s",
            progress=False,
        )
    assert "| simulated GPU-hours (median) |" in standin.summary_markdown
    cost = "simulated GPU-hours (cumulative)"
    assert labels[:4] == ["evaluations", "evaluations", cost, wall]


def test_cost_on_the_reconstruction_is_labelled_modelled() -> None:
    """Its run times come from the time model, not from a trace (issue 27)."""
    from bolt_pco64.bench.report.facts import TableFacts, cost_label
    from bolt_pco64.tables.locations import reconstructed_table_path
    from bolt_pco64.tables.table import load_table

    path = reconstructed_table_path("pco64")
    assert path is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        facts = TableFacts.of(load_table(path))
    assert facts.is_reconstructed
    assert not facts.is_simulated
    assert cost_label(facts) == "modelled GPU-hours"
    # meta.json written before the field existed (the default table, found as
    # the shipped reconstruction): read from how the table was found.
    old = {k: v for k, v in facts.as_meta().items() if k != "is_reconstructed"}
    old["source_kind"] = "reconstructed"
    assert cost_label(TableFacts.from_meta(old)) == "modelled GPU-hours"
    given = {**old, "source_kind": "argument", "source_name": "mine.parquet"}
    assert cost_label(TableFacts.from_meta(given)) == "GPU-hours"
    with pytest.raises(ValueError, match="missing \\['time_model'\\]"):
        TableFacts.from_meta({k: v for k, v in old.items() if k != "time_model"})


@pytest.mark.slow
def test_the_harness_leaves_pyplot_and_the_backend_alone(
    tmp_path: Path, table_path: Path
) -> None:
    script = (
        "import json, sys, matplotlib\n"
        "before = matplotlib.get_backend()\n"
        "from bolt_pco64.bench import ComparisonSpec, run_comparison\n"
        "spec = ComparisonSpec(['random'], seeds=1, budget=5, n_init=2)\n"
        f"run_comparison(spec, {str(table_path)!r}, out={str(tmp_path / 'o')!r},"
        " progress=False)\n"
        "print(json.dumps([before, matplotlib.get_backend(),"
        " 'matplotlib.pyplot' in sys.modules]))\n"
    )
    _, env = _bench_subprocess("random", 1, table_path, tmp_path)
    env["MPLBACKEND"] = "svg"
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after, pyplot = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (before, after, pyplot) == ("svg", "svg", False)
    assert min(_fixtures.png_size(tmp_path / "o" / "regret.png")) >= 100


def _family_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A small synthetic table for each instance, named by its environment variable."""
    paths = {}
    for name, inst in INSTANCES.items():
        path = tmp_path / "tables" / f"{name}.parquet"
        path.parent.mkdir(exist_ok=True)
        small_frame(seed=3, n=30, instance=name).to_parquet(path, index=False)
        monkeypatch.setenv(inst.env_table, str(path))
        paths[name] = path
    return paths


@pytest.mark.slow
def test_bench_problem_all_writes_each_problem_and_a_combined_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _family_tables(tmp_path, monkeypatch)
    out = tmp_path / "fam"
    args = ["bench", "--problem", "all", "--methods", "random", "--seeds", "2"]
    args += ["--budget", "5", "--n-init", "2", "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    for name, inst in INSTANCES.items():
        rec = pd.read_parquet(out / name / "runs.parquet")
        assert len(rec) == 2 * 5
        assert [c for c in rec.columns if c in inst.input_columns] == list(
            inst.input_columns
        )
        meta = json.loads((out / name / "meta.json").read_text())
        assert (meta["problem"], meta["status"]) == (name, "complete")
        assert meta["cost_model"]["gpus"] == inst.num_gpus
    combined = pd.read_csv(out / "summary.csv")
    assert combined["problem"].tolist() == sorted(INSTANCES)
    assert combined["runs"].tolist() == [2, 2, 2]
    md = (out / "summary.md").read_text()
    for name in INSTANCES:
        assert f"| {name} | random | 2 |" in md
    assert min(_fixtures.png_size(out / "regret.png")) >= 100
    assert f"plot: {out / 'regret.png'}" in result.output
    # A rerun resumes every problem.
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "0 run(s) done" in again.output


def test_bench_problem_all_refuses_before_creating_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _family_tables(tmp_path, monkeypatch)
    paths["pco64"].write_bytes(b"PAR1 garbage")
    before = _tree(tmp_path)
    result = CliRunner().invoke(
        main,
        ["bench", "--problem", "all", "--methods", "random", "--seeds", "1",
         "--budget", "5", "--n-init", "2", "--out", str(tmp_path / "fam"),
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "pco64.parquet" in result.output
    assert _tree(tmp_path) == before


def test_a_reference_not_compared_is_refused_before_anything_is_written(
    tmp_path: Path, table_path: Path
) -> None:
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"reference.*\(random, ts\).*'qlognei'"):
        run_comparison(
            ComparisonSpec(
                ["random", "ts"], seeds=1, budget=4, n_init=2, reference="qlognei"
            ),
            table_path,
            out=out,
            progress=False,
        )
    assert not out.exists()


@pytest.mark.slow
def test_the_default_reference_is_a_compared_method(
    tmp_path: Path, table_path: Path
) -> None:
    result = run_comparison(
        ComparisonSpec(["ts", "random"], seeds=1, budget=3, n_init=2),
        table_path,
        out=tmp_path / "a",
        progress=False,
    )
    meta = json.loads((result.out / "meta.json").read_text())
    assert meta["arguments"]["reference"] == "random"
    result = run_comparison(
        ComparisonSpec(["ts"], seeds=1, budget=3, n_init=2),
        table_path,
        out=tmp_path / "b",
        progress=False,
    )
    meta = json.loads((result.out / "meta.json").read_text())
    assert meta["arguments"]["reference"] == "ts"


def test_meta_names_a_table_inside_the_working_directory_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A committed result folder must not carry this machine's absolute paths."""
    from bolt_pco64.bench.store import portable_source
    from bolt_pco64.tables.table import TableSource

    inside = tmp_path / "data" / "t.parquet"
    outside = Path("/elsewhere/t.parquet")
    monkeypatch.chdir(tmp_path)
    rel = portable_source(TableSource("argument", inside))
    assert str(tmp_path) not in rel
    assert rel.startswith("argument: data/t.parquet")
    assert portable_source(TableSource("argument", outside)) == str(
        TableSource("argument", outside)
    )
    assert portable_source(TableSource("dataframe", None)) == "dataframe: <DataFrame>"
