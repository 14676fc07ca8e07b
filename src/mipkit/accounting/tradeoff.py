"""The trade-off curve: the one object every privacy guarantee is turned into.

A trade-off function ``f(alpha)`` is the smallest type-II error (FNR, ``beta``) of any test of
``D`` against a neighbouring ``D'`` at type-I error (FPR) ``alpha`` (Dong, Roth & Su's f-DP; MATH.md 3).
Every risk in :mod:`mipkit.accounting.risk` is a function of this curve, so a mechanism only has to
provide ``f``. Subclasses give closed forms where they exist; the defaults here are numeric.

Contract every curve satisfies (tested for each subclass in ``tests/accounting``):
``f`` is non-increasing, convex, ``0 <= f(alpha) <= 1 - alpha``, ``f(0) <= 1`` and ``f(1) = 0``.
"""

from __future__ import annotations

import abc

import numpy as np
from scipy import optimize

#: Grid on which numeric defaults look for suprema: dense near 0 and 1 on a log scale, plus a
#: uniform part. Closed-form subclasses do not use it.
_ALPHA_GRID = np.unique(
    np.concatenate(
        [
            np.logspace(-12, 0, 4001),
            1.0 - np.logspace(-12, 0, 4001),
            np.linspace(0.0, 1.0, 20001),
        ]
    ).clip(0.0, 1.0)
)


class TradeoffCurve(abc.ABC):
    """Abstract trade-off curve ``beta = f(alpha)``.

    Subclasses implement :meth:`f`; they should override :meth:`advantage` and :meth:`alpha_at_tpr`
    with closed forms where available. Instances are immutable descriptions (dp_accounting's
    ``DpEvent`` practice): the arithmetic lives in methods and in :mod:`mipkit.accounting.risk`.
    """

    @abc.abstractmethod
    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """Smallest FNR at FPR ``alpha`` (vectorised; returns an array of ``alpha``'s shape)."""

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """Largest TPR at FPR ``alpha``: ``1 - f(alpha)``."""
        return 1.0 - self.f(alpha)

    def advantage(self) -> float:
        """Total-variation advantage ``sup_alpha (1 - alpha - f(alpha))`` (max TPR - FPR).

        Numeric default: maximum over a fine grid, refined by bounded scalar search around the best
        grid point. Subclasses with a closed form override it.
        """
        a = _ALPHA_GRID
        gap = 1.0 - a - self.f(a)
        i = int(np.argmax(gap))
        lo = a[max(i - 1, 0)]
        hi = a[min(i + 1, a.size - 1)]
        best = float(gap[i])
        if hi > lo:
            res = optimize.minimize_scalar(
                lambda x: -(1.0 - x - float(self.f(x))),
                bounds=(lo, hi),
                method="bounded",
                options={"xatol": 1e-14},
            )
            best = max(best, -float(res.fun))
        return float(min(max(best, 0.0), 1.0))

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """Smallest FPR at which some test reaches TPR ``tpr``: ``inf{alpha : 1 - f(alpha) >= tpr}``.

        Numeric default by bisection on the non-decreasing function ``1 - f``.
        """
        r = np.atleast_1d(np.asarray(tpr, dtype=float))
        out = np.empty_like(r)
        for j, target in enumerate(r):
            if 1.0 - float(self.f(0.0)) >= target:
                out[j] = 0.0
                continue
            lo, hi = 0.0, 1.0
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if 1.0 - float(self.f(mid)) >= target:
                    hi = mid
                else:
                    lo = mid
                if hi - lo < 1e-15:
                    break
            out[j] = hi
        return out.reshape(np.shape(tpr)) if np.ndim(tpr) else out

    def describe(self) -> dict:
        """A JSON-ready description of the mechanism behind the curve."""
        return {"curve": type(self).__name__}
