"""The package's registries are read-only, and a look-up takes ``registry=``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import torch

from bolt_pco64 import INSTANCES, PROBLEMS, get_instance
from bolt_pco64.bench import ComparisonSpec, RunContext, run_comparison
from bolt_pco64.bench.methods import BUILTIN_METHODS, BUILTINS
from bolt_pco64.bench.methods.registry import METHODS, method_names
from bolt_pco64.bench.report.cost import COST_AXES
from bolt_pco64.bo.early_stop import EARLY_STOP_POLICIES
from bolt_pco64.bo.prior.base import PRIORS
from bolt_pco64.instances import ABSENT_KNOBS, KNOBS
from bolt_pco64.tables.estimators import THROUGHPUT_UNITS
from bolt_pco64.tables.reconstruct.registry import reconstruction_registry
from bolt_pco64.tables.standins import STANDIN_VARIANTS, standin_registry
from tests import _fixtures

table_path = _fixtures.table_path

REGISTRIES: dict[str, Mapping[str, object]] = {
    "INSTANCES": INSTANCES,
    "PROBLEMS": PROBLEMS,
    "THROUGHPUT_UNITS": THROUGHPUT_UNITS,
    "STANDIN_VARIANTS": STANDIN_VARIANTS,
    "BUILTINS": BUILTINS,
    "BUILTIN_METHODS": BUILTIN_METHODS,
    "METHODS": METHODS,
    "standin_registry()": standin_registry(),
    "reconstruction_registry()": reconstruction_registry(),
    "KNOBS": KNOBS,
    "ABSENT_KNOBS": ABSENT_KNOBS,
    "EARLY_STOP_POLICIES": EARLY_STOP_POLICIES,
    "PRIORS": PRIORS,
    "COST_AXES": COST_AXES,
}


@pytest.mark.parametrize("name", list(REGISTRIES))
def test_a_registry_cannot_be_changed_in_place(name: str) -> None:
    registry = REGISTRIES[name]
    with pytest.raises(TypeError):
        registry["mine"] = None  # type: ignore[index]
    with pytest.raises((TypeError, AttributeError)):
        registry.pop("pco64")  # type: ignore[attr-defined]
    assert "mine" not in registry


def test_get_instance_looks_names_up_in_the_registry_given() -> None:
    mine = {"my_cluster": INSTANCES["pco16"]}
    assert get_instance("my_cluster", registry=mine) is INSTANCES["pco16"]
    with pytest.raises(ValueError, match=r"of \['my_cluster'\], got 'pco64'"):
        get_instance("pco64", registry=mine)
    assert get_instance("pco64") is INSTANCES["pco64"]


@pytest.mark.usefixtures("unrendered_figures")
def test_a_comparison_runs_the_methods_of_the_registry_it_is_given(
    tmp_path: Path, table_path: Path
) -> None:
    def first_untried(ctx: RunContext) -> torch.Tensor:
        return ctx.available[: ctx.q]

    mine = {"first_untried": first_untried}
    spec = ComparisonSpec(["first_untried"], seeds=1, budget=4, n_init=2, registry=mine)
    assert spec.reference == "first_untried"
    assert "first_untried" not in method_names()
    result = run_comparison(spec, table_path, out=tmp_path / "o", progress=False)
    assert result.errors == {}
    assert len(result.records) == 4
    with pytest.raises(ValueError, match="Expected methods from"):
        ComparisonSpec(["random"], seeds=1, budget=4, n_init=2, registry=mine)
