"""Robustness of a comparison across stand-in variants (issue 23 point 2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bolt_pco64.bench.variants import agreement, rank_agreement
from bolt_pco64.cli import main

SEEDS = range(8)


def _records(final: dict[str, float]) -> pd.DataFrame:
    """Two evaluations per run; every seed of a method ends at ``final[method]``."""
    rows = [
        {"method": m, "seed": s, "iteration": i, "regret": 1.0 if i == 1 else r}
        for m, r in final.items()
        for s in SEEDS
        for i in (1, 2)
    ]
    return pd.DataFrame(rows).assign(_fill=1.0, _budget=2)


def test_a_conclusion_holds_only_if_every_variant_agrees() -> None:
    same = {"a": _records({"x": 0.0, "y": 0.5}), "b": _records({"x": 0.1, "y": 0.6})}
    pairs = agreement(same, ["x", "y"])
    assert list(pairs["variant"]) == ["a", "b"]
    assert (pairs["direction"] == 1).all()  # x has lower regret on every seed
    assert (pairs["holds"] == "yes").all()
    flipped = {**same, "c": _records({"x": 0.6, "y": 0.1})}
    pairs = agreement(flipped, ["x", "y"])
    assert pairs.set_index("variant")["direction"].to_dict() == {
        "a": 1,
        "b": 1,
        "c": -1,
    }
    assert (pairs["holds"] == "no").all()
    # Not significant on one variant (a tie) is not agreement either.
    tied = {**same, "c": _records({"x": 0.3, "y": 0.3})}
    assert (agreement(tied, ["x", "y"])["holds"] == "no").all()


def test_rank_agreement_is_kendalls_tau() -> None:
    a = _records({"x": 0.0, "y": 0.2, "z": 0.4})
    b = _records({"x": 0.1, "y": 0.3, "z": 0.5})
    c = _records({"x": 0.4, "y": 0.2, "z": 0.0})
    taus = rank_agreement({"a": a, "b": b, "c": c}).set_index(["variant", "other"])
    assert taus.loc[("a", "b"), "tau"] == pytest.approx(1.0)
    assert taus.loc[("a", "c"), "tau"] == pytest.approx(-1.0)
    assert (taus["methods"] == 3).all()


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--standin", "nope"], "Expected a stand-in variant"),
        (["--standin", "all", "--problem", "all"], "expected one --problem"),
    ],
)
def test_bench_standin_refuses_bad_use(
    tmp_path: Path, extra: list[str], match: str
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["bench", "--methods", "random", "--out", str(out), *extra]
    )
    assert result.exit_code == 2
    assert match in result.output
    assert not out.exists()


@pytest.mark.slow
def test_bench_standin_all_runs_every_variant_and_reports_agreement(
    tmp_path: Path,
) -> None:
    from bolt_pco64.tables.standins import STANDIN_VARIANTS

    out = tmp_path / "out"
    args = ["--methods", "random,naive", "--seeds", "2", "--budget", "4"]
    result = CliRunner().invoke(
        main,
        ["bench", "--standin", "all", *args, "--n-init", "2", "--out", str(out),
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for variant in STANDIN_VARIANTS["pco64"]:
        runs = pd.read_parquet(out / variant / "runs.parquet")
        assert sorted(runs["method"].unique()) == ["naive", "random"]
    assert (out / "robustness.md").is_file()
    assert "Kendall" in (out / "robustness.md").read_text()
