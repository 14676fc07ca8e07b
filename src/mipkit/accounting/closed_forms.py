"""Trade-off curves of the mechanisms with closed forms: (epsilon, delta)-DP, Gaussian (mu-GDP), Laplace.

Each curve is a frozen dataclass, validated when it is built (:class:`~mipkit.MipkitValueError`); the
arithmetic lives in its methods and in :mod:`mipkit.accounting.risk`. Every curve carries the mechanism
record it was built from (:mod:`mipkit.accounting.mechanisms`; ``curve.mechanism``);
:func:`mipkit.accounting.tradeoff_curve` (:mod:`mipkit.accounting.curves`) is the one way from a record to
its curve. Notation: ``alpha`` = false-positive rate (type-I error), ``beta = f(alpha)`` = smallest
false-negative rate, TPR = ``1 - beta``. References: Dong, Roth & Su, "Gaussian Differential Privacy"
(JRSS-B 2022; arXiv:1905.02383), docs/theory.md section 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from mipkit._validation import (
    MipkitValueError,
    check_delta,
    check_epsilon,
    check_interval,
    check_positive,
)
from mipkit.accounting.mechanisms import GDP, ApproxDP, LaplaceMechanism, Mechanism, PureDP
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = ["ApproxDPCurve", "GaussianCurve", "LaplaceCurve"]


def _exp(x: float) -> float:
    """``e^x`` capped at ``e^709`` (the largest power of e below the largest double): the curves multiply it
    by an alpha, and ``e^709 alpha >= 1`` for every normal alpha, so above ``eps = 709`` the cap changes
    nothing but subnormal alphas, where ``math.exp`` would overflow (``mipkit risk --epsilon 1000``)."""
    return math.exp(min(x, 709.0))


def _shaped(values: np.ndarray, like: float | np.ndarray) -> np.ndarray:
    """Return ``values`` as an array with the shape of ``like`` (0-d for a scalar input)."""
    return np.asarray(values, dtype=float).reshape(np.shape(like))


def _check_tpr(tpr: float | np.ndarray, owner: str) -> np.ndarray:
    """Return ``tpr`` as a float array after checking every value lies in [0, 1]."""
    r = np.asarray(tpr, dtype=float)
    inside = (r >= 0.0) & (r <= 1.0)
    if r.size and not np.all(inside):
        bad = float(r[~inside].ravel()[0])
        raise MipkitValueError(f"The 'tpr' parameter of {owner} must be in [0, 1]. Got {bad!r} instead.")
    return r


def _attach(curve: TradeoffCurve, given: Mechanism | None, default: Mechanism) -> None:
    """Store the record a curve was built from (``default``: the record of its own parameters)."""
    if given is not None and not isinstance(given, Mechanism):
        raise MipkitValueError(
            f"The 'mechanism' parameter of {type(curve).__name__} must be a mechanism record or None. "
            f"Got {type(given).__name__} instead."
        )
    object.__setattr__(curve, "mechanism", default if given is None else given)


def _describe(curve: TradeoffCurve, *keys: str) -> dict:
    """``{"curve": <class>, "neighbours": ..., "mechanism": <record dict>, <key>: <value>, ...}``."""
    record = curve.mechanism.to_dict()  # type: ignore[attr-defined]
    return {
        "curve": type(curve).__name__,
        "neighbours": curve.neighbours,
        "mechanism": record,
        **{k: getattr(curve, k) for k in keys},
    }


def _mechanism_field() -> Any:
    """The ``mechanism`` field of every closed-form curve: the record it was built from (not in ``==``)."""
    return field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ApproxDPCurve(TradeoffCurve):
    """Trade-off curve of an ``(epsilon, delta)``-DP mechanism.

    ``f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))`` (Kairouz, Oh & Viswanath
    2015; Dong, Roth & Su 2022, eq. (5); docs/theory.md section 3). It is the pointwise smallest curve
    among all ``(epsilon, delta)``-DP mechanisms, so every bound derived from it holds for any such
    mechanism.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound, ``>= 0``.
    delta : float, default=0.0
        Failure probability, in ``[0, 1)``.
    mechanism : Mechanism, optional
        The record the curve was built from (:func:`~mipkit.accounting.tradeoff_curve` sets it); default
        ``PureDP(epsilon)`` when ``delta = 0``, else ``ApproxDP(epsilon, delta)``.
    """

    epsilon: float
    delta: float = 0.0
    mechanism: Mechanism | None = _mechanism_field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, owner="ApproxDPCurve"))
        object.__setattr__(self, "delta", check_delta(self.delta, owner="ApproxDPCurve"))
        default = PureDP(self.epsilon) if self.delta == 0.0 else ApproxDP(self.epsilon, self.delta)
        _attach(self, self.mechanism, default)

    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``."""
        a = check_alpha(alpha, owner="ApproxDPCurve.f")
        e, d = self.epsilon, self.delta
        out = np.maximum.reduce([np.zeros_like(a), 1.0 - d - _exp(e) * a, math.exp(-e) * (1.0 - d - a)])
        return _shaped(out, alpha)

    def advantage(self) -> float:
        """``delta + (1 - delta) tanh(eps / 2) = delta + (1 - delta)(e^eps - 1)/(e^eps + 1)``.

        Attained at the kink ``alpha = (1 - delta)/(1 + e^eps)``; twice Thm 4's eta (Izzo et al. 2024).
        """
        return float(self.delta + (1.0 - self.delta) * math.tanh(self.epsilon / 2.0))

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """``max(0, (r - delta) e^-eps, 1 - delta - e^eps (1 - r))``: the inverse of ``1 - f``."""
        r = _check_tpr(tpr, "ApproxDPCurve.alpha_at_tpr")
        e, d = self.epsilon, self.delta
        out = np.maximum.reduce([np.zeros_like(r), (r - d) * math.exp(-e), 1.0 - d - _exp(e) * (1.0 - r)])
        return _shaped(out, tpr)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """``delta`` for ``eps' >= eps``; else ``delta + (1 - delta)(e^eps - e^eps')/(1 + e^eps)``.

        The supremum of ``1 - f(alpha) - e^eps' alpha`` over the piecewise-linear curve sits at its kink
        ``alpha = (1 - delta)/(1 + e^eps)`` (or at 0 when ``eps' >= eps``).
        """
        e2 = check_epsilon(epsilon, owner="ApproxDPCurve.delta_for_epsilon")
        e, d = self.epsilon, self.delta
        if e2 >= e:
            return float(d)
        # (e^e - e^e2)/(1 + e^e) computed without overflow for large e
        frac = math.exp(-math.log1p(math.exp(-e))) * (1.0 - math.exp(e2 - e))
        return float(min(d + (1.0 - d) * frac, 1.0))

    def epsilon_for_delta(self, delta: float) -> float:
        """Inverse of :meth:`delta_for_epsilon`: ``log(e^eps - (delta' - delta)(1 + e^eps)/(1 - delta))``.

        ``0`` when ``delta' >= delta_for_epsilon(0)``; ``inf`` when ``delta' < delta`` (no finite epsilon).
        """
        d2 = check_delta(delta, owner="ApproxDPCurve.epsilon_for_delta")
        e, d = self.epsilon, self.delta
        if d2 < d:
            return math.inf
        if d2 >= self.delta_for_epsilon(0.0):
            return 0.0
        # e^e2 = e^e - (d2 - d)(1 + e^e)/(1 - d); in logs: e + log(1 - (d2 - d)(1 + e^-e)/(1 - d))
        inner = 1.0 - (d2 - d) * (1.0 + math.exp(-e)) / (1.0 - d)
        return float(max(e + math.log(inner), 0.0)) if inner > 0 else 0.0

    def describe(self) -> dict:
        return _describe(self, "epsilon", "delta")


