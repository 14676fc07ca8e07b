"""The trade-off curve: the one object every privacy guarantee is turned into.

A trade-off function ``f(alpha)`` is the smallest type-II error (FNR, ``beta``) of any test of
``D`` against a neighbouring ``D'`` at type-I error (FPR) ``alpha`` (Dong, Roth & Su's f-DP; docs/theory.md
section 3). Every risk in :mod:`mipkit.accounting.risk` is a function of this curve, so a mechanism only has
to provide ``f``. Subclasses give closed forms where they exist; the defaults here are numeric.

Contract every curve satisfies (tested for each subclass in ``tests/accounting``):
``f`` is non-increasing, convex, ``0 <= f(alpha) <= 1 - alpha``, ``f(0) <= 1`` and ``f(1) = 0``.
"""

from __future__ import annotations

import abc
import math

import numpy as np

from mipkit._validation import MipkitValueError, check_delta, check_epsilon

__all__ = ["TradeoffCurve"]

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


#: Grid for the numeric ``delta(epsilon)``: the maximiser of ``1 - f(alpha) - e^eps alpha`` moves towards
#: 0 like ``e^-eps`` for large epsilon, so the log part reaches far below the advantage grid.
_DELTA_GRID = np.unique(
    np.concatenate(
        [
            [0.0],
            np.logspace(-40, 0, 8001),
            1.0 - np.logspace(-12, 0, 2001),
            np.linspace(0.0, 1.0, 4001),
        ]
    ).clip(0.0, 1.0)
)

#: Largest epsilon the numeric ``epsilon_for_delta`` searches (``e^600`` is still a finite float).
_EPSILON_SEARCH_MAX = 600.0


def check_alpha(alpha: float | np.ndarray, *, owner: str | None = None) -> np.ndarray:
    """Return ``alpha`` as a float array after checking every value is a probability in [0, 1]."""
    a = np.asarray(alpha, dtype=float)
    if a.size and not np.all((a >= 0.0) & (a <= 1.0)):
        where = f" of {owner}" if owner else ""
        bad = a[~((a >= 0.0) & (a <= 1.0))].ravel()[0]
        raise MipkitValueError(
            f"The 'alpha' parameter{where} must be in [0, 1] (a false-positive rate). Got {bad!r} instead."
        )
    return a


