"""Risk targets for calibration: one small frozen class per risk, each owning its validation and its risk.

A target says which operational risk a release may reach and how much (docs/theory.md sections 1, 3 and
4). Each class validates itself when built (:class:`~mipkit.MipkitValueError`, scikit-learn's message
form), computes its risk from any trade-off curve (:meth:`RiskTarget.risk`, the same number as the
matching function of :mod:`mipkit.accounting.risk`), gives the largest ``mu`` for which a mu-GDP mechanism
meets it (:meth:`RiskTarget.gdp_mu`, the closed forms that start the search), and serialises itself
(:meth:`RiskTarget.to_dict`; :func:`target_from_dict` reverses it). The risk never grows with the noise.

* ``EtaTarget(value)`` (``"eta"``): MIP eta ``= adv / 2``, in (0, 1/2);
* ``AdvantageTarget(value)`` (``"advantage"``): ``adv = sup (1 - alpha - f(alpha))``, in (0, 1);
* ``TprAtFprTarget(fpr, value)`` (``"tpr-at-fpr"``): ``1 - f(fpr)``, in (fpr, 1);
* ``SuccessTarget(baseline, value)`` (``"success"``): ``1 - f(baseline)``, in (baseline, 1);
* ``PrecisionTarget(base_rate, recall, value)`` (``"precision"``): ``pi r / (pi r + (1 - pi) alpha*(r))``,
  in (pi, 1);
* ``EpsilonTarget(delta, value)`` (``"epsilon"``): the curve's epsilon at ``delta``, ``>= 0``.

Each target says which neighbouring relation its risk concerns (:attr:`RiskTarget.relation`): MIP eta is a
risk of the membership game, whose "in" and "out" training sets differ by replacing one record, so
``EtaTarget`` is computed on the replace-one curve; the others concern the test "with against without the
record" and use the curve of the relation the record states (docs/theory.md sections 1 and 3).
:meth:`RiskTarget.risk_lower` is the same risk on the curve's optimistic side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from scipy import optimize, stats

from mipkit._validation import MipkitValueError, check_delta, check_epsilon, check_eta, check_interval
from mipkit.accounting.closed_forms import GaussianCurve
from mipkit.accounting.mechanisms import record_parts
from mipkit.accounting.risk import eta_from_curve, replace_one_curve
from mipkit.accounting.tradeoff import TradeoffCurve

__all__ = [
    "TARGETS",
    "AdvantageTarget",
    "EpsilonTarget",
    "EtaTarget",
    "PrecisionTarget",
    "RiskTarget",
    "SuccessTarget",
    "TprAtFprTarget",
    "target_from_dict",
]


class RiskTarget:
    """Base class of the targets: a risk that must not exceed ``value``.

    Subclasses are frozen dataclasses that set ``name``, validate in ``__post_init__`` and implement
    :meth:`risk` and :meth:`gdp_mu`.
    """

    name: ClassVar[str] = ""
    #: The relation of the curve the risk is computed on: None for the record's own.
    relation: ClassVar[str | None] = None
    value: float

    def risk(self, curve: TradeoffCurve) -> float:
        """The targeted risk of a release with trade-off curve ``curve`` (an upper bound for a PLD curve)."""
        raise NotImplementedError

    def risk_lower(self, curve: TradeoffCurve) -> float:
        """The risk on the curve's optimistic side (:meth:`TradeoffCurve.lower_curve`): a lower bound."""
        return self.risk(curve.lower_curve())

    def gdp_mu(self) -> float:
        """The largest ``mu`` for which a mu-GDP mechanism meets the target (``inf``: every ``mu``)."""
        raise NotImplementedError

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The target's parameters other than ``value`` (e.g. ``("fpr",)``)."""
        return tuple(f.name for f in fields(cls) if f.name != "value")  # type: ignore[arg-type]

    def params(self) -> dict[str, float]:
        """The target's parameters other than ``value``, JSON-ready."""
        return {k: getattr(self, k) for k in self.parameter_names()}

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., <parameter>: ..., "value": ...}``; :func:`target_from_dict` reverses it."""
        return {"name": self.name, **self.params(), "value": self.value}


def _set(target: RiskTarget, name: str, value: float) -> None:
    object.__setattr__(target, name, value)


def _check_above(target: RiskTarget, what: str, floor: float, why: str) -> float:
    """Validate ``target.value`` as a probability ``what`` in (0, 1) strictly above ``floor``."""
    v = check_interval(what, target.value, 0.0, 1.0, owner=type(target).__name__)
    if v <= floor:
        raise MipkitValueError(why.format(v=v, floor=floor))
    return v


@dataclass(frozen=True)
class EtaTarget(RiskTarget):
    """MIP eta at most ``value`` in (0, 1/2): no attacker in the membership game is right more than
    ``1/2 + value`` of the time (``eta = adv / 2``, :func:`~mipkit.accounting.risk.eta_from_curve`)."""

    name: ClassVar[str] = "eta"
    relation: ClassVar[str | None] = "replace_one"
    value: float

    def __post_init__(self) -> None:
        _set(self, "value", check_eta(self.value, owner="EtaTarget"))

    def risk(self, curve: TradeoffCurve) -> float:
        return eta_from_curve(curve)

    def risk_lower(self, curve: TradeoffCurve) -> float:
        return eta_from_curve(replace_one_curve(curve).lower_curve())

    def gdp_mu(self) -> float:
        """``Phi(mu/2) - 1/2 = eta`` on the replace-one curve: ``mu = 2 Phi^-1(1/2 + eta)``."""
        return float(2.0 * stats.norm.ppf(0.5 + self.value))


@dataclass(frozen=True)
class AdvantageTarget(RiskTarget):
    """Advantage (largest TPR - FPR of any membership test, the total variation) at most ``value``."""

    name: ClassVar[str] = "advantage"
    value: float

    def __post_init__(self) -> None:
        _set(self, "value", check_interval("advantage", self.value, 0.0, 1.0, owner="AdvantageTarget"))

    def risk(self, curve: TradeoffCurve) -> float:
        return float(curve.advantage())

    def gdp_mu(self) -> float:
        """``2 Phi(mu/2) - 1 = adv``: ``mu = 2 Phi^-1(1/2 + adv/2)``."""
        return float(2.0 * stats.norm.ppf(0.5 + self.value / 2.0))


_UNREACHABLE_TPR = (
    "A TPR target of {v:g} at FPR {floor:g} is unreachable: guessing at random already reaches TPR = FPR, "
    "whatever the noise. Ask for a TPR above the FPR."
)
_UNREACHABLE_SUCCESS = (
    "A success target of {v:g} is unreachable with baseline {floor:g}: the attacker succeeds with the "
    "baseline probability without the release. Ask for more than it."
)


class _OnePointTarget(RiskTarget):
    """A target on ``1 - f(point)``, the largest TPR at one FPR: TPR at FPR, success over a baseline.

    Subclasses name the point's field (``point``), the value's name in messages (``what``) and say why a
    value at or below the point is unreachable (``why``, formatted with ``v`` and ``floor``).
    """

    point: ClassVar[str]
    what: ClassVar[str]
    why: ClassVar[str]

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _set(self, self.point, check_interval(self.point, getattr(self, self.point), 0.0, 1.0, owner=owner))
        _set(self, "value", _check_above(self, self.what, getattr(self, self.point), self.why))

    def risk(self, curve: TradeoffCurve) -> float:
        return curve.tpr_at_fpr(getattr(self, self.point))

    def gdp_mu(self) -> float:
        """``Phi(Phi^-1(point) + mu) = value``."""
        return float(stats.norm.ppf(self.value) - stats.norm.ppf(getattr(self, self.point)))


@dataclass(frozen=True)
class TprAtFprTarget(_OnePointTarget):
    """TPR at FPR ``fpr`` at most ``value``: ``1 - f(fpr) <= value``
    (:func:`~mipkit.accounting.risk.tpr_at_fpr_bound`).

    Parameters
    ----------
    fpr : float
        False-positive rate in (0, 1).
    value : float
        Largest TPR allowed, in (fpr, 1): guessing at random already reaches TPR = FPR.
    """

    name: ClassVar[str] = "tpr-at-fpr"
    point, what, why = "fpr", "tpr", _UNREACHABLE_TPR
    fpr: float
    value: float


@dataclass(frozen=True)
class SuccessTarget(_OnePointTarget):
    """Success of re-identification, attribute inference or reconstruction at most ``value`` when the
    attacker succeeds with probability ``baseline`` without the release: ``1 - f(baseline) <= value``
    (Kulynych et al. 2025; :func:`~mipkit.accounting.risk.success_bound`).

    Parameters
    ----------
    baseline : float
        The attacker's success without the release, in (0, 1).
    value : float
        Largest success allowed, in (baseline, 1).
    """

    baseline: float
    value: float
    name: ClassVar[str] = "success"
    point, what, why = "baseline", "success", _UNREACHABLE_SUCCESS


@dataclass(frozen=True)
class PrecisionTarget(RiskTarget):
    """Certified precision at most ``value`` for attacks that find a fraction ``recall`` of the members
    when a fraction ``base_rate`` of the people checked are members:
    ``pi r / (pi r + (1 - pi) alpha*(r)) <= value`` with ``alpha*(r) = inf{alpha : 1 - f(alpha) >= r}``
    (docs/theory.md section 4; :func:`~mipkit.accounting.risk.certified_precision`).

    Parameters
    ----------
    base_rate : float
        Member fraction ``pi`` in (0, 1).
    recall : float
        Recall ``r`` in (0, 1).
    value : float
        Largest precision allowed, in (pi, 1): any attack, even guessing, has precision ``pi``.
    """

    name: ClassVar[str] = "precision"
    base_rate: float
    recall: float
    value: float

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _set(self, "base_rate", check_interval("base_rate", self.base_rate, 0.0, 1.0, owner=owner))
        _set(self, "recall", check_interval("recall", self.recall, 0.0, 1.0, owner=owner))
        why = (
            "A precision target of {v:g} is unreachable at base rate {floor:g}: any attack (even guessing) "
            "has precision equal to the base rate. Ask for a precision above it."
        )
        _set(self, "value", _check_above(self, "precision", self.base_rate, why))

    def risk(self, curve: TradeoffCurve) -> float:
        pi, r = self.base_rate, self.recall
        alpha = curve.alpha_at_tpr_fast(r)
        return float(pi * r / (pi * r + (1.0 - pi) * alpha))

    def gdp_mu(self) -> float:
        """``alpha*(r) = Phi(Phi^-1(r) - mu) >= pi r (1 - p) / ((1 - pi) p)`` at precision ``p``."""
        pi, r, v = self.base_rate, self.recall, self.value
        alpha_min = pi * r * (1.0 - v) / ((1.0 - pi) * v)
        return float(stats.norm.ppf(r) - stats.norm.ppf(alpha_min))


@dataclass(frozen=True)
class EpsilonTarget(RiskTarget):
    """The curve's epsilon at ``delta`` at most ``value``: the release is ``(value, delta)``-DP.

    Parameters
    ----------
    delta : float
        In [0, 1).
    value : float
        Largest epsilon allowed, ``>= 0``.
    """

    name: ClassVar[str] = "epsilon"
    delta: float
    value: float

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _set(self, "delta", check_delta(self.delta, owner=owner))
        _set(self, "value", check_epsilon(self.value, owner=owner))

    def risk(self, curve: TradeoffCurve) -> float:
        return float(curve.epsilon_for_delta(self.delta))

    def gdp_mu(self) -> float:
        """Root in ``mu`` of ``delta_mu(eps) = delta`` (``delta_mu`` grows with ``mu``; Dong et al. 2022,
        Cor. 2.13)."""
        d, eps = self.delta, self.value
        if d == 0.0:
            return 0.0

        def excess(log_mu: float) -> float:
            return GaussianCurve(math.exp(log_mu)).delta_for_epsilon(eps) - d

        if excess(math.log(1e-8)) > 0:
            return 0.0
        if excess(math.log(1e4)) <= 0:
            return math.inf
        return float(math.exp(optimize.brentq(excess, math.log(1e-8), math.log(1e4), xtol=1e-14)))


#: Target class by name.
TARGETS: dict[str, type[RiskTarget]] = {
    cls.name: cls
    for cls in (EtaTarget, AdvantageTarget, TprAtFprTarget, SuccessTarget, PrecisionTarget, EpsilonTarget)
}


def target_from_dict(d: Mapping[str, Any]) -> RiskTarget:
    """The target that :meth:`RiskTarget.to_dict` wrote: ``{"name": ..., <parameters>, "value": ...}``.

    A missing parameter is reported by name (``"The 'precision' target needs the 'recall' parameter."``).
    """
    cls, params = record_parts(d, TARGETS, "target", "target_from_dict")
    return cls(**params)
