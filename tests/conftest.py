"""Shared fixtures: small tables on disk, isolation from the user's environment,
what a fresh interpreter loads when it imports the core package, and one
thread per test process."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import torch
from threadpoolctl import threadpool_limits

import bolt_pco64
from bolt_pco64.instances import INSTANCES
from bolt_pco64.tables import locations as locations_module
from tests._fixtures import figures_unrendered
from tests._tables import small_frame

#: The variables that size torch's and the BLAS libraries' thread pools: one
#: thread each in the subprocesses tests start (see :func:`_one_thread`).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
for _variable in THREAD_VARIABLES:
    os.environ.setdefault(_variable, "1")


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> None:
    """One thread per test process, for torch and every BLAS library loaded
    (as ``bolt_pco64.bench.run.one_thread_everywhere`` does for a run).

    pytest-xdist runs a process per core; pools of a thread per core in each
    would share the cores (the suite's small GP fits took three to eight
    times longer on two threads than on one, on a busy two-core machine). A
    session fixture, so that only processes that run tests import BoTorch.
    """
    import botorch.optim.batched_lbfgs_b  # noqa: F401 - loads SciPy's BLAS
    import scipy.linalg  # noqa: F401

    torch.set_num_threads(1)
    threadpool_limits(limits=1)


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
def unrendered_figures() -> Iterator[None]:
    """The test's figures drawn but not rendered
    (:func:`tests._fixtures.figures_unrendered`): for a test of what a report
    writes, not of its figures."""
    with figures_unrendered():
        yield


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


#: Subpackages outside the core: each imports its own optional framework.
OPTIONAL = ("bolt_pco64.integrations",)


@pytest.fixture(scope="session")
def core_imports() -> frozenset[str]:
    """Every module loaded in a fresh interpreter after importing every core
    module of the package (all but :data:`OPTIONAL` and ``__main__``).

    One subprocess for the session: the optional frameworks' tests each check
    that their framework is not among them.
    """
    core = [
        m.name
        for m in pkgutil.walk_packages(bolt_pco64.__path__, "bolt_pco64.")
        if not m.name.startswith(OPTIONAL) and m.name != "bolt_pco64.__main__"
    ]
    if "bolt_pco64.problem" not in core or "bolt_pco64.cli" not in core:
        raise AssertionError(f"Expected the core's subpackages, got {core}.")
    code = (
        "import importlib, sys\n"
        f"for name in {core!r}: importlib.import_module(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return frozenset(out.stdout.split())
