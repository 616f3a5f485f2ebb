"""The far-snap check: a point far from every configuration warns, once.

Only some integer points of the bounds are configurations (780 of pco64's
29,160). A point whose nearest integer point lies more than one lattice step
from the configuration it snaps to is probably not the point its optimizer
meant; a problem's evaluations warn
(:class:`~bolt_pco64.problem.FarSnapWarning`) the first time it happens, as
the anchor bolt-bench does.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from bolt_pco64._stack import external_stacklevel

__all__ = ["FAR_SNAP_DISTANCE", "FarSnapWarning"]

# One lattice step; public, and documented, as
# bolt_pco64.problem.FAR_SNAP_DISTANCE.
FAR_SNAP_DISTANCE = 1.0


class FarSnapWarning(UserWarning):
    """A point snapped to a configuration more than one lattice step away.

    The distance is from the point's nearest integer point to the configuration
    (Euclidean, encoded space; :data:`FAR_SNAP_DISTANCE`). Issued once per
    problem by the evaluations (``f(X)``, ``evaluate_true``,
    ``evaluate_slack_true``), not by ``lookup``; see
    :meth:`PCO.is_configuration`.
    """


def _lattice_size(bounds: Tensor) -> int:
    """Number of integer points of the ``2 x d``-dim bounds."""
    span = (bounds[1] - bounds[0]).to(torch.float64) + 1
    return int(span.prod())


def _warn_far_snap(X: Tensor, configs: Tensor, bounds: Tensor, num_rows: int) -> bool:
    """Warn if a point snapped farther than :data:`FAR_SNAP_DISTANCE`.

    The warning names the farthest point, its configuration and how few of
    the lattice's points are configurations, and points at the caller's line
    outside the libraries.

    Args:
        X: A non-empty ``batch_shape x d``-dim tensor of points.
        configs: The ``batch_shape x d``-dim float64 configurations they snap to.
        bounds: The ``2 x d``-dim bounds of the problem.
        num_rows: The number of configurations.

    Returns:
        Whether it warned.
    """
    nearest_lattice = X.detach().to(torch.float64).round()
    dist = (nearest_lattice - configs).square().sum(dim=-1).sqrt()
    if not bool((dist > FAR_SNAP_DISTANCE).any()):
        return False
    far = int(dist.reshape(-1).argmax())
    point = X.detach().reshape(-1, X.shape[-1])[far].tolist()
    config = configs.reshape(-1, X.shape[-1])[far].tolist()
    warnings.warn(
        f"A point snapped to a configuration {dist.reshape(-1)[far]:.3g} "
        f"lattice steps away ({point} -> {config}); only {num_rows} of the "
        f"{_lattice_size(bounds)} integer points of the bounds are "
        "configurations. Check with `problem.is_configuration(X)`, or choose "
        "among `problem.candidates()`. (Warned once per problem.)",
        FarSnapWarning,
        stacklevel=external_stacklevel(),
    )
    return True