@dataclass(frozen=True)
class GaussianCurve(TradeoffCurve):
    """Trade-off curve of a mu-GDP mechanism (Dong, Roth & Su 2022, Def. 2.6 and eq. (4)).

    ``f(alpha) = Phi(Phi^-1(1 - alpha) - mu)``: testing ``N(0, 1)`` against ``N(mu, 1)``. The Gaussian
    mechanism with noise ``sigma`` on a query of l2-sensitivity ``L`` is ``L/sigma``-GDP:
    ``tradeoff_curve(GaussianMechanism(sigma, L))``.

    Parameters
    ----------
    mu : float
        Distance between the two unit-variance normals, ``>= 0`` (``0`` = no information).
    mechanism : Mechanism, optional
        The record the curve was built from (:func:`~mipkit.accounting.tradeoff_curve` sets it); default
        ``GDP(mu)``.
    """

    mu: float
    mechanism: Mechanism | None = _mechanism_field()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "mu", check_interval("mu", self.mu, 0.0, math.inf, closed="left", owner="GaussianCurve")
        )
        _attach(self, self.mechanism, GDP(self.mu))

    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """``Phi(Phi^-1(1 - alpha) - mu)``."""
        a = check_alpha(alpha, owner="GaussianCurve.f")
        return _shaped(stats.norm.cdf(stats.norm.isf(a) - self.mu), alpha)

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """``1 - f(alpha) = Phi(Phi^-1(alpha) + mu)``, computed without cancellation at small ``alpha``."""
        a = check_alpha(alpha, owner="GaussianCurve.tpr")
        return _shaped(stats.norm.cdf(stats.norm.ppf(a) + self.mu), alpha)

    def advantage(self) -> float:
        """``2 Phi(mu/2) - 1`` = TV(N(0,1), N(mu,1)), attained at ``alpha = Phi(-mu/2)``."""
        return float(2.0 * stats.norm.cdf(self.mu / 2.0) - 1.0)

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """``alpha*(r) = Phi(Phi^-1(r) - mu)`` (docs/theory.md section 4)."""
        r = _check_tpr(tpr, "GaussianCurve.alpha_at_tpr")
        return _shaped(stats.norm.cdf(stats.norm.ppf(r) - self.mu), tpr)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (Dong, Roth & Su 2022, Cor. 2.13)."""
        e = check_epsilon(epsilon, owner="GaussianCurve.delta_for_epsilon")
        if self.mu == 0.0:
            return 0.0
        mu = self.mu
        first = stats.norm.cdf(-e / mu + mu / 2.0)
        second = math.exp(e + float(stats.norm.logcdf(-e / mu - mu / 2.0)))
        return float(min(max(first - second, 0.0), 1.0))

    def epsilon_for_delta(self, delta: float) -> float:
        """Root of the closed-form :meth:`delta_for_epsilon`; ``inf`` at ``delta = 0`` when ``mu > 0``."""
        d = check_delta(delta, owner="GaussianCurve.epsilon_for_delta")
        if d == 0.0 and self.mu > 0.0:
            return math.inf
        return super().epsilon_for_delta(d)

    def describe(self) -> dict:
        return _describe(self, "mu")


@dataclass(frozen=True)
class LaplaceCurve(TradeoffCurve):
    """Exact trade-off curve of the Laplace mechanism (Dong, Roth & Su 2022, Example / eq. for Lap).

    Testing ``Lap(0, b)`` against ``Lap(L, b)`` with ``eps = L/b``; the likelihood ratio is monotone in
    the output, so the Neyman-Pearson tests are thresholds and

    * ``f(alpha) = 1 - e^eps alpha``            for ``alpha < e^-eps / 2``,
    * ``f(alpha) = e^-eps / (4 alpha)``         for ``e^-eps / 2 <= alpha <= 1/2``,
    * ``f(alpha) = e^-eps (1 - alpha)``         for ``alpha > 1/2``.

    (Threshold ``t >= L``, ``0 <= t <= L`` and ``t < 0`` respectively; verified in the tests against a
    direct likelihood-ratio test on the two densities.) It is tighter than the ``(eps, 0)``-DP curve
    between the two kinks.

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    sensitivity : float, default=1.0
        l1-sensitivity ``L > 0`` of the query.
    mechanism : Mechanism, optional
        The record the curve was built from (:func:`~mipkit.accounting.tradeoff_curve` sets it); default
        ``LaplaceMechanism(scale, sensitivity)``.
    """

    scale: float
    sensitivity: float = 1.0
    mechanism: Mechanism | None = _mechanism_field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale, owner="LaplaceCurve"))
        object.__setattr__(
            self, "sensitivity", check_positive("sensitivity", self.sensitivity, owner="LaplaceCurve")
        )
        _attach(self, self.mechanism, LaplaceMechanism(self.scale, self.sensitivity))

    @property
    def epsilon(self) -> float:
        """Pure-DP epsilon of the mechanism: ``sensitivity / scale``."""
        return self.sensitivity / self.scale

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """``1 - f(alpha)`` piece by piece (exact ``e^eps alpha`` on the first piece)."""
        a = check_alpha(alpha, owner="LaplaceCurve.tpr")
        e = self.epsilon
        k = math.exp(-e)
        with np.errstate(divide="ignore", over="ignore"):
            out = np.where(
                a < k / 2.0,
                np.minimum(_exp(e) * a, 0.5),
                np.where(a <= 0.5, 1.0 - k / (4.0 * np.maximum(a, 1e-300)), 1.0 - k * (1.0 - a)),
            )
        return _shaped(out, alpha)

    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """The three-piece curve above."""
        return _shaped(1.0 - self.tpr(alpha), alpha)

    def advantage(self) -> float:
        """``1 - e^{-eps/2}`` = TV(Lap(0, b), Lap(L, b)), attained at ``alpha = e^{-eps/2}/2``."""
        return float(-math.expm1(-self.epsilon / 2.0))

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """Inverse of ``1 - f``: ``r e^-eps`` (r <= 1/2), ``e^-eps / (4(1 - r))``, ``1 - (1 - r) e^eps``."""
        r = _check_tpr(tpr, "LaplaceCurve.alpha_at_tpr")
        e = self.epsilon
        k = math.exp(-e)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            out = np.where(
                r <= 0.5,
                r * k,
                np.where(
                    r <= 1.0 - k / 2.0,
                    k / (4.0 * np.maximum(1.0 - r, 1e-300)),
                    1.0 - (1.0 - r) / k,
                ),
            )
        return _shaped(np.clip(out, 0.0, 1.0), tpr)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """``max(0, 1 - e^{(eps' - eps)/2})``: the supremum sits at ``alpha = e^{-(eps + eps')/2}/2``."""
        e2 = check_epsilon(epsilon, owner="LaplaceCurve.delta_for_epsilon")
        return float(max(0.0, -math.expm1((e2 - self.epsilon) / 2.0)))

    def epsilon_for_delta(self, delta: float) -> float:
        """Inverse of :meth:`delta_for_epsilon`: ``max(0, eps + 2 log(1 - delta))``."""
        d = check_delta(delta, owner="LaplaceCurve.epsilon_for_delta")
        return float(max(0.0, self.epsilon + 2.0 * math.log1p(-d)))

    def describe(self) -> dict:
        return _describe(self, "scale", "sensitivity", "epsilon")
