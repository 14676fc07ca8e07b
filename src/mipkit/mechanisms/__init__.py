"""Mechanisms that reach a risk target: MIP noise addition (and its DP comparison).

- :mod:`~mipkit.mechanisms.mip_noise`: :class:`MIPNoise` (meta-estimator) and :func:`mip_release`.
- :mod:`~mipkit.mechanisms.mip_calibration`: the calibrations (:func:`calibrate_noise`: Theorem A, Cor. 10).
- :mod:`~mipkit.mechanisms.spread`: fits on random halves and the spread estimate.
- :mod:`~mipkit.mechanisms.certificate`: :class:`MIPCertificate`, what a release guarantees.
- :mod:`~mipkit.mechanisms.noise_samplers`: the noise laws; :mod:`~mipkit.mechanisms.dp_noise`: DP noise for
  the same eta.
"""

from mipkit.mechanisms.certificate import MIPCertificate
from mipkit.mechanisms.dp_noise import (
    DPNoiseOption,
    dp_alternatives,
    epsilon_for_eta,
    exp_norm_l2_scale_for_eta,
    gaussian_sigma_for_eta,
    laplace_scale_for_eta,
    logistic_regression_sensitivity,
)
from mipkit.mechanisms.mip_calibration import CALIBRATIONS, IZZO_CONSTANT, calibrate_noise
from mipkit.mechanisms.mip_noise import MIPNoise, MIPRelease, mip_release
from mipkit.mechanisms.noise_samplers import ExpNormNoise, GaussianNoise, Izzo2024Noise, NoiseLaw
from mipkit.mechanisms.spread import SpreadEstimate, estimate_spread, fit_on_halves

__all__ = [
    "CALIBRATIONS",
    "IZZO_CONSTANT",
    "DPNoiseOption",
    "ExpNormNoise",
    "GaussianNoise",
    "Izzo2024Noise",
    "MIPCertificate",
    "MIPNoise",
    "MIPRelease",
    "NoiseLaw",
    "SpreadEstimate",
    "calibrate_noise",
    "dp_alternatives",
    "epsilon_for_eta",
    "estimate_spread",
    "exp_norm_l2_scale_for_eta",
    "fit_on_halves",
    "gaussian_sigma_for_eta",
    "laplace_scale_for_eta",
    "logistic_regression_sensitivity",
    "mip_release",
]
