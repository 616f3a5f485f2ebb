"""The torch forward hooks every :class:`~bolt_pco64.problem.PCO` registers.

BoTorch's ``forward`` validates ``X``, calls the private hooks and adds
noise. Around it, a pre-hook makes ``f(X)`` evaluate configurations (any
real point inside the bounds is validated, with errors that name the input
column, and snapped) and a hook adds the ``noise_std="measured"`` noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from bolt_pco64.problem.buffers import _gather, _result_dtype

if TYPE_CHECKING:
    from bolt_pco64.problem.base import PCO

__all__: list[str] = []


def _point_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return kwargs["X"] if "X" in kwargs else args[0]


def _snap_inputs(
    problem: PCO, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Forward pre-hook of every :class:`PCO`: ``f(X)`` evaluates configurations.

    Validates ``X`` (errors that name the input column) and replaces each point
    by the configuration it snaps to, in the result's dtype, before BoTorch's
    ``forward`` runs; BoTorch's own validation then sees integer points of the
    bounds, as it requires of discrete inputs.
    """
    X = _point_argument(args, kwargs)
    rows = problem._snap(X)
    configs = problem._configurations(rows, _result_dtype(X, problem.bounds.dtype))
    if "X" in kwargs:
        return args, {**kwargs, "X": configs}
    return (configs, *args[1:]), kwargs


def _add_measured_noise(
    problem: PCO, args: tuple[Any, ...], kwargs: dict[str, Any], output: Tensor
) -> Tensor | None:
    """Forward hook of every :class:`PCO`: the ``noise_std="measured"`` noise.

    BoTorch's ``forward`` scales one standard deviation per objective; this adds
    Gaussian noise scaled by each row's ``throughput_std`` after it, with the
    sign of the objective (so a negated problem gets ``-(f + std * z)``).
    """
    noise = kwargs.get("noise", args[1] if len(args) > 1 else True)
    if not (problem.measured_noise and noise):
        return None
    rows = problem.outcome_constraint.snapper(_point_argument(args, kwargs))
    z = _gather(problem.std_bits, rows, output.dtype) * torch.randn_like(output)
    return output - z if problem.negate else output + z
