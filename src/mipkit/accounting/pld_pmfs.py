"""Both sides of a discretised privacy-loss distribution: a dominating (pessimistic) and a dominated
(optimistic) probability mass function on one grid, from the mechanism's privacy profile.

Notation (docs/theory.md section 3). A pair ``(P, Q)`` has privacy loss ``L = log(dP/dQ)`` and likelihood
ratio ``X = e^L``; its privacy profile is ``delta(eps) = E_Q[(X - e^eps)_+]`` (plus the mass of ``P`` where
``Q`` is 0). As a function of ``c = e^eps`` it is convex and decreasing. A pmf on the grid ``eps_k = k d``
(masses ``p_k`` of ``P`` at ``eps_k``) is

* **pessimistic** when its profile lies above ``delta`` everywhere: Connect-the-Dots (Doroshenko, Ghazi,
  Kamath, Kumar & Manurangsi 2022, Alg. 1) interpolates ``delta`` linearly in ``c`` between the grid points,
  a chord of a convex function, hence above it; the pmf is a mean-preserving spread of ``X`` (under ``Q``)
  onto the grid, a *dominating pair*, and composition keeps the order (Zhu, Dong & Wang 2022, Thm 10);
* **optimistic** when its profile lies below ``delta`` everywhere (:func:`optimistic_pmf`): the largest
  convex piecewise-linear function with kinks on the grid found below ``delta`` from ``delta`` at the grid
  points and the quarter points of each cell (``chord - delta`` is concave with zero ends, so secants
  through those samples bound it). Its second differences are the masses of a sub-probability ``H`` on the
  grid with ``E_H[(Y - c)_+] <= E_Q[(X - c)_+]`` for every ``c``: ``H`` is below ``X`` in the increasing
  convex order, an order kept by products of independent likelihood ratios, i.e. by composition. Unlike
  rounding every loss down ("privacy buckets", ``dp_accounting``'s ``pessimistic_estimate=False``), whose
  error grows like ``T d / 2`` over ``T`` steps, both sides here err at second order in ``d``.

**Why the add direction is built as a dual.** For DP-SGD, ``dp_accounting`` builds the add-direction pmf
(``P = N(0)``, ``Q = q N(1) + (1 - q) N(0)``) by Connect-the-Dots from ``delta`` at very negative ``eps``,
where ``delta ~ 1``: each mass is a difference of two numbers near 1 divided by ``e^d - 1``, so float rounding
(``1e-16``) becomes ``1e-16 / d`` per grid point; the negative ones are clipped to 0 and the positive ones
kept, so the total mass exceeds 1 by about ``n 1e-16 / d`` (``n`` grid points: ``~1/d^2``) and composition
raises it to the power ``T`` (+0.5% after 1e4 steps at grid 2e-5). The excess sits at negative losses, and
the clipping only raises the profile, so the pmf still dominates (the upper value stays valid) but grows
looser as the grid gets finer. The add pair is the remove pair reversed (reflect ``x -> -x``), so mipkit
builds it as the *dual* of the remove pmf (:func:`dual_pmf`: the masses ``q_k = p_k e^{-eps_k}`` of ``Q`` at
``-eps_k``), whose masses are accurate; the dual of a dominating pair dominates the reversed pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from dp_accounting.pld import pld_pmf
from scipy import special

__all__ = [
    "gaussian_bounds",
    "gaussian_delta",
    "gaussian_q_at_least",
    "laplace_delta",
    "optimistic_pmf",
    "pessimistic_pmf",
    "dual_pmf",
    "symmetric_pessimistic_pmf",
]

#: Float allowance of a computed ``delta``: relative and absolute (the vectorised profiles agree with
#: ``dp_accounting``'s to a relative 3e-11 on the tests' grids).
_MARGIN_REL, _MARGIN_ABS = 1e-9, 1e-15
#: Smallest step in ``c = e^eps`` between two atoms of the optimistic pmf (the slopes of the profile are
#: differences of numbers near 1 divided by the step: float rounding stays below 1e-9 of a slope).
_MIN_STEP = 1e-6
#: Mass of ``P`` above the top of a step's loss range (the range is cut there; module docstring).
TAIL_MASS = 1e-13

DeltaFn = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------------------------------
# Privacy profiles of the Poisson-subsampled Gaussian (sensitivity 1), dp_accounting's conventions
# ---------------------------------------------------------------------------------------------------
def _x_of_eps(eps: np.ndarray, sigma: float, q: float, direction: str) -> np.ndarray:
    """The output ``x`` with loss ``eps`` (the loss falls as ``x`` grows: ``L >= eps`` iff ``X <= x``)."""
    s2 = sigma * sigma
    lq = math.log(q)
    if direction == "remove":  # L = log(1 - q + q e^{(-2x - 1)/(2 s2)})
        w = (np.log(np.expm1(eps) + q) - lq) if q < 1.0 else eps
        return -(2.0 * s2 * w + 1.0) / 2.0
    if direction == "add":  # L = -log(1 - q + q e^{(2x - 1)/(2 s2)})
        w = (np.log(np.expm1(-eps) + q) - lq) if q < 1.0 else -eps
        return (2.0 * s2 * w + 1.0) / 2.0
    # replace: with u = e^{x/s2}, k = e^{-1/(2 s2)}: e^L = (q k / u + 1 - q) / (q k u + 1 - q)
    qk = math.exp(lq - 1.0 / (2.0 * s2))
    b = (1.0 - q) * np.expm1(eps)
    disc = np.sqrt(b * b + 4.0 * np.exp(eps) * qk * qk)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(b > 0, 2.0 * qk / (b + disc), (disc - b) / (2.0 * np.exp(eps) * qk))
    return s2 * np.log(u)


def _log_mix(x: np.ndarray, sigma: float, q: float, shift: float) -> np.ndarray:
    """``log(q Phi((x + shift)/sigma) + (1 - q) Phi(x/sigma))``."""
    base = special.log_ndtr(x / sigma)
    if q >= 1.0:
        return special.log_ndtr((x + shift) / sigma)
    return np.logaddexp(math.log(q) + special.log_ndtr((x + shift) / sigma), math.log1p(-q) + base)


def _laws(x: np.ndarray, sigma: float, q: float, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """``log P(X <= x)`` and ``log Q(X <= x)`` for the pair of ``direction``."""
    if direction == "remove":
        return _log_mix(x, sigma, q, 1.0), special.log_ndtr(x / sigma)
    if direction == "add":
        return special.log_ndtr(x / sigma), _log_mix(x, sigma, q, -1.0)
    return _log_mix(x, sigma, q, 1.0), _log_mix(x, sigma, q, -1.0)


def _inside(eps: np.ndarray, q: float, direction: str) -> np.ndarray:
    """Where the loss reaches ``eps`` (a remove loss is ``>= log(1 - q)``, an add loss ``< -log(1 - q)``)."""
    if q >= 1.0 or direction == "replace":
        return np.ones(eps.shape, dtype=bool)
    if direction == "remove":
        return eps > math.log1p(-q)
    return eps < -math.log1p(-q)


def gaussian_delta(eps: np.ndarray, sigma: float, q: float, direction: str) -> np.ndarray:
    """Privacy profile of the Poisson-subsampled Gaussian mechanism (noise ``sigma``, sensitivity 1, rate
    ``q``), vectorised: ``delta(eps) = P(X <= x) - e^eps Q(X <= x)`` at ``x = x(eps)``.

    ``direction``: ``"remove"`` (``P = q N(-1) + (1 - q) N(0)``, ``Q = N(0)``), ``"add"`` (the reverse) or
    ``"replace"`` (``P = q N(-1) + (1 - q) N(0)``, ``Q = q N(1) + (1 - q) N(0)``): ``dp_accounting``'s
    ``GaussianPrivacyLoss`` profiles, computed in logs (relative precision in the tails).
    """
    e = np.asarray(eps, dtype=float)
    out = np.zeros(e.shape)
    inside = _inside(e, q, direction)
    if direction == "remove" and q < 1.0:
        out[~inside] = -np.expm1(e[~inside])
    if np.any(inside):
        ei = e[inside]
        lp, lq = _laws(_x_of_eps(ei, sigma, q, direction), sigma, q, direction)
        out[inside] = np.exp(lp) * -np.expm1(np.minimum(ei + lq - lp, 0.0))
    return np.clip(out, 0.0, 1.0)


def gaussian_q_at_least(eps: float, sigma: float, q: float, direction: str) -> float:
    """``Q(L >= eps)`` for the pair of :func:`gaussian_delta` (1 where every loss is ``>= eps``)."""
    e = np.asarray([eps], dtype=float)
    if direction == "remove" and not _inside(e, q, direction)[0]:
        return 1.0
    if direction == "add" and not _inside(e, q, direction)[0]:
        return 0.0
    _, lq = _laws(_x_of_eps(e, sigma, q, direction), sigma, q, direction)
    return float(np.exp(lq[0]))


def gaussian_bounds(sigma: float, q: float, direction: str, tail: float = TAIL_MASS) -> tuple[float, float]:
    """The loss range to discretise: ``dp_accounting``'s (noise tails beyond ``e^-50`` truncated), its top
    lowered to the loss above which ``P`` has mass at most ``tail`` (remove and replace directions).

    Both sides stay valid: the pessimistic PMF puts ``delta(eps_hi) <= tail`` at ``+inf`` and the optimistic
    one drops it, so over ``T`` steps each moves a risk by at most ``T * tail`` (``1e-7`` at ``T = 1e6``).
    """
    from dp_accounting.pld import privacy_loss_mechanism as plm

    adj = plm.AdjacencyType[direction.upper()]
    b = plm.GaussianPrivacyLoss(sigma, 1.0, sampling_prob=q, adjacency_type=adj).connect_dots_bounds()
    lo, hi = float(b.epsilon_lower), float(b.epsilon_upper)
    if direction == "remove" and q < 1.0:
        lo = min(lo, math.log1p(-q))
    if direction in ("remove", "replace") and hi > 0.0:

        def log_tail(eps: float) -> float:  # log P(L >= eps); e^eps may overflow (x = -inf: no mass)
            with np.errstate(over="ignore"):
                lp, _ = _laws(_x_of_eps(np.asarray([eps]), sigma, q, direction), sigma, q, direction)
            return float(lp[0])

        target = math.log(tail)
        if log_tail(0.0) > target:  # else keep the range (all mass at losses below 0 is kept)
            a, z = 0.0, hi
            for _ in range(60):
                mid = 0.5 * (a + z)
                if log_tail(mid) > target:
                    a = mid
                else:
                    z = mid
            hi = min(hi, z)
    return lo, hi


def laplace_delta(eps: np.ndarray, epsilon: float) -> np.ndarray:
    """Privacy profile of the Laplace mechanism with ``L / b = epsilon`` (symmetric):
    ``1 - e^{(eps' - epsilon)/2}`` for ``|eps'| <= epsilon``, ``1 - e^{eps'}`` below, 0 above."""
    e = np.asarray(eps, dtype=float)
    mid = -np.expm1(np.minimum((e - epsilon) / 2.0, 0.0))
    return np.clip(np.where(e < -epsilon, -np.expm1(e), mid), 0.0, 1.0)


# ---------------------------------------------------------------------------------------------------
# The two sides
# ---------------------------------------------------------------------------------------------------
def _connect_dots_masses(deltas: np.ndarray, d: float) -> np.ndarray:
    """Masses of Connect-the-Dots on contiguous grid points (``dp_accounting``'s fixed-gap formula)."""
    deltas = np.minimum.accumulate(np.clip(deltas, 0.0, 1.0))
    if deltas.size == 1:
        return np.array([1.0 - deltas[0]])
    diff = np.diff(deltas)
    probs = np.empty_like(deltas)
    probs[0] = 1.0 - deltas[0] + diff[0] / math.expm1(d)
    probs[1:-1] = (diff[1:] - diff[:-1] * math.exp(d)) / math.expm1(d)
    probs[-1] = diff[-1] / math.expm1(-d)
    return np.maximum(probs, 0.0)


def pessimistic_pmf(delta_fn: DeltaFn, k_lo: int, k_hi: int, d: float) -> pld_pmf.DensePLDPmf:
    """Connect-the-Dots pmf on ``eps_k = k d``, ``k_lo <= k <= k_hi``; ``delta(eps_hi)`` goes to ``+inf``."""
    deltas = np.clip(delta_fn(np.arange(k_lo, k_hi + 1) * d), 0.0, 1.0)
    deltas = np.minimum.accumulate(deltas)
    return pld_pmf.DensePLDPmf(d, k_lo, _connect_dots_masses(deltas, d), float(deltas[-1]), True)


def symmetric_pessimistic_pmf(delta_fn: DeltaFn, k_hi: int, d: float) -> pld_pmf.DensePLDPmf:
    """Connect-the-Dots pmf of a symmetric pair (``P`` and ``Q`` swap under a reflection: replace-one, the
    Gaussian mechanism), from the profile at ``eps >= 0`` only, mirrored (``p_{-k} = p_k e^{-k d}``, the
    symmetry of the exact Connect-the-Dots pmf of such a pair): the negative side never takes differences
    of numbers near 1, so the total mass stays 1."""
    deltas = np.minimum.accumulate(np.clip(delta_fn(np.arange(0, k_hi + 1) * d), 0.0, 1.0))
    inf_mass = float(deltas[-1])
    if k_hi < 1:
        return pld_pmf.DensePLDPmf(d, 0, np.array([1.0 - inf_mass]), inf_mass, True)
    diff = np.diff(deltas)
    pos = np.empty(k_hi)
    pos[:-1] = (diff[1:] - diff[:-1] * math.exp(d)) / math.expm1(d)
    pos[-1] = diff[-1] / math.expm1(-d)
    pos = np.maximum(pos, 0.0)
    neg = (pos * np.exp(-np.arange(1, k_hi + 1) * d))[::-1]
    p0 = max(1.0 - inf_mass - float(pos.sum()) - float(neg.sum()), 0.0)
    probs = np.concatenate([neg, [p0], pos])
    return pld_pmf.DensePLDPmf(d, -k_hi, probs, inf_mass, True)


def dual_pmf(pmf: pld_pmf.PLDPmf, *, pessimistic: bool) -> pld_pmf.DensePLDPmf:
    """The pmf of the reversed pair ``(Q, P)``: masses ``p_k e^{-eps_k}`` at ``-eps_k``; for a pessimistic pmf
    the mass ``Q`` lacks (``1 - sum q_k``) is where ``P`` is 0, i.e. loss ``+inf`` of the reversed pair."""
    dense = pmf.to_dense_pmf()
    d = float(dense._discretization)  # private: no accessor in dp_accounting
    p = np.asarray(dense._probs, dtype=float)
    lo = int(dense._lower_loss)
    qm = p * np.exp(-(lo + np.arange(p.size)) * d)
    inf_mass = max(0.0, 1.0 - float(qm.sum())) if pessimistic else 0.0
    return pld_pmf.DensePLDPmf(d, -(lo + p.size - 1), qm[::-1].copy(), inf_mass, pessimistic)


def _lower_hull_indices(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of points sorted by ``x``: a few vectorised rounds that drop
    non-convex points (float noise), then Andrew's monotone chain on what is left (exact, linear time)."""
    idx = np.arange(x.size)
    for _ in range(8):
        if idx.size <= 2:
            return idx
        s = np.diff(y[idx]) / np.diff(x[idx])
        bad = np.nonzero(np.diff(s) < 0.0)[0] + 1
        if bad.size == 0:
            return idx
        keep = np.ones(idx.size, dtype=bool)
        keep[bad[np.concatenate([[True], np.diff(bad) > 1])]] = False
        idx = idx[keep]
    xs, ys = x[idx].tolist(), y[idx].tolist()
    hull: list[int] = []
    for j in range(len(xs)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or above the segment from a to j
            if (ys[b] - ys[a]) * (xs[j] - xs[a]) >= (ys[j] - ys[a]) * (xs[b] - xs[a]):
                hull.pop()
            else:
                break
        hull.append(j)
    return idx[np.asarray(hull, dtype=np.int64)]


def _kink_indices(k_lo: int, k_hi: int, d: float) -> np.ndarray:
    """Grid indices that may carry mass: every one where ``c = e^{k d}`` steps by at least ``_MIN_STEP``, and
    below that a subset spaced ``_MIN_STEP`` apart in ``c`` (there the steps ``c d`` are too small for the
    slopes of the profile to be read from float differences; the losses are very negative, the mass of ``P``
    there at most ``c``)."""
    k = np.arange(k_lo, k_hi + 1)
    threshold = _MIN_STEP / math.expm1(d)
    fine = k[np.exp(k * d) >= threshold]
    if fine.size == k.size:
        return k
    top = float(np.exp(fine[0] * d)) if fine.size else math.exp(k_hi * d)
    steps = np.arange(1, int(top / _MIN_STEP))
    coarse = np.floor(np.log(top - steps * _MIN_STEP) / d).astype(np.int64)
    coarse = coarse[coarse >= k_lo]
    return np.unique(np.concatenate([[k_lo], coarse, fine]))


def _half_bound(ua: np.ndarray, ub: np.ndarray, lb: np.ndarray, lc: np.ndarray) -> np.ndarray:
    """Bound on a concave ``phi >= 0`` with ``phi(0) = 0`` over ``[0, 1/2]`` of a cell, from ``phi`` at
    ``1/4, 1/2, 3/4`` known within ``[l, u]`` (``a``, ``b``, ``c``). On ``[0, 1/4]`` ``phi`` is below the
    secant through the samples at 1/4 and 1/2 extended left; on ``[1/4, 1/2]`` below both the secant from 0
    through 1/4 and the secant through 1/2 and 3/4 extended left (each line written so that an upper value
    enters with a positive weight and a lower value with a negative one)."""
    outer = np.maximum(ua, 2.0 * ua - lb)

    def both(t: np.ndarray) -> np.ndarray:
        first = 4.0 * ua * t
        second = ub * (3.0 - 4.0 * t) + lc * (4.0 * t - 2.0)
        return np.minimum(first, second)

    den = 4.0 * (ua + ub - lc)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(den > 0, (3.0 * ub - 2.0 * lc) / den, 0.25)
    cross = np.clip(np.nan_to_num(cross, nan=0.25), 0.25, 0.5)
    inner = np.maximum.reduce([both(np.full_like(ua, 0.25)), both(np.full_like(ua, 0.5)), both(cross)])
    return np.maximum(outer, inner)


def _chord_gap_bound(delta_fn: DeltaFn, c: np.ndarray, dl: np.ndarray, mk: np.ndarray) -> np.ndarray:
    """An upper bound on ``max (chord - delta)`` over each cell ``[c_k, c_{k+1}]``.

    ``phi = chord - delta`` is concave and 0 at both ends. From its values at the quarter points (each known
    within a float allowance), :func:`_half_bound` bounds it on each half by secants; for a quadratic
    ``phi`` the bound is 1.125 times the true maximum (the midpoint alone would give 2).
    """
    lo, hi = c[:-1], c[1:]
    ups, lows = [], []
    for frac in (0.25, 0.5, 0.75):
        dx = np.asarray(delta_fn(np.log(lo + frac * (hi - lo))), dtype=float)
        phi = dl[:-1] + frac * (dl[1:] - dl[:-1]) - dx
        slack = _MARGIN_REL * dx + _MARGIN_ABS + np.maximum(mk[:-1], mk[1:])
        ups.append(np.maximum(phi + slack, 0.0))
        lows.append(np.maximum(phi - slack, 0.0))
    left = _half_bound(ups[0], ups[1], lows[1], lows[2])
    right = _half_bound(ups[2], ups[1], lows[1], lows[0])  # the mirror image of the cell
    return np.maximum(left, right)


def optimistic_pmf(
    delta_fn: DeltaFn, k_lo: int, k_hi: int, d: float, q_at_least_lo: float
) -> pld_pmf.DensePLDPmf:
    """A pmf on the grid whose privacy profile lies below ``delta`` everywhere (module docstring).

    With ``c_k = e^{k d}``: ``v_k = delta(c_k) - margin - max(G_{k-1}, G_k)`` where ``G_k`` bounds the gap
    between the chord and ``delta`` on ``[c_k, c_{k+1}]`` (:func:`_chord_gap_bound`); the last point is
    set to 0 and points beyond the first ``v_k < 0`` are dropped; ``psi`` is the lower convex hull of the
    points, continued left of ``c_lo`` with slope ``-Q(L >= eps_lo)``. The masses of ``Q`` are the slope
    changes of ``psi`` and those of ``P`` are ``c_k`` times them; where the first segments fall faster than
    ``Q(L >= eps_lo)`` allows (their total mass would exceed it), their points are lowered onto that slope.

    Parameters
    ----------
    delta_fn : callable
        The exact privacy profile, vectorised.
    k_lo, k_hi : int
        Grid range (losses ``k d``).
    d : float
        Grid step.
    q_at_least_lo : float
        A lower bound on ``Q(L >= k_lo d)`` (1 when no loss lies below).
    """
    k = _kink_indices(k_lo, k_hi, d)
    c = np.exp(k * d)
    dl = np.asarray(delta_fn(k * d), dtype=float)
    mk = _MARGIN_REL * dl + _MARGIN_ABS
    g = _chord_gap_bound(delta_fn, c, dl, mk)
    gk = np.zeros_like(dl)
    gk[:-1] = g
    gk[1:] = np.maximum(gk[1:], g)
    v = dl - mk - gk
    neg = np.nonzero(v <= 0.0)[0]
    last = int(neg[0]) if neg.size else v.size - 1
    v = v[: last + 1].copy()
    cc = c[: last + 1]
    v[-1] = 0.0
    probs = np.zeros(k_hi - k_lo + 1)
    if last >= 1:
        allowed = min(max(q_at_least_lo - _MARGIN_ABS, 0.0), 1.0)
        idx = _lower_hull_indices(cc, v)
        x, y = cc[idx], v[idx].copy()
        s = np.diff(y) / np.diff(x)
        steep = np.nonzero(s >= -allowed)[0]
        j = int(steep[0]) if steep.size else s.size
        for i in range(j - 1, -1, -1):
            # the first segments fall faster than the mass allowed: lower their points (from the right)
            # onto slope -allowed, which keeps psi below delta and convex
            y[i] = min(y[i], y[i + 1] + allowed * (x[i + 1] - x[i]))
        s = np.diff(y) / np.diff(x)
        first = -float(s[0])
        h = np.empty(idx.size)
        h[1:-1] = s[1:] - s[:-1]
        h[-1] = -s[-1]
        h[0] = max(allowed - first, 0.0)
        h = np.maximum(h, 0.0)
        total = float(h.sum())
        if total > allowed and total > 0.0:  # float rounding only
            h *= allowed / total
        probs[k[idx] - k_lo] = h * x
    return pld_pmf.DensePLDPmf(d, k_lo, probs, 0.0, False)
