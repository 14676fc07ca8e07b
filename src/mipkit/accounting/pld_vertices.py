"""Vertices of the trade-off curve of one discretised privacy-loss distribution (PLD).

The geometry behind :class:`mipkit.accounting.pld.PLDCurve` (docs/theory.md section 3). A discretised PLD
has masses ``p_i`` at the losses ``l_i`` (plus ``p_inf`` at ``+inf``); the matching masses of ``Q`` are
``q_i = p_i e^{-l_i}``. The Neyman-Pearson tests reject the losses above a threshold ``l_k``, which gives
the vertex

``alpha_k = sum_{l_i > l_k} q_i``,   ``1 - beta_k = p_inf + sum_{l_i > l_k} p_i``,

and the line through it of slope ``-e^{l_k}`` is ``beta = 1 - delta(l_k) - e^{l_k} alpha``.

* :func:`positive_part`: the vertices with ``l_k >= 0`` and their ``delta(eps_k)``, summed from the largest
  loss down (small ``alpha`` keeps full relative precision).
* :func:`symmetric_vertices`: the symmetric curve ``max(F, F^-1)`` of that chain (Dong, Roth & Su 2022,
  Prop. 2.12 and F.2).
* :func:`envelope`: the lower convex envelope of several such curves (the add and remove PLDs).
* :class:`Lines`: the supporting lines, for one-point queries without building the vertices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Lines", "Vertices", "envelope", "pmf_arrays", "positive_part", "symmetric_vertices"]

#: Number of points above which the envelope prunes interior points with Qhull before the exact hull.
_QHULL_MIN_POINTS = 4096


@dataclass(frozen=True)
class Lines:
    """The supporting lines ``beta = 1 - delta_k - gamma_k alpha`` (``gamma_k = e^{eps_k} >= 1``) of a curve.

    ``eps_k`` runs over ``0`` and the positive losses of the PLD, increasing; ``delta_k = delta(eps_k)``.
    The curve is ``max(0, max_k line_k(alpha), max_k mirror_k(alpha))`` with the mirrored lines
    ``beta = (1 - delta_k - alpha) / gamma_k``.
    """

    gamma: np.ndarray
    delta: np.ndarray

    def tpr(self, alpha: float) -> float:
        """``1 - f(alpha)`` from the lines (largest TPR of any line at ``alpha``)."""
        direct = float(np.min(self.delta + self.gamma * alpha))
        mirrored = float(np.min(1.0 - (1.0 - self.delta - alpha) / self.gamma))
        return min(max(min(direct, mirrored), alpha), 1.0)

    def alpha_at_tpr(self, r: float) -> float:
        """``inf{alpha : 1 - f(alpha) >= r}``: the smallest ``alpha`` at which some line reaches ``r``."""
        direct = np.max((r - self.delta) / self.gamma)
        mirrored = np.max(1.0 - self.delta - self.gamma * (1.0 - r))
        return float(min(max(max(direct, mirrored), 0.0), r))


#: The largest loss kept as such when a pmf is read into vertices (``e^700`` is finite in double precision).
MAX_FINITE_LOSS = 700.0


def pmf_arrays(pmf: Any) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Losses (ascending), masses, ``+inf`` mass and grid step of a ``dp_accounting`` PLD pmf."""
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # private: dp_accounting has no accessor
    lower = int(dense._lower_loss)
    step = float(dense._discretization)
    inf_mass = float(dense._infinity_mass)
    losses = (lower + np.arange(probs.size)) * step
    return losses, probs, inf_mass, step


