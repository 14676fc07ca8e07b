"""Neighbouring relations: the replace-one curve the MIP game needs, from a record stated for add/remove.

MIP's game trains on random halves of fixed size: "in" and "out" differ by *replacing* one record, so MIP
eta (and the TPR / FPR of that game) must come from a replace-one curve (docs/theory.md sections 1 and 3).
A replacement is a removal then an addition, so an add/remove guarantee ``f`` gives the group-privacy curve
for two records ``f_2 = 1 - g o g`` with ``g = 1 - f`` the TPR function (Dong, Roth & Su 2022): if
``T(P, Q) >= f`` and ``T(Q, R) >= f``, a test's TPR grows by at most ``g`` at each step, so
``T(P, R) >= 1 - g(g(alpha))``. mipkit uses the tightest valid form for each record:

* ``GDP(mu)``: ``2 mu``-GDP (``g o g`` of ``Phi(Phi^-1(a) + mu)`` is exactly that);
* ``GaussianMechanism(sigma, L)`` / ``LaplaceMechanism(b, L)``: the query moves by at most ``2L`` under a
  replacement (triangle inequality), so the exact curve with sensitivity ``2L``;
* ``SubsampledGaussian`` / ``HeterogeneousSubsampledGaussian`` (DP-SGD): the same record accounted for
  replace-one (``dp_accounting``'s ``REPLACE_ONE``: the slot of the replaced record holds a contribution of
  norm at most 1 either way; valid and tighter than group privacy, docs/theory.md section 3);
* ``PureDP``, ``ApproxDP``, ``RDP``, ``ZCDP``: :class:`GroupPrivacyCurve` of the curve, ``1 - g o g``; for
  ``(eps, delta)``-DP its advantage is ``1 - e^-eps (1 - 2 delta)`` (tighter than the
  ``(2 eps, (1 + e^eps) delta)``-DP curve, which :func:`replace_one_record` uses inside a composition);
* ``Composed``: every part converted, then composed.

A guarantee stated for replace-one does not bound add/remove neighbours (datasets of different sizes are not
neighbours under it); only DP-SGD records, which describe the mechanism itself, are accounted for both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from mipkit._validation import MipkitValueError, check_choice
from mipkit.accounting import mechanisms as rec
from mipkit.accounting.closed_forms import ApproxDPCurve
from mipkit.accounting.mechanisms import NEIGHBOURS, Mechanism
from mipkit.accounting.tradeoff import TradeoffCurve, check_alpha

__all__ = ["GroupPrivacyCurve", "add_remove_record", "replace_one_record"]


def check_neighbours(value: str, owner: str | None = None) -> str:
    """``"add_remove"`` or ``"replace_one"``."""
    return check_choice("neighbours", value, NEIGHBOURS, owner=owner)


def replace_one_record(mechanism: Mechanism, *, inside_composition: bool = False) -> Mechanism | None:
    """The record of the replace-one guarantee implied by ``mechanism`` (module docstring), or None when the
    best replace-one curve is the group-privacy curve of the record's own curve (``PureDP``, ``ApproxDP``,
    ``RDP``, ``ZCDP`` and compositions of these).

    ``inside_composition=True`` turns ``PureDP`` / ``ApproxDP`` into ``ApproxDP(2 eps, (1 + e^eps) delta)``
    (a record, so that it composes with the other parts' PLDs).
    """
    m = mechanism
    if m.neighbours == "replace_one":
        return m
    if isinstance(m, rec.GDP):
        return rec.GDP(2.0 * m.mu, neighbours="replace_one")
    if isinstance(m, rec.GaussianMechanism):
        return rec.GaussianMechanism(m.sigma, 2.0 * m.sensitivity, neighbours="replace_one")
    if isinstance(m, rec.LaplaceMechanism):
        return rec.LaplaceMechanism(m.scale, 2.0 * m.sensitivity, neighbours="replace_one")
    if isinstance(m, (rec.SubsampledGaussian, rec.HeterogeneousSubsampledGaussian)):
        return replace(m, neighbours="replace_one")
    if isinstance(m, (rec.PureDP, rec.ApproxDP)):
        if not inside_composition:
            return None
        eps, delta = m.epsilon, getattr(m, "delta", 0.0)
        d2 = min((1.0 + math.exp(min(eps, 709.0))) * delta, math.nextafter(1.0, 0.0))  # no overflow
        return rec.ApproxDP(2.0 * eps, d2, neighbours="replace_one")
    if isinstance(m, rec.Composed):
        if all(isinstance(p, (rec.RDP, rec.ZCDP)) for p in m.mechanisms):
            return None
        parts = [replace_one_record(p, inside_composition=True) for p in m.mechanisms]
        if any(p is None for p in parts):
            raise MipkitValueError(
                "A Composed record mixes Renyi / zero-concentrated DP guarantees with other records; compose "
                "them separately (RDP parts with RDP parts)."
            )
        return rec.Composed(parts)  # type: ignore[arg-type]
    return None


def add_remove_record(mechanism: Mechanism) -> Mechanism:
    """The add/remove record of ``mechanism``: itself, or (DP-SGD) the same run accounted for add/remove.

    Raises :class:`MipkitValueError` for a guarantee stated only for replace-one neighbours.
    """
    m = mechanism
    if m.neighbours == "add_remove" and not isinstance(m, rec.Composed):
        return m
    if isinstance(m, (rec.SubsampledGaussian, rec.HeterogeneousSubsampledGaussian)):
        return replace(m, neighbours="add_remove")
    if isinstance(m, rec.Composed):
        return rec.Composed([add_remove_record(p) for p in m.mechanisms])
    raise MipkitValueError(
        f"The {m.name!r} record states a guarantee for replace-one neighbours only, which does not bound "
        "add/remove neighbours (datasets of different sizes). State the add/remove guarantee instead."
    )


@dataclass(frozen=True, eq=False)
class GroupPrivacyCurve(TradeoffCurve):
    """The replace-one curve of an add/remove curve by group privacy for two records: ``1 - g(g(alpha))``.

    ``g = 1 - f`` is the base curve's TPR function (Dong, Roth & Su 2022; module docstring). The TPR
    function of the result is ``g o g``, concave and increasing, so the result is a trade-off curve.

    Parameters
    ----------
    base : TradeoffCurve
        A curve for add/remove neighbours.
    """

    base: TradeoffCurve

    def __post_init__(self) -> None:
        if not isinstance(self.base, TradeoffCurve):
            raise MipkitValueError(
                "The 'base' parameter of GroupPrivacyCurve must be a TradeoffCurve. "
                f"Got {type(self.base).__name__} instead."
            )

    @property
    def mechanism(self) -> Mechanism | None:
        """The add/remove record of the base curve."""
        return getattr(self.base, "mechanism", None)

    @property
    def neighbours(self) -> str:
        return "replace_one"

    @property
    def exact(self) -> bool:  # type: ignore[override]
        return bool(self.base.exact)

    def lower_curve(self) -> TradeoffCurve:
        low = self.base.lower_curve()
        return self if low is self.base else GroupPrivacyCurve(low)

    def tpr(self, alpha: float | np.ndarray) -> np.ndarray:
        """``g(g(alpha))``."""
        a = check_alpha(alpha, owner="GroupPrivacyCurve.tpr")
        inner = np.clip(np.asarray(self.base.tpr(a), dtype=float), 0.0, 1.0)
        return np.clip(np.asarray(self.base.tpr(inner), dtype=float), 0.0, 1.0).reshape(np.shape(alpha))

    def f(self, alpha: float | np.ndarray) -> np.ndarray:
        """``1 - g(g(alpha))``."""
        return 1.0 - self.tpr(alpha)

    def alpha_at_tpr(self, tpr: float | np.ndarray) -> np.ndarray:
        """``g^-1(g^-1(r))``: the smallest FPR at which TPR ``r`` is reachable, twice through the base."""
        inner = np.asarray(self.base.alpha_at_tpr(tpr), dtype=float)
        return np.asarray(self.base.alpha_at_tpr(np.clip(inner, 0.0, 1.0)), dtype=float)

    def advantage(self) -> float:
        """``1 - e^-eps (1 - 2 delta)`` for an ``(eps, delta)``-DP base (attained on the slope-1 piece of
        ``g o g``); the numeric supremum otherwise."""
        if isinstance(self.base, ApproxDPCurve):
            e, d = self.base.epsilon, self.base.delta
            return float(min(1.0, -math.expm1(-e) + 2.0 * d * math.exp(-e)))
        return super().advantage()

    def describe(self) -> dict:
        return {
            "curve": "GroupPrivacyCurve",
            "neighbours": "replace_one",
            "via": "group privacy for two records: 1 - g(g(alpha)), g the add/remove TPR function",
            "mechanism": None if self.mechanism is None else self.mechanism.to_dict(),
            "base": self.base.describe(),
        }
