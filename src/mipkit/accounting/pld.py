"""Trade-off curves of composed and subsampled mechanisms (DP-SGD) through privacy-loss distributions.

Google's ``dp_accounting`` represents a mechanism by its privacy-loss distribution (PLD): the law of
``L = log(P(o) / Q(o))`` for ``o ~ P``, where ``P = M(D)`` ("upper") and ``Q = M(D')`` ("lower"), kept
for the *remove* (``D' = D - x``) and *add* (``D' = D + x``) relations. Composition is a convolution of
PLDs; DP-SGD is ``T`` compositions of the Poisson-subsampled Gaussian mechanism (Abadi et al. 2016;
Koskela et al. 2020; Doroshenko et al. 2022, "Connect the Dots").

**From the PLD to the trade-off curve** (MATH.md 3). A discretised PLD has masses ``p_i`` at the loss
values ``l_i`` (plus ``p_inf`` at ``+inf``); the matching masses of ``Q`` are ``q_i = p_i e^{-l_i}``. The
likelihood ratio ``P/Q = e^l`` is monotone in ``l``, so by the Neyman-Pearson lemma the most powerful
tests of ``H0: Q`` ("out") against ``H1: P`` ("in") reject for large losses. Rejecting every loss above
``l_k`` gives the vertex

``alpha_k = sum_{l_i > l_k} q_i``,   ``1 - beta_k = p_inf + sum_{l_i > l_k} p_i``,

and the curve is linear between vertices (randomised tests). The segment after vertex ``k`` has slope
``-e^{l_k}``, and the line through it is ``beta = 1 - delta(l_k) - e^{l_k} alpha`` with ``delta(eps)``
the PLD's hockey-stick divergence: this is the convex-conjugate view of riskcal's Algorithm 1
(Kulynych et al., "Attack-aware noise calibration"; Dong, Roth & Su 2022, Prop. 2.12) evaluated
exactly at the breakpoints instead of on an epsilon grid.

mipkit keeps the vertices with ``l_k >= 0`` (slopes ``<= -1``), completes them with the line of
``delta(0)`` and with the mirror image across the diagonal, and so builds, for each of the add and remove
PLDs, the symmetric curve ``sup_{eps >= 0} f_{eps, delta(eps)}``: f-DP must hold for both orders of
every neighbouring pair, and a symmetric curve is fixed by its ``delta(eps)`` for ``eps >= 0`` (Dong,
Roth & Su 2022, Prop. 2.12 and F.2). The result is the lower convex envelope of the add and remove curves,
whose ``delta(eps)`` is ``max(delta_add, delta_remove) = pld.get_delta_for_epsilon``. For the subsampled
Gaussian this is, at small ``alpha``, the one-directional membership curve ``T(M(D - x), M(D))`` that
riskcal's ``get_beta_for_alpha`` reports. Using only losses ``>= 0`` also keeps the sums away from the
far-negative losses, where ``q_i = p_i e^{-l_i}`` amplifies the rounding noise of the connect-the-dots
construction (there ``sum q_i`` can exceed 1 by ``1e-4`` at a ``1e-4`` grid).

**Conservative by construction.** The PLDs are built with ``pessimistic_estimate=True`` (losses rounded
up, truncated tails moved to ``+inf``), so ``delta(eps)`` is never below the exact one for ``eps >= 0``
and the curve, the supremum of the lines ``1 - delta(eps) - e^eps alpha``, is never above the exact curve:
risk is never under-reported. Composition of such PLDs keeps the property; a finer
``value_discretization_interval`` only tightens the curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from mipkit._validation import (
    MipkitValueError,
    check_delta,
    check_epsilon,
    check_positive,
    check_positive_int,
    check_sample_rate,
)
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = [
    "DEFAULT_DPSGD_DISCRETIZATION",
    "DEFAULT_GAUSSIAN_DISCRETIZATION",
    "PLDCurve",
    "compose",
    "dpsgd_curve",
    "dpsgd_pld",
    "gaussian_pld_curve",
]

#: Default PLD grid for one (or a few) Gaussian mechanisms: ``dp_accounting``'s own default.
DEFAULT_GAUSSIAN_DISCRETIZATION = 1e-4
#: Default PLD grid for DP-SGD: thousands of compositions at ``1e-3`` take a tenth of a second and move
#: the advantage by a relative ``~5e-4`` (on the safe side) compared with ``1e-4``.
DEFAULT_DPSGD_DISCRETIZATION = 1e-3

#: Number of points above which the envelope prunes interior points with Qhull before the exact hull.
_QHULL_MIN_POINTS = 4096


# ---------------------------------------------------------------------------------------------------
# Vertices of the curve of one discretised PLD
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Lines:
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


def _pmf_arrays(pmf: Any) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Losses (ascending), masses, ``+inf`` mass and grid step of a ``dp_accounting`` PLD pmf."""
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # private: dp_accounting has no accessor
    lower = int(dense._lower_loss)
    step = float(dense._discretization)
    inf_mass = float(dense._infinity_mass)
    losses = (lower + np.arange(probs.size)) * step
    return losses, probs, inf_mass, step


