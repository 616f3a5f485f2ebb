"""Property-based tests (hypothesis) of the snapping rule and the test problem.

Expectations are computed here from the generated tables (configurations,
throughputs, memory), never from the code under test; the one exception is
``nearest_rows_reference``, the snapping rule written as a full distance
matrix, against which the fast :class:`RowSnapper` is checked.
"""

from __future__ import annotations

import itertools
import math
import warnings
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from bolt_pco64 import PCO64
from bolt_pco64 import snap as snap_module
from bolt_pco64.snap import RowSnapper, nearest_rows_reference
from tests._hypothesis import encode, examples, tables
from tests._tables import CAPACITY, PAD

# -- helpers ------------------------------------------------------------------------


def _expected(configs, tps, mems):
    """Canonical rows, throughput (NaN = OOM) and margin, computed independently."""
    order = sorted(range(len(configs)), key=lambda i: encode(configs[i]))
    rows = torch.tensor([encode(configs[i]) for i in order], dtype=torch.float64)
    thr = torch.tensor(
        [math.nan if tps[i] is None else float(tps[i]) for i in order],
        dtype=torch.float64,
    )
    margin = torch.tensor(
        [PAD if tps[i] is None else mems[i] / CAPACITY - 1 for i in order],
        dtype=torch.float64,
    )
    return rows, thr, margin


