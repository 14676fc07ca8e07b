"""The search paths of :func:`mipkit.accounting.calibrate_noise`: closed forms (exact curve, safe side in
60-digit arithmetic), a fixed PLD grid, the adaptive two-sided PLD search, and whole-valued parameters
(docs/theory.md section 3; the routine's docstring describes each)."""

from __future__ import annotations

import math
from typing import Any

from mipkit._validation import MipkitValueError
from mipkit.accounting.curves import tradeoff_curve
from mipkit.accounting.families import MechanismFamily
from mipkit.accounting.mechanisms import Mechanism
from mipkit.accounting.search import MonotoneRisk, bracketed_search, raise_until_safe
from mipkit.accounting.targets import RiskTarget

__all__ = ["Oriented", "adaptive", "closed", "fixed_grid", "integer", "met_everywhere"]


class Oriented:
    """The family in a parameter ``x`` whose risk never grows with ``x`` (``x = 1 / value`` for a budget)."""

    def __init__(self, fam: MechanismFamily) -> None:
        self.fam, self.flip = fam, fam.risk_grows
        self.low = 1.0 / fam.high if self.flip else fam.low
        self.high = 1.0 / fam.low if self.flip and fam.low > 0 else (math.inf if self.flip else fam.high)
        self.high = min(self.high, 1e300)

    def value(self, x: float) -> float:
        return 1.0 / x if self.flip else x

    def __call__(self, x: float) -> Mechanism:
        return self.fam(self.value(x))


def _relation_record(m: Mechanism, target: RiskTarget) -> Mechanism | None:
    """The record accounted for the target's relation, or None when only a curve (group privacy) has it."""
    from mipkit.accounting.relations import add_remove_record, replace_one_record

    rel = target.relation or m.neighbours
    if m.neighbours == rel and not (
        hasattr(m, "mechanisms") and any(p.neighbours != rel for p in m.mechanisms)
    ):
        return m
    return replace_one_record(m) if rel == "replace_one" else add_remove_record(m)


def _pld_risk(fam: Oriented, target: RiskTarget, x: float, grid: float, side: str) -> tuple[float, int]:
    """The target's risk at ``x`` on one side of the PLD of grid ``grid``, and the PLD's size."""
    from mipkit.accounting.pld import PLDCurve
    from mipkit.accounting.pld_build import pld_size, record_pld

    m = _relation_record(fam(x), target)
    if m is None:  # pragma: no cover - PLD families hold DP-SGD records, which convert
        curve = tradeoff_curve(fam(x), value_discretization_interval=grid, neighbours=target.relation)
        return float(target.risk(curve if side == "upper" else curve.lower_curve())), 0
    pld = record_pld(m, grid, side)
    return float(target.risk(PLDCurve(pld, mechanism=m, side=side))), pld_size(pld)


def met_everywhere(fam: MechanismFamily, target: RiskTarget) -> MipkitValueError:
    edge = "up to" if fam.risk_grows else "down to"
    bound = fam.high if fam.risk_grows else fam.low
    return MipkitValueError(
        f"The {target.name!r} target {target.value:g} is met by any {fam.words} of {fam.label} "
        f"{edge} {bound:g}; there is nothing to calibrate."
    )


def _bracket(search, guess: float, tol: float, fam: MechanismFamily, o: Oriented, first_step):
    """:func:`bracketed_search` over the oriented parameter of ``fam``: ``(lo, hi, at_floor)``."""
    return bracketed_search(
        search,
        guess,
        rtol=tol,
        low=o.low,
        high=o.high,
        step=fam.step,
        first_step=first_step,
        what=fam.parameter_name,
    )


def closed(fam: MechanismFamily, o: Oriented, target: RiskTarget, guess: float, tol: float) -> dict:
    """Search the exact curve, then check the safe side in 60-digit arithmetic."""
    from mipkit.accounting.exact import exact_meets

    search = MonotoneRisk(
        lambda x: target.risk(tradeoff_curve(o(x), neighbours=target.relation)), target.value
    )
    first = fam.first_step if not o.flip else None
    lo, hi, at_floor = _bracket(search, guess, tol, fam, o, first)
    if at_floor:
        raise met_everywhere(fam, target)

    def check(x: float) -> float:
        exact = exact_meets(target, o(x))
        risk = search(x)
        if exact is None:
            return risk
        return min(risk, target.value) if exact else max(risk, math.nextafter(target.value, math.inf))

    # the exact check fails only by rounding (a few ulps of the risk): raise by small steps
    x, _ = raise_until_safe(check, hi, target.value, factor=1.0 + min(tol, 1e-13), limit=1000)
    achieved = search(x)
    described = tradeoff_curve(o(x)).describe()
    return {
        "x": x,
        "lo": lo,
        "achieved": achieved,
        "fine": achieved,
        "lower": achieved,
        "minimal": True,
        "x_lower": lo,
        "evaluations": len(search.evaluations),
        "details": {k: described[k] for k in ("mu", "epsilon") if k in described}
        | {"bracket": [None if math.isnan(lo) else float(o.value(lo)), float(o.value(hi))]},
    }


