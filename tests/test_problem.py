"""The BoTorch test problem and its outcome constraint (docs/architecture.md §2)."""

from __future__ import annotations

import functools
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from botorch.test_functions.base import ConstrainedBaseTestProblem
from botorch.test_functions.synthetic import SyntheticTestFunction
from botorch.utils.testing import (
    BaseTestProblemTestCaseMixIn,
    BotorchTestCase,
    ConstrainedTestProblemTestCaseMixin,
    SyntheticTestFunctionTestCaseMixin,
)

from bolt_pco64 import PCO64, PCOOutcomeConstraint, load_table
from bolt_pco64.tables.locations import bundled_table_path
from bolt_pco64.tables.table import SimulatedTableWarning, Table
from tests._tables import PAD, frame_from, small_frame

INPUT_COLUMNS = PCO64.instance.input_columns


def _stand_in_available() -> bool:
    try:
        bundled_table_path()
    except FileNotFoundError:
        return False
    return True


@functools.cache
def _stand_in() -> Table:
    """The shipped stand-in, read from its file once per process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        return load_table(bundled_table_path())


def _problems() -> list[PCO64]:
    problems = [
        PCO64(table=small_frame(seed=1)),
        PCO64(table=small_frame(seed=2), negate=True),
        PCO64(table=small_frame(seed=3), noise_std=0.01),
    ]
    if _stand_in_available():
        problems.append(PCO64(table=_stand_in()))
    return problems


class TestPCO64BoTorchMixins(
    BotorchTestCase,
    BaseTestProblemTestCaseMixIn,
    SyntheticTestFunctionTestCaseMixin,
    ConstrainedTestProblemTestCaseMixin,
):
    """BoTorch's own test mixins, on hand-built tables and on the shipped stand-in.

    The problems are built when a test runs (fresh for each), not at
    collection; the stand-in's table is read once.
    """

    @functools.cached_property
    def functions(self) -> list[PCO64]:  # type: ignore[override]
        return _problems()


# -- expectations computed independently from the DataFrame ---------------------------


@pytest.fixture
def problem(frame: pd.DataFrame) -> PCO64:
    return PCO64(table=frame)


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    enc = frame.copy()
    enc["zero_stage"] = enc["zero_stage"].map({0: 0, 2: 1, 3: 2})
    return enc.sort_values(list(INPUT_COLUMNS)).reset_index(drop=True)


def test_problem_is_a_constrained_botorch_maximisation_problem(
    problem: PCO64,
) -> None:
    assert isinstance(problem, SyntheticTestFunction)
    assert isinstance(problem, ConstrainedBaseTestProblem)
    C = problem.candidates()
    assert C.shape[-1] == problem.dim == problem.bounds.shape[-1]
    assert problem.evaluate_slack_true(C).shape == (len(C), problem.num_constraints)
    # maximisation: the optimum is the largest value over the candidates
    best = problem(C).nan_to_num(nan=-math.inf).max().item()
    assert problem.optimal_value == best
    assert problem.is_minimization_problem is False


def test_bounds_optimum_and_worst_come_from_the_table(
    problem: PCO64, frame: pd.DataFrame
) -> None:
    enc = _canonical(frame)
    X = enc[list(INPUT_COLUMNS)].to_numpy(dtype=float)
    assert problem.bounds.tolist() == [X.min(0).tolist(), X.max(0).tolist()]
    ok = enc[enc["ran_successfully"]]
    assert problem.optimal_value == ok["throughput_mean"].max()
    assert problem.worst_feasible_value == ok["throughput_mean"].min()
    best = ok.loc[ok["throughput_mean"].idxmax(), list(INPUT_COLUMNS)].to_numpy(
        dtype=float
    )
    assert problem.optimizers.tolist() == [best.tolist()]
    assert problem.is_minimization_problem is False


def test_candidates_are_the_table_in_canonical_order(
    problem: PCO64, frame: pd.DataFrame
) -> None:
    enc = _canonical(frame)
    C = problem.candidates()
    assert C.shape == (len(frame), 8)
    assert C.dtype == torch.double
    assert C.tolist() == enc[list(INPUT_COLUMNS)].to_numpy(dtype=float).tolist()


def test_values_at_candidates_are_throughput_with_nan_on_oom(
    problem: PCO64, frame: pd.DataFrame
) -> None:
    enc = _canonical(frame)
    y = problem(problem.candidates())
    expected = torch.tensor(enc["throughput_mean"].to_numpy(dtype=float))
    assert torch.equal(
        torch.isnan(y), torch.tensor(~enc["ran_successfully"].to_numpy())
    )
    assert torch.equal(y[~torch.isnan(y)], expected[~torch.isnan(expected)])


def test_continuous_points_snap_to_the_nearest_row() -> None:
    configs = [
        (1, 0, 0, 0, 0, 6, 0, 0),
        (3, 0, 0, 0, 0, 6, 0, 0),
        (1, 2, 0, 0, 0, 6, 0, 0),
    ]
    f = PCO64(table=frame_from(configs, [0.1, 0.3, None]))
    X = torch.tensor(
        [
            [1.2, 0.1, 0, 0, 0, 6, 0, 0],  # nearest (1,0)
            [2.9, 0.0, 0, 0, 0, 6, 0, 0],  # nearest (3,0)
            [1.0, 1.9, 0, 0, 0, 6, 0, 0],  # nearest (1,2): OOM
        ],
        dtype=torch.double,
    )
    y = f(X)
    assert y[0].item() == 0.1
    assert y[1].item() == 0.3
    assert math.isnan(y[2].item())
    assert f.lookup(X).tolist() == [0, 2, 1]  # canonical: (1,0) < (1,2) < (3,0)


def test_ties_go_to_the_earliest_canonical_row() -> None:
    configs = [(3, 0, 0, 0, 0, 6, 0, 0), (1, 0, 0, 0, 0, 6, 0, 0)]
    f = PCO64(table=frame_from(configs, [0.3, 0.1]))
    midpoint = torch.tensor([[2.0, 0, 0, 0, 0, 6, 0, 0]], dtype=torch.double)
    assert f(midpoint).item() == 0.1  # dp=1 row is first in canonical order
    # in float32 as well
    assert f(midpoint.float()).item() == pytest.approx(0.1)
    assert f.lookup(midpoint.float()).tolist() == [0]


def test_result_follows_x_dtype_device_and_shape(problem: PCO64) -> None:
    C = problem.candidates()
    for dtype in (torch.float32, torch.float64):
        X = C[:6].to(dtype).reshape(2, 3, 8)
        y = problem(X)
        assert y.shape == (2, 3)
        assert y.dtype == dtype
        assert y.device == X.device
    y_int = problem(C[:4].long())
    assert y_int.dtype == torch.double
    assert torch.equal(y_int.isnan(), problem(C[:4]).isnan())


def test_empty_batch_gives_empty_result(problem: PCO64) -> None:
    assert problem(torch.empty(0, 8, dtype=torch.double)).shape == (0,)
    assert problem.outcome_constraint(torch.empty(3, 0, 8)).shape == (3, 0)
    assert problem.lookup(torch.empty(0, 8)).shape == (0,)


@pytest.mark.parametrize(
    ("X", "error", "pattern"),
    [
        (torch.zeros(3, 7), ValueError, r"shape `batch_shape x 8`, got \(3, 7\)"),
        (torch.zeros(()), ValueError, r"shape `batch_shape x 8`"),
        ([[1.0] * 8], TypeError, "torch.Tensor, got list"),
        (torch.ones(2, 8, dtype=torch.bool), TypeError, "torch.bool"),
    ],
)
def test_bad_shapes_and_types_are_refused(
    problem: PCO64, X: object, error: type, pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        problem(X)  # type: ignore[arg-type]


def test_nan_inf_and_out_of_bounds_name_the_entry(problem: PCO64) -> None:
    X = problem.candidates()[:3].clone()
    X[1, 4] = float("nan")
    with pytest.raises(
        ValueError, match=r"finite values.*X\[1, 4\] = nan \(log2_sp_size\)"
    ):
        problem(X)
    X[1, 4] = float("inf")
    with pytest.raises(ValueError, match=r"finite values.*X\[1, 4\]"):
        problem.outcome_constraint(X)
    X = problem.candidates()[:3].clone()
    X[2, 5] = problem.bounds[1, 5] + 0.5
    with pytest.raises(
        ValueError, match=r"within the bounds.*X\[2, 5\].*\(log2_dp_bucket_size_mb\)"
    ):
        problem(X)
    # Every public method validates once, with the same located message.
    value = re.escape(repr(X[2, 5].item()))
    for method in (
        problem.evaluate_true,
        problem.evaluate_slack_true,
        problem.evaluate_slack,
        problem.is_feasible,
        problem.lookup,
        problem.project,
        problem.is_configuration,
    ):
        with pytest.raises(
            ValueError, match=rf"within the bounds.*X\[2, 5\] = {value} outside"
        ):
            method(X)
    X[2, 5] = float("nan")
    for method in (problem.evaluate_true, problem.evaluate_slack, problem.is_feasible):
        with pytest.raises(
            ValueError, match=r"^Expected finite values in `X`, got X\[2, 5\] = nan"
        ):
            method(X)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_messages_give_the_exact_value_not_a_rounded_one(
    problem: PCO64, dtype: torch.dtype
) -> None:
    X = problem.candidates()[:1].to(dtype)
    hi = problem.bounds[1, 0].item()
    X[0, 0] = hi + 1e-9 if dtype == torch.float64 else hi + 1e-6
    exact = repr(X[0, 0].item())
    assert exact != repr(hi)
    expected = (
        f"Expected `X` to be within the bounds of the test problem, got "
        f"X[0, 0] = {exact} outside [{problem.bounds[0, 0].item()!r}, {hi!r}] "
        "(log2_dp_size)."
    )
    with pytest.raises(ValueError) as err:
        problem(X)
    assert str(err.value) == expected


def test_outcome_constraint_is_a_module_with_table_buffers(
    problem: PCO64, frame: pd.DataFrame
) -> None:
    c = problem.outcome_constraint
    assert isinstance(c, PCOOutcomeConstraint)
    assert isinstance(c, torch.nn.Module)
    buffers = dict(c.named_buffers())
    assert "margin_bits" in buffers
    assert "snapper.rows" in buffers
    enc = _canonical(frame)
    C = problem.candidates()
    margin = c(C)
    assert torch.equal(margin <= 0, torch.tensor(enc["ran_successfully"].to_numpy()))
    assert margin[~(margin <= 0)].eq(PAD).all()
    np.testing.assert_array_equal(margin.numpy(), enc["peak_mem_normalised"].to_numpy())


def test_slack_and_is_feasible_follow_botorch(problem: PCO64) -> None:
    C = problem.candidates()
    slack = problem.evaluate_slack_true(C)
    assert slack.shape == (len(C), 1)
    assert torch.equal(slack.squeeze(-1), -problem.outcome_constraint(C))
    assert torch.equal(problem.is_feasible(C), ~torch.isnan(problem(C)))


def test_lookup_reads_auxiliary_columns(problem: PCO64, frame: pd.DataFrame) -> None:
    C = problem.candidates()
    rows = problem.lookup(C[[4, 1, 7]])
    assert rows.dtype == torch.long
    assert rows.tolist() == [4, 1, 7]
    peak = problem.table.frame["peak_mem"].to_numpy()[rows.numpy()]
    enc = _canonical(frame)
    np.testing.assert_array_equal(peak, enc["peak_mem"].to_numpy()[[4, 1, 7]])


def test_evaluations_never_alias_the_table(problem: PCO64) -> None:
    C = problem.candidates()
    first = problem.evaluate_true(C).clone()
    out = problem.evaluate_true(C)
    out.add_(100.0)
    margin = problem.outcome_constraint(C)
    margin_before = margin.clone()
    margin.mul_(-5)
    cand = problem.candidates()
    cand.add_(1)
    assert torch.equal(problem.evaluate_true(C).nan_to_num(), first.nan_to_num())
    assert torch.equal(problem.candidates(), C)
    assert torch.equal(problem.outcome_constraint(C), margin_before)


def test_noise_and_negate_behave_as_in_botorch(frame: pd.DataFrame) -> None:
    """Same seed, same draws: ``f(X)`` is BoTorch's ``noise_std * randn_like(f)``
    added to the noiseless value, then negated; and ``evaluate_slack`` adds
    ``constraint_noise_std * randn_like(slack)``."""
    base = PCO64(table=frame)
    noisy = PCO64(table=frame, noise_std=0.5, constraint_noise_std=0.25, negate=True)
    C = base.candidates()
    truth = base.evaluate_true(C)
    torch.manual_seed(3)
    got = noisy(C)
    torch.manual_seed(3)
    expected = -(truth + 0.5 * torch.randn_like(truth))
    torch.testing.assert_close(got, expected, equal_nan=True)
    assert not torch.equal(got.nan_to_num(), (-truth).nan_to_num())
    torch.testing.assert_close(noisy(C, noise=False), -truth, equal_nan=True)
    slack = base.evaluate_slack_true(C)
    torch.manual_seed(4)
    got_slack = noisy.evaluate_slack(C)
    torch.manual_seed(4)
    torch.testing.assert_close(got_slack, slack + 0.25 * torch.randn_like(slack))


@pytest.mark.parametrize("std", [0.25, [0.25]])
def test_outcome_constraint_carries_the_constraint_noise(
    frame: pd.DataFrame, std: float | list[float]
) -> None:
    """Wherever the constraint is served it is noisy: ``c(X)`` is minus the
    noisy slack, draw for draw; ``noise=False`` gives the table's margin."""
    base = PCO64(table=frame)
    noisy = PCO64(table=frame, constraint_noise_std=std)
    C = base.candidates()
    margin = base.outcome_constraint(C)
    assert torch.equal(noisy.outcome_constraint(C, noise=False), margin)
    first, second = noisy.outcome_constraint(C), noisy.outcome_constraint(C)
    assert not torch.equal(first, second)
    torch.manual_seed(6)
    got = noisy.outcome_constraint(C)
    torch.manual_seed(6)
    torch.testing.assert_close(got, margin - 0.25 * torch.randn_like(margin))
    torch.manual_seed(6)
    torch.testing.assert_close(-noisy.evaluate_slack(C).squeeze(-1), got)
    with torch.random.fork_rng():
        torch.manual_seed(8)
        again = noisy.outcome_constraint(C)
    torch.manual_seed(8)
    assert torch.equal(again, noisy.outcome_constraint(C))
    assert noisy.outcome_constraint(C[0]).shape == ()
    noisy.constraint_noise_std = None  # BoTorch's attribute drives the module
    assert torch.equal(noisy.outcome_constraint(C), margin)
    assert noisy.outcome_constraint.noise_std is None


