"""The settings of :func:`mipkit.workflows.risk.risk`: :class:`RiskConfig`, checked when built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mipkit._validation import MipkitValueError, check_interval
from mipkit.accounting.risk import DEFAULT_BASELINES, DEFAULT_RECALLS
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows._shape import VerbConfig

__all__ = ["RiskConfig"]

OWNER = "risk"


def _rates(name: str, values: Any, closed: str) -> tuple[float, ...]:
    """``values`` as a non-empty tuple of floats, each in the part of [0, 1] that ``closed`` says."""
    items = [values] if isinstance(values, (int, float)) else list(values or ())
    if not items:
        raise MipkitValueError(f"The {name!r} parameter of {OWNER} must list at least one value.")
    return tuple(check_interval(name, v, 0.0, 1.0, closed=closed, owner=OWNER) for v in items)


@dataclass(frozen=True)
class RiskConfig(VerbConfig):
    """What :func:`~mipkit.workflows.risk.risk` reports, and how closely (checked when built).

    Attributes
    ----------
    fprs : tuple of float
        FPRs in (0, 1) at which to state the largest TPR.
    baselines : tuple of float
        Baseline success rates in [0, 1] over which to state an attack's success.
    base_rates : tuple of float
        Member fractions in (0, 1) at which to state the precision.
    recalls : tuple of float
        Recalls in (0, 1] of the precision.
    tolerance : float
        Largest gap, in (0, 1), between the two sides of a DP-SGD risk (PLD accounting); an epsilon's two
        sides are refined to 0.1% relative.
    """

    fprs: tuple[float, ...] = DEFAULT_FPRS
    baselines: tuple[float, ...] = DEFAULT_BASELINES
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES
    recalls: tuple[float, ...] = DEFAULT_RECALLS
    tolerance: float = 1e-4

    def check(self) -> None:
        """Every rate in its interval, at least one of each; the tolerance in (0, 1)."""
        object.__setattr__(self, "fprs", _rates("fpr", self.fprs, "neither"))
        object.__setattr__(self, "baselines", _rates("baseline", self.baselines, "both"))
        object.__setattr__(self, "base_rates", _rates("base_rate", self.base_rates, "neither"))
        object.__setattr__(self, "recalls", _rates("recall", self.recalls, "right"))
        object.__setattr__(
            self, "tolerance", check_interval("tolerance", self.tolerance, 0.0, 1.0, owner=OWNER)
        )
