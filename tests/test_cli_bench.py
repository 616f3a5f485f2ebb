"""``bolt-pco64 bench``'s defaults, ``--seeds``, ``--lane-width`` and what the
terminal concludes (the protocol's verdict, or a smoke test's none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bolt_pco64.bench.protocol import PROTOCOL_SEEDS
from bolt_pco64.bench.spec import DEFAULTS, QUICK
from bolt_pco64.cli import main
from tests import _fixtures

table_path = _fixtures.table_path


def _captured(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What ``bench`` hands :func:`run_comparison` (which then stops)."""
    from bolt_pco64.bench import comparison

    seen: list[dict[str, Any]] = []

    def record(spec: Any, tables: Any, **kw: Any) -> None:
        seen.append({"spec": spec, **kw})
        raise ValueError("stopped by the test")

    monkeypatch.setattr(comparison, "run_comparison", record)
    return seen


def _bench(*args: str) -> Any:
    return CliRunner().invoke(main, ["bench", *args])


def test_bench_without_options_runs_the_protocol_s_design(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _captured(monkeypatch)
    assert _bench("--out", str(tmp_path / "o")).output == (
        "Error: stopped by the test\n"
    )
    (call,) = seen
    spec = call["spec"]
    assert spec == DEFAULTS.spec()
    assert spec.seeds == tuple(PROTOCOL_SEEDS)
    assert not set(spec.seeds) & set(range(20))  # not the seeds that chose it
    assert spec.budget == 100
    assert spec.methods == (
        "random", "qlognei", "qlogei", "ts", "naive", "gpc_ei", "tobit_ei", "gpc_pof",
    )  # fmt: skip
    assert call["lane_width"] == 32
    # The explicit seed list is what meta.json records as the arguments.
    assert call["arguments"]["seeds"] == list(range(1000, 1100))
    assert call["arguments"]["lane_width"] == 32


def test_quick_stays_a_small_smoke_test(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _captured(monkeypatch)
    _bench("--quick", "--out", str(tmp_path / "o"))
    spec = seen[0]["spec"]
    assert (spec.methods, spec.seeds, spec.budget) == (
        QUICK.methods,
        QUICK.seed_list,
        QUICK.budget,
    )
    assert len(spec.seeds) * len(spec.methods) <= 10
    help_text = " ".join(_bench("--help").output.split())
    assert "--quick A smoke test, too few seeds to compare" in help_text


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("20", tuple(range(20))),
        ("1000-1004", (1000, 1001, 1002, 1003, 1004)),
        ("7-7", (7,)),
        ("3,5,9", (3, 5, 9)),
        ("0-2, 10 ,20-21", (0, 1, 2, 10, 20, 21)),
    ],
)
def test_seeds_take_a_count_a_range_or_a_list(
    text: str,
    seeds: tuple[int, ...],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seen = _captured(monkeypatch)
    _bench("--seeds", text, "--out", str(tmp_path / "o"))
    assert seen[0]["spec"].seeds == seeds
    assert seen[0]["arguments"]["seeds"] == list(seeds)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0", "got '0'"),
        ("abc", "got 'abc'"),
        ("9-3", "got '9-3'"),
        ("-4", "got '-4'"),
        ("1-2-3", "got '1-2-3'"),
        ("1,,2", "got '1,,2'"),
        ("3,5,3", "expected distinct seeds, got 3 more than once"),
        ("1-4,2", "got 2 more than once"),
    ],
)
def test_bad_seeds_are_a_usage_error_naming_the_option(
    text: str, says: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _captured(monkeypatch)
    got = _bench("--seeds", text, "--out", str(tmp_path / "o"))
    assert got.exit_code == 2
    assert "Invalid value for '--seeds'" in got.output
    assert says in got.output
    if "distinct" not in says and "more than once" not in says:
        assert "expected a count (20), a range (1000-1099) or a list (3,5,9)" in (
            got.output
        )
    assert seen == []
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("given", "width"), [([], 32), (["1"], 1), (["none"], None), (["NONE"], None)]
)
def test_lane_width_is_on_by_default_and_none_runs_one_at_a_time(
    given: list[str],
    width: int | None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seen = _captured(monkeypatch)
    option = ["--lane-width", *given] if given else []
    _bench(*option, "--quick", "--out", str(tmp_path / "o"))
    assert seen[0]["lane_width"] == width
    assert seen[0]["arguments"]["lane_width"] == width


@pytest.mark.parametrize("text", ["0", "-1", "x", "2.5"])
def test_a_bad_lane_width_names_the_option(text: str, tmp_path: Path) -> None:
    got = _bench("--lane-width", text, "--out", str(tmp_path / "o"))
    assert got.exit_code == 2
    assert "Invalid value for '--lane-width'" in got.output
    assert "an integer >= 1, or 'none'" in got.output


def test_ctrl_c_resume_command_repeats_seeds_and_lane_width(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bolt_pco64.bench import comparison

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison, "run_comparison", interrupted)
    out = tmp_path / "o"
    got = _bench("--seeds", "1000-1004,1010", "--lane-width", "none", "--out", str(out))
    assert got.exit_code == 130
    command = got.output.strip().splitlines()[-1].strip()
    assert "--seeds 1000-1004,1010" in command
    assert "--lane-width none" in command


def _protocol_json(out: Path, smoke: bool, groups: dict[str, list[list[str]]]) -> None:
    endpoints = [
        {"name": "evals_to_optimum", "label": "evaluations to the optimum",
         "role": "primary"},
        {"name": "regret_auc", "label": "area under the regret curve",
         "role": "co-primary"},
    ]  # fmt: skip
    facts = {
        "design": {"alpha": 0.05, "seeds": [1000, 1100]},
        "methods": ["random", "qlognei", "ts"],
        "seeds": list(range(1000, 1040)),
        "smoke": smoke,
        "min_seeds": 7,
        "family_pairs": 3,
        "endpoints": endpoints,
        "groups": groups,
    }
    (out / "protocol.json").write_text(json.dumps(facts))


def test_the_terminal_gives_the_protocol_s_groups_when_it_compares(
    tmp_path: Path,
) -> None:
    import pandas as pd

    from bolt_pco64.cli.bench_lines import verdict_lines

    summary = pd.DataFrame({"method": ["random", "qlognei"], "runs": [40, 40]})
    groups = {
        "evals_to_optimum": [["random", "qlognei", "ts"]],
        "regret_auc": [["ts", "qlognei"], ["random"]],
    }
    _protocol_json(tmp_path, False, groups)
    lines = verdict_lines(tmp_path, "random", ["random", "qlognei"], summary)
    assert lines[0].startswith("Which methods differ (the protocol, 40 seeds;")
    assert "  Underpowered: 40 seeds, fewer than the design's 100." in lines
    assert (
        "  evaluations to the optimum (primary): one group, no pair separated" in lines
    )
    assert "  area under the regret curve (co-primary): a: qlognei, ts | b: random" in (
        lines
    )
    _protocol_json(tmp_path, True, {})
    both = ["random", "qlognei"]
    smoke = " ".join(verdict_lines(tmp_path, "random", both, summary))
    assert smoke.startswith("Smoke test: no comparison. 40 seeds: with 3 methods")
    assert "fewer than 7 seeds" in smoke
    assert "Which methods differ" not in smoke
    assert "Paired with" not in smoke
    # One method: nothing to compare, whatever the protocol wrote.
    alone = verdict_lines(tmp_path, "random", ["random"], summary)
    assert len(alone) == 1
    assert "random is the only method compared" in alone[0]


@pytest.mark.slow
def test_a_folder_made_in_lanes_refuses_a_one_at_a_time_resume(
    tmp_path: Path, table_path: Path
) -> None:
    out = tmp_path / "o"
    args = ["--methods", "random,qlognei", "--seeds", "3-4", "--budget", "5"]
    args += ["--n-init", "4", "--table", str(table_path), "--out", str(out)]
    args += ["--no-progress"]
    first = _bench(*args)
    assert first.exit_code == 0, first.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["arguments"]["seeds"] == [3, 4]
    assert meta["lanes"]["lane_width"] == 32
    mixed = _bench(*args, "--lane-width", "none")
    assert mixed.exit_code == 2
    assert mixed.output.startswith("Error: --lane-width: expected the runs of qlognei")
    flat = " ".join(mixed.output.split())
    assert "made in lanes (--lane-width 32)" in flat
    assert "Pass --lane-width 32 to resume" in flat
    assert len(mixed.output.strip().splitlines()) == 1
    # Another lane width gives each seed the same records: it resumes.
    again = _bench(*args, "--lane-width", "2")
    assert again.exit_code == 0, again.output
    assert "0 run(s) done, 4 resumed" in again.output


def test_a_family_names_the_problems_that_are_smoke_tests(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from bolt_pco64.cli.bench_lines import smoke_family_line

    parts = {}
    for name, smoke in (("pco16", True), ("pco32", False), ("pco64", True)):
        (tmp_path / name).mkdir()
        _protocol_json(tmp_path / name, smoke, {})
        parts[name] = SimpleNamespace(out=tmp_path / name)
    text = " ".join(smoke_family_line(parts))
    assert text.startswith("Smoke test: no comparison (pco16, pco64 have too few")
    del parts["pco16"], parts["pco64"]
    assert smoke_family_line(parts) == []
