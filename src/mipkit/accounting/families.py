"""Mechanism families for calibration: records indexed by one parameter, with what the search needs.

A family is a function ``value -> record`` (:class:`MechanismFamily`) whose risk moves one way with the
value: down for a noise scale (``gaussian_family``, ``laplace_family``, ``dpsgd_family``), up for a budget
(``epsilon``, ``mu``, the number of steps, the sampling rate). :func:`parameter_family` makes a family of
*any* parameter of *any* record, so :func:`mipkit.accounting.calibrate_noise` finds the least noise or the
largest budget that meets a risk target through the one routine (docs/theory.md section 3).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mipkit._validation import MipkitValueError, check_positive, check_sample_rate
from mipkit.accounting.mechanisms import (
    ApproxDP,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    SubsampledGaussian,
)
from mipkit.accounting.relations import check_neighbours
from mipkit.accounting.targets import RiskTarget

__all__ = ["MechanismFamily", "dpsgd_family", "gaussian_family", "laplace_family", "parameter_family"]

#: Parameters whose risk falls as they grow (noise scales); the others of a record make it grow.
RISK_FALLS = ("sigma", "scale", "noise_multiplier")
#: Parameters that take whole values.
INTEGER_PARAMETERS = ("steps",)


@dataclass(frozen=True)
class MechanismFamily:
    """Mechanism records indexed by one parameter, with what the search needs to know about them.

    Parameters
    ----------
    build : callable
        ``value -> Mechanism``; the risk of ``build(value)`` must not grow with ``value`` (or, with
        ``risk_grows=True``, must not fall).
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
        ``target -> first value tried`` (default: the geometric middle of ``[low, high]``).
    rtol : float, optional
        Relative tolerance of the search on the parameter (default ``1e-10`` for closed-form curves; for
        PLD curves a quarter of the calibration's noise tolerance).
    least_private : Mechanism, optional
        A mechanism at least as risky as every member (the limit as the noise goes to 0): when it meets
        the target, so does every noise. ``least_private_why`` says why, for the message.
    never_pure_dp : bool, default=False
        No member is ``(eps, 0)``-DP (Gaussian noise): an epsilon target at delta 0 is unreachable.
    params : dict, optional
        The family's fixed parameters, copied into :attr:`Calibration.details`.
    method : str, default="Brent on log(noise)"
        How the search goes, for :attr:`Calibration.details`.
    risk_grows : bool, default=False
        The risk grows with the parameter (a budget): the calibration returns the *largest* value that
        meets the target.
    integer : bool, default=False
        The parameter takes whole values (the number of steps).
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
    risk_grows: bool = False
    integer: bool = False

    def __call__(self, noise: float) -> Mechanism:
        return self.build(noise)

    @property
    def words(self) -> str:
        """The parameter's name in words (``"noise multiplier"``)."""
        return self.parameter_name.replace("_", " ")


def _additive_family(
    record: type[Mechanism], sensitivity: float, neighbours: str, owner: str, **kw: Any
) -> MechanismFamily:
    """``noise -> record(noise, L)`` for additive noise on a query of sensitivity ``L``, searched in
    ``[1e-6 L, 1e6 L]``."""
    sens = check_positive("sensitivity", sensitivity, owner=owner)
    rel = check_neighbours(neighbours, owner)
    return MechanismFamily(
        build=lambda noise: record(noise, sens, neighbours=rel),  # type: ignore[call-arg]
        low=1e-6 * sens,
        high=1e6 * sens,
        params={"sensitivity": sens, "neighbours": rel},
        **kw,
    )


def _mu_scale(target: RiskTarget, neighbours: str) -> float:
    """How much ``mu`` the target's relation sees per unit of the record's: 2 when a replace-one risk is
    computed from an add/remove sensitivity (a replacement moves the query by ``2L``), else 1."""
    return 2.0 if target.relation == "replace_one" and neighbours == "add_remove" else 1.0


def gaussian_family(sensitivity: float = 1.0, *, neighbours: str = "add_remove") -> MechanismFamily:
    """``sigma -> GaussianMechanism(sigma, L)``, started at the exact answer ``sigma = L / mu``.

    The mechanism is ``mu``-GDP with ``mu = L / sigma`` (Dong, Roth & Su 2022, Thm 2.7), and every target
    has a closed form in ``mu`` (:meth:`~mipkit.accounting.targets.RiskTarget.gdp_mu`): e.g. advantage
    ``2 Phi(mu/2) - 1``, TPR at FPR ``Phi(Phi^-1(alpha) + mu)``. MIP eta concerns replace-one neighbours:
    with an add/remove sensitivity ``L`` a replacement moves the query by ``2L``, so ``sigma = 2L / mu``.
    The search checks the closed form, and the safe side is checked in 60-digit arithmetic
    (:mod:`mipkit.accounting.exact`), so the answer is the closed form (raised by ``1e-12`` when rounding
    leaves it a hair short).

    Parameters
    ----------
    sensitivity : float, default=1.0
        l2-sensitivity ``L`` of the query for ``neighbours``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """
    rel = check_neighbours(neighbours, "gaussian_family")

    def start(target: RiskTarget) -> float:
        mu = target.gdp_mu()
        return _mu_scale(target, rel) * float(sensitivity) / mu if mu > 0.0 else math.inf

    return _additive_family(
        GaussianMechanism,
        sensitivity,
        rel,
        "gaussian_family",
        parameter_name="sigma",
        label="the Gaussian mechanism",
        first_step=1.0 + 1e-12,
        start=start,
        rtol=1e-11,
        never_pure_dp=True,
        method="closed form (mu-GDP), checked in 60-digit arithmetic",
    )


def laplace_family(sensitivity: float = 1.0, *, neighbours: str = "add_remove") -> MechanismFamily:
    """``b -> LaplaceMechanism(b, L)`` on the exact Laplace curve (tighter than ``(L/b, 0)``-DP), started
    at ``b = L``."""
    rel = check_neighbours(neighbours, "laplace_family")
    return _additive_family(
        LaplaceMechanism,
        sensitivity,
        rel,
        "laplace_family",
        parameter_name="scale",
        label="the Laplace mechanism",
        start=lambda target: float(sensitivity),
        method="Brent on log(scale), exact Laplace curve, checked in 60-digit arithmetic",
    )


def dpsgd_family(sample_rate: float, steps: int, *, neighbours: str = "add_remove") -> MechanismFamily:
    """``z -> SubsampledGaussian(z, q, T)``: the DP-SGD noise multiplier at Poisson rate ``q``, ``T`` steps.

    Starts from the central-limit approximation of DP-SGD as mu-GDP, ``mu = q sqrt(T (e^{1/z^2} - 1))``
    (Bu, Dong, Long & Su 2020, Thm 5; ``q = 1``: exactly ``sqrt(T) / z``), brackets by factors of 1.25
    in ``[0.05, 1e5]``. With no noise a record is detected exactly when it is sampled (probability
    ``1 - (1-q)^T``) and is invisible otherwise: the ``(0, 1 - (1-q)^T)``-DP curve bounds every DP-SGD
    curve from below, so a target that it meets is met by any noise.
    """
    owner = "dpsgd_family"
    q = check_sample_rate(sample_rate, owner=owner)
    rel = check_neighbours(neighbours, owner)
    t = int(SubsampledGaussian(1.0, q, steps).steps)  # validates steps
    low, high = 0.05, 1e5

    def start(target: RiskTarget) -> float:
        try:
            mu = target.gdp_mu() / _mu_scale(target, rel)
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
        build=lambda z: SubsampledGaussian(z, q, t, neighbours=rel),
        parameter_name="noise_multiplier",
        label="DP-SGD",
        low=low,
        high=high,
        step=1.25,
        start=start,
        least_private=ApproxDP(0.0, sampled, neighbours=rel) if sampled < 1.0 else None,
        least_private_why=(
            f"with sampling rate {q:g} over {t} steps a record is used with probability {sampled:.4g}"
        ),
        never_pure_dp=True,
        params={"sample_rate": q, "steps": t, "neighbours": rel},
        method="Brent on log(noise) over two-sided PLDs, the grid refined until the noise is minimal",
    )