def fixed_grid(fam, o, target, guess, tol, grid, fine) -> dict:
    """The fixed-grid search of earlier versions: search on ``grid``, re-check and raise on ``fine``."""
    search = MonotoneRisk(lambda x: _pld_risk(o, target, x, grid, "upper")[0], target.value)
    lo, hi, at_floor = _bracket(search, guess, tol, fam, o, None)
    if at_floor and fam.least_private is None:
        raise met_everywhere(fam, target)
    check = MonotoneRisk(lambda x: _pld_risk(o, target, x, fine, "upper")[0], target.value)
    x, achieved_fine = raise_until_safe(check, hi, target.value, factor=1.0 + tol)
    return {
        "x": x,
        "lo": lo,
        "achieved": search(x),
        "fine": achieved_fine,
        "lower": _pld_risk(o, target, x, fine, "lower")[0],
        "minimal": False,
        "x_lower": None,
        "evaluations": len(search.evaluations) + len(check.evaluations),
        "details": {
            "value_discretization_interval": grid,
            "fine_discretization_interval": fine,
            "bracket": [None if math.isnan(lo) else float(o.value(lo)), float(o.value(hi))],
            "at_noise_floor": bool(at_floor),
        },
    }


def adaptive(fam, o, target, guess, tol, nu, max_points) -> dict:
    """Search on the pessimistic PLD, prove minimality on the optimistic one, refine the grid as needed."""
    from mipkit.accounting.pld_build import initial_grid

    grid = initial_grid(o(guess))
    x0, first = guess, None
    grids: list[float] = []
    evaluations = 0
    while True:
        grids.append(grid)
        sizes: dict[float, int] = {}

        def upper(x: float, g: float = grid, sizes: dict = sizes) -> float:
            risk, sizes[x] = _pld_risk(o, target, x, g, "upper")
            return risk

        search = MonotoneRisk(upper, target.value)
        try:
            lo, hi, at_floor = _bracket(search, x0, tol, fam, o, first)
        except MipkitValueError:
            evaluations += len(search.evaluations)
            top = o.high
            optimistic, size = _pld_risk(o, target, top, grid, "lower")
            if optimistic > target.value:
                raise MipkitValueError(
                    f"The {target.name!r} target {target.value:g} is unreachable with {fam.words} "
                    f"{'down to' if o.flip else 'up to'} {o.value(top):g}: even the optimistic (lower) bound "
                    f"of the risk there is {optimistic:.6g}, so the true risk exceeds the target for every "
                    f"{fam.words} in the search range."
                ) from None
            if size * 4 > max_points:
                raise MipkitValueError(
                    f"The {target.name!r} target {target.value:g} could not be certified within the cost cap "
                    f"({max_points} PLD points): at {fam.words} {o.value(top):g} the risk lies between "
                    f"{optimistic:.6g} and {search(top):.6g}. Allow more points or a looser target."
                ) from None
            grid /= 4.0
            continue
        evaluations += len(search.evaluations)
        if at_floor:
            raise met_everywhere(fam, target)
        x_up = hi
        x_test = x_up / (1.0 + nu)
        if x_test < o.low:
            return _adaptive_result(search, x_up, lo, x_test, grid, grids, evaluations, o, target, True)
        optimistic, _ = _pld_risk(o, target, x_test, grid, "lower")
        evaluations += 1
        if optimistic > target.value:
            return _adaptive_result(search, x_up, lo, x_test, grid, grids, evaluations, o, target, True)
        pessimistic = search(x_test)
        gap = max(pessimistic - optimistic, 1e-300)
        slack = max(pessimistic - target.value, gap / 64.0)
        factor = min(max(1.25 * math.sqrt(gap / slack), 2.0), 30.0)
        if sizes.get(x_up, 0) * factor > max_points:
            return _adaptive_result(search, x_up, lo, None, grid, grids, evaluations, o, target, False)
        grid /= factor
        x0, first = x_up, 1.0 + nu / 2.0


def _adaptive_result(search, x_up, lo, x_test, grid, grids, evaluations, o, target, minimal) -> dict:
    return {
        "x": x_up,
        "lo": lo,
        "achieved": search(x_up),
        "fine": search(x_up),
        "lower": _pld_risk(o, target, x_up, grid, "lower")[0],
        "minimal": minimal,
        "x_lower": x_test if minimal else None,
        "evaluations": evaluations,
        "details": {
            "value_discretization_interval": grid,
            "grids": list(grids),
            "bracket": [None if math.isnan(lo) else float(o.value(lo)), float(o.value(x_up))],
        },
    }


def integer(fam: MechanismFamily, target: RiskTarget) -> dict:
    """The largest whole value (steps) whose risk meets the target, on two-sided adaptive curves: the
    answer meets it on the pessimistic side, the next value misses it on the optimistic side."""

    def curve(v: int) -> Any:
        return tradeoff_curve(fam(float(v)), neighbours=target.relation)

    lo, hi = int(math.ceil(fam.low)), int(math.floor(fam.high))
    if target.risk(curve(lo)) > target.value:
        raise MipkitValueError(
            f"The {target.name!r} target {target.value:g} is not met even with {fam.words} = {lo}."
        )
    good, step = lo, 1
    while True:  # gallop up to a value that misses the target
        nxt = min(good + step, hi)
        if target.risk(curve(nxt)) > target.value:
            bad = nxt
            break
        good = nxt
        if good >= hi:
            raise met_everywhere(fam, target)
        step *= 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if target.risk(curve(mid)) <= target.value:
            good = mid
        else:
            bad = mid
    c_good, c_bad = curve(good), curve(bad)
    return {
        "x": float(good),
        "lo": float(bad),
        "achieved": target.risk(c_good),
        "fine": target.risk(c_good),
        "lower": target.risk_lower(c_good),
        "minimal": bool(target.risk_lower(c_bad) > target.value),
        "x_lower": float(bad),
        "evaluations": 0,
        "details": {"bracket": [float(good), float(bad)]},
    }
