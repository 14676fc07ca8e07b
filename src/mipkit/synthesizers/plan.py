"""The privacy plan of a DP-WGAN-GP run: one noise multiplier per critic step, calibrated before training.

The ratio schedule ``z_t = z w_t`` is fixed before the data are touched (``w_t = 1``, or a geometric decay in
a few groups), and the scale ``z`` is the smallest whose composition over the planned steps meets the target
(:func:`mipkit.accounting.calibrate_noise` on the plan's
:class:`~mipkit.accounting.HeterogeneousSubsampledGaussian` records, for the relation the target needs:
replace-one for the MIP game's eta, else the asked one; docs/theory.md section 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.accounting import HeterogeneousSubsampledGaussian
from mipkit.accounting.heterogeneous import group_steps

__all__ = ["RunPlan", "Schedule", "fixed_plan", "plan_run", "schedule_weights"]


def schedule_weights(steps: int, *, noise_decay: float = 1.0, groups: int = 8) -> np.ndarray:
    """Relative ratios ``w_t``: 1 throughout, or ``noise_decay ** (g / (G - 1))`` in ``G`` equal groups."""
    if noise_decay == 1.0 or steps == 1:
        return np.ones(steps)
    g = min(int(groups), steps)
    group = np.minimum((np.arange(steps) * g) // steps, g - 1)
    return noise_decay ** (group / max(g - 1, 1))


@dataclass(frozen=True)
class Schedule:
    """The public shape of a run, fixed before the data are touched: what a plan calibrates for.

    Attributes
    ----------
    delta : float
    neighbours : {"add_remove", "replace_one"}
        The relation asked for (an eta target is always met for replace-one).
    sample_rate : float
        Poisson rate ``q`` of every critic step.
    steps : int
        Planned critic steps.
    noise_decay, groups : float, int
        The ratio schedule of :func:`schedule_weights`.
    """

    delta: float
    neighbours: str
    sample_rate: float
    steps: int
    noise_decay: float = 1.0
    groups: int = 8

    def weights(self) -> np.ndarray:
        """``w_t`` of :func:`schedule_weights` for this schedule."""
        return schedule_weights(self.steps, noise_decay=self.noise_decay, groups=self.groups)


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


def plan_run(
    schedule: Schedule, *, epsilon: float | None, target: Any, n_records: int | None = None
) -> RunPlan:
    """Calibrate the ratio scale ``z`` of a planned run (module docstring)."""
    from mipkit.accounting import (
        ApproxDP,
        EpsilonTarget,
        EtaTarget,
        HeterogeneousSubsampledGaussian,
        MechanismFamily,
        calibrate_noise,
    )

    risk_target = EpsilonTarget(delta=schedule.delta, value=epsilon) if target is None else target
    relation = "replace_one" if isinstance(risk_target, EtaTarget) else schedule.neighbours
    w = schedule.weights()
    q, steps = float(schedule.sample_rate), schedule.steps
    counts = group_steps(w.tolist(), sample_rate=q)  # (w_g, q, count_g)

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

    def build(z: float) -> HeterogeneousSubsampledGaussian:
        return HeterogeneousSubsampledGaussian(
            groups=tuple((z * wg, qq, n) for wg, qq, n in counts), neighbours=relation
        )

    family = MechanismFamily(
        build=build,
        parameter_name="noise_multiplier",
        label="DP-WGAN-GP",
        low=0.05,
        high=1e3,
        step=1.25,
        start=start,
        least_private=ApproxDP(epsilon=0.0, delta=sampled) if sampled < 1.0 else None,
        least_private_why=(
            f"with sampling rate {q:g} over {steps} steps a record is used with probability {sampled:.4g}"
        ),
        never_pure_dp=True,
        params={"sample_rate": q, "steps": steps, "noise_decay": schedule.noise_decay},
        method="Brent on log(noise) over a pessimistic PLD, re-checked on a finer PLD",
    )
    cal = calibrate_noise(family, risk_target)
    z, cal_dict = cal.noise, cal.to_dict()
    cal_dict["target_record"] = risk_target.to_dict()
    cal_dict["neighbours"] = relation
    return RunPlan(noise_multipliers=z * w, sample_rate=q, neighbours=relation, calibration=cal_dict)


def fixed_plan(noise_multiplier: float, schedule: Schedule) -> RunPlan:
    """A plan with a given ratio scale ``z`` (no calibration); ``z = 0`` is a run without noise."""
    cal = {"noise": float(noise_multiplier), "parameter_name": "noise_multiplier", "target": None,
           "method": "given", "delta": schedule.delta}  # fmt: skip
    return RunPlan(
        noise_multipliers=float(noise_multiplier) * schedule.weights(),
        sample_rate=float(schedule.sample_rate),
        neighbours=schedule.neighbours,
        calibration=cal,
    )
