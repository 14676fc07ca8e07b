"""Calibrate noise to an operational risk target instead of to an epsilon (docs/theory.md section 3).

One routine, in the shape of dp_accounting's ``calibrate_dp_mechanism``: :func:`calibrate` takes a
*family* (a function from a parameter to a mechanism record, e.g. ``lambda z: SubsampledGaussian(z, q, T)``;
:mod:`mipkit.accounting.families`) and a *target* (:mod:`mipkit.accounting.targets`), and returns the
smallest noise (or, for a budget such as epsilon or the number of steps, the largest value) whose certified
risk meets the target, as a frozen :class:`Calibration` record.

* **Closed forms** (Gaussian, Laplace, ``(eps, delta)``-DP, GDP, RDP): Brent's method on ``log(noise)``
  over the exact curve, then the safe side is checked in 60-digit arithmetic
  (:func:`mipkit.accounting.exact.exact_meets`) and the noise raised by ``1 + rtol`` until it passes.
* **PLD curves** (DP-SGD, compositions): the search runs on the pessimistic PLD of a grid; the answer is
  then tested for minimality on the optimistic PLD: if the optimistic risk at ``noise / (1 + tolerance)``
  still exceeds the target, the true risk there does too, so no noise below it is safe and ``noise`` is
  within ``tolerance`` (0.5% by default) of the minimal safe noise. Otherwise the grid is refined (by the
  factor the width of the two sides calls for) and the search resumed, up to a cost cap.
* **No false refusals.** A target is called unreachable only when even the optimistic risk at the top of
  the search range exceeds it (the message says so); when only the pessimistic risk does, the grid is
  refined. A target that no member of the family can miss (the no-noise limit meets it) and an epsilon
  target at ``delta = 0`` for Gaussian noise are refused before searching, with the reason.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from mipkit._validation import MipkitValueError, check_interval
from mipkit.accounting.calibration_paths import Oriented, adaptive, closed, fixed_grid, integer
from mipkit.accounting.curves import has_closed_form, tradeoff_curve
from mipkit.accounting.families import (
    MechanismFamily,
    dpsgd_family,
    gaussian_family,
    laplace_family,
    parameter_family,
)
from mipkit.accounting.mechanisms import Mechanism
from mipkit.accounting.targets import EpsilonTarget, RiskTarget

__all__ = [
    "Calibration",
    "MechanismFamily",
    "calibrate",
    "dpsgd_family",
    "gaussian_family",
    "laplace_family",
    "parameter_family",
]

#: Relative tolerance of the search for closed-form curves.
_RTOL_CLOSED = 1e-10
#: Default relative tolerance on the noise of a PLD calibration.
DEFAULT_NOISE_TOLERANCE = 0.005
#: Fine PLD grid of the re-check of a fixed-grid calibration, relative to the search grid.
_FINE_FACTOR = 5.0


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
        ``"sigma"`` (Gaussian), ``"scale"`` (Laplace), ``"noise_multiplier"`` (DP-SGD), or the family's.
    mechanism : Mechanism
        The calibrated mechanism record, ``family(noise)`` (``to_dict`` serialises it).
    target : str
        The target's name (``"eta"``, ``"advantage"``, ``"tpr-at-fpr"``, ``"success"``, ``"precision"``,
        ``"epsilon"``).
    target_value : float
        The risk level asked for.
    achieved : float
        Risk at ``noise`` as computed by the search (exact curve, or the search's PLD grid).
    achieved_fine : float
        Risk at ``noise`` on the exact curve or a finer PLD grid; never above ``target_value``.
    converged : bool
        Whether the search closed its bracket to the tolerance (computed, not assumed).
    seconds : float
        Wall-clock time of the calibration.
    details : dict
        Target parameters (fpr, baseline, ...), the family's fixed parameters, tolerance, grids, start,
        bracket and the number of risk evaluations.
    noise_lower : float or None
        A value the minimal safe one cannot be below (for a risk that grows with the parameter, above):
        the optimistic risk there misses the target (PLD), or the search's bracket (closed forms). None
        when not established.
    achieved_lower : float or None
        The optimistic (lower) risk at ``noise``; equal to ``achieved_fine`` for exact curves.
    tolerance : float or None
        The relative tolerance on the noise the result is minimal to (``noise / noise_lower - 1``).
    minimal : bool
        Whether ``noise`` is proved within ``tolerance`` of the smallest safe value (largest, for a risk
        that grows with the parameter).
    neighbours : str or None
        The relation of the risk: the target's (replace-one for eta), else the record's.
    """

    noise: float
    parameter_name: str
    mechanism: Mechanism
    target: str
    target_value: float
    achieved: float
    achieved_fine: float
    converged: bool
    seconds: float
    details: dict = field(default_factory=dict)
    noise_lower: float | None = None
    achieved_lower: float | None = None
    tolerance: float | None = None
    minimal: bool = True
    neighbours: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict of every field (``mechanism`` as its record dict)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["mechanism"] = self.mechanism.to_dict()
        out["details"] = dict(self.details)
        return out