def _sup_unimodal(values_fn, grid: np.ndarray, *, zoom_steps: int = 14, points: int = 33) -> float:
    """Supremum of a unimodal (e.g. concave) function of ``alpha`` on [0, 1].

    Takes the best point of ``grid``, then zooms: the maximiser of a unimodal function lies between the
    neighbours of the best sampled point, so each step samples ``points`` points there and keeps the
    neighbours of the new best (a ``(points - 1)/2``-fold shrink per step, to float resolution).
    """
    vals = values_fn(grid)
    i = int(np.nanargmax(vals))
    best = float(vals[i])
    lo = float(grid[max(i - 1, 0)])
    hi = float(grid[min(i + 1, grid.size - 1)])
    for _ in range(zoom_steps):
        if hi - lo <= 4 * np.finfo(float).eps * max(abs(hi), 1e-300):
            break
        pts = np.linspace(lo, hi, points)
        vals = values_fn(pts)
        j = int(np.nanargmax(vals))
        best = max(best, float(vals[j]))
        lo, hi = float(pts[max(j - 1, 0)]), float(pts[min(j + 1, points - 1)])
    return best


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

        Numeric default: maximum over a fine grid (log-dense near 0 and 1), refined by zooming in on
        the best point to float resolution (the gap is concave). Subclasses with a closed form override it.
        """

        def gap(a: np.ndarray) -> np.ndarray:
            return np.asarray(self.tpr(a), dtype=float) - a

        best = max(_sup_unimodal(gap, _ALPHA_GRID), _sup_unimodal(gap, _DELTA_GRID))
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

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Smallest ``delta`` such that the curve is ``(epsilon, delta)``-DP.

        ``delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha)`` (Dong, Roth & Su 2022, Prop. 2.12:
        the primal-dual view, ``delta(eps) = 1 + f*(-e^eps)``). This is the one-sided form; it is the
        usual profile for symmetric curves (every curve in :mod:`mipkit.accounting.curves`).

        Numeric default: the function is concave in ``alpha`` (``f`` is convex), so its maximum over a
        grid that is dense on a log scale down to ``1e-40`` is refined by zooming in on the best point
        to float resolution. It uses :meth:`tpr`, so a subclass that computes ``1 - f`` without
        cancellation gets ``delta`` to relative precision even far below ``1e-16``. Closed forms
        override it.
        """
        eps = check_epsilon(epsilon, owner=f"{type(self).__name__}.delta_for_epsilon")
        scale = math.exp(min(eps, 709.0))  # e^709 alpha >= 1 for every normal alpha: no overflow above

        def gap(a: np.ndarray) -> np.ndarray:
            return np.asarray(self.tpr(a), dtype=float) - scale * a

        return float(min(max(_sup_unimodal(gap, _DELTA_GRID), 0.0), 1.0))

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest ``epsilon >= 0`` such that the curve is ``(epsilon, delta)``-DP.

        Inverts the non-increasing :meth:`delta_for_epsilon` by bracketing and bisection; the returned
        value ``e`` always satisfies ``delta_for_epsilon(e) <= delta`` (it errs on the safe side by at most
        a relative ``1e-10``). Returns ``0.0`` when ``delta >= delta_for_epsilon(0)`` and ``math.inf`` when
        no finite epsilon reaches ``delta`` (e.g. an ``(eps, delta0)``-DP curve asked for ``delta < delta0``).
        For curves whose ``delta(eps)`` is positive for every finite ``eps`` (Gaussian), ``delta = 0``
        numerically gives the epsilon where ``delta(eps)`` underflows; such subclasses return ``inf``.
        """
        target = check_delta(delta, owner=f"{type(self).__name__}.epsilon_for_delta")
        if self.delta_for_epsilon(0.0) <= target:
            return 0.0
        lo, hi = 0.0, 1.0
        while self.delta_for_epsilon(hi) > target:
            lo, hi = hi, 2.0 * hi
            if hi > _EPSILON_SEARCH_MAX:
                if self.delta_for_epsilon(_EPSILON_SEARCH_MAX) > target:
                    return math.inf
                hi = _EPSILON_SEARCH_MAX
                break
        for _ in range(200):
            if hi - lo <= 1e-10 * max(1.0, hi):
                break
            mid = 0.5 * (lo + hi)
            if self.delta_for_epsilon(mid) <= target:
                hi = mid
            else:
                lo = mid
        return float(hi)

    # -- one-point queries (what a calibration loop asks; a curve may answer them without building itself)
    def tpr_at_fpr(self, alpha: float) -> float:
        """Largest TPR at one FPR ``alpha``: ``1 - f(alpha)`` as a float.

        Equals ``float(self.tpr(alpha))``; :class:`~mipkit.accounting.pld.PLDCurve` answers from its
        supporting lines without building the whole curve.
        """
        return float(self.tpr(check_alpha(alpha, owner=f"{type(self).__name__}.tpr_at_fpr")))

    def alpha_at_tpr_fast(self, tpr: float) -> float:
        """:meth:`alpha_at_tpr` at one TPR, as a float (a PLD curve answers without building itself)."""
        return float(self.alpha_at_tpr(tpr))

    # -- the relation and the two sides -------------------------------------------------------------
    @property
    def neighbours(self) -> str:
        """The neighbouring relation the curve certifies: the record's (``"add_remove"`` when unknown)."""
        record = getattr(self, "mechanism", None)
        return getattr(record, "neighbours", "add_remove")

    #: Whether the curve is exact arithmetic of its guarantee (closed forms); a PLD curve is not: it is one
    #: side of an interval that holds the exact curve (:meth:`lower_curve` is the other).
    exact: bool = True

    def lower_curve(self) -> TradeoffCurve:
        """The optimistic side: a curve never below the exact one, so its risks are lower bounds.

        The curve itself for exact curves; a PLD curve returns its optimistic PLD's curve. Every risk lies
        between its value on :meth:`lower_curve` and on the curve (docs/theory.md section 3).
        """
        return self

    def describe(self) -> dict:
        """A JSON-ready description of the mechanism behind the curve."""
        return {"curve": type(self).__name__, "neighbours": self.neighbours}
