"""Calibrate noise to an operational risk target instead of to an epsilon (MATH.md 3, "Calibration").

Factory functions in the style of ``dp_accounting``'s ``calibrate_dp_mechanism``: each returns the
smallest noise (Gaussian ``sigma``, Laplace ``scale``, DP-SGD noise multiplier) whose certified risk meets
a target, as a frozen :class:`Calibration` record. Targets (``risk(noise)`` is non-increasing in the noise):

* ``"eta"``: MIP eta ``= adv / 2`` (:func:`~mipkit.accounting.risk.eta_from_curve`), in (0, 1/2);
* ``"advantage"``: largest TPR - FPR of any membership test (total variation), in (0, 1);
* ``"tpr-at-fpr"``: largest TPR at FPR ``fpr``, ``1 - f(fpr)``, in (fpr, 1);
* ``"success"``: largest success of re-identification / attribute inference / reconstruction when the
  attacker's baseline is ``baseline``: ``1 - f(baseline)`` (Kulynych et al. 2025), in (baseline, 1);
* ``"precision"``: certified precision at recall ``r`` when a fraction ``pi`` are members,
  ``pi r / (pi r + (1 - pi) alpha*(r))`` (MATH.md 4), in (pi, 1);
* ``"epsilon"``: the epsilon of the mechanism at ``delta``, ``>= 0``.

Safe side (DESIGN.md): the answer is re-checked, and the noise raised until the check passes, so the
returned noise never exceeds the target through rounding. For the Gaussian mechanism (mu-GDP, exact closed
forms) and the Laplace mechanism (exact curve) the check is the exact curve. For DP-SGD the search runs on
a coarse pessimistic PLD (fast), and the answer is re-evaluated on a finer PLD (``achieved_fine``);
pessimistic PLDs over-estimate risk, so both numbers are upper bounds on the true risk. The convergence
flag is computed: the bracket between a noise that misses the target and one that meets it is narrower
than ``rtol``.

Speed (the design goal for DP-SGD): a start from the central-limit (GDP) approximation of DP-SGD
(Bu et al. 2020: ``mu = q sqrt(T (e^{1/sigma^2} - 1))``), Brent's method on ``log(noise)``, risks
computed from the PLD without building the whole trade-off curve (``delta(0)`` for the advantage,
one point of the supporting lines for TPR at FPR), and one fine re-check.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_delta,
    check_epsilon,
    check_eta,
    check_interval,
    check_positive,
    check_positive_int,
    check_sample_rate,
)
from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.pld import DEFAULT_DPSGD_DISCRETIZATION, PLDCurve, dpsgd_curve
from mipkit.accounting.risk import (
    certified_precision,
    eta_from_curve,
    success_bound,
    tpr_at_fpr_bound,
)
from mipkit.accounting.tradeoff import TradeoffCurve

__all__ = [
    "MECHANISMS",
    "TARGETS",
    "Calibration",
    "RiskTarget",
    "calibrate",
    "calibrate_dpsgd",
    "calibrate_gaussian",
    "calibrate_laplace",
]

TARGETS: tuple[str, ...] = ("eta", "advantage", "tpr-at-fpr", "success", "precision", "epsilon")
MECHANISMS: tuple[str, ...] = ("gaussian", "laplace", "dpsgd")

#: Default relative tolerance on the DP-SGD noise multiplier (bracket width).
DEFAULT_DPSGD_RTOL = 1e-3
#: Fine PLD grid of the DP-SGD re-check, relative to the search grid.
_FINE_FACTOR = 5.0
#: Bounds of the searched noise (in units of the sensitivity for Gaussian / Laplace).
_NOISE_MIN, _NOISE_MAX = 1e-6, 1e6
_DPSGD_NOISE_MIN, _DPSGD_NOISE_MAX = 0.05, 1e3


# ---------------------------------------------------------------------------------------------------
# Result record
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Calibration:
    """The outcome of a calibration (frozen; ``to_dict`` gives the ``mipkit calibrate --json`` payload).

    Attributes
    ----------
    noise : float
        The calibrated noise parameter (see ``parameter_name``).
    parameter_name : str
        ``"sigma"`` (Gaussian), ``"scale"`` (Laplace) or ``"noise_multiplier"`` (DP-SGD).
    mechanism : str
        ``"gaussian"``, ``"laplace"`` or ``"dpsgd"``.
    target : str
        One of :data:`TARGETS`.
    target_value : float
        The risk level asked for.
    achieved : float
        Risk at ``noise`` as computed by the search (exact curve, or the search's PLD grid).
    achieved_fine : float
        Risk at ``noise`` re-evaluated on a finer PLD grid (DP-SGD) or on the exact curve; never above
        ``target_value``.
    converged : bool
        Whether the search closed its bracket to the tolerance (computed, not assumed).
    seconds : float
        Wall-clock time of the calibration.
    details : dict
        Target parameters (fpr, baseline, ...), mechanism parameters, tolerances, grids, bracket and the
        number of risk evaluations.
    """

    noise: float
    parameter_name: str
    mechanism: str
    target: str
    target_value: float
    achieved: float
    achieved_fine: float
    converged: bool
    seconds: float
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict of every field."""
        return asdict(self)


# ---------------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RiskTarget:
    """A risk target: which risk, the level, and the parameters that risk needs (validated on build).

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    value : float
        Level the risk must not exceed.
    fpr : float, optional
        FPR for ``"tpr-at-fpr"``, in (0, 1).
    baseline : float, optional
        Attacker's success without the release for ``"success"``, in (0, 1).
    base_rate, recall : float, optional
        Member fraction ``pi`` in (0, 1) and recall ``r`` in (0, 1) for ``"precision"``.
    delta : float, optional
        Delta for ``"epsilon"``, in [0, 1).
    """

    target: str
    value: float
    fpr: float | None = None
    baseline: float | None = None
    base_rate: float | None = None
    recall: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        owner = "RiskTarget"
        name = check_choice("target", self.target, TARGETS, owner=owner)
        set_ = object.__setattr__

        def need(param: str) -> Any:
            val = getattr(self, param)
            if val is None:
                raise MipkitValueError(
                    f"The {name!r} target needs the {param!r} parameter. Got None instead."
                )
            return val

        if name == "eta":
            set_(self, "value", check_eta(self.value, owner=owner))
        elif name == "advantage":
            set_(self, "value", check_interval("advantage", self.value, 0.0, 1.0, owner=owner))
        elif name == "tpr-at-fpr":
            fpr = check_interval("fpr", need("fpr"), 0.0, 1.0, owner=owner)
            set_(self, "fpr", fpr)
            v = check_interval("tpr", self.value, 0.0, 1.0, owner=owner)
            if v <= fpr:
                raise MipkitValueError(
                    f"A TPR target of {v:g} at FPR {fpr:g} is unreachable: guessing at random already "
                    "reaches TPR = FPR, whatever the noise. Ask for a TPR above the FPR."
                )
            set_(self, "value", v)
        elif name == "success":
            base = check_interval("baseline", need("baseline"), 0.0, 1.0, owner=owner)
            set_(self, "baseline", base)
            v = check_interval("success", self.value, 0.0, 1.0, owner=owner)
            if v <= base:
                raise MipkitValueError(
                    f"A success target of {v:g} is unreachable with baseline {base:g}: the attacker "
                    "succeeds with the baseline probability without the release. Ask for more than it."
                )
            set_(self, "value", v)
        elif name == "precision":
            pi = check_interval("base_rate", need("base_rate"), 0.0, 1.0, owner=owner)
            r = check_interval("recall", need("recall"), 0.0, 1.0, owner=owner)
            set_(self, "base_rate", pi)
            set_(self, "recall", r)
            v = check_interval("precision", self.value, 0.0, 1.0, owner=owner)
            if v <= pi:
                raise MipkitValueError(
                    f"A precision target of {v:g} is unreachable at base rate {pi:g}: any attack (even "
                    "guessing) has precision equal to the base rate. Ask for a precision above it."
                )
            set_(self, "value", v)
        else:  # epsilon
            set_(self, "value", check_epsilon(self.value, owner=owner))
            set_(self, "delta", check_delta(need("delta"), owner=owner))

    # -- the risk of a curve ----------------------------------------------------------------------
    def risk(self, curve: TradeoffCurve) -> float:
        """The targeted risk of a release with trade-off curve ``curve``."""
        fast = isinstance(curve, PLDCurve)
        if self.target == "eta":
            return eta_from_curve(curve)
        if self.target == "advantage":
            return float(curve.advantage())
        if self.target in ("tpr-at-fpr", "success"):
            a = self.fpr if self.target == "tpr-at-fpr" else self.baseline
            if fast:
                return curve.tpr_at_fpr(a)
            fn = tpr_at_fpr_bound if self.target == "tpr-at-fpr" else success_bound
            return float(fn(curve, a))
        if self.target == "precision":
            pi, r = float(self.base_rate), float(self.recall)
            if fast:
                alpha = curve.alpha_at_tpr_fast(r)
                return float(pi * r / (pi * r + (1.0 - pi) * alpha))
            return float(certified_precision(curve, r, pi))
        return float(curve.epsilon_for_delta(float(self.delta)))

    def gdp_mu(self) -> float:
        """The largest ``mu`` for which a mu-GDP mechanism meets the target (closed forms; MATH.md 3-4).

        Risk grows with ``mu``. ``inf`` means every ``mu`` meets it (no noise needed).
        """
        ppf = stats.norm.ppf
        v = self.value
        if self.target == "eta":  # Phi(mu/2) - 1/2 = eta
            return float(2.0 * ppf(0.5 + v))
        if self.target == "advantage":  # 2 Phi(mu/2) - 1 = adv
            return float(2.0 * ppf(0.5 + v / 2.0))
        if self.target in ("tpr-at-fpr", "success"):  # Phi(Phi^-1(a) + mu) = v
            a = self.fpr if self.target == "tpr-at-fpr" else self.baseline
            return float(ppf(v) - ppf(a))
        if self.target == "precision":  # alpha*(r) = Phi(Phi^-1(r) - mu) >= pi r (1-p) / ((1-pi) p)
            pi, r = float(self.base_rate), float(self.recall)
            alpha_min = pi * r * (1.0 - v) / ((1.0 - pi) * v)
            return float(ppf(r) - ppf(alpha_min))
        # epsilon: solve delta_mu(eps) = delta for mu (delta grows with mu)
        d = float(self.delta)
        if d == 0.0:
            return 0.0
        eps = v

        def excess(log_mu: float) -> float:
            return GaussianCurve(math.exp(log_mu)).delta_for_epsilon(eps) - d

        if excess(math.log(1e-8)) > 0:
            return 0.0
        if excess(math.log(1e4)) <= 0:
            return math.inf
        return float(math.exp(optimize.brentq(excess, math.log(1e-8), math.log(1e4), xtol=1e-14)))

    def describe(self) -> dict:
        """JSON-ready parameters of the target (only those it uses)."""
        keys = {
            "eta": (),
            "advantage": (),
            "tpr-at-fpr": ("fpr",),
            "success": ("baseline",),
            "precision": ("base_rate", "recall"),
            "epsilon": ("delta",),
        }[self.target]
        return {k: getattr(self, k) for k in keys}


def _make_target(target: str, value: float, **params: Any) -> RiskTarget:
    if isinstance(target, RiskTarget):
        return target
    return RiskTarget(target, value, **params)


# ---------------------------------------------------------------------------------------------------
# A monotone search on log(noise)
# ---------------------------------------------------------------------------------------------------
@dataclass
class _Search:
    """Records every evaluation of ``risk(noise)`` (non-increasing) against a target."""

    risk: Callable[[float], float]
    target: float
    evaluations: dict = field(default_factory=dict)

    def __call__(self, noise: float) -> float:
        if noise not in self.evaluations:
            self.evaluations[noise] = float(self.risk(noise))
        return self.evaluations[noise]

    def meets(self, noise: float) -> bool:
        return self(noise) <= self.target

    def bracket(self) -> tuple[float, float]:
        """Largest evaluated noise that misses the target and smallest that meets it."""
        ok = [n for n, r in self.evaluations.items() if r <= self.target]
        bad = [n for n, r in self.evaluations.items() if r > self.target]
        return (max(bad) if bad else math.nan), (min(ok) if ok else math.nan)


def _search(
    search: _Search, start: float, *, rtol: float, low: float, high: float, step: float, what: str
) -> tuple[float, float, bool]:
    """Smallest noise in ``[low, high]`` meeting the target, to relative tolerance ``rtol``.

    Brackets from ``start`` by factors of ``step``, then runs Brent's method on ``log(noise)``; the
    returned noise is the smallest evaluated one that meets the target. Returns ``(lo, hi, at_floor)``
    where ``lo`` misses the target (``nan`` when even ``low`` meets it, ``at_floor = True``).
    """
    x = min(max(start, low), high)
    if search.meets(x):
        hi = x
        while True:
            lo = max(hi / step, low)
            if not search.meets(lo):
                break
            hi = lo
            if lo <= low:
                return math.nan, low, True
    else:
        lo = x
        while True:
            hi = min(lo * step, high)
            if search.meets(hi):
                break
            lo = hi
            if hi >= high:
                raise MipkitValueError(
                    f"The target is unreachable: even {what} = {high:g} gives risk "
                    f"{search(high):.6g} > {search.target:.6g}."
                )

    def g(log_noise: float) -> float:
        return search(math.exp(log_noise)) - search.target

    xtol = 0.25 * math.log1p(rtol)
    with contextlib.suppress(RuntimeError, ValueError):  # the bracket is guaranteed above
        optimize.brentq(g, math.log(lo), math.log(hi), xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=200)
    lo, hi = search.bracket()
    # Brent stops on the root's location; close the bracket explicitly if it is still wide.
    for _ in range(60):
        if hi / lo - 1.0 <= rtol:
            break
        mid = math.sqrt(lo * hi)
        if search.meets(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi, False


def _raise_until_safe(
    check: Callable[[float], float], noise: float, target: float, *, factor: float, limit: int = 200
) -> tuple[float, float]:
    """Raise ``noise`` by ``factor`` until ``check(noise) <= target``; return the noise and its risk."""
    risk = check(noise)
    for _ in range(limit):
        if risk <= target:
            return noise, risk
        noise *= factor
        risk = check(noise)
    if risk <= target:
        return noise, risk
    raise MipkitValueError(  # pragma: no cover - the search already met the target
        f"Could not confirm the calibration on the safe side: risk {risk:.6g} > target {target:.6g}."
    )


# ---------------------------------------------------------------------------------------------------
# Gaussian, Laplace, DP-SGD
# ---------------------------------------------------------------------------------------------------
def calibrate_gaussian(
    target: str,
    value: float,
    *,
    sensitivity: float = 1.0,
    fpr: float | None = None,
    baseline: float | None = None,
    base_rate: float | None = None,
    recall: float | None = None,
    delta: float | None = None,
) -> Calibration:
    """Smallest ``sigma`` of the Gaussian mechanism ``q(D) + N(0, sigma^2)`` that meets a risk target.

    The mechanism is ``mu``-GDP with ``mu = L / sigma`` (Dong, Roth & Su 2022, Thm 2.7), so each target
    has a closed form in ``mu`` (:meth:`RiskTarget.gdp_mu`): e.g. advantage ``2 Phi(mu/2) - 1``, TPR at
    FPR ``Phi(Phi^-1(alpha) + mu)``, certified precision through ``alpha*(r) = Phi(Phi^-1(r) - mu)``,
    and ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` for the epsilon target.
    ``sigma = L / mu``, then re-checked on the exact curve and raised by a relative ``1e-12`` until the
    check passes.

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    value : float
        Level the risk must not exceed.
    sensitivity : float, default=1.0
        l2-sensitivity ``L`` of the query.
    fpr, baseline, base_rate, recall, delta : float, optional
        What the target needs (see :class:`RiskTarget`).

    Returns
    -------
    Calibration
        ``noise`` is ``sigma``.
    """
    start = time.perf_counter()
    tgt = _make_target(
        target, value, fpr=fpr, baseline=baseline, base_rate=base_rate, recall=recall, delta=delta
    )
    sens = check_positive("sensitivity", sensitivity, owner="calibrate_gaussian")
    mu = tgt.gdp_mu()
    if not mu > 0.0:
        raise MipkitValueError(
            f"The {tgt.target!r} target {tgt.value:g} is unreachable for the Gaussian mechanism: no finite "
            "sigma meets it" + (" (delta = 0 needs infinite noise)." if tgt.target == "epsilon" else ".")
        )
    if math.isinf(mu):
        raise MipkitValueError(
            f"The {tgt.target!r} target {tgt.value:g} is met by any sigma > 0; there is nothing to calibrate."
        )

    def check(sigma: float) -> float:
        return tgt.risk(GaussianCurve.from_mechanism(sigma, sens))

    sigma, achieved = _raise_until_safe(check, sens / mu, tgt.value, factor=1.0 + 1e-12)
    return Calibration(
        noise=float(sigma),
        parameter_name="sigma",
        mechanism="gaussian",
        target=tgt.target,
        target_value=tgt.value,
        achieved=float(achieved),
        achieved_fine=float(achieved),
        converged=bool(achieved <= tgt.value),
        seconds=time.perf_counter() - start,
        details={
            **tgt.describe(),
            "sensitivity": sens,
            "mu": float(sens / sigma),
            "method": "closed form (mu-GDP), re-checked on the exact curve",
        },
    )


def calibrate_laplace(
    target: str,
    value: float,
    *,
    sensitivity: float = 1.0,
    fpr: float | None = None,
    baseline: float | None = None,
    base_rate: float | None = None,
    recall: float | None = None,
    delta: float | None = None,
    rtol: float = 1e-10,
) -> Calibration:
    """Smallest scale ``b`` of the Laplace mechanism ``q(D) + Lap(b)`` that meets a risk target.

    Uses the exact Laplace trade-off curve (:class:`~mipkit.accounting.curves.LaplaceCurve`, tighter
    than the ``(L/b, 0)``-DP curve), searched with Brent's method on ``log(b)`` to relative tolerance
    ``rtol``; the returned scale meets the target on the exact curve.

    Parameters
    ----------
    target, value, fpr, baseline, base_rate, recall, delta
        As in :func:`calibrate_gaussian`.
    sensitivity : float, default=1.0
        l1-sensitivity ``L`` of the query.
    rtol : float, default=1e-10
        Relative tolerance on the scale.
    """
    start = time.perf_counter()
    tgt = _make_target(
        target, value, fpr=fpr, baseline=baseline, base_rate=base_rate, recall=recall, delta=delta
    )
    sens = check_positive("sensitivity", sensitivity, owner="calibrate_laplace")
    tol = check_interval("rtol", rtol, 0.0, 0.1, owner="calibrate_laplace")
    search = _Search(lambda b: tgt.risk(LaplaceCurve(b, sens)), tgt.value)
    lo, hi, at_floor = _search(
        search, sens, rtol=tol, low=_NOISE_MIN * sens, high=_NOISE_MAX * sens, step=4.0, what="scale"
    )
    if at_floor:
        raise MipkitValueError(
            f"The {tgt.target!r} target {tgt.value:g} is met by any Laplace scale; "
            "there is nothing to calibrate."
        )
    scale, achieved = _raise_until_safe(search, hi, tgt.value, factor=1.0 + 1e-12)
    return Calibration(
        noise=float(scale),
        parameter_name="scale",
        mechanism="laplace",
        target=tgt.target,
        target_value=tgt.value,
        achieved=float(achieved),
        achieved_fine=float(achieved),
        converged=bool(hi / lo - 1.0 <= tol and achieved <= tgt.value),
        seconds=time.perf_counter() - start,
        details={
            **tgt.describe(),
            "sensitivity": sens,
            "epsilon": float(sens / scale),
            "rtol": tol,
            "bracket": [float(lo), float(hi)],
            "evaluations": len(search.evaluations),
            "method": "Brent on log(scale), exact Laplace curve",
        },
    )


def _dpsgd_start(tgt: RiskTarget, q: float, steps: int) -> float:
    """Starting noise from the central-limit approximation of DP-SGD as mu-GDP.

    ``mu = q sqrt(T (e^{1/s^2} - 1))``:

    Bu, Dong, Long & Su, "Deep learning with Gaussian differential privacy" (2020), Thm 5 (``q = 1``:
    exactly ``sqrt(T) / s``).
    """
    try:
        mu = tgt.gdp_mu()
    except (ValueError, ArithmeticError):  # pragma: no cover - defensive
        return 1.0
    if not (mu > 0.0 and math.isfinite(mu)):
        return 1.0
    if q >= 1.0:
        return max(math.sqrt(steps) / mu, _DPSGD_NOISE_MIN)
    ratio = (mu / q) ** 2 / steps
    return float(min(max(1.0 / math.sqrt(math.log1p(ratio)), _DPSGD_NOISE_MIN), _DPSGD_NOISE_MAX))


def calibrate_dpsgd(
    target: str,
    value: float,
    *,
    sample_rate: float,
    steps: int,
    fpr: float | None = None,
    baseline: float | None = None,
    base_rate: float | None = None,
    recall: float | None = None,
    delta: float | None = None,
    rtol: float = DEFAULT_DPSGD_RTOL,
    value_discretization_interval: float = DEFAULT_DPSGD_DISCRETIZATION,
    fine_discretization_interval: float | None = None,
) -> Calibration:
    """Smallest DP-SGD noise multiplier that meets a risk target (Poisson rate ``q``, ``T`` steps).

    Search: start from the central-limit approximation, bracket, then Brent's method on
    ``log(noise)`` to relative width ``rtol``, each risk computed on a pessimistic PLD at grid
    ``value_discretization_interval`` (:func:`~mipkit.accounting.pld.dpsgd_curve`). Check: the smallest
    noise found is re-evaluated on a finer pessimistic PLD (``fine_discretization_interval``, default
    a fifth of the search grid) and raised by ``1 + rtol`` until that check meets the target too.

    Parameters
    ----------
    target, value, fpr, baseline, base_rate, recall, delta
        As in :func:`calibrate_gaussian`.
    sample_rate : float
        Poisson sampling rate ``q`` in (0, 1].
    steps : int
        Number of steps ``T >= 1``.
    rtol : float, default=1e-3
        Relative tolerance on the noise multiplier.
    value_discretization_interval : float, default=1e-3
        PLD grid of the search.
    fine_discretization_interval : float, optional
        PLD grid of the re-check (``achieved_fine``).

    Returns
    -------
    Calibration
        ``noise`` is the noise multiplier (noise standard deviation / clipping norm).
    """
    start = time.perf_counter()
    owner = "calibrate_dpsgd"
    tgt = _make_target(
        target, value, fpr=fpr, baseline=baseline, base_rate=base_rate, recall=recall, delta=delta
    )
    q = check_sample_rate(sample_rate, owner=owner)
    t = check_positive_int("steps", steps, owner=owner)
    tol = check_interval("rtol", rtol, 0.0, 0.1, owner=owner)
    d = check_interval("value_discretization_interval", value_discretization_interval, 0.0, 1.0, owner=owner)
    fine = d / _FINE_FACTOR if fine_discretization_interval is None else fine_discretization_interval
    fine = check_interval("fine_discretization_interval", fine, 0.0, d, closed="right", owner=owner)
    if tgt.target == "epsilon" and tgt.delta == 0.0:
        raise MipkitValueError(
            "The 'epsilon' target with delta = 0 is unreachable for DP-SGD: the Gaussian mechanism is not "
            "(eps, 0)-DP for any finite noise. Give a delta > 0."
        )

    # With no noise a record is detected exactly when it is sampled (probability 1 - (1-q)^T) and is
    # invisible otherwise: the (0, 1 - (1-q)^T)-DP curve bounds every DP-SGD curve from below.
    sampled = -math.expm1(t * math.log1p(-q)) if q < 1.0 else 1.0
    if sampled < 1.0 and tgt.target != "epsilon" and tgt.risk(ApproxDPCurve(0.0, sampled)) <= tgt.value:
        raise MipkitValueError(
            f"The {tgt.target!r} target {tgt.value:g} is met by any noise multiplier: with sampling rate "
            f"{q:g} over {t} steps a record is used with probability {sampled:.4g}, which caps this risk "
            f"at {tgt.risk(ApproxDPCurve(0.0, sampled)):.4g}. There is nothing to calibrate."
        )

    def risk_at(grid: float) -> Callable[[float], float]:
        return lambda sigma: tgt.risk(dpsgd_curve(sigma, q, t, value_discretization_interval=grid))

    search = _Search(risk_at(d), tgt.value)
    guess = _dpsgd_start(tgt, q, t)
    lo, hi, at_floor = _search(
        search,
        guess,
        rtol=tol,
        low=_DPSGD_NOISE_MIN,
        high=_DPSGD_NOISE_MAX,
        step=1.25,
        what="noise_multiplier",
    )
    achieved = search(hi)
    check = _Search(risk_at(fine), tgt.value)
    noise, achieved_fine = _raise_until_safe(check, hi, tgt.value, factor=1.0 + tol, limit=100)
    if noise != hi:
        achieved = search(noise)
    converged = (not at_floor) and hi / lo - 1.0 <= tol and achieved_fine <= tgt.value
    return Calibration(
        noise=float(noise),
        parameter_name="noise_multiplier",
        mechanism="dpsgd",
        target=tgt.target,
        target_value=tgt.value,
        achieved=float(achieved),
        achieved_fine=float(achieved_fine),
        converged=bool(converged),
        seconds=time.perf_counter() - start,
        details={
            **tgt.describe(),
            "sample_rate": q,
            "steps": t,
            "rtol": tol,
            "value_discretization_interval": d,
            "fine_discretization_interval": fine,
            "start": float(guess),
            "bracket": [float(lo), float(hi)],
            "evaluations": len(search.evaluations),
            "fine_evaluations": len(check.evaluations),
            "at_noise_floor": bool(at_floor),
            "method": "Brent on log(noise) over a pessimistic PLD, re-checked on a finer PLD",
        },
    )


def calibrate(mechanism: str, target: str, value: float, **params: Any) -> Calibration:
    """Dispatch to :func:`calibrate_gaussian`, :func:`calibrate_laplace` or :func:`calibrate_dpsgd`.

    ``params`` are passed on; ``None`` values are dropped, so a command line can pass every option.
    """
    mech = check_choice("mechanism", mechanism, MECHANISMS, owner="calibrate")
    kwargs = {k: v for k, v in params.items() if v is not None}
    if mech == "dpsgd":
        for name in ("sample_rate", "steps"):
            if name not in kwargs:
                raise MipkitValueError(
                    f"The 'dpsgd' mechanism needs the {name!r} parameter. Got None instead."
                )
        kwargs.pop("sensitivity", None)
        return calibrate_dpsgd(target, value, **kwargs)
    for name in ("sample_rate", "steps"):
        if name in kwargs:
            raise MipkitValueError(
                f"The {name!r} parameter only applies to the 'dpsgd' mechanism, not {mech!r}."
            )
    fn = calibrate_gaussian if mech == "gaussian" else calibrate_laplace
    return fn(target, value, **kwargs)