def test_measured_noise_uses_each_rows_std(frame: pd.DataFrame) -> None:
    f = PCO64(table=frame, noise_std="measured")
    assert (f.noise_std, f.measured_noise) == (None, True)
    C = f.candidates()
    enc = _canonical(frame)
    std = torch.tensor(enc["throughput_std"].to_numpy(dtype=float))
    mean = torch.tensor(enc["throughput_mean"].to_numpy(dtype=float))
    torch.manual_seed(5)
    got = f(C)
    torch.manual_seed(5)
    torch.testing.assert_close(got, mean + std * torch.randn_like(mean), equal_nan=True)
    assert torch.equal(got.isnan(), mean.isnan())
    assert not torch.equal(got.nan_to_num(), mean.nan_to_num())
    neg = PCO64(table=frame, noise_std="measured", negate=True)
    torch.testing.assert_close(neg(C, noise=False), -mean, equal_nan=True)
    torch.manual_seed(5)
    torch.testing.assert_close(neg(X=C), -got, equal_nan=True)


@pytest.mark.parametrize("noise_std", [-1.0, "loud", float("nan"), True])
def test_bad_noise_std_is_refused(frame: pd.DataFrame, noise_std: object) -> None:
    with pytest.raises(ValueError, match="noise_std"):
        PCO64(table=frame, noise_std=noise_std)  # type: ignore[arg-type]


def test_moving_to_float32_keeps_table_values_exact(
    problem: PCO64, frame: pd.DataFrame
) -> None:
    truth = problem(problem.candidates())
    problem.to(torch.float32)
    assert problem.bounds.dtype == torch.float32
    assert problem.candidates().dtype == torch.float32  # nothing cached: follows .to()
    again = problem(problem.candidates().double())
    assert torch.equal(again.nan_to_num(), truth.nan_to_num())


def test_table_attribute_and_source(problem: PCO64, frame: pd.DataFrame) -> None:
    assert problem.table.source.kind == "dataframe"
    assert len(problem.table) == len(frame)
    assert problem.is_simulated is False
    same = PCO64(table=load_table(frame))
    assert torch.equal(same.candidates(), problem.candidates())
