"""From a mechanism record to its pessimistic and optimistic privacy-loss distributions, on a grid chosen
for a tolerance.

:func:`record_pld` builds one side (``"upper"``: dominating, ``"lower"``: dominated; docs/theory.md
section 3 and :mod:`mipkit.accounting.pld_pmfs`) of a record's PLD on a grid ``d``, for the relation the
record states. Gaussian mechanisms (``GaussianMechanism``, ``GDP``, ``SubsampledGaussian``,
``HeterogeneousSubsampledGaussian``) use mipkit's own vectorised profiles and pmfs; Laplace and
``(epsilon, delta)``-DP records use ``dp_accounting``'s factories for the upper side. Compositions convolve
(``dp_accounting``'s ``compose`` / ``self_compose``: FFT, the power taken once for ``T`` steps), so the
only discretisation error is that of one step, of second order in ``d`` on both sides.

:func:`adaptive_pld_pair` refines the grid until the two sides agree: the width of the curve (the largest
gap between the upper and lower TPR over a fixed set of FPRs, and between the two advantages) is at most
the tolerance, or the next grid would exceed the cost cap (the number of points of the composed PLD).
:func:`epsilon_interval` refines further, for one delta, until the upper and lower epsilons agree to a
relative tolerance (the width in probability does not bound the width in epsilon, whose scale is set by the
slope of ``delta(eps)``), under the same cap.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import fft as scipy_fft

from mipkit._validation import MipkitValueError
from mipkit.accounting import mechanisms as rec
from mipkit.accounting import pld_pmfs as pmfs
from mipkit.accounting.mechanisms import Mechanism

__all__ = [
    "DEFAULT_EPSILON_RTOL",
    "DEFAULT_MAX_POINTS",
    "DEFAULT_TOLERANCE",
    "PLDPair",
    "adaptive_pld_pair",
    "curve_width",
    "epsilon_interval",
    "initial_grid",
    "pld_size",
    "record_pld",
    "step_loss_scale",
]

#: Default tolerance: the largest gap allowed between the upper and lower value of a risk (a probability).
DEFAULT_TOLERANCE = 1e-4
#: Default relative tolerance of an epsilon answer: ``(eps_upper - eps_lower) / eps_upper`` at a delta.
DEFAULT_EPSILON_RTOL = 1e-3
#: Cost cap of the adaptive grid: the most points a composed PLD may have (a few hundred MB of FFT).
DEFAULT_MAX_POINTS = 8_000_000
#: FPRs at which the width of a curve is measured (log-spaced; the advantage is measured too).
WIDTH_FPRS = np.concatenate([np.logspace(-6, -1, 16), np.linspace(0.15, 0.95, 9)])
#: Truncation of the composed tails (``dp_accounting``'s default): moved to ``+inf`` on the upper side,
#: dropped on the lower side.
_TAIL = 1e-15


# ---------------------------------------------------------------------------------------------------
# One step of a Gaussian mechanism (sensitivity 1, noise sigma, Poisson rate q)
# ---------------------------------------------------------------------------------------------------
#: The most grid points one step's privacy loss may span before the accounting refuses (memory, not accuracy).
_MAX_STEP_POINTS = 4 * DEFAULT_MAX_POINTS
#: The largest privacy loss a grid may hold: ``e^L`` must stay finite in double precision (``e^709``).
_MAX_LOSS = 700.0


def _grid_range(lo: float, hi: float, d: float) -> tuple[int, int]:
    """Grid indices covering the losses ``[lo, hi]``; refuses a span too wide to hold in memory.

    A Gaussian step with very little noise (noise multiplier ~1e-4) has privacy losses in the thousands: its
    grid would need billions of points, and its certificate would say nothing anyway.
    """
    points = (hi - lo) / d if d > 0 else math.inf
    if not math.isfinite(points) or points > _MAX_STEP_POINTS or max(hi, -lo) > _MAX_LOSS:
        raise MipkitValueError(
            f"The privacy loss of one step spans [{lo:.3g}, {hi:.3g}]: too wide to account ({points:.3g} "
            f"grid points; at most {_MAX_STEP_POINTS:.3g} and losses within +-{_MAX_LOSS:g}). The noise is "
            "far too small for a meaningful certificate: use a larger noise multiplier."
        )
    return math.floor(lo / d) - 1, math.ceil(hi / d) + 1


@functools.lru_cache(maxsize=128)
def _gaussian_step(sigma: float, q: float, relation: str, d: float, side: str) -> Any:
    """The PLD of one step; ``relation`` ``"add_remove"`` (remove and add pmfs) or ``"replace_one"``."""
    if relation == "replace_one" and q < 1.0:
        lo, hi = pmfs.gaussian_bounds(sigma, q, "replace")
        delta = functools.partial(pmfs.gaussian_delta, sigma=sigma, q=q, direction="replace")
        if side == "upper":
            return pld_lib.PrivacyLossDistribution(
                pmfs.symmetric_pessimistic_pmf(delta, _grid_range(-max(hi, -lo), max(hi, -lo), d)[1], d)
            )
        k_lo, k_hi = _grid_range(lo, hi, d)
        q_lo = pmfs.gaussian_q_at_least(k_lo * d, sigma, q, "replace")
        return pld_lib.PrivacyLossDistribution(pmfs.optimistic_pmf(delta, k_lo, k_hi, d, q_lo))
    if relation == "replace_one":  # q = 1: a replacement moves the sum by 2 (dp_accounting's REPLACE)
        sigma, q = sigma / 2.0, 1.0
    lo, hi = pmfs.gaussian_bounds(sigma, q, "remove")
    remove = functools.partial(pmfs.gaussian_delta, sigma=sigma, q=q, direction="remove")
    if q >= 1.0:  # the Gaussian mechanism: one symmetric pmf
        if side == "upper":
            return pld_lib.PrivacyLossDistribution(
                pmfs.symmetric_pessimistic_pmf(remove, _grid_range(-max(hi, -lo), max(hi, -lo), d)[1], d)
            )
        k_lo, k_hi = _grid_range(-max(hi, -lo), max(hi, -lo), d)
        q_lo = pmfs.gaussian_q_at_least(k_lo * d, sigma, q, "remove")
        return pld_lib.PrivacyLossDistribution(pmfs.optimistic_pmf(remove, k_lo, k_hi, d, q_lo))
    k_lo, k_hi = _grid_range(lo, hi, d)
    if side == "upper":
        up = pmfs.pessimistic_pmf(remove, k_lo, k_hi, d)
        return pld_lib.PrivacyLossDistribution(up, pmfs.dual_pmf(up, pessimistic=True))
    low_remove = pmfs.optimistic_pmf(remove, k_lo, k_hi, d, 1.0)
    a_lo, a_hi = pmfs.gaussian_bounds(sigma, q, "add")
    ka_lo, ka_hi = _grid_range(a_lo, a_hi, d)
    add = functools.partial(pmfs.gaussian_delta, sigma=sigma, q=q, direction="add")
    q_lo = pmfs.gaussian_q_at_least(ka_lo * d, sigma, q, "add")
    return pld_lib.PrivacyLossDistribution(low_remove, pmfs.optimistic_pmf(add, ka_lo, ka_hi, d, q_lo))


def _identity(d: float, side: str) -> Any:
    return pld_lib.identity(value_discretization_interval=d, pessimistic_estimate=side == "upper")


def _dp_pld(epsilon: float, delta: float, d: float, side: str) -> Any:
    """The worst ``(epsilon, delta)``-DP pair: losses ``+-epsilon`` (rounded up / down) and ``delta`` at
    ``+inf`` (``dp_accounting``'s ``from_privacy_parameters`` on the upper side)."""
    if side == "upper":
        params = pld_common.DifferentialPrivacyParameters(epsilon=epsilon, delta=delta)
        return pld_lib.from_privacy_parameters(params, value_discretization_interval=d)
    masses: dict[int, float] = {}
    for loss, mass in (
        (epsilon, 1.0 / (1.0 + math.exp(-epsilon))),
        (-epsilon, 1.0 / (1.0 + math.exp(epsilon))),
    ):
        key = math.floor(loss / d)
        masses[key] = masses.get(key, 0.0) + (1.0 - delta) * mass
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        masses, delta, d, pessimistic_estimate=False
    )


