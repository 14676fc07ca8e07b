"""Calibrate noise to an operational risk target instead of to an epsilon (docs/theory.md section 3).

One routine, in the shape of dp_accounting's ``calibrate_dp_mechanism``: :func:`calibrate` takes a
*family* (a function from a noise parameter to a mechanism record, e.g. ``lambda z: SubsampledGaussian(z,
q, T)``) and a *target* (:mod:`mipkit.accounting.targets`), and returns the smallest noise whose
certified risk meets the target, as a frozen :class:`Calibration` record. The risk of a noise is
``target.risk(tradeoff_curve(family(noise)))``; it never grows with the noise.

* Search (:func:`~mipkit.accounting.search.bracketed_search`): bracket from a start, Brent's method on
  ``log(noise)``, close the bracket to a relative width ``rtol``. Curves without a closed form (DP-SGD,
  compositions) are evaluated on a coarse pessimistic PLD during the search.
* Safe side: the answer is re-checked, and the noise raised by ``1 + rtol`` until the check passes, so the
  returned noise never exceeds the target through rounding. For closed-form curves the check is the exact
  curve; for PLD curves a finer pessimistic PLD (``achieved_fine``). Pessimistic PLDs over-estimate
  risk, so both numbers are upper bounds on the true risk.
* ``converged`` is computed: the final bracket between a noise that misses the target and one that meets
  it is narrower than ``rtol``.

Three ready families carry what makes their search fast: :func:`gaussian_family` (Gaussian ``sigma``,
started at the exact closed form ``sigma = L / mu`` of mu-GDP, so the search only confirms it),
:func:`laplace_family` (Laplace scale, exact curve) and :func:`dpsgd_family` (DP-SGD noise multiplier,
started from the central-limit approximation ``mu = q sqrt(T (e^{1/sigma^2} - 1))`` of Bu et al. 2020;
risks from the PLD's supporting lines without building the whole curve).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from mipkit._validation import MipkitValueError, check_interval, check_positive, check_sample_rate
from mipkit.accounting.curves import has_closed_form, tradeoff_curve
from mipkit.accounting.mechanisms import (
    ApproxDP,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    SubsampledGaussian,
)
from mipkit.accounting.search import MonotoneRisk, bracketed_search, raise_until_safe
from mipkit.accounting.targets import EpsilonTarget, RiskTarget

__all__ = ["Calibration", "MechanismFamily", "calibrate", "dpsgd_family", "gaussian_family", "laplace_family"]

#: Relative tolerance of the search for closed-form curves and for PLD curves, unless the family says.
_RTOL_CLOSED, _RTOL_PLD = 1e-10, 1e-3
#: Fine PLD grid of the re-check, relative to the search grid.
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

    def to_dict(self) -> dict:
        """JSON-ready dict of every field (``mechanism`` as its record dict)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["mechanism"] = self.mechanism.to_dict()
        out["details"] = dict(self.details)
        return out


# ---------------------------------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MechanismFamily:
    """Mechanism records indexed by one noise parameter, with what the search needs to know about them.

    Parameters
    ----------
    build : callable
        ``noise -> Mechanism``; the risk of ``build(noise)`` must not grow with ``noise``.
    parameter_name : str, default="noise"
        Name of the parameter (in results and messages).
    label : str, default="this mechanism family"
        Name of the family in messages.
    low, high : float, default=1e-6, 1e6
        Search range of the parameter.
    step : float, default=4.0
        Bracketing factor.
    first_step : float, optional
        Factor of the first bracketing step; ``1 + 1e-12`` with an exact ``start`` makes the search a
        check of the closed form.
    start : callable, optional
        ``target -> first noise tried`` (default: the geometric middle of ``[low, high]``).
    rtol : float, optional
        Relative tolerance on the parameter (default ``1e-10`` for closed-form curves, ``1e-3`` for PLDs).
    least_private : Mechanism, optional
        A mechanism at least as risky as every member (the limit as the noise goes to 0): when it meets
        the target, so does every noise. ``least_private_why`` says why, for the message.
    never_pure_dp : bool, default=False
        No member is ``(eps, 0)``-DP (Gaussian noise): an epsilon target at delta 0 is unreachable.
    params : dict, optional
        The family's fixed parameters, copied into :attr:`Calibration.details`.
    method : str, default="Brent on log(noise)"
        How the search goes, for :attr:`Calibration.details`.
    """

    build: Callable[[float], Mechanism]
    parameter_name: str = "noise"
    label: str = "this mechanism family"
    low: float = 1e-6
    high: float = 1e6
    step: float = 4.0
    first_step: float | None = None
    start: Callable[[RiskTarget], float] | None = None
    rtol: float | None = None
    least_private: Mechanism | None = None
    least_private_why: str = ""
    never_pure_dp: bool = False
    params: dict = field(default_factory=dict)
    method: str = "Brent on log(noise)"

    def __call__(self, noise: float) -> Mechanism:
        return self.build(noise)

    @property
    def words(self) -> str:
        """The parameter's name in words (``"noise multiplier"``)."""
        return self.parameter_name.replace("_", " ")


