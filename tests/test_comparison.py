"""The one comparison entry point: ComparisonSpec, run_comparison and its table sets."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bolt_pco64.bench import (
    DEFAULTS,
    QUICK,
    ComparisonSpec,
    ComparisonSpecError,
    Family,
    SingleTable,
    StandinVariants,
    run_comparison,
)
from bolt_pco64.cli import main
from bolt_pco64.tables.standins import STANDIN_VARIANTS
from bolt_pco64.tables.table import SimulatedTableWarning
from tests import _fixtures

TIMING = ["fit_seconds", "acq_seconds"]

table_path = _fixtures.table_path


def test_the_default_preset_is_the_spec_s_defaults() -> None:
    spec = ComparisonSpec()
    assert DEFAULTS.spec() == spec
    assert spec.describe() == DEFAULTS.describe()
    assert spec.seeds == DEFAULTS.seed_list
    assert spec.budget_hours is None
    assert spec.reference == "random"
    quick = QUICK.spec(seeds=2)
    assert (quick.methods, quick.seeds, quick.budget) == (QUICK.methods, (0, 1), 30)
    assert QUICK.spec(budget_hours=5.0).budget is None


def test_the_spec_holds_the_checked_values_and_is_frozen() -> None:
    spec = ComparisonSpec("random", seeds=[4, 2], budget_hours=3.5, n_init=2)
    assert spec.methods == ("random",)  # one method, not its letters
    assert spec.seeds == (4, 2)
    assert spec.budget is None  # a GPU-hour budget has no evaluation budget
    assert spec.reference == "random"
    assert spec.config.budget_hours == 3.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.q = 2  # type: ignore[misc]
    again = dataclasses.replace(spec, budget_hours=None, budget=7)
    assert (again.budget, again.config.clock_budget().evaluations) == (7, 7)
    with pytest.raises(ComparisonSpecError, match="'ts' more than once"):
        ComparisonSpec(["ts", "random", "ts"])


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"q": 0}, "Expected q to be an integer >= 1, got 0."),
        ({"workers": 1.5}, "Expected workers to be an integer >= 1, got 1.5."),
        ({"budget": 5, "n_init": 6}, "Expected n_init <= budget"),
        ({"budget": 5, "budget_hours": 1.0}, "Expected one of budget"),
        ({"seeds": 0}, "Expected seeds to be an integer >= 1"),
        ({"noise": -1.0}, "Expected noise None"),
        ({"early_stop": "sometimes"}, "Expected early_stop one of"),
        ({"methods": ["random", "nope"]}, "Expected methods from"),
        ({"methods": ["random"], "reference": "ts"}, "Expected reference to be one"),
    ],
)
def test_a_bad_setting_is_refused_when_the_spec_is_made(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ComparisonSpecError, match="^" + message.replace(".", r"\.")):
        ComparisonSpec(**settings)  # type: ignore[arg-type]


def test_a_table_smaller_than_the_budget_is_refused_before_anything_is_written(
    tmp_path: Path, table_path: Path
) -> None:
    spec = ComparisonSpec(["random"], seeds=1, budget=1000, n_init=2)
    with pytest.raises(ComparisonSpecError, match="budget <= the table's 72 rows"):
        run_comparison(spec, table_path, out=tmp_path / "o", progress=False)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "tables", [Family(("pco16", "pco32")), StandinVariants("pco64")], ids=repr
)
def test_several_tables_need_a_budget_in_evaluations(
    tables: object, tmp_path: Path
) -> None:
    spec = ComparisonSpec(["random"], seeds=1, budget_hours=5.0, n_init=2)
    with pytest.raises(ComparisonSpecError, match="budget in evaluations"):
        run_comparison(spec, tables, out=tmp_path / "o")  # type: ignore[call-overload]
    assert not (tmp_path / "o").exists()


def _seconds(summary: pd.DataFrame) -> list[str]:
    return [c for c in summary.columns if "seconds" in c]


@pytest.mark.slow
@pytest.mark.usefixtures("unrendered_figures")
def test_one_spec_runs_on_each_table_set(tmp_path: Path, table_path: Path) -> None:
    spec = ComparisonSpec(["random", "ts"], seeds=2, budget=4, n_init=3)
    one = run_comparison(spec, SingleTable(table_path), out=tmp_path / "one")
    variants = list(STANDIN_VARIANTS["pco64"][:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        several = run_comparison(
            spec, StandinVariants("pco64", variants), out=tmp_path / "v"
        )
    assert list(several.results) == variants
    assert (tmp_path / "v" / "robustness.md").is_file()
    marker = json.loads((tmp_path / "v" / "report.json").read_text())
    assert marker == {"combined": "variants", "problem": "pco64", "variants": variants}
    for variant, result in several.results.items():
        meta = json.loads((result.out / "meta.json").read_text())
        assert meta["arguments"]["standin"] == variant
        assert meta["config"]["budget"] == spec.budget
        assert set(result.records["method"]) == set(spec.methods)
    assert set(one.records["method"]) == set(spec.methods)
    assert len(one.records) == len(spec.methods) * len(spec.seeds) * 4


@pytest.mark.usefixtures("unrendered_figures")
def test_the_cli_goes_through_the_entry_point_without_a_deprecation(
    tmp_path: Path, table_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bolt_pco64.bench import comparison

    seen: list[ComparisonSpec] = []
    real = comparison.run_comparison

    def spy(spec: ComparisonSpec, *args: object, **kw: object) -> object:
        seen.append(spec)
        return real(spec, *args, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(comparison, "run_comparison", spy)
    args = ["bench", "--methods", "random", "--seeds", "1", "--budget", "4"]
    args += ["--n-init", "2", "--table", str(table_path), "--no-progress"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert [s.budget for s in seen] == [4]
    ours = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert not [w for w in ours if "bolt_pco64" in str(w.message)]
