"""Shared fixtures: small tables on disk, and isolation from the user's environment."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bolt_pco64.instances import INSTANCES
from bolt_pco64.tables import locations as locations_module
from tests._tables import small_frame


@pytest.fixture(autouse=True)
def _isolated_sources(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test sees the user's BOLT_PCO64_TABLE, data home or a measured table."""
    for instance in INSTANCES.values():
        monkeypatch.delenv(instance.env_table, raising=False)
    monkeypatch.setenv(
        locations_module.ENV_HOME, str(tmp_path_factory.mktemp("data_home"))
    )


@pytest.fixture
def frame() -> pd.DataFrame:
    return small_frame(seed=0)


@pytest.fixture
def csv_path(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "sweep.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def parquet_path(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "sweep.parquet"
    frame.to_parquet(path, index=False)
    return path
