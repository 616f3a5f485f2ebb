"""The grid in BoTorch's terms: ``discrete_dims``, ``inequality_constraints``
and ``project`` (docs/problem.md), derived from a table and its instance."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
import torch

from bolt_pco64 import PCO, PCO64
from bolt_pco64.instances import INSTANCES, Instance
from tests._tables import frame_from, small_frame


def _full_grid_problem(inst: Instance) -> PCO:
    """The problem on a table holding the instance's whole grid."""
    grid = inst.grid()
    raw = [
        tuple(spec.decode(v) for spec, v in zip(inst.inputs, x, strict=True))
        for x in grid
    ]
    throughput = [0.1 + 0.001 * (i % 97) for i in range(len(raw))]
    frame = frame_from(
        raw,
        throughput,
        peak_mem=[30.0] * len(raw),
        capacity=inst.gpu_memory_gb,
        instance=inst.name,
    )
    return PCO(instance=inst, table=frame)


def _satisfied(f: PCO, X: torch.Tensor) -> torch.Tensor:
    """Which points keep every one of ``f``'s inequality constraints."""
    ok = torch.ones(X.shape[:-1], dtype=torch.bool)
    for indices, coefficients, rhs in f.inequality_constraints:
        ok &= (X[..., indices] * coefficients).sum(dim=-1) >= rhs
    return ok


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_linear_rules_and_zero_rule_carve_exactly_the_grid(name: str) -> None:
    """On every integer point of the bounds, the linear constraints plus the one
    rule they cannot say (ZeRO 2/3 only without pipelining) agree with the
    instance's own rule check."""
    inst = INSTANCES[name]
    f = _full_grid_problem(inst)
    lo, hi = f.bounds.to(torch.int64).tolist()
    points = list(
        itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi, strict=True)])
    )
    X = torch.tensor(points, dtype=torch.double)
    zero, pp = inst.input_index("zero_stage"), inst.input_index("log2_pp_size")
    nonlinear = (X[:, zero] == 0) | (X[:, pp] == 0)
    expected = torch.tensor([inst.rule_violation(p) is None for p in points])
    assert torch.equal(_satisfied(f, X) & nonlinear, expected)
    # the equality is offered as two inequalities, as the mixed optimizer needs
    gpu = [c for c in f.inequality_constraints if len(c[0]) >= 3]
    assert len(gpu) == 2
    assert torch.equal(gpu[0][1], -gpu[1][1])
    assert gpu[0][2] == -gpu[1][2]


def test_pco16_s_rules_have_no_cp_and_pco32_s_layers_bind() -> None:
    pco16 = _full_grid_problem(INSTANCES["pco16"])
    inputs = INSTANCES["pco16"].input_columns
    gpu = pco16.inequality_constraints[0]
    assert sorted(inputs[i] for i in gpu[0].tolist()) == [
        "log2_dp_size",
        "log2_pp_size",
        "log2_tp_size",
    ]
    assert gpu[2] == 4.0  # 16 GPUs
    # pco32: 40 layers, so pp * chunks divides 8: pp + chunks <= 3 is a rule
    pco32 = _full_grid_problem(INSTANCES["pco32"])
    rhs = sorted(c[2] for c in pco32.inequality_constraints)
    assert -3.0 in rhs


def test_a_rule_a_table_breaks_is_left_out() -> None:
    configs = [(1, 0, 0, 0, 0, 6, 0, 0), (5, 2, 2, 2, 2, 9, 3, 2)]  # log2 sums 1, 11
    f = PCO64(table=frame_from(configs, [0.1, 0.2]))
    assert bool(_satisfied(f, f.candidates()).all())
    assert all(len(c[0]) < 4 for c in f.inequality_constraints)


def test_levels_are_the_tables_values_in_botorchs_form() -> None:
    frame = small_frame(seed=4, n=30)
    f = PCO64(table=frame)
    dims = f.discrete_dims
    enc = frame.copy()
    enc["zero_stage"] = enc["zero_stage"].map({0: 0, 2: 1, 3: 2})
    for k, column in enumerate(PCO64.instance.input_columns):
        assert dims[k] == sorted(float(v) for v in set(enc[column]))
        assert (dims[k][0], dims[k][-1]) == tuple(f.bounds[:, k].tolist())
    # a table holding part of a column's range: only the values it holds
    configs = [(1, 0, 0, 0, 0, 6, 0, 0), (4, 0, 0, 0, 0, 9, 0, 0)]
    g = PCO64(table=frame_from(configs, [0.1, 0.2]))
    assert g.discrete_dims[0] == [1.0, 4.0]
    assert g.discrete_dims[5] == [6.0, 9.0]
    g.discrete_dims[0].append(99.0)  # a new dict each time
    assert g.discrete_dims[0] == [1.0, 4.0]


def test_project_snaps_onto_configurations_and_can_exclude(
    frame: pd.DataFrame,
) -> None:
    f = PCO64(table=frame)
    C = f.candidates()
    lo, hi = f.bounds
    gen = torch.Generator().manual_seed(1)
    X = lo + (hi - lo) * torch.rand(3, 4, 8, dtype=torch.double, generator=gen)
    P = f.project(X)
    assert P.shape == X.shape
    assert torch.equal(P, C[f.lookup(X)])
    assert bool(f.is_configuration(P).all())
    assert f.project(X.float()).dtype == torch.float32
    tried = C[f.lookup(X).reshape(-1)[:5]]
    Q = f.project(X, exclude=tried)
    assert bool(f.is_configuration(Q).all())
    taken = {tuple(r) for r in tried.tolist()}
    assert not any(tuple(q) in taken for q in Q.reshape(-1, 8).tolist())
    kept = torch.ones(len(C), dtype=torch.bool)
    kept[f.lookup(tried)] = False
    rest = C[kept]  # the nearest of the rest, by the full distance matrix
    nearest = torch.cdist(X.reshape(-1, 8), rest).argmin(dim=-1)
    assert torch.equal(Q.reshape(-1, 8), rest[nearest])
    with pytest.raises(ValueError, match="Expected `exclude` to leave"):
        f.project(X, exclude=C)
    assert f.snap_counts.points == 0  # projections are not evaluations
