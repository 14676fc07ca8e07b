"""DP noise for a MIP target: the smallest Laplace scale / Gaussian sigma whose DP guarantee gives eta-MIP.

A DP guarantee implies MIP whatever the data (Izzo et al., TMLR 2024, Thm 4; docs/theory.md section 1):
an f-DP mechanism for **replace-one** neighbours is eta-MIP with ``eta = adv/2``,
``adv = sup_alpha (1 - alpha - f(alpha))`` its largest TPR - FPR. Every sensitivity here is a replace-one
sensitivity (``||q(D) - q(D')||`` for datasets that differ by replacing one record, as in the MIP game), so
the curves are the replace-one curves. Inverting ``eta = adv/2`` gives the noise a DP mechanism needs for a
given ``eta``; the Gaussian and exact Laplace answers are calls of the one calibration routine,
``calibrate_noise(gaussian_family(L, neighbours="replace_one"), EtaTarget(eta))``
(:func:`mipkit.accounting.calibrate_noise`), which returns the closed forms below checked in 60-digit
arithmetic:

- Laplace mechanism, exact curve (one output coordinate): ``adv = 1 - exp(-L/(2b))``, so
  ``b = L / (-2 log(1 - 2 eta))`` (:func:`laplace_scale_for_eta` with ``method="exact-curve"``).
- ``eps``-DP through Thm 4 (``delta = 0``): ``eta = 1/(1 + e^-eps) - 1/2``, so
  ``eps = log((1 + 2 eta)/(1 - 2 eta))`` and a Laplace scale ``b = L / eps`` (``method="thm4"``); this
  is what Fig. 1 of the TMLR paper plots. It holds for any eps-DP mechanism, e.g. i.i.d. Laplace noise
  on ``d`` coordinates with an l1 sensitivity, or the l2 exp-norm noise of Chaudhuri et al. (2011).
- Gaussian mechanism (mu-GDP, ``mu = L2 / sigma``): ``adv = 2 Phi(mu/2) - 1``, so
  ``sigma = L2 / (2 Phi^-1(1/2 + eta))`` (:func:`gaussian_sigma_for_eta`).

:func:`dp_alternatives` lists these for a release of ``d`` numbers with a given sensitivity, each with its
per-coordinate noise standard deviation so that they can be compared with MIP noise.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from mipkit._validation import MipkitValueError, check_choice, check_eta, check_positive, check_positive_int
from mipkit.accounting.calibration import calibrate_noise, gaussian_family, laplace_family
from mipkit.accounting.targets import EtaTarget
from mipkit.mechanisms.noise_samplers import ExpNormNoise, GaussianNoise, NoiseLaw

__all__ = [
    "DPNoiseOption",
    "dp_alternatives",
    "epsilon_for_eta",
    "exp_norm_l2_scale_for_eta",
    "gaussian_sigma_for_eta",
    "laplace_scale_for_eta",
    "logistic_regression_sensitivity",
]


def epsilon_for_eta(eta: float) -> float:
    """The ``eps`` whose (eps, 0)-DP guarantee gives eta-MIP by Thm 4: ``log((1+2 eta)/(1-2 eta))``.

    Inverse of ``eta = 1/(1 + e^-eps) - 1/2`` (Izzo et al. 2024, Thm 4 with ``delta = 0``; tight), for an
    epsilon stated for replace-one neighbours (the theorem's adjacency; an add/remove epsilon gives
    ``eta = (1 - e^-eps) / 2``, :func:`mipkit.accounting.eta_from_dp`).
    """
    e = check_eta(eta, owner="epsilon_for_eta")
    return math.log1p(2 * e) - math.log1p(-2 * e)


def laplace_scale_for_eta(eta: float, sensitivity: float, *, method: str = "exact-curve") -> float:
    """Laplace scale ``b`` that makes ``q(D) + Lap(b)`` eta-MIP, for a query of sensitivity ``L``.

    Parameters
    ----------
    eta : float in (0, 1/2)
    sensitivity : float > 0
        ``L``: largest change of the output between neighbouring datasets (l1 norm).
    method : {"exact-curve", "thm4"}
        ``"exact-curve"``: the exact Laplace trade-off curve of a *scalar* output,
        ``adv = TV(Lap(0,b), Lap(L,b)) = 1 - exp(-L/(2b))``, so ``b = L / (-2 log(1 - 2 eta))``.
        ``"thm4"``: ``b = L / eps`` with ``eps = log((1+2 eta)/(1-2 eta))`` (pure eps-DP through Thm 4,
        valid for i.i.d. Laplace noise on any number of coordinates with an l1 sensitivity; the curve
        Fig. 1 of Izzo et al. plots).
    """
    e = check_eta(eta, owner="laplace_scale_for_eta")
    sens = check_positive("sensitivity", sensitivity, owner="laplace_scale_for_eta")
    check_choice("method", method, ("exact-curve", "thm4"), owner="laplace_scale_for_eta")
    if method == "exact-curve":
        # the smallest b whose exact curve gives eta, to a relative 1e-12: L / (-2 log(1 - 2 eta))
        return calibrate_noise(laplace_family(sens, neighbours="replace_one"), EtaTarget(e), rtol=1e-12).noise
    return sens / epsilon_for_eta(e)


def gaussian_sigma_for_eta(eta: float, l2_sensitivity: float) -> float:
    """Gaussian sigma that makes ``q(D) + N(0, sigma^2 I)`` eta-MIP: ``L2 / (2 Phi^-1(1/2 + eta))``.

    The mechanism is mu-GDP with ``mu = L2/sigma`` (Dong, Roth & Su 2022, Thm 2.7); its largest TPR - FPR is
    ``2 Phi(mu/2) - 1`` in any dimension, and ``eta = adv/2`` (docs/theory.md section 1, f-DP implies MIP).
    ``L2`` is the replace-one sensitivity. The closed form, checked by
    :func:`mipkit.accounting.calibrate_noise`.
    """
    e = check_eta(eta, owner="gaussian_sigma_for_eta")
    sens = check_positive("l2_sensitivity", l2_sensitivity, owner="gaussian_sigma_for_eta")
    return calibrate_noise(gaussian_family(sens, neighbours="replace_one"), EtaTarget(e)).noise


def exp_norm_l2_scale_for_eta(eta: float, l2_sensitivity: float) -> float:
    """Scale ``s`` of noise with density ``exp(-||x||_2 / s)`` for eta-MIP via eps-DP: ``L2 / eps``.

    The privacy loss of a shift ``v`` is at most ``||v||_2 / s`` (triangle inequality), so the
    mechanism is ``(L2/s)``-DP (Chaudhuri, Monteleoni & Sarwate 2011, output perturbation), and Thm 4
    turns ``eps = log((1+2 eta)/(1-2 eta))`` into eta-MIP.
    """
    e = check_eta(eta, owner="exp_norm_l2_scale_for_eta")
    sens = check_positive("l2_sensitivity", l2_sensitivity, owner="exp_norm_l2_scale_for_eta")
    return sens / epsilon_for_eta(e)


def logistic_regression_sensitivity(n: int, *, C: float | None = None, lam: float | None = None) -> float:
    """l2 sensitivity of the minimiser of L2-regularised logistic regression (Chaudhuri et al. 2011, Cor. 8).

    For ``w* = argmin (1/n) sum_i loss(y_i w.x_i) + (lam/2) ||w||^2`` with a 1-Lipschitz, convex,
    differentiable loss (the logistic loss) and ``||x_i||_2 <= 1``, two datasets that differ in one record
    give ``||w*(D) - w*(D')||_2 <= 2 / (n lam)``.

    scikit-learn's ``LogisticRegression(C=C)`` minimises ``C sum_i loss + (1/2)||w||^2``, which is the
    objective above times ``n C`` with ``lam = 1 / (n C)``, so the bound is ``2 C``. It holds for the
    exact minimiser, with every coefficient penalised: fit with ``fit_intercept=False`` and, if an
    intercept is wanted, a constant feature included in ``||x_i|| <= 1``.

    Parameters
    ----------
    n : int
        Number of training records (needed with ``lam``; with ``C`` the bound does not depend on n).
    C : float, optional
        scikit-learn's inverse regularisation strength.
    lam : float, optional
        ``lambda`` in Chaudhuri et al.'s objective. Give exactly one of ``C`` and ``lam``.
    """
    n = check_positive_int("n", n, owner="logistic_regression_sensitivity")
    if (C is None) == (lam is None):
        raise MipkitValueError("Give exactly one of 'C' and 'lam' to logistic_regression_sensitivity.")
    if lam is None:
        lam = 1.0 / (n * check_positive("C", C, owner="logistic_regression_sensitivity"))
    lam = check_positive("lam", lam, owner="logistic_regression_sensitivity")
    return 2.0 / (n * lam)


@dataclass(frozen=True)
class DPNoiseOption:
    """One DP mechanism that reaches ``eta`` for a given sensitivity, described as data.

    Attributes
    ----------
    name : str
        ``"gaussian-gdp"``, ``"laplace-exact-curve"``, ``"laplace-thm4"`` or ``"exp-norm-l2-thm4"``.
    eta : float
    dim : int
        Number of released coordinates.
    sensitivity : float
    sensitivity_norm : {"l1", "l2"}
    scale : float
        Gaussian sigma, Laplace ``b`` per coordinate, or the exp-norm ``s`` in ``exp(-||x||_2/s)``.
    coordinate_std : float
        Standard deviation of the noise on each coordinate (all equal).
    epsilon : float or None
        The pure-DP epsilon behind it (Thm-4 options), else None.
    basis : str
        How eta follows from the DP guarantee.
    """

    name: str
    eta: float
    dim: int
    sensitivity: float
    sensitivity_norm: str
    scale: float
    coordinate_std: float
    epsilon: float | None
    basis: str

    def noise_law(self) -> NoiseLaw:
        """The noise law to sample, in the weighted-norm parametrisation of :mod:`noise_samplers`."""
        d = self.dim
        ones = np.ones(d)
        if self.name == "gaussian-gdp":
            return GaussianNoise(self.scale / math.sqrt(d), ones)
        if self.name in ("laplace-thm4", "laplace-exact-curve"):
            # i.i.d. Laplace(b) = density exp(-||x||_1 / b) = exp(-||x||_{1,1} / (b/d)).
            return ExpNormNoise(self.scale / d, ones, p=1.0)
        if self.name == "exp-norm-l2-thm4":
            # exp(-||x||_2 / s) = exp(-||x||_{1,2} / (s / sqrt(d))).
            return ExpNormNoise(self.scale / math.sqrt(d), ones, p=2.0)
        raise MipkitValueError(f"Unknown DP option {self.name!r}.")  # pragma: no cover

    def to_dict(self) -> dict:
        return asdict(self)


def dp_alternatives(
    eta: float, sensitivity: float, dim: int, *, sensitivity_norm: str = "l2"
) -> list[DPNoiseOption]:
    """The DP mechanisms that reach ``eta`` for a ``dim``-vector output with the given sensitivity.

    Parameters
    ----------
    eta : float in (0, 1/2)
    sensitivity : float > 0
        Bound on ``||q(D) - q(D')||`` over neighbouring datasets (one record replaced).
    dim : int
        Number of released coordinates ``d``.
    sensitivity_norm : {"l2", "l1"}
        The norm of the bound. An l1 bound is also an l2 bound (``||v||_2 <= ||v||_1``).

    Returns
    -------
    list of DPNoiseOption
        ``"gaussian-gdp"`` (``sigma = L2/(2 Phi^-1(1/2+eta))``, std ``sigma``); for an l2 bound
        ``"exp-norm-l2-thm4"`` (Chaudhuri et al.'s noise, radius ``Gamma(d, s)``, std
        ``s sqrt(d+1)``); for an l1 bound ``"laplace-thm4"`` (i.i.d. ``Lap(L1/eps)``, std ``sqrt(2) b``);
        for ``d = 1`` also ``"laplace-exact-curve"``. The exact Laplace curve is the scalar mechanism's
        curve; for ``d > 1`` mipkit does not use it.
    """
    e = check_eta(eta, owner="dp_alternatives")
    sens = check_positive("sensitivity", sensitivity, owner="dp_alternatives")
    d = check_positive_int("dim", dim, owner="dp_alternatives")
    check_choice("sensitivity_norm", sensitivity_norm, ("l2", "l1"), owner="dp_alternatives")
    eps = epsilon_for_eta(e)
    gdp_basis = "mu-GDP with mu = L2/sigma; eta = Phi(mu/2) - 1/2 (f-DP implies MIP)"
    thm4_basis = f"pure eps-DP with eps = {eps:.6g}; eta = 1/(1+e^-eps) - 1/2 (Izzo et al. Thm 4)"
    sigma = gaussian_sigma_for_eta(e, sens)
    options = [DPNoiseOption("gaussian-gdp", e, d, sens, sensitivity_norm, sigma, sigma, None, gdp_basis)]
    if sensitivity_norm == "l2":
        s = exp_norm_l2_scale_for_eta(e, sens)
        options.append(
            DPNoiseOption("exp-norm-l2-thm4", e, d, sens, "l2", s, s * math.sqrt(d + 1.0), eps, thm4_basis)
        )
    else:
        b = laplace_scale_for_eta(e, sens, method="thm4")
        options.append(DPNoiseOption("laplace-thm4", e, d, sens, "l1", b, math.sqrt(2) * b, eps, thm4_basis))
    if d == 1:
        b = laplace_scale_for_eta(e, sens, method="exact-curve")
        options.append(
            DPNoiseOption(
                "laplace-exact-curve",
                e,
                1,
                sens,
                sensitivity_norm,
                b,
                math.sqrt(2) * b,
                None,
                "exact Laplace curve: adv = 1 - exp(-L/(2b)); eta = adv/2",
            )
        )
    return options