def _laplace_pld(scale: float, sensitivity: float, d: float, side: str) -> Any:
    if side == "upper":
        return pld_lib.from_laplace_mechanism(
            scale,
            sensitivity=sensitivity,
            pessimistic_estimate=True,
            value_discretization_interval=d,
            use_connect_dots=True,
        )
    eps = sensitivity / scale
    k_lo, k_hi = _grid_range(-eps, eps, d)
    delta = functools.partial(pmfs.laplace_delta, epsilon=eps)
    return pld_lib.PrivacyLossDistribution(pmfs.optimistic_pmf(delta, k_lo, k_hi, d, 1.0))


def _self_compose_pmf(pmf: Any, count: int) -> Any:
    """``count``-fold composition of a pmf by one FFT power (as ``dp_accounting``'s ``self_compose``; its
    Chernoff truncation bounds at the same 40 orders, computed in one pass each): the truncated tails go to
    ``+inf`` on the pessimistic side and are dropped on the optimistic side."""
    dense = pmf.to_dense_pmf()
    d, lo = float(dense._discretization), int(dense._lower_loss)  # private: no accessors in dp_accounting
    probs, inf, pessimistic = (
        np.asarray(dense._probs, dtype=float),
        float(dense._infinity_mass),
        dense._pessimistic_estimate,
    )
    n = probs.size
    upper, lower = (n - 1) * count, 0
    pos = probs > 0
    k, lp = np.arange(n)[pos], np.log(probs[pos])
    for order in np.concatenate([np.arange(-20, 0), np.arange(1, 21)]) / n:
        x = lp + k * order
        top = float(np.max(x))
        bound = (count * (top + math.log(float(np.sum(np.exp(x - top))))) + math.log(2.0 / _TAIL)) / order
        if math.isfinite(bound):
            if order > 0:
                upper = min(upper, math.ceil(bound))
            else:
                lower = max(lower, math.floor(bound))
    size = upper - lower + 1
    fast = scipy_fft.next_fast_len(max(size, n))
    out = np.roll(np.real(scipy_fft.ifft(scipy_fft.fft(probs, fast) ** count)), -lower)[:size]
    inf_out = -math.expm1(count * math.log1p(-min(inf, 1.0 - 1e-16))) + (_TAIL if pessimistic else 0.0)
    return pld_pmf.DensePLDPmf(d, lo * count + lower, out, min(inf_out, 1.0), pessimistic)