def _additive_family(record: type[Mechanism], sensitivity: float, owner: str, **kw: Any) -> MechanismFamily:
    """``noise -> record(noise, L)`` for additive noise on a query of sensitivity ``L``, searched in
    ``[1e-6 L, 1e6 L]``."""
    sens = check_positive("sensitivity", sensitivity, owner=owner)
    return MechanismFamily(
        build=lambda noise: record(noise, sens),
        low=1e-6 * sens,
        high=1e6 * sens,
        params={"sensitivity": sens},
        **kw,
    )


def gaussian_family(sensitivity: float = 1.0) -> MechanismFamily:
    """``sigma -> GaussianMechanism(sigma, L)``, started at the exact answer ``sigma = L / mu``.

    The mechanism is ``mu``-GDP with ``mu = L / sigma`` (Dong, Roth & Su 2022, Thm 2.7), and every target
    has a closed form in ``mu`` (:meth:`~mipkit.accounting.targets.RiskTarget.gdp_mu`): e.g. advantage
    ``2 Phi(mu/2) - 1``, TPR at FPR ``Phi(Phi^-1(alpha) + mu)``. The search checks ``L / mu`` and
    ``L / mu / (1 + 1e-12)`` on the exact curve, so the answer is the closed form (raised by ``1e-12`` when
    rounding leaves it a hair short).
    """

    def start(target: RiskTarget) -> float:
        mu = target.gdp_mu()
        return float(sensitivity) / mu if mu > 0.0 else math.inf

    return _additive_family(
        GaussianMechanism,
        sensitivity,
        "gaussian_family",
        parameter_name="sigma",
        label="the Gaussian mechanism",
        first_step=1.0 + 1e-12,
        start=start,
        rtol=1e-11,
        never_pure_dp=True,
        method="closed form (mu-GDP), checked on the exact curve",
    )


def laplace_family(sensitivity: float = 1.0) -> MechanismFamily:
    """``b -> LaplaceMechanism(b, L)`` on the exact Laplace curve (tighter than ``(L/b, 0)``-DP), started
    at ``b = L``."""
    return _additive_family(
        LaplaceMechanism,
        sensitivity,
        "laplace_family",
        parameter_name="scale",
        label="the Laplace mechanism",
        start=lambda target: float(sensitivity),
        method="Brent on log(scale), exact Laplace curve",
    )