def parameter_family(
    record: Mechanism,
    parameter: str,
    *,
    low: float | None = None,
    high: float | None = None,
) -> MechanismFamily:
    """The family ``value -> record`` with ``parameter`` set to ``value``: calibrate any parameter of any
    record with :func:`mipkit.accounting.calibrate_noise`.

    A noise scale (``sigma``, ``scale``, ``noise_multiplier``) lowers the risk as it grows: the calibration
    returns its least safe value. Any other parameter (``epsilon``, ``delta``, ``mu``, ``rho``,
    ``sensitivity``, ``sample_rate``, ``steps``) raises it: the calibration returns its *largest* safe
    value (``steps`` a whole number).

    Parameters
    ----------
    record : Mechanism
        The record whose other fields stay fixed.
    parameter : str
        A numeric field of the record.
    low, high : float, optional
        Search range (defaults: ``[1e-6, 1e6]`` around the record's value, ``[1, 1e9]`` steps,
        ``(0, 1]`` for a sampling rate, ``[0, 1)`` for a delta).

    Examples
    --------
    >>> from mipkit.accounting import EtaTarget, PureDP, calibrate_noise, parameter_family
    >>> fam = parameter_family(PureDP(1.0, neighbours="replace_one"), "epsilon")
    >>> round(calibrate_noise(fam, EtaTarget(0.1)).noise, 4)  # the largest epsilon with eta <= 0.1
    0.4055
    """
    owner = "parameter_family"
    if not isinstance(record, Mechanism) or not dataclasses.is_dataclass(record):
        raise MipkitValueError(
            f"The 'record' parameter of {owner} must be a mechanism record. "
            f"Got {type(record).__name__} instead."
        )
    numeric = [
        f.name for f in dataclasses.fields(record) if isinstance(getattr(record, f.name), (int, float))
    ]
    numeric = [n for n in numeric if not isinstance(getattr(record, n), bool)]
    if parameter not in numeric:
        raise MipkitValueError(
            f"The 'parameter' parameter of {owner} must be a numeric field of {type(record).__name__} "
            f"({numeric}). Got {parameter!r} instead."
        )
    grows = parameter not in RISK_FALLS
    integer = parameter in INTEGER_PARAMETERS
    value = float(getattr(record, parameter))
    default_low, default_high = {
        "steps": (1.0, 1e9),
        "sample_rate": (1e-9, 1.0),
        "delta": (0.0, 1.0 - 1e-12),
    }.get(parameter, (max(value, 1e-300) * 1e-6, max(value, 1e-300) * 1e6))
    lo = default_low if low is None else float(low)
    hi = default_high if high is None else float(high)

    def build(v: float) -> Mechanism:
        return dataclasses.replace(record, **{parameter: int(round(v)) if integer else v})  # type: ignore[type-var]

    return MechanismFamily(
        build=build,
        parameter_name=parameter,
        label=f"{type(record).__name__} ({parameter})",
        low=lo,
        high=hi,
        step=2.0,
        start=lambda target: value,
        risk_grows=grows,
        integer=integer,
        params={"record": record.to_dict(), "parameter": parameter},
        method=f"bracketed search on log({parameter})",
    )
