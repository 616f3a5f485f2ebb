"""The defaults of the prior means and the base class they share.

A :class:`PhysicalMean` is a GPyTorch :class:`~gpytorch.means.Mean` with a
few named physical parameters (times, bandwidths, bytes per parameter), all
positive: ``theta = initial * exp(v)``, where ``v``, the log of each
parameter's ratio to its initial value, is the vector parameter ``raw_theta``
under a GPyTorch ``Interval(-log_range, log_range)`` constraint (a sigmoid).
The optimiser thus works on logarithms (parameters that span orders of
magnitude stay well scaled), no value can reach zero or overflow (an
unbounded ``exp`` let a line search step to values whose prior density was
undefined), and each stays within a factor ``exp(log_range)`` of its initial
value. A log-normal prior centred on the initial values (``theta_prior``)
keeps a fit on three observations near physically sensible values; ``fit_gpytorch_mll`` fits it jointly with the
GP's hyperparameters, and :func:`gpytorch.mlls.ExactMarginalLogLikelihood`
adds its log density.

The mean is evaluated on the GP's *standardised* outcome scale: the GP's
``Standardize`` transform fits the standardised targets, so the mean returns
``(m(x) - shift) / scale`` with the transform's mean and standard deviation
(:meth:`PhysicalMean.standardize`; the fitting functions set them). Its
physical value is :meth:`PhysicalMean.physical`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Literal

import torch
from gpytorch.constraints import Interval
from gpytorch.means import Mean
from gpytorch.priors import LogNormalPrior
from torch import Tensor

from bolt_pco64.bo.prior.layout import Layout, LayoutDecoder

__all__ = [
    "BAD_PRIOR_FACTOR",
    "PRIORS",
    "PRIOR_DEFAULTS",
    "STANDIN_CAVEAT",
    "PhysicalMean",
    "PriorDefaults",
    "PriorQuality",
    "misspecified",
]

#: The sentence every figure or summary of a prior method on a stand-in table
#: carries (the stand-in is itself produced by an analytic model).
STANDIN_CAVEAT = (
    "A prior built from a performance model can look better on a simulated "
    "table than on a measured one: the stand-in tables are themselves produced "
    "by an analytic model of parallel training."
)


@dataclass(frozen=True)
class PriorDefaults:
    """Every default of the prior means (initial values and prior widths).

    The throughput prior's initial times come from a reference GPU cluster
    and are then rescaled by one common factor fitted to the observed
    throughput (the table's throughput unit is not published), so only their
    *ratios* matter: compute rate to bandwidths to latencies.

    Attributes:
        flop_rate: Effective FLOP/s of one GPU: about 1e15 dense BF16 peak of
            a Hopper-class GPU at 40 % model FLOPs utilisation.
        bandwidth_intra: Bytes/s between GPUs of one host (NVLink, per
            direction).
        bandwidth_inter: Bytes/s between hosts per GPU (a 400 Gb/s NIC).
        latency_intra: Seconds of start-up per collective step inside a host.
        latency_inter: Seconds of start-up per collective step across hosts.
        step_overhead: Seconds per optimizer step not modelled otherwise.
        throughput_log_sd: Standard deviation of the log-normal prior of each
            throughput parameter (1.5: a factor of 4.5 either way).
        bytes_weights: Model-state bytes per parameter for the weights
            (ZeRO paper, mixed-precision Adam: 2 for fp16/bf16 weights).
        bytes_grads: Bytes per parameter for the gradients (2).
        bytes_optimizer: Bytes per parameter for the optimizer states (12:
            fp32 master weights, momentum and variance). Their sum is one
            parameter of the memory prior, their ratio splits it at ZeRO
            stage 1.
        checkpoint_bytes: Activation bytes kept per token and hidden unit per
            layer under full activation recomputation (2: the bf16 layer input;
            Korthikanti et al. 2022).
        layer_activation_scale: Multiplier of one layer's full activations
            (Korthikanti et al.'s ``10/sp + 24/tp`` bytes per token and hidden
            unit), live while that layer is recomputed.
        memory_overhead_gib: GiB per GPU not modelled otherwise.
        gpu_memory_factor: The GPU memory the memory prior assumes, as a
            multiple of the instance's ``gpu_memory_gb`` (1: the instance's
            own GPU; another value is a misspecified prior, see
            :func:`misspecified`).
        state_log_sd: Prior standard deviation (log) of the bytes per parameter.
        activation_log_sd: Prior standard deviation (log) of the two activation
            coefficients.
        overhead_log_sd: Prior standard deviation (log) of the memory overhead.
        pad_sharpness: Sharpness of the soft minimum of the predicted margin
            and the table's OOM pad.
        log_range: Each parameter stays within a factor ``exp(log_range)``
            (about 3000) of its initial value.
        min_outputscale: Lower bound of the kernel's output scale (on the
            standardised scale). When the prior mean explains the data, the
            fit drives the output scale towards 0, where GPyTorch's
            softplus underflows to exactly 0 and the log-normal prior on it
            raises; the bound keeps it positive.
    """

    flop_rate: float = 4e14
    bandwidth_intra: float = 450e9
    bandwidth_inter: float = 50e9
    latency_intra: float = 1e-5
    latency_inter: float = 3e-5
    step_overhead: float = 0.1
    throughput_log_sd: float = 1.5
    bytes_weights: float = 2.0
    bytes_grads: float = 2.0
    bytes_optimizer: float = 12.0
    checkpoint_bytes: float = 2.0
    layer_activation_scale: float = 1.0
    memory_overhead_gib: float = 1.0
    gpu_memory_factor: float = 1.0
    state_log_sd: float = 0.5
    activation_log_sd: float = 1.0
    overhead_log_sd: float = 1.0
    pad_sharpness: float = 20.0
    log_range: float = 8.0
    min_outputscale: float = 1e-4


#: The defaults every function of :mod:`bolt_pco64.bo.prior` uses.
PRIOR_DEFAULTS = PriorDefaults()

#: How far each constant of the deliberately misspecified ("bad") prior is off.
BAD_PRIOR_FACTOR = 2.0


def misspecified(
    factor: float = BAD_PRIOR_FACTOR, defaults: PriorDefaults = PRIOR_DEFAULTS
) -> PriorDefaults:
    """A deliberately wrong prior: every physical constant off by ``factor``.

    The robustness check of prior-guided benchmarks (mf-prior-bench's good,
    medium and bad priors): the prior keeps its widths (it is as confident
    as before) around wrong centres. Each constant moves by ``factor``, in
    the direction that does not cancel another's:

    - throughput: the FLOP rate ``factor`` times higher, both bandwidths
      ``factor`` times lower, both latencies and the step overhead
      ``factor`` times longer; as the times are rescaled by one fitted unit
      (:meth:`~bolt_pco64.bo.prior.throughput.ThroughputPriorMean.from_observations`),
      what is wrong is communication against compute, ``factor ** 2`` too
      dear;
    - memory: every byte count (weights, gradients, optimizer state, kept
      activations, the working layer) and the overhead ``factor`` times too
      small, and the GPU memory of the wrong GPU, ``factor`` times the
      instance's (``gpu_memory_factor``; with 2, a 192 GB GPU's for pco64's
      96 GB): the predicted peak over capacity is ``factor ** 2`` too small,
      an optimistic prior that expects configurations to fit that do not.

    Args:
        factor: How far each constant is off (``> 1``; 1 is ``defaults``).
        defaults: The prior to misspecify.

    Raises:
        ValueError: If ``factor`` is not finite and at least 1.
    """
    if not (math.isfinite(factor) and factor >= 1.0):
        raise ValueError(f"Expected a finite factor >= 1, got {factor!r}.")
    d, f = defaults, float(factor)
    return dataclasses.replace(
        d,
        flop_rate=d.flop_rate * f,
        bandwidth_intra=d.bandwidth_intra / f,
        bandwidth_inter=d.bandwidth_inter / f,
        latency_intra=d.latency_intra * f,
        latency_inter=d.latency_inter * f,
        step_overhead=d.step_overhead * f,
        bytes_weights=d.bytes_weights / f,
        bytes_grads=d.bytes_grads / f,
        bytes_optimizer=d.bytes_optimizer / f,
        checkpoint_bytes=d.checkpoint_bytes / f,
        layer_activation_scale=d.layer_activation_scale / f,
        memory_overhead_gib=d.memory_overhead_gib / f,
        gpu_memory_factor=d.gpu_memory_factor * f,
    )


#: A prior's quality, ``"good"`` (:data:`PRIOR_DEFAULTS`) or ``"bad"``
#: (:func:`misspecified` by :data:`BAD_PRIOR_FACTOR`).
PriorQuality = Literal["good", "bad"]
#: The priors by quality (a registry, not an ``if`` chain).
PRIORS: Mapping[str, PriorDefaults] = MappingProxyType(
    {
        "good": PRIOR_DEFAULTS,
        "bad": misspecified(BAD_PRIOR_FACTOR, PRIOR_DEFAULTS),
    }
)


def _theta(module: PhysicalMean) -> Tensor:
    return module.theta


def _set_theta(module: PhysicalMean, value: Tensor) -> None:
    module.set_theta(value)


class PhysicalMean(Mean):
    """A prior mean with named, positive physical parameters.

    Args:
        decoder: Decodes the GP's unit-cube inputs into a
            :class:`~bolt_pco64.bo.prior.layout.Layout`.
        initial: The initial value of each parameter, in :attr:`names` order.
        log_sd: The prior standard deviation of each parameter's logarithm.
        log_range: How far (in log) a parameter may move from its initial value.

    Raises:
        ValueError: If ``initial`` or ``log_sd`` does not have one positive
            finite value per name.
    """

    #: The parameters' names, in the order of ``theta``.
    names: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        decoder: LayoutDecoder,
        initial: Sequence[float],
        log_sd: Sequence[float],
        log_range: float = PRIOR_DEFAULTS.log_range,
    ) -> None:
        super().__init__()
        dtype = decoder.lower.dtype
        init = torch.as_tensor(initial, dtype=dtype)
        sd = torch.as_tensor(log_sd, dtype=dtype)
        k = len(self.names)
        for label, v in (("initial", init), ("log_sd", sd)):
            if v.shape != (k,) or not (torch.isfinite(v) & (v > 0)).all():
                raise ValueError(
                    f"Expected {label} of {k} positive finite values for "
                    f"{self.names}, got {v.tolist()}."
                )
        if not (math.isfinite(log_range) and log_range > 0):
            raise ValueError(
                f"Expected a positive finite log_range, got {log_range!r}."
            )
        self.decoder = decoder
        self.log_range = float(log_range)
        self.register_buffer("initial", init)
        self.register_parameter("raw_theta", torch.nn.Parameter(torch.zeros_like(init)))
        self.register_constraint("raw_theta", Interval(-log_range, log_range))
        self.register_prior(
            "theta_prior", LogNormalPrior(init.log(), sd), _theta, _set_theta
        )
        self.register_buffer("shift", torch.zeros((), dtype=dtype))
        self.register_buffer("scale", torch.ones((), dtype=dtype))

    @property
    def theta(self) -> Tensor:
        """The parameters' values, a ``k``-dim tensor (always positive)."""
        return self.initial * self.raw_theta_constraint.transform(self.raw_theta).exp()

    def set_theta(self, value: Tensor) -> None:
        """Set the parameters to ``value`` (``k``-dim, positive), each clipped
        to its allowed range."""
        edge = self.log_range * (1.0 - 1e-6)
        ratio = (value.to(self.initial) / self.initial).log().clamp(-edge, edge)
        raw = self.raw_theta_constraint.inverse_transform(ratio)
        self.initialize(raw_theta=raw)

    def values(self) -> dict[str, float]:
        """The parameters' current values by name."""
        return dict(zip(self.names, self.theta.detach().tolist(), strict=True))

    def standardize(self, shift: Tensor | float, scale: Tensor | float) -> None:
        """Return ``(m(x) - shift) / scale`` from now on (the outcome transform's)."""
        with torch.no_grad():
            self.shift.copy_(torch.as_tensor(shift).reshape(()))
            self.scale.copy_(torch.as_tensor(scale).reshape(()))

    def physical(self, X: Tensor) -> Tensor:
        """``batch_shape``-dim physical value at ``batch_shape x d`` unit-cube ``X``."""
        return self._physical(self.decoder(X))

    def forward(self, x: Tensor) -> Tensor:
        """``batch_shape``-dim prior mean at ``batch_shape x d`` unit-cube ``x``:
        :meth:`physical`, standardized as :meth:`standardize` set."""
        return (self.physical(x) - self.shift) / self.scale

    def _physical(self, layout: Layout) -> Tensor:
        raise NotImplementedError
