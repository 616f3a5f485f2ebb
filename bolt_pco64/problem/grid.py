"""The grid in BoTorch's terms: levels, linear rules, and what they cannot say.

BoTorch's mixed and box optimizers take a search space as the levels of each
discrete dimension (``discrete_dims``), linear inequality constraints
(``inequality_constraints``: ``(indices, coefficients, rhs)`` meaning
``sum_i X[..., indices[i]] * coefficients[i] >= rhs``) and a
``post_processing_func``. A problem offers each
(:attr:`~bolt_pco64.problem.PCO.discrete_dims`,
:attr:`~bolt_pco64.problem.PCO.inequality_constraints`,
:meth:`~bolt_pco64.problem.PCO.project`); this module derives the first two
from the rows of a table and its instance.

The instance's hard rules (:meth:`~bolt_pco64.instances.Instance.rule_violation`)
read in log2 units, where every size is an exponent: ``dp*tp*pp*cp = GPUs`` is
the sum ``dp + tp + pp + cp = log2(GPUs)`` (an equality, given as two
inequalities: BoTorch 0.18's mixed optimizer refuses equalities on discrete
dimensions); ``sp <= tp``; ``pp * chunks`` divides the layers:
``pp + chunks <= v``, the exponent of the largest power of two dividing
them; more than one chunk only with ``pp > 1``: ``m * pp - chunks >= 0`` with
``m`` the largest ``chunks`` (exact on integer points). ZeRO stage 2/3 only
with ``pp = 1`` is not linear, nor is a table that holds only part of its
grid: :meth:`~bolt_pco64.problem.PCO.project` says those.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bolt_pco64.instances import Instance

__all__: list[str] = []

#: A rule ``sum(coefficient * column) >= rhs`` over a table's columns (inputs
#: or context), in encoded (log2) units.
_Rule = tuple[dict[str, float], float]


def discrete_levels(rows: Tensor) -> dict[int, list[float]]:
    """The distinct values of each column of ``rows``, ascending.

    Args:
        rows: The ``N x d``-dim encoded rows of a table.

    Returns:
        ``{dimension: levels}`` for every dimension, the form of BoTorch's
        ``discrete_dims``: the first level is the column's lower bound and the
        last its upper bound.
    """
    return {
        k: [float(v) for v in torch.unique(rows[:, k]).tolist()]
        for k in range(rows.shape[-1])
    }


def _two_adic_exponent(n: int) -> int:
    """The exponent of the largest power of two dividing ``n`` (``n >= 1``)."""
    return (n & -n).bit_length() - 1


def _instance_rules(instance: Instance, chunks_high: float) -> list[_Rule]:
    """The instance's linear rules, over column names (see the module docstring)."""
    gpus = math.log2(instance.num_gpus)
    layers = float(_two_adic_exponent(instance.model.num_layers))
    dp, tp, pp, cp = "log2_dp_size", "log2_tp_size", "log2_pp_size", "log2_cp_size"
    sp, chunks = "log2_sp_size", "log2_num_model_chunks"
    return [
        ({dp: 1.0, tp: 1.0, pp: 1.0, cp: 1.0}, gpus),
        ({dp: -1.0, tp: -1.0, pp: -1.0, cp: -1.0}, -gpus),
        ({tp: 1.0, sp: -1.0}, 0.0),
        ({pp: chunks_high, chunks: -1.0}, 0.0),
        ({pp: -1.0, chunks: -1.0}, -layers),
    ]


def linear_constraints(
    instance: Instance, rows: Tensor, dtype: torch.dtype
) -> list[tuple[Tensor, Tensor, float]]:
    """The instance's linear rules as BoTorch inequality constraints on ``X``.

    A knob held as context takes its value, one the instance does not hold
    its neutral value (log2 0); a rule left without an input, one that the
    bounds of ``rows`` already imply, and one that a row of the table breaks
    (a table need not keep its instance's rules) are left out.

    Args:
        instance: The table's instance (its inputs name ``X``'s columns).
        rows: The ``N x d``-dim encoded rows of the table.
        dtype: The dtype of the coefficients.

    Returns:
        A list of ``(indices, coefficients, rhs)``: a long tensor, a tensor of
        ``dtype`` (both on ``rows``' device) and a float, meaning
        ``sum_i X[..., indices[i]] * coefficients[i] >= rhs``.
    """
    columns = instance.input_columns
    context = dict(instance.context)
    x = rows.to(torch.float64)
    low, high = x.amin(dim=0), x.amax(dim=0)
    chunks = "log2_num_model_chunks"
    chunks_high = (
        float(high[columns.index(chunks)])
        if chunks in columns
        else float(context.get(chunks, 0))
    )
    out = []
    for coefficients, rhs in _instance_rules(instance, chunks_high):
        indices, coefs = [], []
        for column, c in coefficients.items():
            if column in columns:
                indices.append(columns.index(column))
                coefs.append(c)
            else:
                rhs -= c * context.get(column, 0)
        if not indices:
            continue
        index = torch.tensor(indices, dtype=torch.long, device=rows.device)
        coef = torch.tensor(coefs, dtype=torch.float64, device=rows.device)
        least = torch.where(coef > 0, coef * low[index], coef * high[index]).sum()
        values = x[:, index] @ coef
        if bool(least >= rhs) or not bool((values >= rhs).all()):
            continue
        out.append((index, coef.to(dtype), float(rhs)))
    return out
