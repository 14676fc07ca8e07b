"""MIP noise calibration: from the spread of ``A`` over random halves to the noise law (pure arithmetic).

Calibrations (``calibration=``; docs/theory.md section 2):

- ``"mipkit-laplace"`` - Theorem A (section 2b): density ``exp(-||x||/s)`` (radius ``Gamma(d, s)``),
  ``s = sigma_1 / (2 eta)``, ``sigma_1 >= E||theta - E theta||`` in the weighted l_p norm.
- ``"mipkit-gaussian"`` (default) - Theorem A, Gaussian variant: ``N(0, s^2 W)``,
  ``s = sigma_1 / (eta sqrt(2 pi))`` in the weighted l2 norm. Least noise per coordinate.
- ``"izzo2024"`` - Corollary 10 of Izzo et al. (TMLR 2024) as published: GenNormal direction, Laplace
  radius with scale ``(6.16/eta)^(1+2/M)``; for ``d > 1`` the Laplace radius does not give the density the
  theorem assumes (section 2a), and the constant is ``(6.16/0.05)^2 / 10 ~ 1500`` times Theorem A's at
  ``eta = 0.05``. Kept for comparison.

The norm is ``||x||_{w,p} = ((1/d) sum_i |x_i / w_i|^p)^(1/p)`` with per-coordinate weights ``w_i``:
either the a-priori ``sigma`` (then ``sigma_1 = 1``: ``E||theta - E theta|| <= (E||.||^p)^(1/p) <= 1``
when each ``w_i`` bounds the p-th central absolute moment of coordinate ``i``) or the estimated
per-coordinate spreads (:mod:`mipkit.mechanisms.spread`; then ``sigma_1`` is estimated directly, with a
bootstrap upper bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_eta,
    check_interval,
    check_positive,
    check_positive_int,
)
from mipkit.mechanisms.noise_samplers import ExpNormNoise, GaussianNoise, Izzo2024Noise, NoiseLaw

__all__ = [
    "CALIBRATIONS",
    "IZZO_CONSTANT",
    "MIP_PARAMETERS",
    "MIPParams",
    "calibrate_noise",
    "check_mip_params",
]

CALIBRATIONS = ("mipkit-laplace", "mipkit-gaussian", "izzo2024")
IZZO_CONSTANT = 6.16  # Cor. 14 of Izzo et al. (TMLR 2024), valid for M >= 2
MIP_PARAMETERS = (
    "eta",
    "calibration",
    "sigma",
    "n_estimates",
    "confidence",
    "moment",
    "norm_order",
    "train_on",
    "sensitivity",
    "sensitivity_norm",
    "choose",
)  # the keyword arguments of check_mip_params (MIPNoise's parameters of the same names)


def calibrate_noise(
    eta: float,
    calibration: str,
    weights: np.ndarray,
    *,
    sigma_1: float = 1.0,
    moment: float = 2.0,
    norm_order: float = 2.0,
) -> NoiseLaw:
    """The noise law that makes ``A(D_train) + X`` eta-MIP, given the spread of ``A``.

    Parameters
    ----------
    eta : float in (0, 1/2)
    calibration : {"mipkit-laplace", "mipkit-gaussian", "izzo2024"}
    weights : array (d,)
        Per-coordinate weights ``w_i`` of the norm ``||x||_{w,p}`` (0 = constant coordinate).
    sigma_1 : float
        Bound on ``E||theta - E theta||_{w,p}`` (mipkit calibrations; Theorem A). For ``"izzo2024"`` the
        weights must bound the per-coordinate M-th moments, so that ``E||theta - E theta||^M <= 1``
        and Theorem 9's ``sigma`` is 1 (Cor. 10); ``sigma_1`` is not used.
    moment : float >= 2
        ``M`` for ``"izzo2024"``.
    norm_order : float >= 1
        ``p`` of the norm for ``"mipkit-laplace"`` (``"mipkit-gaussian"`` uses 2).

    Returns
    -------
    NoiseLaw
        ``ExpNormNoise(sigma_1/(2 eta))``, ``GaussianNoise(sigma_1/(eta sqrt(2 pi)))`` or
        ``Izzo2024Noise((6.16/eta)^(1+2/M))``.
    """
    eta = check_eta(eta, owner="calibrate_noise")
    check_choice("calibration", calibration, CALIBRATIONS, owner="calibrate_noise")
    if calibration == "mipkit-laplace":
        s1 = check_positive("sigma_1", sigma_1, owner="calibrate_noise")
        return ExpNormNoise(s1 / (2.0 * eta), weights, p=norm_order)
    if calibration == "mipkit-gaussian":
        s1 = check_positive("sigma_1", sigma_1, owner="calibrate_noise")
        return GaussianNoise(s1 / (eta * math.sqrt(2.0 * math.pi)), weights)
    m = check_interval("moment", moment, 2.0, math.inf, closed="left", owner="calibrate_noise")
    return Izzo2024Noise((IZZO_CONSTANT / eta) ** (1.0 + 2.0 / m), weights, moment=m)


@dataclass(frozen=True)
class MIPParams:
    """The validated settings shared by ``MIPNoise``, ``mip_release`` and the noise audit.

    Built by :func:`check_mip_params`; see :class:`~mipkit.mechanisms.MIPNoise` for each field.
    """

    eta: float
    calibration: str
    moment: float
    norm_order: float
    train_on: str
    sensitivity_norm: str
    confidence: float | None
    n_estimates: int
    sensitivity: float | None
    choose: str | None


def check_mip_params(
    owner: str,
    *,
    eta: Any,
    calibration: Any = "mipkit-gaussian",
    sigma: Any = None,
    n_estimates: Any = 100,
    confidence: Any = 0.95,
    moment: Any = 2.0,
    norm_order: Any = 2.0,
    train_on: Any = "all",
    sensitivity: Any = None,
    sensitivity_norm: Any = "l2",
    choose: Any = None,
) -> MIPParams:
    """Validate the settings shared by ``MIPNoise``, ``mip_release`` and the noise audit.

    ``sigma`` is checked (numeric, finite, ``>= 0``, not all 0) but not stored: it stays as given, a number
    or a per-coordinate sequence. Raises :class:`~mipkit._validation.MipkitValueError` naming ``owner`` on
    the first bad value.
    """
    checked = {
        "eta": check_eta(eta, owner=owner),
        "calibration": check_choice("calibration", calibration, CALIBRATIONS, owner=owner),
        "moment": check_interval("moment", moment, 2.0, math.inf, closed="left", owner=owner),
        "norm_order": check_interval("norm_order", norm_order, 1.0, math.inf, closed="left", owner=owner),
        "train_on": check_choice("train_on", train_on, ("all", "half"), owner=owner),
        "sensitivity_norm": check_choice("sensitivity_norm", sensitivity_norm, ("l2", "l1"), owner=owner),
        "confidence": None
        if confidence is None
        else check_interval("confidence", confidence, 0.0, 1.0, owner=owner),
        "n_estimates": check_positive_int("n_estimates", n_estimates, minimum=2, owner=owner),
        "sensitivity": None
        if sensitivity is None
        else check_positive("sensitivity", sensitivity, owner=owner),
    }
    if choose is not None:
        check_choice("choose", choose, ("smallest",), owner=owner)
        if sensitivity is None:
            raise MipkitValueError(
                f"The 'choose' parameter of {owner} needs a 'sensitivity' bound to compare with DP noise."
            )
    if isinstance(sigma, str):
        raise MipkitValueError(f"The 'sigma' parameter of {owner} must be numeric. Got {sigma!r} instead.")
    if sigma is not None:
        try:
            arr = np.asarray(sigma, dtype=float)
        except (TypeError, ValueError):
            raise MipkitValueError(f"The 'sigma' parameter of {owner} must be numeric.") from None
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) or not np.any(arr > 0):
            raise MipkitValueError(
                f"The 'sigma' parameter of {owner} must be finite, >= 0 and not all 0. Got {sigma!r} instead."
            )
    return MIPParams(**checked, choose=choose)
