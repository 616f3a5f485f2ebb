"""Imputing the rows no trace visited, from the visited rows only.

Three exact Gaussian processes (BoTorch ``SingleTaskGP``, ARD Matérn-5/2,
inputs normalised to the instance's bounds, outcomes standardised), each
fitted by maximising the marginal likelihood:

- **peak memory**: ``log peak_mem`` of the visited rows that ran (exact);
- **feasibility**: the ``±1`` labels of every visited row (exact), on the
  encoded inputs *and* the memory model's predicted ``log peak_mem`` (the
  crash boundary is a memory boundary: the feature carries what the memory
  model learnt from the runs that fit); the probability that a row runs is
  ``Φ(b μ / σ)`` of its posterior (slope ``b`` by leave-one-out maximum
  likelihood), and it is predicted to run where ``μ > 0``; its 95 %
  prediction set (:func:`prediction_set`) holds an outcome where the margin
  ``b μ / σ`` against it is at most a conformal threshold
  (:func:`conformal_threshold` of the training rows' leave-one-out margins);
- **throughput**: ``throughput_mean`` of the visited rows that ran (exact
  values and observed means; the noise is learnt). On the log scale it
  cross-validated slightly worse on pco64 in an exploratory run, so the scale
  is left as it is.

An imputed row's throughput is the throughput model's posterior mean ``μ``,
its standard error the predictive sd times a leave-one-out factor
(:func:`interval_scale`); peak memory is ``exp(μ)`` of the memory model, its
standard error ``exp(μ) σ`` (delta method) times its own factor. :data:`DECIMALS` rounds what is written, so that a
regeneration on one machine is bit for bit (the fit itself runs under
:func:`deterministic`: one thread and a fixed seed).

:func:`cross_validate` measures the accuracy on held-out visited rows; the
scores are :func:`score_predictions` of its per-row held-out predictions, so
they can be recomputed from those alone.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from scipy.optimize import minimize_scalar
from scipy.stats import norm, spearmanr

from bolt_pco64.instances import Instance

if TYPE_CHECKING:
    from botorch.models import SingleTaskGP

__all__ = [
    "DECIMALS",
    "FIT_SEED",
    "PREDICTION_COLUMNS",
    "TRUTH_COLUMNS",
    "CrossValidation",
    "Fitter",
    "Imputation",
    "Imputer",
    "conformal_threshold",
    "cross_validate",
    "deterministic",
    "encoded",
    "interval_scale",
    "prediction_set",
    "score_predictions",
]

#: Seed of every fit (torch's generator, inside :func:`deterministic`).
FIT_SEED = 27
#: Level of the intervals the standard errors are calibrated to.
LEVEL = 0.95
#: Smallest calibration factor of a standard error.
MIN_SCALE = 0.1
#: Decimals an imputed value is rounded to (throughput in its unit, its
#: standard error, peak memory in GB, the feasibility probability).
DECIMALS: dict[str, int] = {
    "throughput": 6,
    "throughput_se": 6,
    "peak_mem": 3,
    "peak_mem_se": 3,
    "feasible_probability": 4,
}


@contextlib.contextmanager
def deterministic(seed: int = FIT_SEED) -> Iterator[None]:
    """Run a fit bit for bit reproducibly on one machine.

    One intra-op thread (a parallel reduction's order varies) and torch's
    generator seeded with ``seed``; both restored on exit.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield
    finally:
        torch.set_num_threads(threads)


def encoded(frame: pd.DataFrame, instance: Instance) -> np.ndarray:
    """The ``x_<input>`` columns of ``frame`` as an ``N x d`` float64 array."""
    return frame[[f"x_{c}" for c in instance.input_columns]].to_numpy(
        np.float64, copy=True
    )


def _fit(X: torch.Tensor, y: np.ndarray, bounds: torch.Tensor) -> SingleTaskGP:
    # Imported here: BoTorch is heavy, and nothing else in the package needs it
    # at import.
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    Y = torch.as_tensor(y, dtype=torch.double).reshape(-1, 1)
    model = SingleTaskGP(
        X,
        Y,
        input_transform=Normalize(X.shape[-1], bounds=bounds),
        outcome_transform=Standardize(1),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    model.eval()
    return model


def _loo(model: SingleTaskGP, X: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out predictive means and sds of a fitted GP's training rows.

    Closed form for an exact GP (Rasmussen & Williams, eq. 5.12): with ``K``
    the training covariance plus noise and ``y`` the training targets less the
    prior mean, ``mu_i = y_i - [K^-1 y]_i / [K^-1]_ii`` and ``var_i = 1 /
    [K^-1]_ii``. Returned on the raw outcome scale (the model's
    ``Standardize`` undone); ``X`` are the raw training inputs of the fit.
    """
    with torch.no_grad():
        Xn = model.input_transform(X)
        K = model.covar_module(Xn).to_dense()
        noise = model.likelihood.noise.reshape(-1)
        K = K + torch.diag(noise.expand(K.shape[-1]))
        prior = model.mean_module(Xn)
        y = model.train_targets - prior
        Kinv = torch.cholesky_inverse(torch.linalg.cholesky(K))
        d = torch.diagonal(Kinv)
        mean = model.train_targets - (Kinv @ y) / d
        sd = (1.0 / d).sqrt()
        tf = model.outcome_transform
        m, s = tf.means.reshape(()), tf.stdvs.reshape(())
    return (mean * s + m).numpy(), (sd * s).numpy()


def _probit_slope(ratio: np.ndarray, ran: np.ndarray) -> float:
    """Maximum-likelihood slope ``b`` of ``P(run) = Phi(b * ratio)``."""
    sign = np.where(ran, 1.0, -1.0)

    def nll(b: float) -> float:
        return -float(norm.logcdf(b * sign * ratio).sum())

    return float(minimize_scalar(nll, bounds=(0.01, 20.0), method="bounded").x)


def interval_scale(z: np.ndarray, level: float = LEVEL) -> float:
    """The factor that makes ``±z_level`` standard errors cover ``level`` of ``z``.

    ``z`` are standardised leave-one-out residuals; the factor is their
    ``level`` quantile of ``|z|`` over the normal one (at least
    :data:`MIN_SCALE`), so that scaled standard errors cover ``level`` of the
    rows they were fitted to.
    """
    q = float(np.quantile(np.abs(z), level))
    return max(q / float(norm.ppf(0.5 + level / 2)), MIN_SCALE)


def conformal_threshold(scores: np.ndarray, level: float = LEVEL) -> float:
    """The split-conformal threshold of nonconformity ``scores`` at ``level``.

    The ``ceil((n + 1) level)``-th smallest of the ``n`` scores (``inf`` where
    that exceeds ``n``): a new row exchangeable with the scored ones has a
    score at most the threshold with probability at least ``level`` (and less
    than ``level + 1 / (n + 1)`` without ties).

    Raises:
        ValueError: If ``scores`` is empty or not all finite.
    """
    s = np.sort(np.asarray(scores, dtype=np.float64).reshape(-1))
    if not len(s) or not np.isfinite(s).all():
        raise ValueError(
            f"Expected a non-empty array of finite scores, got {len(s)} with "
            f"{int((~np.isfinite(s)).sum())} not finite."
        )
    k = int(np.ceil((len(s) + 1) * level))
    return float(s[k - 1]) if k <= len(s) else float("inf")


#: The uncalibrated 95 % prediction set's threshold (an outcome is in the set
#: unless the other one has probability ``>= LEVEL``).
UNCALIBRATED_SET = float(norm.ppf(LEVEL))


def prediction_set(
    probability: np.ndarray, threshold: float = UNCALIBRATED_SET
) -> tuple[np.ndarray, np.ndarray]:
    """Which outcomes the prediction set of each row holds.

    The margin against running is ``-z`` and against failing ``z``, with
    ``z = Phi^-1(probability)``; an outcome is in the set where its margin is
    at most ``threshold``. The default is the uncalibrated set (both outcomes
    unless one has probability ``>= 0.95``); a negative threshold (a
    classifier right on more than 95 % of rows) leaves the set empty where
    ``Phi(threshold) < probability < Phi(-threshold)``: the rows the 5 % the
    set may miss are spent on.

    Returns:
        ``(runs, fails)``: boolean arrays, the set holds "runs" / "fails".
        NaN probabilities give neither.
    """
    p = np.asarray(probability, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        z = norm.ppf(p)
        return -z <= threshold, z <= threshold


def _posterior(
    model: SingleTaskGP, X: torch.Tensor, observation_noise: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        post = model.posterior(X, observation_noise=observation_noise)
        return (
            post.mean.squeeze(-1).numpy().astype(np.float64),
            post.variance.clamp_min(0).sqrt().squeeze(-1).numpy().astype(np.float64),
        )


@dataclass(frozen=True)
class Imputation:
    """Predictions for ``N`` configurations (``N``-dim float64 arrays).

    Attributes:
        feasible_probability: Probability that the configuration runs.
        feasible: Predicted to run (the feasibility posterior mean ``> 0``).
        set_runs: The 95 % prediction set holds "runs".
        set_fails: It holds "fails" (neither: an empty set).
        throughput: Predicted throughput (for every row; meaningful where it runs).
        throughput_se: Its standard error.
        peak_mem: Predicted peak memory (GB) where it runs.
        peak_mem_se: Its standard error (GB).
    """

    feasible_probability: np.ndarray
    feasible: np.ndarray
    set_runs: np.ndarray
    set_fails: np.ndarray
    throughput: np.ndarray
    throughput_se: np.ndarray
    peak_mem: np.ndarray
    peak_mem_se: np.ndarray


class Imputer:
    """The models of the module docstring, fitted to visited rows.

    Args:
        instance: The instance (its bounds normalise the inputs).

    Call :meth:`fit` with the visited rows
    (:func:`bolt_pco64.tables.traces.visited_rows`, or a subset), then
    :meth:`predict`.
    """

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        lo, hi = zip(*instance.bounds, strict=True)
        self._bounds = torch.tensor([lo, hi], dtype=torch.double)
        self._models: tuple[SingleTaskGP, SingleTaskGP, SingleTaskGP] | None = None
        #: Calibration of the fitted models (:meth:`fit`): the factors of the
        #: throughput and peak-memory standard errors, the probit slope of
        #: the feasibility probability and the conformal threshold of its
        #: prediction set (``feasibility_set``, in margin units ``b mu / sd``).
        self.scales: dict[str, float] = {}

    def fit(self, rows: pd.DataFrame, seed: int = FIT_SEED) -> Imputer:
        """Fit the three models to ``rows`` (under :func:`deterministic`)."""
        X = torch.tensor(
            encoded(rows, self.instance)
        )  # a copy: the frame's array is read-only
        ran = rows["ran_successfully"].to_numpy(dtype=bool)
        if ran.sum() < 2 or (~ran).sum() < 1:
            raise ValueError(
                "Expected at least two visited rows that ran and one that did "
                f"not, got {int(ran.sum())} and {int((~ran).sum())}."
            )
        with deterministic(seed):
            memory = _fit(
                X[ran], np.log(rows["peak_mem"].to_numpy()[ran]), self._bounds
            )
            feature, _ = _posterior(memory, X)
            feasibility = _fit(
                self._augment(X, feature), np.where(ran, 1.0, -1.0), self._augmented
            )
            throughput = _fit(
                X[ran], rows["throughput_mean"].to_numpy()[ran], self._bounds
            )
            lm, sm_ = _loo(memory, X[ran])
            lt, st_ = _loo(throughput, X[ran])
            lf, sf_ = _loo(feasibility, self._augment(X, feature))
        self._models = (memory, feasibility, throughput)
        peak = rows["peak_mem"].to_numpy()[ran]
        tput = rows["throughput_mean"].to_numpy()[ran]
        # Standardised leave-one-out residuals, on the scale the standard
        # errors are written (peak memory in GB, by the delta method).
        slope = _probit_slope(lf / sf_, ran)
        # The leave-one-out margin against each training row's own outcome.
        against = np.where(ran, -1.0, 1.0) * slope * lf / sf_
        self.scales = {
            "peak_mem": interval_scale((np.exp(lm) - peak) / (np.exp(lm) * sm_)),
            "throughput": interval_scale((lt - tput) / st_),
            "feasibility": slope,
            "feasibility_set": conformal_threshold(against),
        }
        return self

    @property
    def _augmented(self) -> torch.Tensor:
        # The log-peak feature is normalised over a fixed range of log GB.
        extra = torch.tensor([[0.0], [np.log(4 * self.instance.gpu_memory_gb)]])
        return torch.cat([self._bounds, extra.double()], dim=-1)

    @staticmethod
    def _augment(X: torch.Tensor, log_peak: np.ndarray) -> torch.Tensor:
        return torch.cat([X, torch.from_numpy(log_peak).reshape(-1, 1)], dim=-1)

    def predict(self, X: np.ndarray) -> Imputation:
        """Predictions for the encoded configurations ``X`` (``N x d``)."""
        if self._models is None:
            raise RuntimeError("Expected a fitted Imputer; call fit() first.")
        memory, feasibility, throughput = self._models
        Xt = torch.as_tensor(np.asarray(X, dtype=np.float64))
        with deterministic():
            lm, sm = _posterior(memory, Xt, observation_noise=True)
            mu, sd = _posterior(
                feasibility, self._augment(Xt, lm), observation_noise=True
            )
            lt, st = _posterior(throughput, Xt, observation_noise=True)
        k = self.scales
        z = k["feasibility"] * mu / np.maximum(sd, 1e-12)
        pm = np.exp(lm)
        return Imputation(
            feasible_probability=norm.cdf(z),
            feasible=mu > 0,
            set_runs=-z <= k["feasibility_set"],
            set_fails=z <= k["feasibility_set"],
            throughput=lt,
            throughput_se=k["throughput"] * st,
            peak_mem=pm,
            peak_mem_se=k["peak_mem"] * pm * sm,
        )


#: The columns of :attr:`CrossValidation.predictions`, one row per visited
#: row in the rows' order: the fold it was held out in (``0 .. folds - 1``),
#: then the fit's held-out predictions (:class:`Imputation`'s fields of the
#: same names; ``peak_mem`` NaN for a model without one).
PREDICTION_COLUMNS: tuple[str, ...] = (
    "fold",
    "feasible",
    "feasible_probability",
    "set_runs",
    "set_fails",
    "throughput",
    "throughput_se",
    "peak_mem",
    "peak_mem_se",
)
#: The columns of the visited rows the scores compare the predictions with.
TRUTH_COLUMNS: tuple[str, ...] = ("ran_successfully", "throughput_mean", "peak_mem")


@dataclass(frozen=True)
class CrossValidation:
    """Held-out accuracy over the visited rows.

    Attributes:
        name: The model's name.
        feasibility_accuracy: Fraction of held-out rows whose feasibility is
            predicted right.
        throughput_spearman: Spearman's rank correlation of predicted and
            trace throughput on held-out rows that ran.
        median_relative_error: Median ``|predicted / trace - 1|`` there.
        peak_mem_median_abs_error: Median ``|predicted - exact|`` peak memory
            (GB) there (NaN for a model without one).
        coverage_95: Fraction of held-out rows that ran whose trace throughput
            lies within ±1.96 predicted standard errors (NaN without one).
        peak_mem_coverage_95: The same for peak memory (NaN without one).
        feasibility_coverage_95: Fraction of held-out rows whose feasibility
            lies in the 95 % prediction set (``set_runs`` / ``set_fails``;
            NaN without probabilities).
        feasibility_brier: Mean squared error of the probability that a row
            runs (NaN without one).
        feasibility_mean_probability: Mean predicted probability that a
            held-out row runs (calibration in the large: compare the share
            that ran).
        feasibility_accuracy_at_count: Accuracy of the count-constrained
            choice: in each fold the held-out rows that ran are as many as
            the most probable ones (NaN without probabilities).
        predictions: Per visited row, in the rows' order, the
            :data:`PREDICTION_COLUMNS`: ``fold``, ``feasible``, the
            probability and prediction set, ``throughput``, ``throughput_se``,
            ``peak_mem`` and ``peak_mem_se`` (held out); the scores are
            :func:`score_predictions` of them.
    """

    name: str
    feasibility_accuracy: float
    throughput_spearman: float
    median_relative_error: float
    peak_mem_median_abs_error: float
    coverage_95: float
    predictions: pd.DataFrame
    peak_mem_coverage_95: float = np.nan
    feasibility_coverage_95: float = np.nan
    feasibility_brier: float = np.nan
    feasibility_mean_probability: float = np.nan
    feasibility_accuracy_at_count: float = np.nan


#: What :func:`cross_validate` fits: visited rows in, a predictor out.
Fitter = Callable[[pd.DataFrame], Callable[[np.ndarray], Imputation]]


def _missing(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[str]:
    return [c for c in columns if c not in frame.columns]


def _check_columns(rows: pd.DataFrame, predictions: pd.DataFrame) -> None:
    for frame, columns, what in (
        (rows, TRUTH_COLUMNS, "rows"),
        (predictions, PREDICTION_COLUMNS, "predictions"),
    ):
        if missing := _missing(frame, columns):
            raise ValueError(
                f"Expected {what} with the columns {list(columns)}, got "
                f"{list(frame.columns)} (missing {missing})."
            )
    if len(predictions) != len(rows):
        raise ValueError(
            f"Expected one prediction per visited row ({len(rows)}), got "
            f"{len(predictions)}."
        )


def _at_count(ran: np.ndarray, prob: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """The count-constrained choice (as the build makes it): in each fold, the
    ``k`` most probable held-out rows run, ``k`` the number that did."""
    at_count = np.zeros(len(ran), dtype=bool)
    for f in np.unique(fold):
        rows_f = np.flatnonzero(fold == f)
        k = int(ran[rows_f].sum())
        top = rows_f[np.argsort(-prob[rows_f], kind="stable")[:k]]
        at_count[top] = True
    return at_count


def score_predictions(
    name: str, rows: pd.DataFrame, predictions: pd.DataFrame
) -> CrossValidation:
    """The held-out accuracy of ``predictions`` on the visited ``rows``.

    Args:
        name: The model's name.
        rows: The visited rows (at least the :data:`TRUTH_COLUMNS`).
        predictions: One row per row of ``rows``, in its order, with the
            :data:`PREDICTION_COLUMNS` (:func:`cross_validate`'s, or the same
            read back from a record file).

    Returns:
        The scores of :class:`CrossValidation`, and ``predictions``'s
        :data:`PREDICTION_COLUMNS` (index reset) as its ``predictions``.

    Raises:
        ValueError: If a column is missing or the lengths differ.
    """
    _check_columns(rows, predictions)
    feasible = predictions["feasible"].to_numpy(dtype=bool)
    tp = predictions["throughput"].to_numpy(dtype=np.float64)
    se = predictions["throughput_se"].to_numpy(dtype=np.float64)
    pm = predictions["peak_mem"].to_numpy(dtype=np.float64)
    ran = rows["ran_successfully"].to_numpy(dtype=bool)
    truth = rows["throughput_mean"].to_numpy()
    peak = rows["peak_mem"].to_numpy()
    z = float(norm.ppf(0.5 + LEVEL / 2))
    inside = np.abs(tp[ran] - truth[ran]) <= z * se[ran]
    pse = predictions["peak_mem_se"].to_numpy(dtype=np.float64)
    prob = predictions["feasible_probability"].to_numpy(dtype=np.float64)
    mem_in = np.abs(pm[ran] - peak[ran]) <= z * pse[ran]
    in_set = np.where(
        ran,
        predictions["set_runs"].to_numpy(dtype=bool),
        predictions["set_fails"].to_numpy(dtype=bool),
    )
    has_p = bool(np.isfinite(prob).all())
    at_count = _at_count(ran, prob, predictions["fold"].to_numpy())
    with warnings.catch_warnings():
        # A model without peak memory: NaN, without numpy's all-NaN warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        mem_error = float(np.nanmedian(np.abs(pm[ran] - peak[ran])))
    return CrossValidation(
        name=name,
        feasibility_accuracy=float((feasible == ran).mean()),
        throughput_spearman=float(spearmanr(tp[ran], truth[ran]).statistic),
        median_relative_error=float(np.median(np.abs(tp[ran] / truth[ran] - 1))),
        peak_mem_median_abs_error=mem_error,
        coverage_95=float(inside.mean()) if np.isfinite(se[ran]).all() else np.nan,
        predictions=predictions[list(PREDICTION_COLUMNS)].reset_index(drop=True),
        peak_mem_coverage_95=(
            float(mem_in.mean()) if np.isfinite(pse[ran]).all() else np.nan
        ),
        feasibility_coverage_95=float(in_set.mean()) if has_p else np.nan,
        feasibility_brier=float(np.mean((prob - ran) ** 2)) if has_p else np.nan,
        feasibility_accuracy_at_count=(
            float((at_count == ran).mean()) if has_p else np.nan
        ),
        feasibility_mean_probability=float(prob.mean()) if has_p else np.nan,
    )


def cross_validate(
    rows: pd.DataFrame,
    instance: Instance,
    fitter: Fitter,
    name: str,
    folds: int = 5,
    seed: int = 0,
) -> CrossValidation:
    """``folds``-fold cross-validation of ``fitter`` on the visited ``rows``.

    Rows are shuffled with ``numpy.random.default_rng(seed)`` and split into
    ``folds`` near-equal folds; each fold is predicted by a fit to the others.
    The scores are :func:`score_predictions` of the held-out predictions.
    """
    n = len(rows)
    order = np.random.default_rng(seed).permutation(n)
    fold = np.zeros(n, dtype=np.int64)
    feasible = np.zeros(n, dtype=bool)
    set_runs = np.zeros(n, dtype=bool)
    set_fails = np.zeros(n, dtype=bool)
    prob = np.full(n, np.nan)
    tp = np.full(n, np.nan)
    se = np.full(n, np.nan)
    pm = np.full(n, np.nan)
    pse = np.full(n, np.nan)
    X = encoded(rows, instance)
    for i, held in enumerate(np.array_split(order, folds)):
        train = np.setdiff1d(order, held)
        predict = fitter(rows.iloc[np.sort(train)].reset_index(drop=True))
        out = predict(X[held])
        fold[held] = i
        feasible[held] = out.feasible
        prob[held] = out.feasible_probability
        set_runs[held] = out.set_runs
        set_fails[held] = out.set_fails
        tp[held] = out.throughput
        se[held] = out.throughput_se
        pm[held] = out.peak_mem
        pse[held] = out.peak_mem_se
    predictions = pd.DataFrame(
        {
            "fold": fold,
            "feasible": feasible,
            "feasible_probability": prob,
            "set_runs": set_runs,
            "set_fails": set_fails,
            "throughput": tp,
            "throughput_se": se,
            "peak_mem": pm,
            "peak_mem_se": pse,
        }
    )
    return score_predictions(name, rows, predictions)