def positive_part(pmf: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The vertices with ``l_k >= 0``: thresholds ``eps_k``, ``alpha_k``, ``tpr_k`` and ``delta(eps_k)``.

    Vertex ``k`` rejects the losses ``> eps_k`` (``eps_0 = +inf``: only the ``+inf`` atom), and the line
    of slope ``-e^{eps_k}`` through it is ``1 - delta(eps_k) - e^{eps_k} alpha``. Sums run from the
    largest loss down, so small ``alpha`` and ``1 - beta`` keep full relative precision.
    """
    losses, probs, inf_mass, _ = pmf_arrays(pmf)
    # Losses beyond e^700 (little noise, many steps) would overflow e^eps: a mass p at such a loss adds at
    # most p e^-700 < 1e-304 to alpha, below double precision, so it joins the +inf atom (exact in floats).
    huge = losses > MAX_FINITE_LOSS
    if huge.any():
        inf_mass += float(probs[huge].sum())
        losses, probs = losses[~huge], probs[~huge]
    pos = losses > 0.0
    lp, pp = losses[pos][::-1], probs[pos][::-1]  # positive losses, largest first
    qp = pp * np.exp(-lp)
    alpha = np.concatenate([[0.0], np.cumsum(qp)])
    tpr = inf_mass + np.concatenate([[0.0], np.cumsum(pp)])
    # threshold of vertex k: the next loss not yet rejected (0 for the last vertex: all positive losses)
    eps = np.concatenate([lp, [0.0]])
    delta = tpr - np.exp(eps) * alpha
    return eps, np.minimum(alpha, 1.0), np.minimum(tpr, 1.0), np.clip(delta, 0.0, 1.0)


@dataclass(frozen=True)
class Vertices:
    """A convex piecewise-linear curve by its vertices (``x`` increasing), with ``tpr = 1 - beta``."""

    x: np.ndarray
    beta: np.ndarray
    tpr: np.ndarray


def symmetric_vertices(alpha: np.ndarray, tpr: np.ndarray, delta0: float) -> Vertices:
    """Vertices of ``max(F, F^-1)`` where ``F`` is the chain through ``(alpha_k, 1 - tpr_k)`` continued by
    the ``delta(0)`` line ``beta = 1 - delta0 - alpha``.

    In the regular case (the last vertex lies left of the diagonal) the curve is the chain, the ``-1``
    segment and the mirrored chain. Otherwise ``F`` and ``F^-1`` cross elsewhere and the crossing points
    are added, so the vertex list stays exact.
    """
    beta = 1.0 - tpr
    xm, bm = float(alpha[-1]), float(beta[-1])
    if xm <= bm + 1e-15:
        x = np.concatenate([alpha, beta[::-1], [1.0]])
        b = np.concatenate([beta, alpha[::-1], [0.0]])
        t = np.concatenate([tpr, 1.0 - alpha[::-1], [1.0]])
    else:
        # General case: F and its inverse on the union of their breakpoints, plus their crossings.
        fx = np.concatenate([alpha, [max(1.0 - delta0, xm), 1.0]])
        fb = np.concatenate([beta, [0.0, 0.0]])
        fx, uniq = np.unique(fx, return_index=True)
        fb = fb[uniq]
        gx, gb = fb[::-1], fx[::-1]
        gx, uniq = np.unique(gx, return_index=True)
        gb = gb[uniq]
        grid = np.union1d(fx, gx)
        diff = np.interp(grid, fx, fb) - np.interp(grid, gx, gb)
        s = np.nonzero(np.sign(diff[:-1]) * np.sign(diff[1:]) < 0)[0]
        cross = grid[s] + (grid[s + 1] - grid[s]) * diff[s] / (diff[s] - diff[s + 1])
        grid = np.union1d(grid, cross)
        b = np.maximum(np.interp(grid, fx, fb), np.interp(grid, gx, gb))
        x, t = grid, 1.0 - b
        # keep the precise small-alpha TPR of the chain where it is the active branch
        t = np.where(x <= xm, np.minimum(t, np.interp(x, alpha, tpr)), t)
    keep = np.ones(x.size, dtype=bool)
    keep[1:] = np.diff(x) > 0
    return Vertices(x=np.clip(x[keep], 0.0, 1.0), beta=np.clip(b[keep], 0.0, 1.0), tpr=t[keep])


def _lower_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of the points, ordered by ``x`` (Andrew's monotone chain)."""
    order = np.lexsort((y, x))
    hull: list[int] = []
    xs, ys = x.tolist(), y.tolist()
    for i in order.tolist():
        xi, yi = xs[i], ys[i]
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (xs[b] - xs[a]) * (yi - ys[a]) - (ys[b] - ys[a]) * (xi - xs[a]) <= 0.0:
                hull.pop()
            else:
                break
        hull.append(i)
    idx = np.asarray(hull, dtype=int)
    keep = np.ones(idx.size, dtype=bool)
    keep[1:] = np.diff(x[idx]) > 0  # equal x: the lowest point came first and stays
    return idx[keep]


def envelope(curves: list[Vertices]) -> Vertices:
    """Lower convex envelope of several convex curves: the lower hull of all their vertices (exact)."""
    if len(curves) == 1:
        return curves[0]
    x = np.concatenate([c.x for c in curves])
    beta = np.concatenate([c.beta for c in curves])
    tpr = np.concatenate([c.tpr for c in curves])
    candidates = np.arange(x.size)
    if x.size > _QHULL_MIN_POINTS:
        # Qhull prunes interior points in C; the monotone chain then orders the survivors exactly.
        from scipy.spatial import ConvexHull, QhullError

        try:
            candidates = np.unique(ConvexHull(np.column_stack([x, beta])).vertices)
        except QhullError:  # pragma: no cover - degenerate input: use every point
            candidates = np.arange(x.size)
    idx = candidates[_lower_hull(x[candidates], beta[candidates])]
    return Vertices(x=x[idx], beta=beta[idx], tpr=tpr[idx])