def _steps(one: Any, count: int) -> Any:
    if count <= 1:
        return one
    remove, add = one._pmf_remove, one._pmf_add  # private: no accessor in dp_accounting
    composed = _self_compose_pmf(remove, count)
    return pld_lib.PrivacyLossDistribution(composed, None if add is remove else _self_compose_pmf(add, count))


def _gaussian_groups(groups: tuple, relation: str, d: float, side: str) -> Any:
    plds = [_steps(_gaussian_step(float(z), float(q), relation, d, side), int(n)) for z, q, n in groups]
    return functools.reduce(lambda a, b: a.compose(b, tail_mass_truncation=_TAIL), plds)


def _one_side(mechanism: Mechanism, d: float, side: str) -> Any:
    m = mechanism
    if isinstance(m, (rec.GaussianMechanism, rec.GDP)):
        mu = m.sensitivity / m.sigma if isinstance(m, rec.GaussianMechanism) else m.mu
        return _identity(d, side) if mu == 0.0 else _gaussian_step(1.0 / mu, 1.0, "add_remove", d, side)
    if isinstance(m, rec.LaplaceMechanism):
        return _laplace_pld(m.scale, m.sensitivity, d, side)
    if isinstance(m, (rec.PureDP, rec.ApproxDP)):
        return _dp_pld(m.epsilon, getattr(m, "delta", 0.0), d, side)
    if isinstance(m, rec.SubsampledGaussian):
        return _gaussian_groups(((m.noise_multiplier, m.sample_rate, m.steps),), m.neighbours, d, side)
    if isinstance(m, rec.HeterogeneousSubsampledGaussian):
        return _gaussian_groups(m.groups, m.neighbours, d, side)
    if isinstance(m, rec.Composed):
        parts = [_one_side(p, d, side) for p in m.mechanisms]
        return functools.reduce(lambda a, b: a.compose(b, tail_mass_truncation=_TAIL), parts)
    raise MipkitValueError(
        "The 'mechanism' parameter of privacy_loss_distribution must be a record with a privacy-loss "
        "distribution (PureDP, ApproxDP, GaussianMechanism, LaplaceMechanism, GDP, SubsampledGaussian, "
        f"HeterogeneousSubsampledGaussian, Composed of these). Got {type(m).__name__} instead."
    )