def _assert_same(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Bitwise-equal values (NaN where NaN), same shape and dtype."""
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


def _problem(frame, **kwargs) -> PCO64:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PCO64(table=frame, **kwargs)


def _box(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return rows.min(dim=0).values, rows.max(dim=0).values


#: Offsets from a half-way value that stress the rounding of the fast path.
_NEAR_HALF = [
    0.0,
    1e-15,
    1e-12,
    1e-9,
    1e-7,
    1e-6,
    1e-6 * (1 + 1e-9),
    1e-6 * (1 - 1e-9),
    1.5e-6,
    1e-5,
    1e-3,
]


@st.composite
def points_in_box(draw, low: torch.Tensor, high: torch.Tensor, max_n: int = 24):
    """``n x d`` float64 points inside ``[low, high]`` of mixed kinds.

    Lattice points, half-lattice points, float32-representable continuous
    points and adversarial points within a hair of a half-way value.
    """
    d = low.shape[0]
    lo, hi = low.tolist(), high.tolist()

    def coord(k: int):
        integer = st.integers(int(lo[k]), int(hi[k])).map(float)
        half = st.integers(int(2 * lo[k]), int(2 * hi[k])).map(lambda v: v / 2)
        cont = st.floats(lo[k], hi[k], width=32).map(float)
        near = st.tuples(
            st.integers(int(lo[k]), int(hi[k])),
            st.sampled_from(_NEAR_HALF),
            st.sampled_from([-1.0, 1.0]),
            st.booleans(),
        ).map(
            lambda t: min(
                hi[k],
                max(
                    lo[k],
                    float(np.nextafter(t[0] + 0.5 + t[2] * t[1], math.inf))
                    if t[3]
                    else t[0] + 0.5 + t[2] * t[1],
                ),
            )
        )
        return st.one_of(integer, half, cont, near)

    point = st.tuples(*[coord(k) for k in range(d)])
    pts = draw(st.lists(point, min_size=1, max_size=max_n))
    return torch.tensor(pts, dtype=torch.float64)


# -- the test problem ---------------------------------------------------------------


@examples(20)
@given(data=tables())
def test_candidates_return_the_table_columns_exactly(data) -> None:
    frame, configs, tps, mems = data
    rows, thr, margin = _expected(configs, tps, mems)
    f = _problem(frame)
    C = f.candidates()
    _assert_same(C, rows)
    _assert_same(f(C), thr)
    _assert_same(f.evaluate_true(C), thr)
    _assert_same(f.evaluate_slack_true(C), -margin.unsqueeze(-1))
    _assert_same(f.lookup(C), torch.arange(len(configs)))
    assert f.is_feasible(C).tolist() == [t == t for t in thr.tolist()]

    f32 = _problem(frame, dtype=torch.float32)
    _assert_same(f32(f32.candidates()), thr.float())


@examples(20)
@given(
    data=tables(),
    pick=st.integers(0, 10**6),
    direction=st.lists(st.floats(-1, 1), min_size=8, max_size=8),
    radius=st.one_of(
        st.floats(0, 0.499), st.sampled_from([0.5 - 1e-7, 0.5 - 1e-12, 0.4999999])
    ),
    axis=st.one_of(st.none(), st.integers(0, 7)),
)
def test_points_within_half_of_a_row_snap_to_it(
    data, pick, direction, radius, axis
) -> None:
    frame, configs, tps, mems = data
    rows, thr, _ = _expected(configs, tps, mems)
    i = pick % len(rows)
    v = torch.tensor(direction, dtype=torch.float64)
    if axis is not None:  # adversarial: all of the offset along one axis
        v = torch.zeros(8, dtype=torch.float64)
        v[axis] = 1.0 if direction[axis] >= 0 else -1.0
    assume(float(v.norm()) > 1e-3)
    x = rows[i] + radius * v / v.norm()
    low, high = _box(rows)
    x = torch.maximum(torch.minimum(x, high), low)  # clamping only gets closer
    assert float((x - rows[i]).norm()) < 0.5
    f = _problem(frame)
    assert int(f.lookup(x)) == i
    _assert_same(f(x), thr[i])
    _assert_same(f(x.float()), thr[i].float())


@examples(20)
@given(data=tables(min_rows=2), perm_seed=st.integers(0, 2**32 - 1), st_data=st.data())
def test_shuffling_the_table_rows_changes_nothing(data, perm_seed, st_data) -> None:
    frame, configs, tps, mems = data
    rows, _, _ = _expected(configs, tps, mems)
    perm = np.random.default_rng(perm_seed).permutation(len(frame))
    shuffled = frame.iloc[perm]
    if st_data.draw(st.booleans()):
        shuffled = shuffled.reset_index(drop=True)
    f, g = _problem(frame), _problem(shuffled)
    X = st_data.draw(points_in_box(*_box(rows)))
    _assert_same(g.candidates(), f.candidates())
    _assert_same(g.lookup(X), f.lookup(X))
    _assert_same(g(X), f(X))
    _assert_same(g.evaluate_slack_true(X), f.evaluate_slack_true(X))
    _assert_same(g.evaluate_true(X), f.evaluate_true(X))
    assert g.optimal_value == f.optimal_value
    _assert_same(g.optimizers, f.optimizers)
    _assert_same(g.bounds, f.bounds)


@pytest.mark.slow
@examples(20)
@given(data=tables(), st_data=st.data())
def test_float32_and_float64_agree(data, st_data) -> None:
    frame, configs, tps, mems = data
    rows, thr, margin = _expected(configs, tps, mems)
    X64 = st_data.draw(points_in_box(*_box(rows)))
    X32 = X64.float()
    assume(torch.equal(X32.double(), X64))  # exactly representable in both
    f = _problem(frame)
    idx = nearest_rows_reference(X64, rows)
    _assert_same(f.lookup(X64), idx)
    _assert_same(f.lookup(X32), idx)
    _assert_same(f(X64), thr[idx])
    _assert_same(f(X32), thr[idx].float())
    _assert_same(f.evaluate_slack_true(X32), -margin[idx].float().unsqueeze(-1))


@examples(20)
@given(data=tables(), st_data=st.data())
def test_results_do_not_depend_on_the_batch_shape(data, st_data) -> None:
    frame, configs, tps, mems = data
    rows, thr, _ = _expected(configs, tps, mems)
    a = st_data.draw(st.integers(1, 4))
    b = st_data.draw(st.integers(1, 4))
    X = st_data.draw(points_in_box(*_box(rows), max_n=1)).expand(a * b, 8).clone()
    more = st_data.draw(points_in_box(*_box(rows), max_n=a * b))
    X[: len(more)] = more
    f = _problem(frame)
    flat_rows, flat = f.lookup(X), f(X)
    _assert_same(flat, thr[nearest_rows_reference(X, rows)])
    for shape in [(a, b), (b, a), (1, a * b), (a * b, 1), (a, 1, b), (1, 1, a * b)]:
        Xs = X.reshape(*shape, 8)
        _assert_same(f.lookup(Xs), flat_rows.reshape(shape))
        _assert_same(f(Xs), flat.reshape(shape))
        _assert_same(
            f.evaluate_slack_true(Xs).squeeze(-1),
            f.evaluate_slack_true(X).squeeze(-1).reshape(shape),
        )
    # a transposed (non-contiguous) batch
    Xt = X.reshape(a, b, 8).transpose(0, 1)
    _assert_same(f(Xt), flat.reshape(a, b).T)
    # one point, and empty batches
    _assert_same(f(X[0]), flat[0])
    _assert_same(f(X[:0]), flat[:0])
    _assert_same(f(X.reshape(a, b, 8)[:, :0]), flat.reshape(a, b)[:, :0])


@examples(20)
@given(data=tables(), st_data=st.data(), noise=st.sampled_from([None, 0.1, 0.0]))
def test_negate_flips_values_and_keeps_nan(data, st_data, noise) -> None:
    frame, configs, tps, mems = data
    rows, thr, _ = _expected(configs, tps, mems)
    X = st_data.draw(points_in_box(*_box(rows)))
    expected = thr[nearest_rows_reference(X, rows)]
    oom = expected.isnan()
    f = _problem(frame, noise_std=noise)
    g = _problem(frame, noise_std=noise, negate=True)
    _assert_same(g.evaluate_true(X), expected)  # evaluate_true is never negated
    _assert_same(g(X, noise=False), -expected)
    torch.manual_seed(0)
    fx = f(X)
    torch.manual_seed(0)
    gx = g(X)
    assert torch.equal(fx.isnan(), oom)
    assert torch.equal(gx.isnan(), oom)
    _assert_same(gx, -fx)
    if noise:
        assert bool((fx[~oom] != expected[~oom]).all())


@examples(20)
@given(data=tables(), st_data=st.data(), negate=st.booleans())
def test_measured_noise_keeps_nan_at_oom_rows(data, st_data, negate) -> None:
    frame, configs, tps, mems = data
    rows, thr, _ = _expected(configs, tps, mems)
    X = st_data.draw(points_in_box(*_box(rows)))
    idx = nearest_rows_reference(X, rows)
    expected = thr[idx]
    oom = expected.isnan()
    f = _problem(frame, noise_std="measured", negate=negate)
    torch.manual_seed(0)
    y = f(X)
    assert y.shape == expected.shape
    assert y.dtype == expected.dtype
    assert torch.equal(y.isnan(), oom)
    sign = -1.0 if negate else 1.0
    # the measured std is 1% of the mean here: noise is there, but small
    diff = (sign * y - expected)[~oom]
    assert bool((diff != 0).all())
    assert bool((diff.abs() <= 0.01 * expected[~oom] * 8).all())
    _assert_same(f(X, noise=False), sign * expected)
    # the lookup tensors are untouched by the in-place noise and negation
    _assert_same(f.evaluate_true(f.candidates()), thr)


# -- the snapper against the reference -------------------------------------------------


@st.composite
def int_tables(draw):
    """Distinct integer rows in canonical order, of small dimension and radix."""
    d = draw(st.integers(1, 4))
    low = draw(st.lists(st.integers(0, 5), min_size=d, max_size=d))
    radix = draw(st.lists(st.integers(1, 4), min_size=d, max_size=d))
    space = list(
        itertools.product(
            *[range(lo, lo + r) for lo, r in zip(low, radix, strict=True)]
        )
    )
    chosen = draw(
        st.lists(
            st.sampled_from(space),
            min_size=1,
            max_size=min(30, len(space)),
            unique=True,
        )
    )
    return torch.tensor(sorted(chosen), dtype=torch.float64).reshape(-1, d)


@st.composite
def tables_and_points(draw):
    if draw(st.booleans()):
        _, configs, _, _ = draw(tables())
        table = torch.tensor(sorted(encode(c) for c in configs), dtype=torch.float64)
    else:
        table = draw(int_tables())
    X = draw(points_in_box(*_box(table), max_n=40))
    return table, X


@examples(50)
@given(case=tables_and_points(), small_chunks=st.booleans())
def test_row_snapper_equals_the_reference(case, small_chunks) -> None:
    table, X = case
    snapper = RowSnapper(table)
    patches = (
        [
            mock.patch.object(snap_module, "LATTICE_CHUNK", 3),
            mock.patch.object(
                snap_module, "DISTANCE_BLOCK_BYTES", 8 * table.shape[0] * 2
            ),
        ]
        if small_chunks
        else []
    )
    for p in patches:
        p.start()
    try:
        for x in (X, X.float()):
            expected = nearest_rows_reference(x, table)
            _assert_same(snapper(x), expected)
            # same answer point by point (no dependence on the other points)
            _assert_same(torch.stack([snapper(p) for p in x[:5]]), expected[:5])
    finally:
        for p in patches:
            p.stop()


@pytest.mark.parametrize("scale", [1, 1000])
def test_row_snapper_blocks_in_float32_or_float64_agree_with_the_reference(
    scale: int,
) -> None:
    """Small values: float32 blocks, near-ties recomputed; large: float64."""
    rng = np.random.default_rng(2)
    space = list(itertools.product(range(6), range(3), range(5), range(4)))
    keep = sorted(space[i] for i in rng.choice(len(space), size=150, replace=False))
    table = torch.tensor(keep, dtype=torch.float64) * torch.tensor([1, 1, 1, scale])
    snapper = RowSnapper(table)
    expected_dtype = torch.float32 if scale == 1 else torch.float64
    assert snapper.block_dtype == expected_dtype
    low, high = _box(table)
    gen = torch.Generator().manual_seed(3)
    X = low + (high - low) * torch.rand(3000, 4, dtype=torch.float64, generator=gen)
    X[:200] = X[:200].round() + 0.5  # ties and near-ties on half-lattice points
    X[200:400] = X[200:400].round() + 0.5 + 1e-7
    X = torch.minimum(X, high)
    _assert_same(snapper(X), nearest_rows_reference(X, table))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_row_snapper_ties_on_a_full_half_lattice(dtype) -> None:
    """Every half-lattice point of a dense 3-d box, against the reference."""
    rng = np.random.default_rng(0)
    space = list(itertools.product(range(3), range(4), range(2)))
    for _ in range(5):
        keep = sorted(space[i] for i in rng.choice(len(space), size=9, replace=False))
        table = torch.tensor(keep, dtype=torch.float64)
        low, high = _box(table)
        grids = [
            torch.arange(2 * lo, 2 * hi + 1) / 2
            for lo, hi in zip(low, high, strict=True)
        ]
        X = torch.cartesian_prod(*grids).to(dtype)
        _assert_same(RowSnapper(table)(X), nearest_rows_reference(X, table))


# -- outputs never share storage with the lookup tensors (docs/architecture.md §2) ---------


def _input_forms(rows: torch.Tensor, pick: int) -> dict[str, torch.Tensor]:
    """Every input form of issue 8: one point, batches, stride-0, non-contiguous,
    integer, float32 and float64."""
    x = rows[pick % len(rows)]
    block = rows[torch.arange(6) % len(rows)]
    return {
        "(8,)": x.clone(),
        "(1, 8)": x.unsqueeze(0).clone(),
        "(n, 8)": block.clone(),
        "(2, 3, 8)": block.reshape(2, 3, 8).clone(),
        "expanded (stride 0)": x.expand(4, 8),
        "expanded batch": x.expand(2, 3, 8),
        "non-contiguous": block.reshape(2, 3, 8).transpose(0, 1),
        "strided columns": torch.stack([block, block], dim=-1).reshape(6, 16)[:, ::2],
        "int64": block.long(),
        "int64 (8,)": x.long(),
        "float32": block.float(),
        "float32 (8,)": x.float(),
        "float64 (8,)": x.double(),
    }


def _outputs(f: PCO64, X: torch.Tensor) -> dict[str, torch.Tensor]:
    return {
        "evaluate_true": f.evaluate_true(X),
        "forward": f(X),
        "forward(noise=False)": f(X, noise=False),
        "evaluate_slack_true": f.evaluate_slack_true(X),
        "evaluate_slack": f.evaluate_slack(X),
        "is_feasible": f.is_feasible(X),
        "outcome_constraint": f.outcome_constraint(X),
        "lookup": f.lookup(X),
        "candidates": f.candidates(),
    }


def _held_storages(f: PCO64) -> set[int]:
    """Data pointers of every tensor the problem holds (buffers of the problem,
    its constraint module and the snapper, and the table's encoded inputs)."""
    held = [*f.buffers(), f.table.X]
    return {t.untyped_storage().data_ptr() for t in held}


NOISES = [None, 0.5, "measured"]


@examples(15)
@given(
    data=tables(),
    pick=st.integers(0, 10**6),
    noise=st.sampled_from(NOISES),
    negate=st.booleans(),
)
def test_no_output_shares_storage_with_the_problem(data, pick, noise, negate) -> None:
    frame, configs, tps, mems = data
    rows, _, _ = _expected(configs, tps, mems)
    f = _problem(frame, noise_std=noise, negate=negate)
    held = _held_storages(f)
    assert len(held) >= 5  # the problem does hold its table in buffers
    for form, X in _input_forms(rows, pick).items():
        for method, out in _outputs(f, X).items():
            ptr = out.untyped_storage().data_ptr()
            assert ptr not in held, f"{method} of {form} aliases a table buffer"


@examples(5)
@given(data=tables(), pick=st.integers(0, 10**6))
def test_many_noisy_evaluations_leave_the_table_bit_identical(data, pick) -> None:
    frame, configs, tps, mems = data
    rows, thr, margin = _expected(configs, tps, mems)
    problems = [
        _problem(frame, noise_std=noise, negate=negate)
        for noise in NOISES
        for negate in (False, True)
    ]
    before = [{k: v.clone() for k, v in f.named_buffers()} for f in problems]
    torch.manual_seed(pick)
    for f in problems:
        for X in _input_forms(rows, pick).values():
            for _ in range(2):
                f(X)
                f.evaluate_slack(X)
                f.outcome_constraint(X).mul_(-7)  # what a careless caller may do
                f.evaluate_true(X).add_(1.0)
    for f, saved in zip(problems, before, strict=True):
        for name, buffer in f.named_buffers():
            assert torch.equal(buffer, saved[name]), name
        C = f.candidates()
        _assert_same(C, rows)
        _assert_same(f.evaluate_true(C), thr)
        _assert_same(f(C, noise=False), -thr if f.negate else thr)
        _assert_same(f.outcome_constraint(C), margin)
