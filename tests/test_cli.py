"""The command line: ``info``, messages, start-up imports and warnings."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bolt_pco64.cli import main
from bolt_pco64.tables.locations import bundled_table_path
from tests import _fixtures
from tests._synth import make_table
from tests._tables import frame_from, small_frame


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


def _cli(
    *args: str, env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``python [python...] -m bolt_pco64 args...`` in a fresh process."""
    return subprocess.run(
        [sys.executable, *python, "-m", "bolt_pco64", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _imported(stderr: str) -> set[str]:
    """Top-level package names from ``python -X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    path = tmp_path / "mine.csv"
    frame_from(
        [(1, 0, 0, 0, 0, 6, 0, 0), (2, 1, 1, 0, 1, 7, 3, 1)], [0.1, None]
    ).to_csv(path, index=False)
    return path


COMMANDS = [("--help",), ("bench", "--help"), ("info",)]


@pytest.fixture(scope="module")
def import_base() -> set[str]:
    """What ``import bolt_pco64`` imports (one fresh process per module)."""
    base = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import bolt_pco64"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return _imported(base.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_light_commands_import_nothing_of_the_bo_stack(
    command: tuple[str, ...], small_csv: Path, import_base: set[str]
) -> None:
    """Neither the command nor ``import bolt_pco64`` loads BoTorch or GPyTorch,
    and what the command imports beyond the package holds no BO stack (one
    process per command)."""
    args = (*command, "--table", str(small_csv)) if command == ("info",) else command
    proc = _cli(*args, python=("-X", "importtime"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = _imported(proc.stderr)
    assert "bolt_pco64" in imported
    assert not imported & {"botorch", "gpytorch"}
    extra = imported - import_base
    assert not extra & {"botorch", "gpytorch", "linear_operator", "scipy"}, extra


def _warnings(stderr: str) -> Counter[str]:
    """Warning lines and how often each is printed."""
    return Counter(line.strip() for line in stderr.splitlines() if "Warning:" in line)


def _warning_runs(tmp_path: Path, small_csv: Path) -> list[tuple[str, ...]]:
    table = tmp_path / "synth.parquet"
    make_table(capacity=80.0).to_parquet(table, index=False)
    return [
        ("--help",),
        ("bench", "--help"),
        ("info", "--table", str(small_csv)),
        ("info",),
        ("bench", "--methods", "random,qlognei", "--seeds", "2", "--budget", "6",
         "--n-init", "4", "--jobs", "2", "--table", str(table),
         "--out", str(tmp_path / "o"), "--no-progress"),
    ]  # fmt: skip


@pytest.mark.slow
def test_commands_print_no_third_party_warnings(
    tmp_path: Path, small_csv: Path
) -> None:
    """With every warning enabled (``-W default``), a command (its worker
    processes included) prints no warning at all, so none beyond those of
    ``import bolt_pco64`` either (one process per command)."""
    for args in _warning_runs(tmp_path, small_csv):
        proc = _cli(*args, python=("-W", "default"))
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert not _warnings(proc.stderr), (args, proc.stderr[-3000:])


def test_table_errors_name_the_option_or_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = CliRunner().invoke(main, ["info", "--table", str(tmp_path / "no.csv")])
    assert missing.exit_code == 2
    assert missing.output.startswith("Error: --table: ")
    monkeypatch.setenv("BOLT_PCO64_TABLE", str(tmp_path / "gone.parquet"))
    env = CliRunner().invoke(main, ["info"])
    assert env.exit_code == 2
    assert env.output.startswith("Error: BOLT_PCO64_TABLE: ")
    assert "gone.parquet" in env.output


def test_info_names_the_problem_and_checks_the_published_figures(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mine16.csv"
    small_frame(seed=1, n=12, instance="pco16").to_csv(path, index=False)
    result = CliRunner().invoke(
        main, ["info", "--problem", "pco16", "--table", str(path)]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "problem:    pco16 (16 GPUs on 2 hosts, 80 GB each)" in out
    assert "log2_grad_accum_steps" in out
    assert "log2_cp_size " not in out
    assert "rows: " in out
    assert "this table does NOT meet its published figures (rows, feasible" in out
    assert "published figures (Glow-AI/pco16_tabular_data)" in out
    # A pco64 table is refused as pco16's, naming where it came from.
    other = tmp_path / "mine64.csv"
    small_frame(seed=1, n=12).to_csv(other, index=False)
    wrong = CliRunner().invoke(
        main, ["info", "--problem", "pco16", "--table", str(other)]
    )
    assert wrong.exit_code == 2
    assert wrong.output.startswith("Error: --table: ")
    assert len(wrong.output.strip().splitlines()) == 1


def test_info_says_the_pco64_stand_in_meets_its_published_figures() -> None:
    # the stand-in is no longer the default (issue 27): asked for by path
    path = bundled_table_path("pco64")
    result = CliRunner().invoke(
        main, ["info", "--problem", "pco64", "--table", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert "the stand-in meets its published figures" in result.output
    assert "DIFFERS" not in result.output


def test_info_shows_the_default_reconstructions_label() -> None:
    result = CliRunner().invoke(main, ["info", "--problem", "pco64"])
    assert result.exit_code == 0, result.output
    assert "table:      reconstructed: " in result.output
    label = "reconstructed from published traces of the measured table; "
    assert label in result.output
    assert f"NOTE: this table is {label}" in result.output
    # 780 rows, the card's best at its configuration
    assert "rows:       780" in result.output
    assert "dp=16, tp=4, pp=1, cp=1, sp=4, bucket_mb=64, zero_stage=2, chunks=1" in (
        result.output
    )
    assert "SIMULATED" not in result.output


def test_problem_option_refuses_unknown_instances_and_table_with_all() -> None:
    unknown = CliRunner().invoke(main, ["info", "--problem", "pco8"])
    assert unknown.exit_code == 2
    assert "Invalid value for '--problem'" in unknown.output
    both = CliRunner().invoke(main, ["bench", "--problem", "all", "--table", "x.csv"])
    assert both.exit_code == 2
    assert "Invalid value for '--table'" in both.output


def test_quiet_filters_hide_only_the_listed_warnings() -> None:
    from linear_operator.utils.warnings import NumericalWarning

    from bolt_pco64.cli._core import QUIET_WARNINGS, _quiet_third_party

    before = list(sys.warnoptions)
    with _quiet_third_party(), warnings.catch_warnings(record=True) as seen:
        warnings.warn("A not p.d., added jitter of 1.0e-08", NumericalWarning, 1)
        warnings.warn("`torch.jit.script` is deprecated. Use x", FutureWarning, 1)
        warnings.warn("A not p.d., added jitter", UserWarning, 1)
        warnings.warn("something else", RuntimeWarning, 1)
        children = list(sys.warnoptions)
    assert [(type(w.message), str(w.message)) for w in seen] == [
        (UserWarning, "A not p.d., added jitter"),
        (RuntimeWarning, "something else"),
    ]
    # Worker processes get them as -W options, after the user's own.
    assert children[: len(before)] == before
    assert len(children) == len(before) + len(QUIET_WARNINGS)
    assert all(w.startswith("ignore:") for w in children[len(before) :])
    assert sys.warnoptions == before


def test_fetch_and_generate_pass_the_problem_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bolt_pco64.tables import fetch as fetch_module
    from bolt_pco64.tables import simulate

    calls: list[tuple[str, object]] = []

    def fake_fetch(home: object, *, instance: str, force: bool) -> Path:
        calls.append(("fetch", instance))
        return tmp_path / f"{instance}.parquet"

    def fake_generate(path: Path, seed: int, instance: str) -> Path:
        calls.append(("generate", (instance, seed)))
        return Path(path)

    monkeypatch.setattr(fetch_module, "fetch_table", fake_fetch)
    monkeypatch.setattr(simulate, "write_simulated_table", fake_generate)
    fetched = CliRunner().invoke(main, ["fetch", "--problem", "pco32"])
    assert fetched.exit_code == 0, fetched.output
    assert f"measured table installed: {tmp_path / 'pco32.parquet'}" in fetched.output
    out = tmp_path / "s16.parquet"
    made = CliRunner().invoke(
        main, ["generate", "--problem", "pco16", "--out", str(out), "--seed", "3"]
    )
    assert made.exit_code == 0, made.output
    assert calls == [("fetch", "pco32"), ("generate", ("pco16", 3))]


@pytest.mark.slow
def test_bench_reference_names_the_option_and_reaches_the_comparisons(
    tmp_path: Path,
) -> None:
    bad = CliRunner().invoke(
        main, ["bench", "--reference", "nope", "--out", str(tmp_path / "bad")]
    )
    assert bad.exit_code == 2
    assert "'--reference'" in bad.output
    assert "'nope'" in bad.output
    assert not (tmp_path / "bad").exists()

    out = tmp_path / "ref"
    args = ["bench", "--methods", "random,ts", "--reference", "ts", "--seeds", "2"]
    args += ["--budget", "11", "--n-init", "10", "--out", str(out), "--no-progress"]
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 0, ran.output
    comparisons = pd.read_csv(out / "comparisons.csv")
    assert set(comparisons["reference"]) == {"ts"}
    assert set(comparisons["method"]) == {"random"}
    summary_md = (out / "summary.md").read_text()
    assert "Paired comparisons with ts" in summary_md
    # Two seeds are a smoke test: the terminal says so, in summary.md's words,
    # and prints no paired verdict; summary.md keeps the full tables.
    facts = json.loads((out / "protocol.json").read_text())
    assert facts["smoke"]
    assert len(facts["seeds"]) == 2
    assert "**Smoke test: no comparison.**" in summary_md
    lines = ran.output.splitlines()
    flat = " ".join(ran.output.split())
    smoke = next(i for i, line in enumerate(lines) if line.startswith("Smoke test"))
    assert (
        f"Smoke test: no comparison. 2 seeds: with 2 methods "
        f"({facts['family_pairs']} pairs per endpoint), no outcome of fewer than "
        f"{facts['min_seeds']} seeds could separate a pair" in flat
    )
    assert "it ranks nothing" in flat
    assert "Paired with" not in ran.output
    assert "cannot be told apart" not in ran.output
    assert "seeds: 0-1" in lines
    table = lines[:smoke]
    assert max(map(len, table)) <= 100
    assert "| method |" not in ran.output
    assert "| method |" in summary_md
    assert "OOMs total" not in ran.output
    assert "OOMs total" in summary_md
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    for method in ("random", "ts"):
        (row,) = [line for line in lines if line.startswith(f"{method} ")]
        cells = row.split()
        assert cells[1] == "2"  # runs
        # Every quarter of 11 but the last lies in the 10-row initial design.
        medians = [f"{summary.loc[method, 'regret_median@11']:.4f}"]
        assert "regret_median@8" not in summary.columns
        assert cells[2:3] == medians
        assert cells[3] == f"{100 * summary.loc[method, 'found_optimum']:.0f}%"


# -- checks before work, and what the terminal shows (issue 21.2, 21.4) -------------

table_path = _fixtures.table_path
registry = _fixtures.registry


def _refuse_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any comparison that starts running fails the test."""
    from bolt_pco64.bench import plan

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a comparison started: {args}")

    monkeypatch.setattr(plan, "execute_plan", started)


@pytest.mark.parametrize("problem", ["pco64", "all"])
def test_bench_refuses_a_reference_not_compared_before_anything_runs(
    problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_runs(monkeypatch)
    out = tmp_path / "out"
    args = ["bench", "--quick", "--problem", problem, "--reference", "qlogei"]
    result = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --reference: ")
    assert len(result.output.strip().splitlines()) == 1
    assert "'qlogei'" in result.output
    assert "random, qlognei, ts" in result.output  # what --quick compares
    assert not out.exists()


@pytest.mark.parametrize(
    ("options", "first", "named"),
    [
        (["--budget", "5", "--n-init", "10"], "--n-init", "--budget"),
        (["--n-init", "31", "--quick"], "--n-init", "--budget=30"),
        (["--budget", "100000"], "--budget", "rows"),
    ],
)
def test_bench_settings_errors_name_the_options(
    options: list[str],
    first: str,
    named: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _refuse_runs(monkeypatch)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["bench", *options, "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {first}: ")
    assert named in result.output
    assert "n_init" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_bench_default_reference_is_a_compared_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bolt_pco64.bench import comparison

    seen: list[object] = []

    def record(spec: object, *args: object, **kw: object) -> None:
        seen.append(spec.reference)  # type: ignore[attr-defined]
        raise ValueError("stopped by the test")

    monkeypatch.setattr(comparison, "run_comparison", record)
    for methods in ("qlognei,ts", "ts,random"):
        result = CliRunner().invoke(
            main, ["bench", "--methods", methods, "--out", str(tmp_path / "o")]
        )
        assert result.output == "Error: stopped by the test\n"
    assert seen == ["qlognei", "random"]


@pytest.mark.slow
def test_bench_with_one_method_says_there_is_nothing_to_compare(
    tmp_path: Path, table_path: Path
) -> None:
    out = tmp_path / "one"
    args = ["bench", "--methods", "random", "--seeds", "2", "--budget", "6"]
    args += ["--n-init", "4", "--table", str(table_path), "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    for text in (result.output, (out / "summary.md").read_text()):
        assert "random is the only method compared" in text
        assert "nothing to compare" in text
        assert "has no complete run" not in text


# -- help a person can read (issue 21.4) ----------------------------------------------


@pytest.mark.parametrize("width", [60, 80, 120])
def test_help_lists_commands_in_full(width: int) -> None:
    result = CliRunner().invoke(main, ["--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    commands = result.output.split("Commands:")[1]
    assert "..." not in commands
    text = " ".join(commands.split())
    for name, command in main.commands.items():
        assert command.short_help
        assert f"{name} {' '.join(command.short_help.split())}" in text


@pytest.mark.parametrize("width", [60, 80, 120])
def test_bench_help_lists_every_method_unbroken(width: int) -> None:
    from bolt_pco64.bench.methods.registry import method_names
    from bolt_pco64.bench.spec import DEFAULTS

    result = CliRunner().invoke(main, ["bench", "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    out = result.output
    assert max(map(len, out.splitlines())) <= width
    assert not re.search(r"\w-\n\s*\w", out)  # no line breaks at a hyphen
    listed = out.split("Methods (for --methods and --reference):")[1]
    names = [line.split()[0] for line in listed.splitlines() if line[:3].strip()]
    # Each registered and each entry-point method starts its own line, whole.
    assert sorted(names) == sorted(method_names())
    flat = " ".join(out.split())
    assert f"[default: {', '.join(DEFAULTS.methods)}]" in flat


def test_method_help_names_the_registered_methods(
    registry: Mapping[str, object],
) -> None:
    from bolt_pco64.bench import register_method
    from bolt_pco64.cli import METHOD_HELP

    assert sorted(METHOD_HELP) == sorted(registry)
    register_method("mine", lambda ctx: ctx.untried[: ctx.q])
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert re.search(r"^  mine\s+registered in this process$", result.output, re.M)


def _bench_args(table: Path, out: Path, methods: str) -> list[str]:
    return [
        "bench", "--methods", methods, "--seeds", "2", "--budget", "5",
        "--n-init", "4", "--table", str(table), "--out", str(out), "--no-progress",
    ]  # fmt: skip


@pytest.mark.slow
def test_bench_names_its_table_and_keeps_a_folder_s_earlier_methods(
    tmp_path: Path,
) -> None:
    table = tmp_path / "t.parquet"
    small_frame().to_parquet(table, index=False)
    out = tmp_path / "out"
    first = CliRunner().invoke(main, _bench_args(table, out, "random,naive"))
    assert first.exit_code == 0, first.output
    flat = " ".join(first.output.split())
    assert f"table: pco64, argument: {table}" in flat
    assert "rows," in flat
    assert "feasible)" in flat
    assert "also holds runs" not in flat
    # A rerun of one method into the used folder: the summary still compares
    # both, and the terminal says why.
    again = CliRunner().invoke(main, _bench_args(table, out, "random"))
    assert again.exit_code == 0, again.output
    assert "also holds runs of naive" in " ".join(again.output.split())
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["method"]) == ["random", "naive"]
    assert "| naive |" in (out / "summary.md").read_text()


def test_bench_refuses_a_method_named_twice(tmp_path: Path) -> None:
    got = CliRunner().invoke(
        main,
        ["bench", "--methods", "random,qlognei,random", "--out", str(tmp_path / "o")],
    )
    assert got.exit_code == 2
    assert "random more than once" in got.output
    assert not (tmp_path / "o").exists()


def test_ctrl_c_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bolt_pco64.bench import comparison

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison, "run_comparison", interrupted)
    table = tmp_path / "t.parquet"
    small_frame().to_parquet(table, index=False)
    out = tmp_path / "my out"
    got = CliRunner().invoke(main, _bench_args(table, out, "random,naive"))
    assert got.exit_code == 130
    assert "Aborted" not in got.output
    assert "rerun the same command with the same --out" in got.output
    command = got.output.strip().splitlines()[-1].strip()
    assert command.startswith("bolt-pco64 bench ")
    assert "--methods random,naive" in command
    assert "--seeds 2" in command
    assert "--no-progress" in command
    assert command.endswith(f"--out '{out}'")


def test_progress_bars_are_per_method_and_off_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bolt_pco64.bench.plan import _Bars

    totals: dict[str, int | None] = {"random": 60, "qlognei": 60, "ts": None}
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    off = _Bars(True, totals)
    assert list(off.bars) == list(totals)
    assert all(bar.disable for bar in off.bars.values())
    off.close()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    on = _Bars(True, totals)
    on.update("random", 7)
    on.update("qlognei", 2)
    assert [bar.n for bar in on.bars.values()] == [7, 2, 0]
    assert [bar.total for bar in on.bars.values()] == [60, 60, None]
    assert not any(bar.disable for bar in on.bars.values())
    on.close()
    assert _Bars(False, totals).bars == {}
