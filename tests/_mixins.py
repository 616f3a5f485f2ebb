"""BoTorch's test mixins, as they apply to problems whose inputs are all discrete."""

from __future__ import annotations

from unittest import mock

import torch
from botorch.utils.testing import ConstrainedTestProblemTestCaseMixin
from botorch.utils.transforms import unnormalize


class DiscreteConstrainedTestProblemTestCaseMixin(ConstrainedTestProblemTestCaseMixin):
    """BoTorch's constrained-problem mixin, its slack test on integer points.

    The mixin's ``test_evaluate_slack`` draws points with ``unnormalize`` and
    does not round the discrete inputs, which BoTorch's own
    ``validate_inputs`` then refuses for any problem declaring
    ``discrete_inds`` (none of BoTorch's constrained problems does). Its steps
    run unchanged on the points rounded, as BoTorch's own
    ``sample_random_feasible`` rounds them.
    """

    def test_evaluate_slack(self) -> None:
        def rounded(X: torch.Tensor, bounds: torch.Tensor) -> torch.Tensor:
            return unnormalize(X, bounds).round()

        with mock.patch("botorch.utils.testing.unnormalize", side_effect=rounded):
            super().test_evaluate_slack()
