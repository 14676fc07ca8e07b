"""Confidence intervals for proportions (results keep raw counts; intervals are computed on demand)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from mipkit._validation import MipkitValueError, check_interval


def _check_counts(successes: int, trials: int) -> None:
    if trials < 1:
        raise MipkitValueError(f"A proportion needs at least one trial. Got trials={trials}.")
    if not 0 <= successes <= trials:
        raise MipkitValueError(
            f"successes must lie in [0, trials]. Got successes={successes}, trials={trials}."
        )


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial proportion.

    ``[B(a/2; x, n - x + 1), B(1 - a/2; x + 1, n - x)]`` with ``B`` the Beta quantile and
    ``a = 1 - confidence``; the ends are 0 and 1 when ``x = 0`` or ``x = n``. Coverage is at least
    ``confidence`` for every true proportion.
    """
    _check_counts(successes, trials)
    a = 1.0 - check_interval("confidence", confidence, 0.0, 1.0, owner="clopper_pearson")
    lo = 0.0 if successes == 0 else float(stats.beta.ppf(a / 2, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(stats.beta.ppf(1 - a / 2, successes + 1, trials - successes))
    return lo, hi


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``."""
    _check_counts(successes, trials)
    a = 1.0 - check_interval("confidence", confidence, 0.0, 1.0, owner="wilson")
    z = float(stats.norm.ppf(1 - a / 2))
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


@dataclass(frozen=True)
class Proportion:
    """A measured proportion kept as raw counts; the interval is computed on demand.

    Attributes
    ----------
    successes, trials : int
        Raw counts.
    method : str
        ``"clopper-pearson"`` (exact) or ``"wilson"``.
    """

    successes: int
    trials: int
    method: str = "clopper-pearson"

    def __post_init__(self) -> None:
        _check_counts(self.successes, self.trials)
        if self.method not in ("clopper-pearson", "wilson"):
            raise MipkitValueError(
                f"The 'method' parameter of Proportion must be 'clopper-pearson' or 'wilson'. "
                f"Got {self.method!r} instead."
            )

    @property
    def value(self) -> float:
        """Point estimate ``successes / trials``."""
        return self.successes / self.trials

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Two-sided interval at ``confidence``."""
        fn = clopper_pearson if self.method == "clopper-pearson" else wilson
        return fn(self.successes, self.trials, confidence)

    def to_dict(self, confidence: float = 0.95) -> dict:
        lo, hi = self.interval(confidence)
        return {
            "value": self.value,
            "ci": [lo, hi],
            "confidence": confidence,
            "successes": self.successes,
            "trials": self.trials,
            "method": self.method,
        }
