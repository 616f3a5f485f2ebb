"""Fixtures and helpers shared by the harness and BO tests.

A test module uses a fixture by binding it to a module name, e.g.
``problem = _fixtures.problem`` after ``from tests import _fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench import METHODS, Method
from tests._synth import make_table


@pytest.fixture(scope="module")
def problem() -> PCO64:
    """The synthetic table (72 rows, 24 of them OOM; the best rows border the
    OOM region) as a problem."""
    return PCO64(table=make_table(capacity=80.0))


@pytest.fixture(scope="module")
def table_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same synthetic table as a parquet file."""
    path = tmp_path_factory.mktemp("tables") / "synth.parquet"
    make_table(capacity=80.0).to_parquet(path, index=False)
    return path


@pytest.fixture
def registry() -> Iterator[Mapping[str, Method]]:
    """:data:`~bolt_pco64.bench.METHODS`; methods registered by a test are
    removed afterwards."""
    from bolt_pco64.bench import registry as module

    before = dict(module._registered)
    yield METHODS
    module._registered.clear()
    module._registered.update(before)


def observed(problem: PCO64, rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``X``, its noiseless throughput (NaN where OOM) and its memory margin."""
    X = problem.candidates()[rows]
    return X, problem.evaluate_true(X), problem.outcome_constraint(X)