# ---------------------------------------------------------------------------------------------------
# The routine
# ---------------------------------------------------------------------------------------------------
def _refuse_trivial(family: MechanismFamily, target: RiskTarget) -> None:
    """Refuse targets that no noise reaches, or that every noise meets, before searching."""
    if isinstance(target, EpsilonTarget) and target.delta == 0.0 and family.never_pure_dp:
        raise MipkitValueError(
            f"The 'epsilon' target {target.value:g} at delta = 0 is unreachable for {family.label}: it is "
            f"not (eps, 0)-DP for any finite {family.words}. Give a delta > 0."
        )
    if family.least_private is not None:
        cap = target.risk(tradeoff_curve(family.least_private, neighbours=target.relation))
        if cap <= target.value:
            raise MipkitValueError(
                f"The {target.name!r} target {target.value:g} is met by any {family.words}: "
                f"{family.least_private_why}, which caps this risk at {cap:.4g}. "
                "There is nothing to calibrate."
            )


def calibrate(
    family: MechanismFamily | Callable[[float], Mechanism],
    target: RiskTarget,
    *,
    rtol: float | None = None,
    value_discretization_interval: float | None = None,
    fine_discretization_interval: float | None = None,
    tolerance: float | None = None,
    max_points: int | None = None,
) -> Calibration:
    """Smallest noise (largest budget) of a mechanism family whose certified risk meets a target.

    Parameters
    ----------
    family : MechanismFamily or callable
        ``noise -> Mechanism`` (a bare function gets the defaults of :class:`MechanismFamily`), e.g.
        :func:`gaussian_family`, :func:`laplace_family`, :func:`dpsgd_family`,
        :func:`parameter_family` (any parameter of any record) or ``lambda z: SubsampledGaussian(z, 0.01,
        1000)``.
    target : RiskTarget
        E.g. ``TprAtFprTarget(fpr=0.01, value=0.1)``. The risk is computed for the target's relation
        (replace-one for MIP eta) or the record's.
    rtol : float, optional
        Relative tolerance of the search, in (0, 0.1); default ``1e-10`` for closed forms, a quarter of
        ``tolerance`` for PLDs.
    value_discretization_interval : float, optional
        A fixed PLD grid for the search (the adaptive two-sided search is then off, and the answer is
        re-checked on ``fine_discretization_interval``, default a fifth of it).
    fine_discretization_interval : float, optional
        The fixed-grid re-check grid.
    tolerance : float, optional
        Relative tolerance on the noise for PLD curves (default 0.005): the answer is proved within it of
        the minimal safe noise, or ``minimal`` is False (cost cap reached).
    max_points : int, optional
        Cost cap: the most points of a composed PLD (default 8,000,000).

    Returns
    -------
    Calibration

    Examples
    --------
    >>> from mipkit.accounting import AdvantageTarget, calibrate, gaussian_family
    >>> round(calibrate(gaussian_family(), AdvantageTarget(0.1)).noise, 4)
    3.9789
    """
    from mipkit.accounting.pld_build import DEFAULT_MAX_POINTS

    clock = time.perf_counter()
    fam = _check_family(family, target)
    o = Oriented(fam)
    start = float(fam.start(target)) if fam.start is not None else math.sqrt(fam.low * fam.high)
    guess = min(max(1.0 / start if o.flip and start > 0 else (o.high if o.flip else start), o.low), o.high)
    exact_curve = has_closed_form(o(guess))
    nu, tol = _tolerances(fam, exact_curve, rtol, tolerance)
    cap = DEFAULT_MAX_POINTS if max_points is None else int(max_points)
    details: dict[str, Any] = {**target.params(), **fam.params, "rtol": tol}
    _refuse_trivial(fam, target)
    grids = (value_discretization_interval, fine_discretization_interval)
    out = _search(fam, o, target, guess, (tol, nu, cap), exact_curve, grids, details)
    adaptive_pld = not (exact_curve or fam.integer or value_discretization_interval is not None)
    details |= out["details"] | {
        "start": float(start),
        "evaluations": out["evaluations"],
        "method": fam.method,
        "minimal": bool(out["minimal"]),
    }
    return _record(fam, o, target, out, tol, nu if adaptive_pld else None, details, clock)


