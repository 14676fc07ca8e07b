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

**Conservative by construction.** The PLDs are built with ``pessimistic_estimate=True`` (losses rounded
up, truncated tails moved to ``+inf``), so ``delta(eps)`` is never below the exact one for ``eps >= 0``
and the curve, the supremum of the lines ``1 - delta(eps) - e^eps alpha``, is never above the exact curve:
risk is never under-reported. Composition of such PLDs keeps the property; a finer
``value_discretization_interval`` only tightens the curve.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from mipkit._validation import MipkitValueError, check_delta, check_epsilon, check_positive
from mipkit.accounting import mechanisms as rec
from mipkit.accounting.mechanisms import Mechanism
from mipkit.accounting.pld_vertices import Lines, Vertices, envelope, positive_part, symmetric_vertices
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = [
    "DEFAULT_DPSGD_DISCRETIZATION",
    "DEFAULT_GAUSSIAN_DISCRETIZATION",
    "PLDCurve",
    "default_discretization",
    "pld_curve",
    "privacy_loss_distribution",
]

#: Default PLD grid for one (or a few) Gaussian mechanisms: ``dp_accounting``'s own default.
DEFAULT_GAUSSIAN_DISCRETIZATION = 1e-4
#: Default PLD grid for DP-SGD: thousands of compositions at ``1e-3`` take a tenth of a second and move
#: the advantage by a relative ``~5e-4`` (on the safe side) compared with ``1e-4``.
DEFAULT_DPSGD_DISCRETIZATION = 1e-3


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
    mechanism : Mechanism, optional
        The record the PLD was built from (:func:`pld_curve` sets it); :meth:`describe` serialises it.

    Notes
    -----
    ``f``, ``tpr`` and ``alpha_at_tpr`` use the vertices (built once, lazily). :meth:`tpr_at_fpr` and
    :meth:`alpha_at_tpr_fast` evaluate one point from the supporting lines without building the
    envelope; they are what the calibration loop calls. They agree with ``tpr`` / ``alpha_at_tpr``
    exactly for a symmetric PLD and err on the risky side (by the width of a grid cell at most)
    otherwise. ``advantage`` is ``delta(0)`` (the total-variation distance, ``sup (1 - alpha - f)``).
    """

    pld: Any
    mechanism: Mechanism | None = None

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
        object.__setattr__(self, "_cache", {})

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
                grid = np.unique(np.concatenate(keys))
                delta = np.zeros(grid.size)
                for k, (_, alpha, tpr, _) in zip(keys, parts, strict=True):
                    # delta_i(eps) for eps on the common grid: the vertex rejecting losses > eps
                    pos = np.searchsorted(-k, -grid, side="left")  # k is decreasing
                    eg = np.exp(grid * step)
                    delta = np.maximum(delta, np.clip(tpr[pos] - eg * alpha[pos], 0.0, 1.0))
                eps = grid * step
            cache["lines"] = Lines(gamma=np.exp(eps), delta=np.asarray(delta, dtype=float))
        return cache["lines"]

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
        """The curve's name, the record it was built from (``None`` for a bare PLD) and the PLD grid."""
        return {
            "curve": "PLDCurve",
            "mechanism": None if self.mechanism is None else self.mechanism.to_dict(),
            "value_discretization_interval": _pld_discretization(self.pld),
        }


# ---------------------------------------------------------------------------------------------------
# From a mechanism record to its PLD
# ---------------------------------------------------------------------------------------------------
def _pld_discretization(pld: Any) -> float:
    return float(pld._pmf_remove._discretization)  # private: no accessor in dp_accounting


def _holds_dpsgd(mechanism: Mechanism) -> bool:
    if isinstance(mechanism, rec.Composed):
        return any(_holds_dpsgd(m) for m in mechanism.mechanisms)
    return isinstance(mechanism, rec.SubsampledGaussian)


def default_discretization(mechanism: Mechanism) -> float:
    """The PLD grid used when none is given: ``1e-3`` if the record holds DP-SGD, else ``1e-4``."""
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


