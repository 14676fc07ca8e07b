"""Mechanisms that reach a risk target: MIP noise addition (and its DP comparison)."""

from mipkit.mechanisms.dp_noise import (
    DPNoiseOption,
    dp_alternatives,
    epsilon_for_eta,
    exp_norm_l2_scale_for_eta,
    gaussian_sigma_for_eta,
    laplace_scale_for_eta,
    logistic_regression_sensitivity,
)
from mipkit.mechanisms.mip_noise import (
    CALIBRATIONS,
    MIPCertificate,
    MIPNoise,
    MIPRelease,
    SpreadEstimate,
    calibrate_noise,
    estimate_spread,
    fit_on_halves,
    mip_release,
)
from mipkit.mechanisms.noise_samplers import ExpNormNoise, GaussianNoise, Izzo2024Noise, NoiseLaw

__all__ = [
    "CALIBRATIONS",
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
