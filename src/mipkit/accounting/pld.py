"""Trade-off curves of composed and subsampled mechanisms (DP-SGD) through privacy-loss distributions.

Google's ``dp_accounting`` represents a mechanism by its privacy-loss distribution (PLD): the law of
``L = log(P(o) / Q(o))`` for ``o ~ P``, where ``P = M(D)`` ("upper") and ``Q = M(D')`` ("lower"), kept
for the *remove* (``D' = D - x``) and *add* (``D' = D + x``) relations. Composition is a convolution of
PLDs; DP-SGD is ``T`` compositions of the Poisson-subsampled Gaussian mechanism (Abadi et al. 2016;
Koskela et al. 2020; Doroshenko et al. 2022, "Connect the Dots"). :func:`privacy_loss_distribution` builds
the PLD of a mechanism record (:mod:`mipkit.accounting.mechanisms`), :func:`pld_curve` its curve; users
reach both through :func:`mipkit.accounting.tradeoff_curve`.

**From the PLD to the trade-off curve** (docs/theory.md section 3; the geometry is in
:mod:`mipkit.accounting.pld_vertices`). A discretised PLD has masses ``p_i`` at the loss values
``l_i`` (plus ``p_inf`` at ``+inf``); the matching masses of ``Q`` are ``q_i = p_i e^{-l_i}``. The
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

**Two sides.** A curve is built from a pessimistic (dominating) PLD, so ``delta(eps)`` is never below the
exact one and the curve, the supremum of the lines ``1 - delta(eps) - e^eps alpha``, is never above the
exact curve: risk is never under-reported. Its :meth:`PLDCurve.lower_curve` is built from an optimistic
(dominated) PLD on the same grid: never below the exact curve, so the true risk lies between the two
(:mod:`mipkit.accounting.pld_pmfs`, :mod:`mipkit.accounting.pld_build`). By default the grid is refined
until the two sides agree to a tolerance (``1e-4`` on every risk; docs/theory.md section 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from mipkit._validation import MipkitValueError, check_delta, check_epsilon, check_interval, check_positive
from mipkit.accounting import mechanisms as rec
from mipkit.accounting.mechanisms import Mechanism
from mipkit.accounting.pld_build import (
    DEFAULT_EPSILON_RTOL,
    DEFAULT_MAX_POINTS,
    DEFAULT_TOLERANCE,
    adaptive_pld_pair,
    epsilon_interval,
    record_pld,
)
from mipkit.accounting.pld_vertices import Lines, Vertices, envelope, positive_part, symmetric_vertices
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = [
    "DEFAULT_DPSGD_DISCRETIZATION",
    "DEFAULT_EPSILON_RTOL",
    "DEFAULT_GAUSSIAN_DISCRETIZATION",
    "DEFAULT_TOLERANCE",
    "PLDCurve",
    "default_discretization",
    "pld_curve",
    "privacy_loss_distribution",
]

#: Default PLD grid for one (or a few) Gaussian mechanisms: ``dp_accounting``'s own default.
DEFAULT_GAUSSIAN_DISCRETIZATION = 1e-4
#: First PLD grid for DP-SGD (the search grid of calibrations; the adaptive grid starts there).
DEFAULT_DPSGD_DISCRETIZATION = 1e-3
#: Queries of at most this many points are answered from the segments, without building the envelope.
_FEW = 64


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
        The mechanism's PLD; pessimistic (``side="upper"``, the default) or optimistic (``"lower"``).
    mechanism : Mechanism, optional
        The record the PLD was built from (:func:`pld_curve` sets it); :meth:`describe` serialises it.
    pld_lower : PrivacyLossDistribution, optional
        The optimistic PLD on the same grid (:meth:`lower_curve`); built from ``mechanism`` on first use
        when not given. A bare PLD without it is one-sided (its lower curve is itself).
    side : {"upper", "lower"}, default="upper"
    tolerance, width : float, optional
        The tolerance the grid was refined for and the width reached (:func:`pld_curve`).
    epsilon_rtol : float, optional
        With a record and a tolerance: the relative tolerance of :meth:`epsilon_interval` (the grid is
        refined for each delta asked until the two epsilons agree to it); default ``1e-3``.
    max_points : int, optional
        The cost cap of that refinement (points of a composed PLD).

    Notes
    -----
    ``f``, ``tpr`` and ``alpha_at_tpr`` use the vertices (built once, lazily). :meth:`tpr_at_fpr` and
    :meth:`alpha_at_tpr_fast` evaluate one point from the supporting lines without building the
    envelope; they are what the calibration loop calls. They agree with ``tpr`` / ``alpha_at_tpr``
    exactly for a symmetric PLD and err on the risky side (by the width of a grid cell at most)
    otherwise. ``advantage`` is ``delta(0)`` (the total-variation distance, ``sup (1 - alpha - f)``). On
    the lower side the one-point queries use the vertices (the lines would err upwards there).
    """

    pld: Any
    mechanism: Mechanism | None = None
    pld_lower: Any = None
    side: str = "upper"
    tolerance: float | None = None
    width: float | None = None
    epsilon_rtol: float | None = None
    max_points: int = DEFAULT_MAX_POINTS

    def __post_init__(self) -> None:
        if not isinstance(self.pld, pld_lib.PrivacyLossDistribution):
            raise MipkitValueError(
                "The 'pld' parameter of PLDCurve must be a dp_accounting PrivacyLossDistribution. "
                f"Got {type(self.pld).__name__} instead."
            )
        if self.mechanism is not None and not isinstance(self.mechanism, Mechanism):
            raise MipkitValueError(
                "The 'mechanism' parameter of PLDCurve must be a mechanism record or None. "
                f"Got {type(self.mechanism).__name__} instead."
            )
        if self.side not in ("upper", "lower"):
            raise MipkitValueError(
                f"The 'side' parameter of PLDCurve must be 'upper' or 'lower'. Got {self.side!r} instead."
            )
        object.__setattr__(self, "_cache", {})

    @property
    def exact(self) -> bool:  # type: ignore[override]
        return False

    @property
    def grid(self) -> float:
        """The PLD grid step."""
        return _pld_discretization(self.pld)

    def lower_curve(self) -> PLDCurve:
        """The curve of the optimistic PLD on the same grid (never below the exact curve)."""
        if self.side == "lower":
            return self
        cache = self._cache  # type: ignore[attr-defined]
        if "lower" not in cache:
            low = self.pld_lower
            if low is None and self.mechanism is not None:
                low = record_pld(self.mechanism, self.grid, "lower")
            if low is None:
                cache["lower"] = self
            else:
                cache["lower"] = PLDCurve(
                    low, mechanism=self.mechanism, side="lower", tolerance=self.tolerance, width=self.width
                )
                cache["lower"]._cache["upper"] = self  # its epsilon comes from epsilon_interval
        return cache["lower"]

    # -- lazily built pieces ------------------------------------------------------------------------
    def _pmfs(self) -> list[Any]:
        remove = self.pld._pmf_remove  # private: no accessor in dp_accounting
        add = self.pld._pmf_add
        return [remove] if add is remove else [remove, add]

    def _parts(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        cache = self._cache  # type: ignore[attr-defined]
        if "parts" not in cache:
            cache["parts"] = [positive_part(p) for p in self._pmfs()]
        return cache["parts"]

    def _lines(self) -> Lines:
        """Supporting lines at ``eps`` = 0 and every positive grid loss, ``delta`` = max over add/remove."""
        cache = self._cache  # type: ignore[attr-defined]
        if "lines" not in cache:
            parts = self._parts()
            if len(parts) == 1:
                eps, _, _, delta = parts[0]
            else:
                step = _pld_discretization(self.pld)
                keys = [np.rint(p[0] / step).astype(np.int64) for p in parts]
                # every grid loss from the smallest to the largest (delta_i is defined at any eps)
                grid = np.arange(min(int(k.min()) for k in keys), max(int(k.max()) for k in keys) + 1)
                delta = np.zeros(grid.size)
                for k, (_, alpha, tpr, _) in zip(keys, parts, strict=True):
                    # delta_i(eps) for eps on the common grid: the vertex rejecting losses > eps
                    pos = np.searchsorted(-k, -grid, side="left")  # k is decreasing
                    eg = np.exp(grid * step)
                    delta = np.maximum(delta, np.clip(tpr[pos] - eg * alpha[pos], 0.0, 1.0))
                eps = grid * step
            cache["lines"] = Lines(gamma=np.exp(eps), delta=np.asarray(delta, dtype=float))
        return cache["lines"]

    def _directional(self) -> list[Vertices]:
        """The symmetric curve of each direction (add, remove) on its own, without their envelope."""
        cache = self._cache  # type: ignore[attr-defined]
        if "directional" not in cache:
            cache["directional"] = [
                symmetric_vertices(alpha, tpr, float(delta[-1])) for _, alpha, tpr, delta in self._parts()
            ]
        return cache["directional"]

    def _tpr_few(self, a: np.ndarray) -> np.ndarray:
        """TPR at a few FPRs without the envelope: the supporting lines on the upper side (never below the
        envelope), the larger directional TPR on the lower side (never above it; both valid bounds)."""
        flat = a.reshape(-1)
        if self.side == "upper":
            lines = self._lines()
            return np.asarray([lines.tpr(float(x)) for x in flat]).reshape(a.shape)
        best = np.max([np.interp(flat, v.x, v.tpr) for v in self._directional()], axis=0)
        return np.clip(best, 0.0, 1.0).reshape(a.shape)

    def _alpha_few(self, r: np.ndarray) -> np.ndarray:
        """The smallest FPR reaching each TPR, as :meth:`_tpr_few` (the smaller over directions below)."""
        flat = r.reshape(-1)
        if self.side == "upper":
            lines = self._lines()
            return np.asarray([lines.alpha_at_tpr(float(x)) for x in flat]).reshape(r.shape)
        outs = []
        for v in self._directional():
            top = int(np.argmax(v.tpr))
            xs, ts = v.x[: top + 1], np.maximum.accumulate(v.tpr[: top + 1])
            outs.append(np.where(flat <= ts[0], 0.0, np.interp(flat, ts, xs)))
        return np.min(outs, axis=0).reshape(r.shape)

    def _vertices(self) -> Vertices:
        cache = self._cache  # type: ignore[attr-defined]
        if "vertices" not in cache:
            curves = [
                symmetric_vertices(alpha, tpr, float(delta[-1])) for _, alpha, tpr, delta in self._parts()
            ]
            cache["vertices"] = envelope(curves)
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
        if self.side == "lower" or (a.size <= _FEW and "vertices" not in self._cache):  # type: ignore[attr-defined]
            return self._tpr_few(a).reshape(np.shape(alpha))
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
        if self.side == "lower" or (r.size <= _FEW and "vertices" not in self._cache):  # type: ignore[attr-defined]
            return self._alpha_few(r).reshape(np.shape(tpr))
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
        """Smallest epsilon with ``delta(epsilon) <= delta``: ``pld.get_epsilon_for_delta``; for a curve
        built for a tolerance, its side of :meth:`epsilon_interval` (the grid refined for the delta)."""
        d = check_delta(delta, owner="PLDCurve.epsilon_for_delta")
        upper = self._cache.get("upper")  # type: ignore[attr-defined]
        if upper is not None:
            return upper.epsilon_interval(d)[1]
        if self.side == "upper" and self.tolerance is not None and self.mechanism is not None:
            return self.epsilon_interval(d)[0]
        return float(self.pld.get_epsilon_for_delta(d))

    def epsilon_interval(self, delta: float) -> tuple[float, float]:
        """``(upper, lower)`` epsilon at ``delta``: the exact epsilon lies between them.

        For a curve built for a tolerance (:func:`pld_curve`) the grid is refined for this delta until
        ``upper - lower <= epsilon_rtol * upper`` (default ``1e-3``), within ``max_points``
        (:func:`mipkit.accounting.pld_build.epsilon_interval`; a probability width does not bound the
        epsilon width, which the slope of ``delta(eps)`` sets). Cached per delta. A fixed-grid curve gives
        the epsilons of its own two PLDs; a lower curve gives its upper curve's interval (or, bare, its own
        epsilon twice).
        """
        d = check_delta(delta, owner="PLDCurve.epsilon_interval")
        cache = self._cache  # type: ignore[attr-defined]
        if self.side == "lower":
            if "upper" in cache:
                return cache["upper"].epsilon_interval(d)
            return (float(self.pld.get_epsilon_for_delta(d)),) * 2
        key = ("epsilon", d)
        if key not in cache:
            lower = self.lower_curve().pld
            own = (float(self.pld.get_epsilon_for_delta(d)), float(lower.get_epsilon_for_delta(d)))
            rtol = DEFAULT_EPSILON_RTOL if self.epsilon_rtol is None else self.epsilon_rtol
            met = not math.isfinite(own[0]) or own[0] - own[1] <= rtol * own[0]
            if self.tolerance is None or self.mechanism is None or met:
                cache[key] = own
            else:
                # start from the finest pair an earlier delta built; the own grid's bounds stay valid
                start = cache.get("epsilon_pair")
                up, low, *pair, _ = epsilon_interval(
                    self.mechanism,
                    d,
                    *(start or (self.pld, lower)),
                    rtol=rtol,
                    max_points=self.max_points,
                    known=None if start else own,
                )
                cache["epsilon_pair"] = tuple(pair)
                cache[key] = (min(up, own[0]), max(low, own[1]))
        return cache[key]

    # -- one-point queries from the supporting lines (the calibration loop's fast path) ---------------
    def tpr_at_fpr(self, alpha: float) -> float:
        """``1 - f(alpha)`` at one FPR from the supporting lines, without building the vertices.

        ``min_k (delta(eps_k) + e^{eps_k} alpha)`` (and the mirrored lines) over ``eps_k`` = 0 and the
        positive grid losses: one vectorised pass over the PLD's support.
        """
        a0 = float(check_alpha(alpha, owner="PLDCurve.tpr_at_fpr"))
        return float(self._tpr_few(np.asarray([a0]))[0])

    def alpha_at_tpr_fast(self, tpr: float) -> float:
        """:meth:`alpha_at_tpr` at one TPR from the supporting lines (see :meth:`tpr_at_fpr`)."""
        r = float(tpr)
        if not 0.0 <= r <= 1.0:
            raise MipkitValueError(
                f"The 'tpr' parameter of PLDCurve.alpha_at_tpr_fast must be in [0, 1]. Got {tpr!r} instead."
            )
        return float(self._alpha_few(np.asarray([r]))[0])

    def describe(self) -> dict:
        """The curve's name, the record it was built from (``None`` for a bare PLD), the relation, the PLD
        grid, and the tolerance and width of the two sides when the grid was chosen for a tolerance."""
        out = {
            "curve": "PLDCurve",
            "neighbours": self.neighbours,
            "mechanism": None if self.mechanism is None else self.mechanism.to_dict(),
            "value_discretization_interval": _pld_discretization(self.pld),
            "side": self.side,
        }
        if self.tolerance is not None:
            rtol = DEFAULT_EPSILON_RTOL if self.epsilon_rtol is None else self.epsilon_rtol
            out |= {"tolerance": self.tolerance, "width": self.width, "epsilon_rtol": rtol}
        return out


# ---------------------------------------------------------------------------------------------------
# From a mechanism record to its PLD
# ---------------------------------------------------------------------------------------------------
def _pld_discretization(pld: Any) -> float:
    return float(pld._pmf_remove._discretization)  # private: no accessor in dp_accounting


def _holds_dpsgd(mechanism: Mechanism) -> bool:
    if isinstance(mechanism, rec.Composed):
        return any(_holds_dpsgd(m) for m in mechanism.mechanisms)
    return isinstance(mechanism, (rec.SubsampledGaussian, rec.HeterogeneousSubsampledGaussian))


def default_discretization(mechanism: Mechanism) -> float:
    """The first PLD grid: ``1e-3`` if the record holds DP-SGD, else ``1e-4`` (the search grid of a
    calibration; :func:`pld_curve` refines from there)."""
    return DEFAULT_DPSGD_DISCRETIZATION if _holds_dpsgd(mechanism) else DEFAULT_GAUSSIAN_DISCRETIZATION


def _check_discretization(value: float | None, mechanism: Mechanism, owner: str) -> float:
    if value is None:
        return default_discretization(mechanism)
    d = check_positive("value_discretization_interval", value, owner=owner)
    if d > 1.0:
        raise MipkitValueError(
            f"The 'value_discretization_interval' parameter of {owner} must be in (0, 1]. "
            f"Got {value!r} instead."
        )
    return d


def _check_record(mechanism: Any, owner: str) -> Mechanism:
    if not isinstance(mechanism, Mechanism):
        raise MipkitValueError(
            f"The 'mechanism' parameter of {owner} must be a mechanism record. "
            f"Got {type(mechanism).__name__} instead."
        )
    return mechanism


def privacy_loss_distribution(
    mechanism: Mechanism, *, value_discretization_interval: float | None = None, side: str = "upper"
) -> Any:
    """One side of a record's ``dp_accounting`` PLD, for the relation the record states.

    ``side="upper"``: pessimistic (dominating; ``PureDP`` / ``ApproxDP``: ``from_privacy_parameters``,
    the worst case among such mechanisms; ``LaplaceMechanism``: ``from_laplace_mechanism``; Gaussian
    mechanisms, ``GDP(mu)`` as noise ``1/mu``, and DP-SGD: Connect-the-Dots on mipkit's vectorised
    profiles, the add direction as the dual of the remove one); ``side="lower"``: optimistic (dominated).
    ``Composed``: the convolution of its parts' PLDs, all on one grid. docs/theory.md section 3.

    Parameters
    ----------
    mechanism : Mechanism
        The record.
    value_discretization_interval : float, optional
        PLD grid in (0, 1]; default :func:`default_discretization`.
    side : {"upper", "lower"}, default="upper"
    """
    owner = "privacy_loss_distribution"
    m = _check_record(mechanism, owner)
    if side not in ("upper", "lower"):
        raise MipkitValueError(
            f"The 'side' parameter of {owner} must be 'upper' or 'lower'. Got {side!r} instead."
        )
    return record_pld(m, _check_discretization(value_discretization_interval, m, owner), side)


def pld_curve(
    mechanism: Mechanism,
    *,
    value_discretization_interval: float | None = None,
    tolerance: float | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    epsilon_rtol: float | None = None,
) -> PLDCurve:
    """The :class:`PLDCurve` of a record, with its lower side.

    With ``value_discretization_interval`` the grid is fixed (the lower side is built on first use);
    otherwise it is refined until the two sides agree to ``tolerance`` (default ``1e-4``; at most
    ``max_points`` points in the composed PLD): :func:`mipkit.accounting.pld_build.adaptive_pld_pair`;
    an epsilon asked of it is refined further to ``epsilon_rtol`` relative (default ``1e-3``;
    :meth:`PLDCurve.epsilon_interval`).
    :func:`mipkit.accounting.tradeoff_curve` calls it for DP-SGD and compositions; call it directly for the
    PLD version of a mechanism that also has a closed form (e.g. to compare the two).
    """
    owner = "pld_curve"
    m = _check_record(mechanism, owner)
    if value_discretization_interval is not None:
        d = _check_discretization(value_discretization_interval, m, owner)
        return PLDCurve(record_pld(m, d, "upper"), mechanism=m)
    tol = check_interval(
        "tolerance", DEFAULT_TOLERANCE if tolerance is None else tolerance, 0.0, 1.0, owner=owner
    )
    pair = adaptive_pld_pair(
        m, tolerance=tol, max_points=max_points, curve_of=lambda p: PLDCurve(p, mechanism=m)
    )
    rtol = check_interval(
        "epsilon_rtol", DEFAULT_EPSILON_RTOL if epsilon_rtol is None else epsilon_rtol, 0.0, 1.0, owner=owner
    )
    return PLDCurve(
        pair.upper,
        mechanism=m,
        pld_lower=pair.lower,
        tolerance=tol,
        width=pair.width,
        epsilon_rtol=rtol,
        max_points=max_points,
    )