def _pld(mechanism: Mechanism, d: float) -> Any:
    """Pessimistic PLD of one record on grid ``d`` (``dp_accounting`` factories; losses rounded up)."""
    if isinstance(mechanism, rec.GaussianMechanism):
        return pld_lib.from_gaussian_mechanism(
            standard_deviation=mechanism.sigma,
            sensitivity=mechanism.sensitivity,
            pessimistic_estimate=True,
            value_discretization_interval=d,
        )
    if isinstance(mechanism, rec.GDP):
        if mechanism.mu == 0.0:
            return pld_lib.identity(value_discretization_interval=d)
        return pld_lib.from_gaussian_mechanism(
            standard_deviation=1.0 / mechanism.mu, pessimistic_estimate=True, value_discretization_interval=d
        )
    if isinstance(mechanism, rec.LaplaceMechanism):
        return pld_lib.from_laplace_mechanism(
            mechanism.scale,
            sensitivity=mechanism.sensitivity,
            pessimistic_estimate=True,
            value_discretization_interval=d,
        )
    if isinstance(mechanism, (rec.PureDP, rec.ApproxDP)):
        # the worst case among (eps, delta)-DP mechanisms
        delta = mechanism.delta if isinstance(mechanism, rec.ApproxDP) else 0.0
        params = pld_common.DifferentialPrivacyParameters(epsilon=mechanism.epsilon, delta=delta)
        return pld_lib.from_privacy_parameters(params, value_discretization_interval=d)
    if isinstance(mechanism, rec.SubsampledGaussian):
        # add-or-remove-one neighbours, clipping norm 1: the noise multiplier is the standard deviation
        one = pld_lib.from_gaussian_mechanism(
            standard_deviation=mechanism.noise_multiplier,
            sensitivity=1.0,
            pessimistic_estimate=True,
            value_discretization_interval=d,
            sampling_prob=mechanism.sample_rate,
            use_connect_dots=True,
        )
        return one.self_compose(mechanism.steps) if mechanism.steps > 1 else one
    if isinstance(mechanism, rec.Composed):
        # the privacy loss of a composition is the sum of the losses: convolve the PLDs
        return functools.reduce(lambda a, b: a.compose(b), (_pld(m, d) for m in mechanism.mechanisms))
    raise MipkitValueError(
        "The 'mechanism' parameter of privacy_loss_distribution must be a mechanism record. "
        f"Got {type(mechanism).__name__} instead."
    )


def privacy_loss_distribution(
    mechanism: Mechanism, *, value_discretization_interval: float | None = None
) -> Any:
    """Pessimistic ``dp_accounting`` PLD of any mechanism record.

    ``PureDP`` / ``ApproxDP``: ``from_privacy_parameters`` (the worst case among such mechanisms);
    ``GaussianMechanism`` / ``GDP``: ``from_gaussian_mechanism`` (``GDP(mu)`` as the Gaussian mechanism with
    ``sigma = 1/mu``); ``LaplaceMechanism``: ``from_laplace_mechanism``; ``SubsampledGaussian``: the
    Poisson-subsampled Gaussian with ``sampling_prob = q``, ``self_compose(T)``; ``Composed``: the
    convolution of its parts' PLDs, all on one grid.

    Parameters
    ----------
    mechanism : Mechanism
        The record.
    value_discretization_interval : float, optional
        PLD grid in (0, 1]; default :func:`default_discretization`.
    """
    owner = "privacy_loss_distribution"
    if not isinstance(mechanism, Mechanism):
        raise MipkitValueError(
            f"The 'mechanism' parameter of {owner} must be a mechanism record. "
            f"Got {type(mechanism).__name__} instead."
        )
    return _pld(mechanism, _check_discretization(value_discretization_interval, mechanism, owner))


def pld_curve(mechanism: Mechanism, *, value_discretization_interval: float | None = None) -> PLDCurve:
    """The :class:`PLDCurve` of a record's pessimistic PLD (:func:`privacy_loss_distribution`).

    :func:`mipkit.accounting.tradeoff_curve` calls it for DP-SGD and compositions; call it directly for the
    PLD version of a mechanism that also has a closed form (e.g. to compare the two).
    """
    pld = privacy_loss_distribution(mechanism, value_discretization_interval=value_discretization_interval)
    return PLDCurve(pld, mechanism=mechanism)
