"""The privacy plan of a DP-WGAN-GP run: one noise multiplier per critic step, calibrated before training.

The ratio schedule ``z_t = z w_t`` is fixed before the data are touched (``w_t = 1``, or a geometric decay in
a few groups), and the scale ``z`` is the smallest whose composition over the planned steps meets the target
(:func:`mipkit.accounting.calibrate` on the records of the plan; docs/theory.md section 3). For add/remove
neighbours the plan's records are ``SubsampledGaussian`` groups; for replace-one (the MIP game's eta) the
search runs on :class:`~mipkit.accounting.heterogeneous.HeterogeneousSubsampledGaussian` with the same
bracketed search and fine re-check as ``calibrate``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.accounting.heterogeneous import HeterogeneousSubsampledGaussian, group_steps, heterogeneous_curve

__all__ = ["RunPlan", "plan_run", "schedule_weights"]

_GRID, _FINE = 1e-3, 2e-4


def schedule_weights(steps: int, *, noise_decay: float = 1.0, groups: int = 8) -> np.ndarray:
    """Relative ratios ``w_t``: 1 throughout, or ``noise_decay ** (g / (G - 1))`` in ``G`` equal groups."""
    if noise_decay == 1.0 or steps == 1:
        return np.ones(steps)
    g = min(int(groups), steps)
    group = np.minimum((np.arange(steps) * g) // steps, g - 1)
    return noise_decay ** (group / max(g - 1, 1))


@dataclass(frozen=True)
class RunPlan:
    """The calibrated plan: noise multiplier of every planned step, and the calibration behind it.

    Attributes
    ----------
    noise_multipliers : ndarray
        ``z_t`` for ``t = 1..steps``.
    sample_rate : float
    neighbours : str
        The relation the target was met for.
    calibration : dict
        ``Calibration.to_dict()`` (or the equivalent for replace-one), with the target.
    """

    noise_multipliers: np.ndarray
    sample_rate: float
    neighbours: str
    calibration: dict

    @property
    def steps(self) -> int:
        return int(self.noise_multipliers.size)

    def record_for(self, steps_run: int, *, neighbours: str | None = None) -> HeterogeneousSubsampledGaussian:
        """The record of the first ``steps_run`` steps (what ran)."""
        if steps_run < 1:
            raise MipkitValueError("No critic step ran: there is nothing to certify.")
        groups = group_steps(self.noise_multipliers[:steps_run].tolist(), sample_rate=self.sample_rate)
        return HeterogeneousSubsampledGaussian(groups=groups, neighbours=neighbours or self.neighbours)


def _supports_neighbours() -> str | None:
    """The name of the neighbouring-relation field of ``SubsampledGaussian``, if the accounting has one."""
    from mipkit.accounting import SubsampledGaussian

    names = {f.name for f in fields(SubsampledGaussian)}
    for candidate in ("neighbours", "neighbouring", "relation", "neighboring_relation"):
        if candidate in names:
            return candidate
    return None


def plan_run(
    *,
    epsilon: float | None,
    delta: float,
    target: Any,
    neighbours: str,
    sample_rate: float,
    steps: int,
    noise_decay: float = 1.0,
    schedule_groups: int = 8,
    n_records: int | None = None,
) -> RunPlan:
    """Calibrate the ratio scale ``z`` of a planned run (module docstring)."""
    from mipkit.accounting import ApproxDP, Composed, EpsilonTarget, EtaTarget, SubsampledGaussian, calibrate
    from mipkit.accounting.calibration import MechanismFamily

    risk_target = EpsilonTarget(delta=delta, value=epsilon) if target is None else target
    relation = "replace_one" if isinstance(risk_target, EtaTarget) else neighbours
    w = schedule_weights(steps, noise_decay=noise_decay, groups=schedule_groups)
    counts = group_steps(w.tolist(), sample_rate=sample_rate)  # (w_g, q, count_g)
    q = float(sample_rate)

    def start(tgt: Any) -> float:
        try:
            mu = float(tgt.gdp_mu())
        except (ValueError, ArithmeticError):  # pragma: no cover - defensive
            return 1.0
        if not (mu > 0.0 and math.isfinite(mu)):
            return 1.0
        ratio = (mu / q) ** 2 / steps
        return float(min(max(1.0 / math.sqrt(math.log1p(ratio)), 0.05), 1e3))

    sampled = -math.expm1(steps * math.log1p(-q)) if q < 1.0 else 1.0
    field_name = _supports_neighbours()
    if relation == "add_remove" or field_name is not None:
        extra = {} if relation == "add_remove" or field_name is None else {field_name: relation}

        def build(z: float) -> Any:
            parts = [SubsampledGaussian(z * wg, qq, n, **extra) for wg, qq, n in counts]
            return parts[0] if len(parts) == 1 else Composed(parts)

        family = MechanismFamily(
            build=build,
            parameter_name="noise_multiplier",
            label="DP-WGAN-GP",
            low=0.05,
            high=1e3,
            step=1.25,
            start=start,
            least_private=ApproxDP(0.0, sampled) if sampled < 1.0 else None,
            least_private_why=(
                f"with sampling rate {q:g} over {steps} steps a record is used with probability {sampled:.4g}"
            ),
            never_pure_dp=True,
            params={"sample_rate": q, "steps": steps, "noise_decay": noise_decay},
            method="Brent on log(noise) over a pessimistic PLD, re-checked on a finer PLD",
        )
        cal = calibrate(family, risk_target)
        z, cal_dict = cal.noise, cal.to_dict()
    else:
        z, cal_dict = _calibrate_replace(risk_target, counts, start(risk_target), steps)
    cal_dict["target_record"] = risk_target.to_dict()
    cal_dict["neighbours"] = relation
    return RunPlan(noise_multipliers=z * w, sample_rate=q, neighbours=relation, calibration=cal_dict)


def _calibrate_replace(target: Any, counts: tuple, guess: float, steps: int) -> tuple[float, dict]:
    """``calibrate``'s search and fine re-check on the replace-one PLD of the planned groups."""
    import time

    from mipkit.accounting.search import MonotoneRisk, bracketed_search, raise_until_safe

    clock = time.perf_counter()

    def record(z: float) -> HeterogeneousSubsampledGaussian:
        return HeterogeneousSubsampledGaussian(
            groups=tuple((z * wg, q, n) for wg, q, n in counts), neighbours="replace_one"
        )

    def risk_on(grid: float):
        return lambda z: target.risk(heterogeneous_curve(record(z), value_discretization_interval=grid))

    search = MonotoneRisk(risk_on(_GRID), target.value)
    lo, hi, _ = bracketed_search(
        search, guess, rtol=1e-3, low=0.05, high=1e3, step=1.25, what="noise_multiplier"
    )
    check = MonotoneRisk(risk_on(_FINE), target.value)
    z, fine = raise_until_safe(check, hi, target.value, factor=1.0 + 1e-3)
    return float(z), {
        "noise": float(z),
        "parameter_name": "noise_multiplier",
        "mechanism": record(z).to_dict(),
        "target": target.name,
        "target_value": target.value,
        "achieved": float(search(z)),
        "achieved_fine": float(fine),
        "converged": bool(hi / lo - 1.0 <= 1e-3 and fine <= target.value),
        "seconds": time.perf_counter() - clock,
        "details": {
            "steps": steps,
            "value_discretization_interval": _GRID,
            "fine_discretization_interval": _FINE,
        },
    }