def _check_family(
    family: MechanismFamily | Callable[[float], Mechanism], target: RiskTarget
) -> MechanismFamily:
    """The family (a bare function wrapped in :class:`MechanismFamily`), after checking it and the target."""
    fam = family if isinstance(family, MechanismFamily) else MechanismFamily(build=family)
    if not callable(fam.build):
        raise MipkitValueError(
            f"The 'family' parameter of calibrate must be callable. Got {family!r} instead."
        )
    if not isinstance(target, RiskTarget):
        raise MipkitValueError(
            "The 'target' parameter of calibrate must be a risk target (EtaTarget, TprAtFprTarget, ...). "
            f"Got {type(target).__name__} instead."
        )
    return fam


def _tolerances(
    fam: MechanismFamily, exact_curve: bool, rtol: float | None, tolerance: float | None
) -> tuple[float, float]:
    """``(tolerance on the noise of a PLD calibration, relative tolerance of the search)``, checked."""
    nu = check_interval(
        "tolerance", DEFAULT_NOISE_TOLERANCE if tolerance is None else tolerance, 0.0, 0.5, owner="calibrate"
    )
    default_rtol = fam.rtol if fam.rtol is not None else (_RTOL_CLOSED if exact_curve else nu / 4.0)
    return nu, check_interval("rtol", default_rtol if rtol is None else rtol, 0.0, 0.1, owner="calibrate")


def _search(
    fam: MechanismFamily,
    o: Oriented,
    target: RiskTarget,
    guess: float,
    tolerances: tuple[float, float, int],
    exact_curve: bool,
    grids: tuple[float | None, float | None],
    details: dict[str, Any],
) -> dict[str, Any]:
    """The search path's result (:mod:`mipkit.accounting.calibration_paths`): over the integers, on the exact
    curve, on a fixed PLD grid (``grids``: search and re-check grid) or adaptive on two-sided PLDs
    (``tolerances``: rtol, tolerance on the noise, cost cap; the tolerance is added to ``details``)."""
    tol, nu, cap = tolerances
    if fam.integer:
        return integer(fam, target)
    if exact_curve:
        return closed(fam, o, target, guess, tol)
    if grids[0] is not None:
        grid = check_interval("value_discretization_interval", grids[0], 0.0, 1.0, owner="calibrate")
        f = grid / _FINE_FACTOR if grids[1] is None else grids[1]
        fine = check_interval("fine_discretization_interval", f, 0.0, grid, closed="right", owner="calibrate")
        return fixed_grid(fam, o, target, guess, tol, grid, fine)
    details["tolerance"] = nu
    return adaptive(fam, o, target, guess, tol, nu, cap)


def _record(
    fam: MechanismFamily,
    o: Oriented,
    target: RiskTarget,
    out: dict[str, Any],
    tol: float,
    tolerance: float | None,
    details: dict[str, Any],
    clock: float,
) -> Calibration:
    """The :class:`Calibration` of a search result (``tolerance``: that of an adaptive PLD search, else
    None; ``clock``: ``time.perf_counter()`` at the start)."""
    noise = out["x"] if fam.integer else o.value(out["x"])
    x_lower = out["x_lower"]
    noise_lower = (
        None
        if x_lower is None or (isinstance(x_lower, float) and math.isnan(x_lower))
        else (float(x_lower) if fam.integer else float(o.value(x_lower)))
    )
    lo = out["lo"]
    converged = bool(
        out["achieved"] <= target.value
        and (
            fam.integer
            or (not math.isnan(lo) and out["x"] / lo - 1.0 <= max(tol, 1e-12) * 1.0001)
            or out["minimal"]
        )
    )
    mech = fam(noise)
    return Calibration(
        noise=float(noise),
        parameter_name=fam.parameter_name,
        mechanism=mech,
        target=target.name,
        target_value=target.value,
        achieved=float(out["achieved"]),
        achieved_fine=float(out["fine"]),
        converged=converged and bool(out["fine"] <= target.value),
        seconds=time.perf_counter() - clock,
        details=details,
        noise_lower=noise_lower,
        achieved_lower=float(out["lower"]),
        tolerance=tolerance,
        minimal=bool(out["minimal"]),
        neighbours=target.relation or mech.neighbours,
    )