def _inf_mass_of_parts(mechanism: Mechanism) -> float:
    """Mass at ``+inf`` of the exact composition's lower side: ``1 - prod(1 - delta_i)`` of its DP parts."""
    if isinstance(mechanism, rec.ApproxDP):
        return mechanism.delta
    if isinstance(mechanism, rec.Composed):
        keep = 1.0
        for p in mechanism.mechanisms:
            keep *= 1.0 - _inf_mass_of_parts(p)
        return 1.0 - keep
    return 0.0


def record_pld(mechanism: Mechanism, d: float, side: str = "upper") -> Any:
    """One side of the record's PLD on grid ``d``: ``"upper"`` dominates the exact PLD (risk never
    under-reported), ``"lower"`` is dominated by it (risk never over-reported)."""
    if isinstance(mechanism, rec.Composed) and len({m.neighbours for m in mechanism.mechanisms}) > 1:
        raise MipkitValueError(
            "The parts of a Composed record state different neighbouring relations; build its curve with "
            "tradeoff_curve, which accounts every part for one relation."
        )
    out = _one_side(mechanism, d, side)
    if side == "lower":
        # composition moved the truncated tails to +inf; on the lower side they are dropped instead
        inf = _inf_mass_of_parts(mechanism)
        remove, add = out._pmf_remove, out._pmf_add  # private: no accessor in dp_accounting
        if max(remove._infinity_mass, add._infinity_mass) > inf:
            new_remove = _with_inf(remove, inf)
            out = pld_lib.PrivacyLossDistribution(new_remove, None if add is remove else _with_inf(add, inf))
    return out


def _with_inf(pmf: Any, inf: float) -> Any:
    """A copy of a dense pmf with the mass at ``+inf`` lowered to ``inf``."""
    dense = pmf.to_dense_pmf()
    return pld_pmf.DensePLDPmf(
        dense._discretization, dense._lower_loss, dense._probs, min(dense._infinity_mass, inf), False
    )


def pld_size(pld: Any) -> int:
    """Number of grid points of a PLD (both directions)."""
    sizes = {id(p): p.size for p in (pld._pmf_remove, pld._pmf_add)}  # private: no accessor
    return int(sum(sizes.values()))


# ---------------------------------------------------------------------------------------------------
# Adaptive grid
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PLDPair:
    """The upper and lower PLDs of a record on one grid, with what the refinement found.

    Attributes
    ----------
    upper, lower : dp_accounting PrivacyLossDistribution
    grid : float
        The grid step.
    width : float
        :func:`curve_width` of the pair (``nan`` when not measured).
    tolerance : float or None
        The tolerance asked for (None for a fixed grid).
    met : bool
        Whether ``width <= tolerance`` (True for a fixed grid).
    grids : list of float
        The grids tried, coarse to fine.
    """

    upper: Any
    lower: Any
    grid: float
    width: float = math.nan
    tolerance: float | None = None
    met: bool = True
    grids: list = field(default_factory=list)


def curve_width(upper: Any, lower: Any) -> float:
    """The largest gap between two curves' risks: ``max(adv_up - adv_low, max_a tpr_up(a) - tpr_low(a))``
    over :data:`WIDTH_FPRS` (TPRs from the exact vertices of both curves)."""
    gap = float(upper.advantage()) - float(lower.advantage())
    tpr = np.asarray(upper.tpr(WIDTH_FPRS)) - np.asarray(lower.tpr(WIDTH_FPRS))
    return float(max(gap, float(np.max(tpr)), 0.0))


def step_loss_scale(mechanism: Mechanism) -> float:
    """The spread of one step's privacy loss: ``q sqrt(e^{1/z^2} - 1)`` for DP-SGD (the central-limit
    scale of Bu et al. 2020), the smallest over the parts of a record; ``inf`` for other records."""
    if isinstance(mechanism, rec.SubsampledGaussian):
        z, q = mechanism.noise_multiplier, mechanism.sample_rate
        return q * math.sqrt(math.expm1(min(1.0 / (z * z), 700.0)))
    if isinstance(mechanism, rec.HeterogeneousSubsampledGaussian):
        return min(q * math.sqrt(math.expm1(min(1.0 / (z * z), 700.0))) for z, q, _ in mechanism.groups)
    if isinstance(mechanism, rec.Composed):
        return min(step_loss_scale(m) for m in mechanism.mechanisms)
    return math.inf


