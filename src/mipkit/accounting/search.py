"""One generic bracketed search: the smallest value of a parameter at which a non-increasing risk meets a
target, in log space, with a safe-side re-check (the shape of dp_accounting's ``calibrate_dp_mechanism``).

:func:`bracketed_search` brackets the answer from a start by geometric steps, runs Brent's method on
``log(x)`` inside the bracket, and closes the bracket by bisection to a relative width ``rtol``; the
answer is the smallest evaluated ``x`` that meets the target, so it meets it by construction.
:func:`raise_until_safe` re-checks an answer with a second (finer) risk and raises it until that check
passes too. Both know nothing of mechanisms: :func:`mipkit.accounting.calibrate_noise` gives them the risk
of a mechanism family at a target.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from mipkit._validation import MipkitValueError

__all__ = ["MonotoneRisk", "bracketed_search", "raise_until_safe"]


@dataclass
class MonotoneRisk:
    """A risk ``risk(x)``, non-increasing in ``x``, measured against ``target``; every evaluation is kept.

    Parameters
    ----------
    risk : callable
        ``x -> risk``.
    target : float
        The level the risk must not exceed.
    """

    risk: Callable[[float], float]
    target: float
    evaluations: dict[float, float] = field(default_factory=dict)

    def __call__(self, x: float) -> float:
        if x not in self.evaluations:
            self.evaluations[x] = float(self.risk(x))
        return self.evaluations[x]

    def meets(self, x: float) -> bool:
        """Whether ``risk(x) <= target``."""
        return self(x) <= self.target

    def bracket(self) -> tuple[float, float]:
        """Largest evaluated ``x`` that misses the target and smallest that meets it (``nan`` if none)."""
        ok = [x for x, r in self.evaluations.items() if r <= self.target]
        bad = [x for x, r in self.evaluations.items() if r > self.target]
        return (max(bad) if bad else math.nan), (min(ok) if ok else math.nan)


def bracketed_search(
    search: MonotoneRisk,
    start: float,
    *,
    rtol: float,
    low: float,
    high: float,
    step: float,
    first_step: float | None = None,
    what: str = "the parameter",
) -> tuple[float, float, bool]:
    """Smallest ``x`` in ``[low, high]`` meeting the target, to relative tolerance ``rtol``.

    From ``start`` (clamped to ``[low, high]``) the bracket grows by the factor ``first_step`` once, then
    by ``step``, down while ``x`` meets the target and up while it misses. A bracket already narrower
    than ``rtol`` (e.g. an exact start checked at ``start / (1 + rtol)``) is final; otherwise Brent's
    method runs on ``log(x)`` (``brentq``, ``xtol = log(1 + rtol) / 4``) and bisection in log space
    closes what is left of the bracket.

    Parameters
    ----------
    search : MonotoneRisk
        The risk and its target.
    start : float
        First ``x`` evaluated.
    rtol : float
        Relative width of the final bracket.
    low, high : float
        Search range, ``0 < low < high``.
    step : float
        Bracketing factor ``> 1``.
    first_step : float, optional
        Factor of the first bracketing step (default ``step``).
    what : str
        Name of ``x`` in the error message.

    Returns
    -------
    tuple
        ``(lo, hi, at_floor)``: ``hi`` meets the target, ``lo`` misses it; ``at_floor`` is True (and ``lo``
        ``nan``) when even ``low`` meets it.

    Raises
    ------
    MipkitValueError
        When even ``high`` misses the target.
    """
    bracket = _bracket(search, min(max(start, low), high), low, high, step, first_step, what)
    if bracket is None:
        return math.nan, low, True
    lo, hi = _narrow(search, *bracket, rtol)
    return lo, hi, False


def _bracket(
    search: MonotoneRisk,
    x: float,
    low: float,
    high: float,
    step: float,
    first_step: float | None,
    what: str,
) -> tuple[float, float] | None:
    """``(lo, hi)``: ``lo`` misses the target, ``hi`` meets it, found by geometric steps from ``x``; None
    when even ``low`` meets it."""
    factor = step if first_step is None else first_step
    if search.meets(x):
        hi = x
        while True:
            lo = max(hi / factor, low)
            factor = step
            if not search.meets(lo):
                return lo, hi
            hi = lo
            if lo <= low:
                return None
    lo = x
    while True:
        hi = min(lo * factor, high)
        factor = step
        if search.meets(hi):
            return lo, hi
        lo = hi
        if hi >= high:
            raise MipkitValueError(
                f"The target is unreachable: even {what} = {high:g} gives risk "
                f"{search(high):.6g} > {search.target:.6g}."
            )


def _narrow(search: MonotoneRisk, lo: float, hi: float, rtol: float) -> tuple[float, float]:
    """The bracket ``(lo, hi)`` narrowed to relative width ``rtol``: Brent's method on ``log(x)``, then
    bisection in log space; the narrowest bracket of every evaluation so far."""

    def g(log_x: float) -> float:
        return search(math.exp(log_x)) - search.target

    if hi / lo - 1.0 > rtol:
        xtol = 0.25 * math.log1p(rtol)
        with contextlib.suppress(RuntimeError, ValueError):  # the bracket is guaranteed above
            optimize.brentq(
                g, math.log(lo), math.log(hi), xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=200
            )
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
    return lo, hi


def raise_until_safe(
    check: Callable[[float], float], x: float, target: float, *, factor: float, limit: int = 100
) -> tuple[float, float]:
    """Raise ``x`` by ``factor`` until ``check(x) <= target``; return ``x`` and its checked risk."""
    risk = check(x)
    for _ in range(limit):
        if risk <= target:
            return x, risk
        x *= factor
        risk = check(x)
    if risk <= target:
        return x, risk
    raise MipkitValueError(  # pragma: no cover - the search already met the target
        f"Could not confirm the calibration on the safe side: risk {risk:.6g} > target {target:.6g}."
    )
