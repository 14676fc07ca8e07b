"""The safe-side check of a calibration on a closed-form curve, in 60-digit arithmetic.

A float comparison ``risk(noise) <= target`` can fail by rounding at the very noise that meets the target
(``mipkit calibrate --mechanism gaussian --target epsilon --value 0.2 --delta 1e-5`` fails on it),
or pass when the exact value is a hair above. :func:`exact_meets` evaluates the closed forms of
docs/theory.md section 3 with ``mpmath`` at 60 significant digits (the record's parameters and the target
are floats, converted exactly) and compares with an allowance of ``1e-45``, far below float resolution and
far above the error of 60-digit arithmetic: the check is exact for all purposes.

* mu-GDP (``GDP``, ``GaussianMechanism`` with ``mu = L / sigma``): advantage ``2 Phi(mu/2) - 1``, TPR at
  FPR ``a`` ``Phi(Phi^-1(a) + mu)``, ``alpha*(r) = Phi(Phi^-1(r) - mu)``,
  ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``;
* Laplace (``eps = L / b``): advantage ``1 - e^{-eps/2}``, the three-piece TPR and its inverse,
  ``delta(eps') = max(0, 1 - e^{(eps' - eps)/2})``;
* ``(eps, delta)``-DP: advantage ``delta + (1 - delta) tanh(eps/2)``, TPR ``min(1, delta + e^eps a,
  1 - e^-eps (1 - delta - a))``; for replace-one by group privacy the advantage ``1 - e^-eps (1 - 2 delta)``.

An epsilon target at ``delta_t`` is met iff ``delta(eps_target) <= delta_t`` (``delta`` decreases in eps).
"""

from __future__ import annotations

from typing import Any

from mipkit.accounting import mechanisms as rec
from mipkit.accounting.mechanisms import Mechanism

__all__ = ["exact_meets"]

_DIGITS = 60
_ALLOWANCE = "1e-45"


def _mp() -> Any:
    import mpmath  # a dependency of dp_accounting

    ctx = mpmath.mp.clone()
    ctx.dps = _DIGITS
    return ctx


def _ppf(mp: Any, p: Any) -> Any:
    return mp.sqrt(2) * mp.erfinv(2 * p - 1)


class _Gdp:
    def __init__(self, mp: Any, mu: Any) -> None:
        self.mp, self.mu = mp, mu

    def advantage(self) -> Any:
        return 2 * self.mp.ncdf(self.mu / 2) - 1

    def tpr(self, a: Any) -> Any:
        return self.mp.ncdf(_ppf(self.mp, a) + self.mu) if a > 0 else self.mp.mpf(0)

    def alpha_at(self, r: Any) -> Any:
        return self.mp.ncdf(_ppf(self.mp, r) - self.mu)

    def delta(self, e: Any) -> Any:
        mp, mu = self.mp, self.mu
        if mu == 0:
            return mp.mpf(0)
        return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)


class _Laplace:
    def __init__(self, mp: Any, eps: Any) -> None:
        self.mp, self.eps = mp, eps

    def advantage(self) -> Any:
        return 1 - self.mp.exp(-self.eps / 2)

    def tpr(self, a: Any) -> Any:
        mp, e = self.mp, self.eps
        k = mp.exp(-e)
        if a < k / 2:
            return mp.exp(e) * a
        if a <= mp.mpf(1) / 2:
            return 1 - k / (4 * a)
        return 1 - k * (1 - a)

    def alpha_at(self, r: Any) -> Any:
        mp, e = self.mp, self.eps
        k = mp.exp(-e)
        if r <= mp.mpf(1) / 2:
            return r * k
        if r <= 1 - k / 2:
            return k / (4 * (1 - r))
        return 1 - (1 - r) / k

    def delta(self, e2: Any) -> Any:
        return max(self.mp.mpf(0), 1 - self.mp.exp((e2 - self.eps) / 2))


class _ApproxDP:
    def __init__(self, mp: Any, eps: Any, delta: Any, group: bool) -> None:
        self.mp, self.eps, self.d, self.group = mp, eps, delta, group

    def _g(self, a: Any) -> Any:
        mp, e, d = self.mp, self.eps, self.d
        return min(mp.mpf(1), d + mp.exp(e) * a, 1 - mp.exp(-e) * (1 - d - a))

    def tpr(self, a: Any) -> Any:
        return self._g(self._g(a)) if self.group else self._g(a)

    def advantage(self) -> Any:
        mp, e, d = self.mp, self.eps, self.d
        if self.group:
            return min(mp.mpf(1), 1 - mp.exp(-e) * (1 - 2 * d))
        return d + (1 - d) * mp.tanh(e / 2)


def _law(mp: Any, m: Mechanism, group: bool) -> Any:
    f = mp.mpf
    if isinstance(m, rec.GDP):
        return _Gdp(mp, f(m.mu) * (2 if group else 1))
    if isinstance(m, rec.GaussianMechanism):
        return _Gdp(mp, f(m.sensitivity) * (2 if group else 1) / f(m.sigma))
    if isinstance(m, rec.LaplaceMechanism):
        return _Laplace(mp, f(m.sensitivity) * (2 if group else 1) / f(m.scale))
    if isinstance(m, (rec.PureDP, rec.ApproxDP)):
        return _ApproxDP(mp, f(m.epsilon), f(getattr(m, "delta", 0.0)), group)
    return None


def exact_meets(target: Any, mechanism: Mechanism) -> bool | None:
    """Whether ``mechanism`` meets ``target`` exactly (module docstring); None when the record has no closed
    form here or the target needs what the law lacks (then the float curve decides)."""
    mp = _mp()
    group = target.relation == "replace_one" and mechanism.neighbours == "add_remove"
    law = _law(mp, mechanism, group)
    if law is None:
        return None
    f, allowance = mp.mpf, mp.mpf(_ALLOWANCE)
    value = f(target.value)
    name = target.name
    if name in ("eta", "advantage"):
        risk = law.advantage() / (2 if name == "eta" else 1)
        return bool(risk + allowance <= value)
    if name in ("tpr-at-fpr", "success"):
        point = f(target.fpr if name == "tpr-at-fpr" else target.baseline)
        return bool(law.tpr(point) + allowance <= value)
    if name == "precision" and hasattr(law, "alpha_at"):
        pi, r = f(target.base_rate), f(target.recall)
        alpha = law.alpha_at(r)
        return bool(pi * r / (pi * r + (1 - pi) * alpha) + allowance <= value)
    if name == "epsilon" and hasattr(law, "delta"):
        d = law.delta(value)
        return bool(d == 0 or d + allowance <= f(target.delta))  # exactly 0: pure DP at this epsilon
    return None
