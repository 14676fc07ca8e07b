"""Trade-off curves of Renyi-DP and zero-concentrated DP guarantees (what Opacus's and TF Privacy's RDP
accountants report).

An RDP guarantee bounds ``D_a(M(D) || M(D'))`` by ``r_a`` at each order ``a`` for all neighbours (both
orders of a pair), so every ``(eps, delta(eps))`` it implies holds for both orders and the curve
``sup_{eps >= 0} f_{eps, delta(eps)}`` is a valid, symmetric trade-off curve (Dong, Roth & Su 2022,
Prop. 2.12). ``delta(eps)`` is the conversion of Canonne, Kamath & Steinke ("The Discrete Gaussian for
Differential Privacy", 2020, Prop. 12), the one ``dp_accounting`` and Opacus use, minimised over the orders:

``delta(eps) = min_a exp((a - 1)(r_a - eps + log(1 - 1/a))) / a``,

together with ``delta <= TV <= sqrt(1 - e^{-KL})`` (``KL <= r_a`` for every order). Every term is a valid
bound, so the minimum over any set of orders is; ``ZCDP(rho)`` (``r_a = rho a`` for all ``a > 1``) is
minimised over a dense grid of orders. The curve is kept through its supporting lines at a dense grid of
``eps`` (:class:`RDPCurve`); fewer lines only lower the curve, so it never under-reports risk.
docs/theory.md section 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mipkit.accounting.mechanisms import RDP, ZCDP, Composed, Mechanism
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = ["RDPCurve", "rdp_delta"]

#: Orders for a zCDP guarantee (its bound holds at every order > 1).
ZCDP_ORDERS = np.unique(np.concatenate([1.0 + np.logspace(-3, 4, 3000), np.linspace(1.01, 200.0, 2000)]))


def rdp_of(mechanism: Mechanism) -> tuple[np.ndarray, np.ndarray]:
    """Orders and RDP values of an ``RDP`` / ``ZCDP`` record or a composition of them (the values add up
    at common orders; a zCDP part adds ``rho a`` at every order)."""
    if isinstance(mechanism, RDP):
        return np.asarray(mechanism.orders, dtype=float), np.asarray(mechanism.rdp_values, dtype=float)
    if isinstance(mechanism, ZCDP):
        return ZCDP_ORDERS.copy(), mechanism.rho * ZCDP_ORDERS
    assert isinstance(mechanism, Composed)
    rho = sum(p.rho for p in mechanism.mechanisms if isinstance(p, ZCDP))
    rdps = [p for p in mechanism.mechanisms if isinstance(p, RDP)]
    if not rdps:
        return ZCDP_ORDERS.copy(), rho * ZCDP_ORDERS
    orders = np.asarray(sorted(set.intersection(*(set(p.orders) for p in rdps))), dtype=float)
    values = rho * orders
    for p in rdps:
        lookup = dict(zip(p.orders, p.rdp_values, strict=True))
        values = values + np.asarray([lookup[a] for a in orders])
    return orders, values


def rdp_delta(orders: np.ndarray, values: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``delta(eps)`` of an RDP guarantee (module docstring), vectorised over ``eps >= 0``."""
    a = np.asarray(orders, dtype=float)[:, None]
    r = np.asarray(values, dtype=float)[:, None]
    e = np.atleast_1d(np.asarray(eps, dtype=float))[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cks = np.where(a > 1.01, (a - 1.0) * (r - e + np.log1p(-1.0 / a)) - np.log(a), np.inf)
    log_delta = np.min(cks, axis=0)
    kl = float(np.min(values))
    if kl >= 0.0:
        tv = -math.inf if kl == 0.0 else 0.5 * math.log1p(-math.exp(-kl))
        log_delta = np.minimum(log_delta, tv)
    return np.minimum(np.exp(log_delta), 1.0)


@dataclass(frozen=True, eq=False)
class RDPCurve(TradeoffCurve):
    """The trade-off curve of an RDP / zCDP guarantee: ``sup_eps f_{eps, delta(eps)}`` (module docstring).

    Parameters
    ----------
    mechanism : RDP, ZCDP or Composed of them
    """

    mechanism: Mechanism
    eps_grid: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        orders, values = rdp_of(self.mechanism)
        grid = self.eps_grid
        if grid is None:
            top = float(np.min(values)) + 60.0 + float(np.max(np.log(orders)))
            grid = np.unique(np.concatenate([[0.0], np.logspace(-6, math.log10(max(top, 1.0)), 800)]))
        delta = rdp_delta(orders, values, grid)
        keep = delta > 0.0
        keep[0] = True
        object.__setattr__(self, "eps_grid", grid[keep])
        object.__setattr__(self, "_gamma", np.exp(grid[keep]))
        object.__setattr__(self, "_delta", delta[keep])

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """``min_k min(delta_k + e^{eps_k} a, 1 - e^{-eps_k}(1 - delta_k - a))``, clipped to ``[a, 1]``."""
        a = check_alpha(alpha, owner="RDPCurve.tpr")
        flat = a.reshape(-1)
        g, d = self._gamma[:, None], self._delta[:, None]  # type: ignore[attr-defined]
        out = np.empty(flat.size)
        for start in range(0, flat.size, 1024):  # chunks keep the (lines x points) table small
            x = flat[None, start : start + 1024]
            best = np.minimum(np.min(d + g * x, axis=0), np.min(1.0 - (1.0 - d - x) / g, axis=0))
            out[start : start + 1024] = np.clip(best, x[0], 1.0)
        return out.reshape(np.shape(alpha))

    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        return 1.0 - self.tpr(alpha)

    def conversion_delta(self, epsilon: float) -> float:
        """The conversion's ``delta(eps)`` (module docstring)."""
        return float(rdp_delta(*rdp_of(self.mechanism), np.asarray([float(epsilon)]))[0])

    def delta_for_epsilon(self, epsilon: float) -> float:
        """The smaller of the conversion's ``delta(eps)`` and the curve's own profile (both valid: the curve
        is the convex envelope of the conversion's lines, which can be tighter where ``delta(eps)`` of the
        conversion is not convex in ``e^eps``)."""
        from mipkit._validation import check_epsilon

        e = check_epsilon(epsilon, owner="RDPCurve.delta_for_epsilon")
        return float(min(self.conversion_delta(e), super().delta_for_epsilon(e)))

    def advantage(self) -> float:
        """``delta(0)``: the largest TPR - FPR (:meth:`delta_for_epsilon` at 0)."""
        return self.delta_for_epsilon(0.0)

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest ``eps`` whose conversion ``delta(eps) <= delta`` (bisection; ``inf`` if none): the epsilon
        ``dp_accounting``'s and Opacus's RDP accountants report."""
        from mipkit._validation import check_delta

        d = check_delta(delta, owner="RDPCurve.epsilon_for_delta")
        orders, values = rdp_of(self.mechanism)
        if rdp_delta(orders, values, np.asarray([0.0]))[0] <= d:
            return 0.0
        lo, hi = 0.0, 1.0
        while rdp_delta(orders, values, np.asarray([hi]))[0] > d:
            lo, hi = hi, 2.0 * hi
            if hi > 1e6:
                return math.inf
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if rdp_delta(orders, values, np.asarray([mid]))[0] <= d:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-12 * max(1.0, hi):
                break
        return float(hi)

    def describe(self) -> dict:
        return {
            "curve": "RDPCurve",
            "neighbours": self.neighbours,
            "mechanism": self.mechanism.to_dict(),
            "conversion": "Canonne, Kamath & Steinke 2020, Prop. 12, at every epsilon",
        }
