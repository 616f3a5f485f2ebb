"""Fixtures and helpers shared by the harness and BO tests.

A test module uses a fixture by binding it to a module name, e.g.
``problem = _fixtures.problem`` after ``from tests import _fixtures``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pytest
import torch

from bolt_pco64 import PCO64
from bolt_pco64.bench import METHODS, Method
from bolt_pco64.instances import Instance
from bolt_pco64.tables.reconstruct.impute import Imputation, encoded, prediction_set
from tests._synth import make_table

#: The marks of a test module that serves a default table on purpose: the
#: package's notices about the table it serves, errors elsewhere in the suite
#: (pyproject.toml), are expected there.
DEFAULT_TABLES = [
    pytest.mark.filterwarnings(f"ignore::bolt_pco64.tables.table.{name}")
    for name in ("SimulatedTableWarning", "ReconstructedTableWarning")
]


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
    from bolt_pco64.bench.methods import registry as module

    before = dict(module._registered)
    yield METHODS
    module._registered.clear()
    module._registered.update(before)


#: The eight bytes a PNG file starts with.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@contextmanager
def figures_unrendered() -> Iterator[None]:
    """Matplotlib figures drawn but neither laid out nor rendered: ``savefig``
    writes only the eight bytes of :data:`PNG_SIGNATURE` (which
    :func:`png_size` refuses), ``tight_layout`` does nothing.

    For tests of the text a report writes from its records, where laying out
    and encoding the report's figures took most of the time (about 0.5 CPU-s
    a figure). The figures have tests of their own (tests/test_plots.py,
    test_costmetrics.py, test_report_protocol.py and the reports' PNG checks),
    which never run under this.
    """
    from matplotlib.figure import Figure

    def signature_only(
        self: Figure, fname: str | Path | IO[bytes], *args: object, **kwargs: object
    ) -> None:
        if isinstance(fname, (str, Path)):
            Path(fname).write_bytes(PNG_SIGNATURE)
        else:
            fname.write(PNG_SIGNATURE)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", signature_only)
        patch.setattr(Figure, "tight_layout", lambda self, *args, **kwargs: None)
        yield


def png_size(path: Path) -> tuple[int, int]:
    """The width and height in pixels of the PNG image ``path``, from its
    header (IHDR chunk); fails the test if ``path`` is not a PNG file."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"Expected a PNG file, got {path}"
    assert head[12:16] == b"IHDR", f"Expected a PNG header in {path}"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def observed(problem: PCO64, rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``X``, its noiseless throughput (NaN where OOM) and its memory margin."""
    X = problem.candidates()[rows]
    return X, problem.evaluate_true(X), problem.outcome_constraint(X)


class NearestRow:
    """A cheap imputation fitter (:data:`~bolt_pco64.tables.reconstruct.impute.Fitter`)
    for cross-validation tests: a configuration gets the feasibility of its
    nearest fitted row (encoded inputs, Euclidean), the throughput and peak
    memory of its nearest fitted row that ran, and a standard error of
    ``0.01 (1 + distance)`` to it.

    Args:
        instance: The instance of the rows.
        peak_mem: Predict peak memory (else NaN, as the CV's baseline).

    Attributes:
        fitted: The rows of each fit, in call order.
    """

    def __init__(self, instance: Instance, peak_mem: bool = True) -> None:
        self.instance = instance
        self.peak_mem = peak_mem
        self.fitted: list[pd.DataFrame] = []

    def __call__(self, rows: pd.DataFrame) -> Callable[[np.ndarray], Imputation]:
        self.fitted.append(rows)
        X = encoded(rows, self.instance)
        ran = rows["ran_successfully"].to_numpy(dtype=bool)
        tm = rows["throughput_mean"].to_numpy()
        pm = rows["peak_mem"].to_numpy()
        with_mem = self.peak_mem

        def predict(Xnew: np.ndarray) -> Imputation:
            d = np.sqrt(((Xnew[:, None, :] - X[None, :, :]) ** 2).sum(-1))
            near = d.argmin(axis=1)
            near_ran = np.where(ran[None, :], d, np.inf).argmin(axis=1)
            dist = d[np.arange(len(Xnew)), near_ran]
            mem = pm[near_ran] if with_mem else np.full(len(Xnew), np.nan)
            runs, fails = prediction_set(ran[near].astype(np.float64))
            return Imputation(
                feasible_probability=ran[near].astype(np.float64),
                feasible=ran[near],
                set_runs=runs,
                set_fails=fails,
                throughput=tm[near_ran],
                throughput_se=0.01 * (1 + dist),
                peak_mem=mem,
                peak_mem_se=np.zeros(len(Xnew)),
            )

        return predict