def dpsgd_family(sample_rate: float, steps: int) -> MechanismFamily:
    """``z -> SubsampledGaussian(z, q, T)``: the DP-SGD noise multiplier at Poisson rate ``q``, ``T`` steps.

    Starts from the central-limit approximation of DP-SGD as mu-GDP, ``mu = q sqrt(T (e^{1/z^2} - 1))``
    (Bu, Dong, Long & Su 2020, Thm 5; ``q = 1``: exactly ``sqrt(T) / z``), brackets by factors of 1.25
    in ``[0.05, 1000]``. With no noise a record is detected exactly when it is sampled (probability
    ``1 - (1-q)^T``) and is invisible otherwise: the ``(0, 1 - (1-q)^T)``-DP curve bounds every DP-SGD
    curve from below, so a target that it meets is met by any noise.
    """
    owner = "dpsgd_family"
    q = check_sample_rate(sample_rate, owner=owner)
    t = int(SubsampledGaussian(1.0, q, steps).steps)  # validates steps
    low, high = 0.05, 1e3

    def start(target: RiskTarget) -> float:
        try:
            mu = target.gdp_mu()
        except (ValueError, ArithmeticError):  # pragma: no cover - defensive
            return 1.0
        if not (mu > 0.0 and math.isfinite(mu)):
            return 1.0
        if q >= 1.0:
            return max(math.sqrt(t) / mu, low)
        ratio = (mu / q) ** 2 / t
        return float(min(max(1.0 / math.sqrt(math.log1p(ratio)), low), high))

    sampled = -math.expm1(t * math.log1p(-q)) if q < 1.0 else 1.0
    return MechanismFamily(
        build=lambda z: SubsampledGaussian(z, q, t),
        parameter_name="noise_multiplier",
        label="DP-SGD",
        low=low,
        high=high,
        step=1.25,
        start=start,
        least_private=ApproxDP(0.0, sampled) if sampled < 1.0 else None,
        least_private_why=(
            f"with sampling rate {q:g} over {t} steps a record is used with probability {sampled:.4g}"
        ),
        never_pure_dp=True,
        params={"sample_rate": q, "steps": t},
        method="Brent on log(noise) over a pessimistic PLD, re-checked on a finer PLD",
    )


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
        cap = target.risk(tradeoff_curve(family.least_private))
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
) -> Calibration:
    """Smallest noise of a mechanism family whose certified risk meets a target.

    Parameters
    ----------
    family : MechanismFamily or callable
        ``noise -> Mechanism`` (a bare function gets the defaults of :class:`MechanismFamily`), e.g.
        :func:`gaussian_family`, :func:`laplace_family`, :func:`dpsgd_family` or
        ``lambda z: SubsampledGaussian(z, 0.01, 1000)``.
    target : RiskTarget
        E.g. ``TprAtFprTarget(fpr=0.01, value=0.1)``.
    rtol : float, optional
        Relative tolerance on the noise, in (0, 0.1); default the family's.
    value_discretization_interval : float, optional
        PLD grid of the search for curves without a closed form (default: the PLD default, ``1e-3`` for
        DP-SGD).
    fine_discretization_interval : float, optional
        PLD grid of the re-check (``achieved_fine``), at most the search grid; default a fifth of it.

    Returns
    -------
    Calibration

    Examples
    --------
    >>> from mipkit.accounting import AdvantageTarget, calibrate, gaussian_family
    >>> round(calibrate(gaussian_family(), AdvantageTarget(0.1)).noise, 4)
    3.9789
    """
    clock = time.perf_counter()
    owner = "calibrate"
    fam = family if isinstance(family, MechanismFamily) else MechanismFamily(build=family)
    if not callable(fam.build):
        raise MipkitValueError(f"The 'family' parameter of {owner} must be callable. Got {family!r} instead.")
    if not isinstance(target, RiskTarget):
        raise MipkitValueError(
            f"The 'target' parameter of {owner} must be a risk target (EtaTarget, TprAtFprTarget, ...). "
            f"Got {type(target).__name__} instead."
        )
    guess = float(fam.start(target)) if fam.start is not None else math.sqrt(fam.low * fam.high)
    probe = fam(min(max(guess, fam.low), fam.high))
    closed = has_closed_form(probe)
    default_rtol = fam.rtol if fam.rtol is not None else (_RTOL_CLOSED if closed else _RTOL_PLD)
    tol = check_interval("rtol", default_rtol if rtol is None else rtol, 0.0, 0.1, owner=owner)
    details: dict[str, Any] = {**target.params(), **fam.params, "rtol": tol}
    if closed:
        grid = fine = None
    else:
        from mipkit.accounting.pld import default_discretization  # heavy (dp_accounting)

        d = (
            default_discretization(probe)
            if value_discretization_interval is None
            else value_discretization_interval
        )
        grid = check_interval("value_discretization_interval", d, 0.0, 1.0, owner=owner)
        f = grid / _FINE_FACTOR if fine_discretization_interval is None else fine_discretization_interval
        fine = check_interval("fine_discretization_interval", f, 0.0, grid, closed="right", owner=owner)
        details |= {"value_discretization_interval": grid, "fine_discretization_interval": fine}
    _refuse_trivial(fam, target)

    def risk_on(g: float | None) -> Callable[[float], float]:
        return lambda x: target.risk(tradeoff_curve(fam(x), value_discretization_interval=g))

    search = MonotoneRisk(risk_on(grid), target.value)
    lo, hi, at_floor = bracketed_search(
        search,
        guess,
        rtol=tol,
        low=fam.low,
        high=fam.high,
        step=fam.step,
        first_step=fam.first_step,
        what=fam.parameter_name,
    )
    if at_floor and fam.least_private is None:
        raise MipkitValueError(
            f"The {target.name!r} target {target.value:g} is met by any {fam.words} of {fam.label} "
            f"down to {fam.low:g}; there is nothing to calibrate."
        )
    achieved = search(hi)
    check = search if closed else MonotoneRisk(risk_on(fine), target.value)
    noise, achieved_fine = raise_until_safe(check, hi, target.value, factor=1.0 + tol)
    if noise != hi:
        achieved = search(noise)
    if closed:  # what the exact curve derives from the record (mu of a Gaussian, epsilon of a Laplace)
        described = tradeoff_curve(fam(noise)).describe()
        details |= {k: described[k] for k in ("mu", "epsilon") if k in described}
    details |= {
        "start": float(guess),
        "bracket": [None if math.isnan(lo) else float(lo), float(hi)],  # None: even the floor meets it
        "evaluations": len(search.evaluations),
        **({} if closed else {"fine_evaluations": len(check.evaluations)}),
        "at_noise_floor": bool(at_floor),
        "method": fam.method,
    }
    return Calibration(
        noise=float(noise),
        parameter_name=fam.parameter_name,
        mechanism=fam(noise),
        target=target.name,
        target_value=target.value,
        achieved=float(achieved),
        achieved_fine=float(achieved_fine),
        converged=bool((not at_floor) and hi / lo - 1.0 <= tol and achieved_fine <= target.value),
        seconds=time.perf_counter() - clock,
        details=details,
    )