def initial_grid(mechanism: Mechanism) -> float:
    """First grid of the refinement: ``1e-3``, and for DP-SGD at most a quarter of one step's loss scale
    (so that a step spans a few grid points)."""
    return float(min(1e-3, max(step_loss_scale(mechanism) / 4.0, 1e-8)))


def _holds_dpsgd(mechanism: Mechanism) -> bool:
    if isinstance(mechanism, rec.Composed):
        return any(_holds_dpsgd(m) for m in mechanism.mechanisms)
    return isinstance(mechanism, (rec.SubsampledGaussian, rec.HeterogeneousSubsampledGaussian))


def adaptive_pld_pair(
    mechanism: Mechanism,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    max_points: int = DEFAULT_MAX_POINTS,
    start: float | None = None,
    curve_of: Any = None,
) -> PLDPair:
    """Refine the grid until the upper and lower curves agree to ``tolerance`` (module docstring).

    Each step divides the grid by ``clip(1.25 sqrt(width / tolerance), 2, 10)`` (both sides err at second
    order in the grid), and stops before a grid whose composed PLD would exceed ``max_points`` points.
    ``curve_of(pld)`` turns a PLD into the curve the width is measured on.
    """
    d = initial_grid(mechanism) if start is None else float(start)
    grids: list[float] = []
    while True:
        grids.append(d)
        upper, lower = record_pld(mechanism, d, "upper"), record_pld(mechanism, d, "lower")
        width = curve_width(curve_of(upper), curve_of(lower))
        if width <= tolerance:
            return PLDPair(upper, lower, d, width, tolerance, True, grids)
        factor = min(max(1.25 * math.sqrt(width / tolerance), 2.0), 10.0)
        if pld_size(upper) * factor > max_points or d / factor < 1e-9:
            return PLDPair(upper, lower, d, width, tolerance, False, grids)
        d /= factor


def _epsilons(upper: Any, lower: Any, delta: float) -> tuple[float, float]:
    return float(upper.get_epsilon_for_delta(delta)), float(lower.get_epsilon_for_delta(delta))


def epsilon_interval(
    mechanism: Mechanism,
    delta: float,
    upper: Any,
    lower: Any,
    *,
    rtol: float = DEFAULT_EPSILON_RTOL,
    max_points: int = DEFAULT_MAX_POINTS,
    known: tuple[float, float] | None = None,
) -> tuple[float, float, Any, Any, bool]:
    """Upper and lower epsilon at ``delta``, the grid refined until they agree to ``rtol`` relative.

    Starts from ``upper`` and ``lower``, the record's two PLDs on one grid (the pessimistic epsilon is
    never below the exact one, the optimistic never above it) and, while ``eps_up - eps_low > rtol eps_up``,
    divides the grid by ``clip(1.25 sqrt(gap / (rtol eps_up)), 2, 10)`` (both sides err at second order in
    the grid), stopping before a grid whose composed PLD would exceed ``max_points`` points. Every grid gives
    valid bounds, so the answer is the smallest upper and the largest lower epsilon seen. An infinite upper
    epsilon (the mass at ``+inf`` exceeds ``delta``) is not refined. ``known``: the two epsilons of
    ``upper`` and ``lower`` when already computed.

    Returns
    -------
    (eps_upper, eps_lower, upper, lower, met) : tuple
        ``upper`` and ``lower`` are the PLDs of the last grid built (to start the next delta from);
        ``met`` says whether the relative gap is within ``rtol``.
    """
    up, low = _epsilons(upper, lower, delta) if known is None else known
    d, size = float(upper._pmf_remove._discretization), pld_size(upper)  # private: no accessor

    def met(u: float, lo: float) -> bool:
        return (not math.isfinite(u)) or u - lo <= rtol * u

    while not met(up, low):
        factor = min(max(1.25 * math.sqrt((up - low) / (rtol * up)), 2.0), 10.0)
        if size * factor > max_points or d / factor < 1e-9:
            return up, low, upper, lower, False
        d /= factor
        upper, lower = record_pld(mechanism, d, "upper"), record_pld(mechanism, d, "lower")
        new_up, new_low = _epsilons(upper, lower, delta)
        up, low, size = min(up, new_up), max(low, new_low), pld_size(upper)
    return up, low, upper, lower, True