def _positive_part(pmf: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The vertices with ``l_k >= 0``: thresholds ``eps_k``, ``alpha_k``, ``tpr_k`` and ``delta(eps_k)``.

    Vertex ``k`` rejects the losses ``> eps_k`` (``eps_0 = +inf``: only the ``+inf`` atom), and the line
    of slope ``-e^{eps_k}`` through it is ``1 - delta(eps_k) - e^{eps_k} alpha``. Sums run from the
    largest loss down, so small ``alpha`` and ``1 - beta`` keep full relative precision.
    """
    losses, probs, inf_mass, _ = _pmf_arrays(pmf)
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
class _Vertices:
    """A convex piecewise-linear curve by its vertices (``x`` increasing), with ``tpr = 1 - beta``."""

    x: np.ndarray
    beta: np.ndarray
    tpr: np.ndarray


def _symmetric_vertices(alpha: np.ndarray, tpr: np.ndarray, delta0: float) -> _Vertices:
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
    return _Vertices(x=np.clip(x[keep], 0.0, 1.0), beta=np.clip(b[keep], 0.0, 1.0), tpr=t[keep])


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


def _envelope(curves: list[_Vertices]) -> _Vertices:
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
    return _Vertices(x=x[idx], beta=beta[idx], tpr=tpr[idx])


# ---------------------------------------------------------------------------------------------------
# The curve
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PLDCurve(TradeoffCurve):
    """Trade-off curve of a mechanism given by a ``dp_accounting`` privacy-loss distribution.

    ``f`` is the symmetric curve ``sup_{eps >= 0} f_{eps, delta(eps)}`` of the discretised PLD, built
    exactly from its vertices (module docstring), with ``delta = max(delta_add, delta_remove)``. With a
    pessimistic PLD it is never above the exact curve (risk is never under-reported).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The mechanism's PLD; build it with ``pessimistic_estimate=True`` (the default of the
        ``dp_accounting`` factories and of every factory here).
    mechanism : dict, optional
        JSON-ready description of the mechanism, returned (with the curve's name) by :meth:`describe`.

    Notes
    -----
    ``f``, ``tpr`` and ``alpha_at_tpr`` use the vertices (built once, lazily). :meth:`tpr_at_fpr` and
    :meth:`alpha_at_tpr_fast` evaluate one point from the supporting lines without building the
    envelope; they are what the calibration loop calls. They agree with ``tpr`` / ``alpha_at_tpr``
    exactly for a symmetric PLD and err on the risky side (by the width of a grid cell at most)
    otherwise. ``advantage`` is ``delta(0)`` (the total-variation distance, ``sup (1 - alpha - f)``).
    """

    pld: Any
    mechanism: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.pld, pld_lib.PrivacyLossDistribution):
            raise MipkitValueError(
                "The 'pld' parameter of PLDCurve must be a dp_accounting PrivacyLossDistribution. "
                f"Got {type(self.pld).__name__} instead."
            )
        object.__setattr__(self, "mechanism", dict(self.mechanism))
        object.__setattr__(self, "_cache", {})

    # -- lazily built pieces ------------------------------------------------------------------------
    def _pmfs(self) -> list[Any]:
        remove = self.pld._pmf_remove  # private: no accessor in dp_accounting
        add = self.pld._pmf_add
        return [remove] if add is remove else [remove, add]

    def _parts(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        cache = self._cache  # type: ignore[attr-defined]
        if "parts" not in cache:
            cache["parts"] = [_positive_part(p) for p in self._pmfs()]
        return cache["parts"]

    def _lines(self) -> _Lines:
        """Supporting lines at ``eps`` = 0 and every positive grid loss, ``delta`` = max over add/remove."""
        cache = self._cache  # type: ignore[attr-defined]
        if "lines" not in cache:
            parts = self._parts()
            if len(parts) == 1:
                eps, _, _, delta = parts[0]
            else:
                step = _pld_discretization(self.pld)
                keys = [np.rint(p[0] / step).astype(np.int64) for p in parts]
                grid = np.unique(np.concatenate(keys))
                delta = np.zeros(grid.size)
                for k, (_, alpha, tpr, _) in zip(keys, parts, strict=True):
                    # delta_i(eps) for eps on the common grid: the vertex rejecting losses > eps
                    pos = np.searchsorted(-k, -grid, side="left")  # k is decreasing
                    eg = np.exp(grid * step)
                    delta = np.maximum(delta, np.clip(tpr[pos] - eg * alpha[pos], 0.0, 1.0))
                eps = grid * step
            cache["lines"] = _Lines(gamma=np.exp(eps), delta=np.asarray(delta, dtype=float))
        return cache["lines"]

    def _vertices(self) -> _Vertices:
        cache = self._cache  # type: ignore[attr-defined]
        if "vertices" not in cache:
            curves = [
                _symmetric_vertices(alpha, tpr, float(delta[-1])) for _, alpha, tpr, delta in self._parts()
            ]
            cache["vertices"] = _envelope(curves)
        return cache["vertices"]

    # -- TradeoffCurve interface -------------------------------------------------------------------
    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """Smallest FNR at FPR ``alpha`` (vectorised): linear between the curve's vertices."""
        a = check_alpha(alpha, owner="PLDCurve.f")
        v = self._vertices()
        return np.clip(np.interp(a, v.x, v.beta), 0.0, 1.0).reshape(np.shape(alpha))

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """Largest TPR at FPR ``alpha``: ``1 - f(alpha)``, from masses summed from the largest loss down."""
        a = check_alpha(alpha, owner="PLDCurve.tpr")
        v = self._vertices()
        return np.clip(np.interp(a, v.x, v.tpr), 0.0, 1.0).reshape(np.shape(alpha))

    def advantage(self) -> float:
        """``delta(0)``: the total-variation distance, i.e. the largest TPR - FPR of any test."""
        return float(min(max(float(self.pld.get_delta_for_epsilon(0.0)), 0.0), 1.0))

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """Smallest FPR at which TPR ``tpr`` is reachable: ``inf{alpha : 1 - f(alpha) >= tpr}``."""
        r = np.asarray(tpr, dtype=float)
        if r.size and not np.all((r >= 0.0) & (r <= 1.0)):
            bad = float(r[~((r >= 0.0) & (r <= 1.0))].ravel()[0])
            raise MipkitValueError(
                f"The 'tpr' parameter of PLDCurve.alpha_at_tpr must be in [0, 1]. Got {bad!r} instead."
            )
        v = self._vertices()
        top = int(np.argmax(v.tpr))  # the TPR rises strictly up to its maximum; invert that part
        xs, ts = v.x[: top + 1], np.maximum.accumulate(v.tpr[: top + 1])
        out = np.where(r <= ts[0], 0.0, np.interp(r, ts, xs))
        return out.reshape(np.shape(tpr))

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Hockey-stick divergence of the PLD (max over add / remove): ``pld.get_delta_for_epsilon``."""
        eps = check_epsilon(epsilon, owner="PLDCurve.delta_for_epsilon")
        return float(min(max(float(self.pld.get_delta_for_epsilon(eps)), 0.0), 1.0))

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest epsilon with ``delta(epsilon) <= delta``: ``pld.get_epsilon_for_delta``."""
        d = check_delta(delta, owner="PLDCurve.epsilon_for_delta")
        return float(self.pld.get_epsilon_for_delta(d))

    # -- one-point queries from the supporting lines (the calibration loop's fast path) ---------------
    def tpr_at_fpr(self, alpha: float) -> float:
        """``1 - f(alpha)`` at one FPR from the supporting lines, without building the vertices.

        ``min_k (delta(eps_k) + e^{eps_k} alpha)`` (and the mirrored lines) over ``eps_k`` = 0 and the
        positive grid losses: one vectorised pass over the PLD's support.
        """
        a0 = float(check_alpha(alpha, owner="PLDCurve.tpr_at_fpr"))
        return self._lines().tpr(a0)

    def alpha_at_tpr_fast(self, tpr: float) -> float:
        """:meth:`alpha_at_tpr` at one TPR from the supporting lines (see :meth:`tpr_at_fpr`)."""
        r = float(tpr)
        if not 0.0 <= r <= 1.0:
            raise MipkitValueError(
                f"The 'tpr' parameter of PLDCurve.alpha_at_tpr_fast must be in [0, 1]. Got {tpr!r} instead."
            )
        return self._lines().alpha_at_tpr(r)

    def describe(self) -> dict:
        """The curve's name and the mechanism description given when it was built."""
        return {"curve": "PLDCurve", **self.mechanism}


# ---------------------------------------------------------------------------------------------------
# Factories
# ---------------------------------------------------------------------------------------------------
def _check_discretization(value: float, owner: str) -> float:
    d = check_positive("value_discretization_interval", value, owner=owner)
    if d > 1.0:
        raise MipkitValueError(
            f"The 'value_discretization_interval' parameter of {owner} must be in (0, 1]. "
            f"Got {value!r} instead."
        )
    return d


def gaussian_pld_curve(
    sigma: float,
    sensitivity: float = 1.0,
    *,
    value_discretization_interval: float = DEFAULT_GAUSSIAN_DISCRETIZATION,
) -> PLDCurve:
    """PLD trade-off curve of the Gaussian mechanism ``q(D) + N(0, sigma^2)`` (l2-sensitivity ``L``).

    Exact curve: ``Phi(Phi^-1(1 - alpha) - L/sigma)`` (:class:`~mipkit.accounting.curves.GaussianCurve`);
    this PLD version is the building block for compositions with other mechanisms.
    """
    owner = "gaussian_pld_curve"
    s = check_positive("sigma", sigma, owner=owner)
    sens = check_positive("sensitivity", sensitivity, owner=owner)
    d = _check_discretization(value_discretization_interval, owner)
    pld = pld_lib.from_gaussian_mechanism(
        standard_deviation=s, sensitivity=sens, pessimistic_estimate=True, value_discretization_interval=d
    )
    return PLDCurve(
        pld,
        mechanism={
            "mechanism": "gaussian",
            "sigma": s,
            "sensitivity": sens,
            "value_discretization_interval": d,
        },
    )


def _check_dpsgd(noise_multiplier: float, sample_rate: float, steps: int, owner: str) -> tuple:
    sigma = check_positive("noise_multiplier", noise_multiplier, owner=owner)
    q = check_sample_rate(sample_rate, owner=owner)
    t = check_positive_int("steps", steps, owner=owner)
    return sigma, q, t


def dpsgd_pld(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    *,
    value_discretization_interval: float = DEFAULT_DPSGD_DISCRETIZATION,
) -> Any:
    """Pessimistic PLD of DP-SGD: the Poisson-subsampled Gaussian mechanism composed ``steps`` times.

    ``from_gaussian_mechanism(standard_deviation=noise_multiplier, sampling_prob=q)`` then
    ``self_compose(T)`` (add-or-remove-one neighbours; clipping norm 1 so the noise multiplier is the
    standard deviation).
    """
    owner = "dpsgd_pld"
    sigma, q, t = _check_dpsgd(noise_multiplier, sample_rate, steps, owner)
    d = _check_discretization(value_discretization_interval, owner)
    one = pld_lib.from_gaussian_mechanism(
        standard_deviation=sigma,
        sensitivity=1.0,
        pessimistic_estimate=True,
        value_discretization_interval=d,
        sampling_prob=q,
        use_connect_dots=True,
    )
    return one.self_compose(t) if t > 1 else one


def dpsgd_curve(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    *,
    value_discretization_interval: float = DEFAULT_DPSGD_DISCRETIZATION,
) -> PLDCurve:
    """Trade-off curve of DP-SGD with Poisson sampling rate ``q`` run for ``T`` steps.

    Parameters
    ----------
    noise_multiplier : float
        Gaussian noise standard deviation divided by the clipping norm, ``> 0``.
    sample_rate : float
        Poisson sampling probability ``q`` in (0, 1] (batch size / dataset size).
    steps : int
        Number of noisy gradient steps ``T >= 1``.
    value_discretization_interval : float, default=1e-3
        PLD grid; smaller is tighter (never riskier) and slower.
    """
    owner = "dpsgd_curve"
    sigma, q, t = _check_dpsgd(noise_multiplier, sample_rate, steps, owner)
    d = _check_discretization(value_discretization_interval, owner)
    pld = dpsgd_pld(sigma, q, t, value_discretization_interval=d)
    return PLDCurve(
        pld,
        mechanism={
            "mechanism": "dpsgd",
            "noise_multiplier": sigma,
            "sample_rate": q,
            "steps": t,
            "value_discretization_interval": d,
        },
    )


def _to_pld(item: Any, d: float) -> tuple[Any, dict]:
    """A PLD (at grid ``d``) and a description for one mechanism given to :func:`compose`."""
    from mipkit.accounting import curves as _curves

    if isinstance(item, PLDCurve):
        return item.pld, item.describe()
    if isinstance(item, pld_lib.PrivacyLossDistribution):
        return item, {"curve": "PrivacyLossDistribution"}
    if isinstance(item, _curves.GaussianCurve):
        if item.mu == 0.0:
            return pld_lib.identity(value_discretization_interval=d), item.describe()
        pld = pld_lib.from_gaussian_mechanism(
            standard_deviation=1.0 / item.mu, pessimistic_estimate=True, value_discretization_interval=d
        )
        return pld, item.describe()
    if isinstance(item, _curves.LaplaceCurve):
        pld = pld_lib.from_laplace_mechanism(
            item.scale,
            sensitivity=item.sensitivity,
            pessimistic_estimate=True,
            value_discretization_interval=d,
        )
        return pld, item.describe()
    if isinstance(item, _curves.ApproxDPCurve):
        params = pld_common.DifferentialPrivacyParameters(epsilon=item.epsilon, delta=item.delta)
        return pld_lib.from_privacy_parameters(params, value_discretization_interval=d), item.describe()
    raise MipkitValueError(
        "compose() takes PLDCurve, GaussianCurve, LaplaceCurve, ApproxDPCurve or dp_accounting "
        f"PrivacyLossDistribution objects. Got {type(item).__name__} instead."
    )


def _pld_discretization(pld: Any) -> float:
    return float(pld._pmf_remove._discretization)


def compose(*mechanisms: Any, value_discretization_interval: float | None = None) -> PLDCurve:
    """Trade-off curve of running several mechanisms on the same data (adaptive composition).

    Each mechanism becomes a pessimistic PLD (a :class:`GaussianCurve` ``mu`` as the Gaussian mechanism
    with ``sigma = 1/mu``; a :class:`LaplaceCurve` as ``from_laplace_mechanism``; an
    :class:`ApproxDPCurve` as ``from_privacy_parameters``, the worst case among ``(eps, delta)``-DP
    mechanisms; a :class:`PLDCurve` as its PLD) and the PLDs are convolved (``dp_accounting``'s
    ``compose``): the privacy loss of a composition is the sum of the losses.

    Parameters
    ----------
    *mechanisms
        Curves or PLDs, at least one.
    value_discretization_interval : float, optional
        Grid for the PLDs built here. Defaults to the grid of the first PLD given, else ``1e-4``. All
        given PLDs must share it.
    """
    if not mechanisms:
        raise MipkitValueError("compose() needs at least one mechanism. Got none.")
    given = [
        m.pld if isinstance(m, PLDCurve) else m
        for m in mechanisms
        if isinstance(m, (PLDCurve, pld_lib.PrivacyLossDistribution))
    ]
    if value_discretization_interval is None:
        d = _pld_discretization(given[0]) if given else DEFAULT_GAUSSIAN_DISCRETIZATION
    else:
        d = _check_discretization(value_discretization_interval, "compose")
    for p in given:
        if not math.isclose(_pld_discretization(p), d, rel_tol=1e-12):
            raise MipkitValueError(
                "compose() needs every PLD on the same grid: got value_discretization_interval "
                f"{_pld_discretization(p):g} and {d:g}. Rebuild them with the same grid."
            )
    plds, parts = zip(*(_to_pld(m, d) for m in mechanisms), strict=True)
    total = plds[0]
    for p in plds[1:]:
        total = total.compose(p)
    return PLDCurve(
        total,
        mechanism={"mechanism": "composition", "parts": list(parts), "value_discretization_interval": d},
    )
