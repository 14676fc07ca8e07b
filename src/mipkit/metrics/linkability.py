"""Measures of the linkability attack against a non-member control (``docs/theory.md`` section 6).

The attack (:mod:`mipkit.attacks.linkability`) links the two column subsets of ``n`` training targets and of
``n_c`` control targets through their nearest synthetic records.

* attack success ``a = linked training targets / n`` and control success ``c = linked control targets /
  n_c`` (Wilson intervals); the control targets were never seen by the generator, so ``c`` is what the
  synthetic data's general statistics alone let an attacker link;
* risk ``(a - c) / (1 - c)`` with anonymeter's first-order propagation of the Wilson half-widths
  (:func:`mipkit.metrics.inference.anonymeter_risk`);
* precision at base rates: a link taken as the claim "this person is in the training data" is right with
  probability ``pi a / (pi a + (1 - pi) c)`` when a share ``pi`` of the targets are members (Francis &
  Wagner; ``docs/theory.md`` section 4). Its interval takes the ends of the two Wilson intervals, each at
  level ``1 - (1 - confidence) / 2`` (Bonferroni: both hold together with at least ``confidence``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mipkit.data.attack_records import LinkabilityGuesses
from mipkit.metrics.attack_summary import base_rate_label
from mipkit.metrics.inference import anonymeter_risk
from mipkit.metrics.roc import DEFAULT_BASE_RATES, precision_at_base_rate
from mipkit.stats import Proportion

__all__ = ["LinkabilityResult", "measure_linkability"]


@dataclass(frozen=True)
class LinkabilityResult:
    """Link success on training and control targets, the risk and the precision at base rates."""

    aux_cols: tuple[tuple[str, ...], tuple[str, ...]]
    n_neighbors: int
    attack: Proportion
    control: Proportion | None
    tie_share: float
    control_tie_share: float | None
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES

    def risk(self, confidence: float = 0.95) -> dict | None:
        """``(a - c) / (1 - c)`` with its interval (``None`` without control targets)."""
        return None if self.control is None else anonymeter_risk(self.attack, self.control, confidence)

    def precision_at_base_rates(self, confidence: float = 0.95) -> dict | None:
        """``{"1:k": {"value", "ci"}}`` (module docstring); ``None`` without control targets."""
        if self.control is None:
            return None
        level = 1.0 - (1.0 - confidence) / 2
        a_lo, a_hi = self.attack.interval(level)
        c_lo, c_hi = self.control.interval(level)
        out = {}
        for pi in self.base_rates:
            value, lo, hi = (
                float(precision_at_base_rate(t, f, pi))
                for t, f in ((self.attack.value, self.control.value), (a_lo, c_hi), (a_hi, c_lo))
            )
            out[base_rate_label(pi)] = {
                "base_rate": pi,
                "value": None if np.isnan(value) else value,
                "ci": [None if np.isnan(lo) else lo, None if np.isnan(hi) else hi],
            }
        return out

    def to_dict(self, confidence: float = 0.95) -> dict:
        return {
            "aux_cols": [list(self.aux_cols[0]), list(self.aux_cols[1])],
            "n_neighbors": self.n_neighbors,
            "attack_success": self.attack.to_dict(confidence),
            "control_success": None if self.control is None else self.control.to_dict(confidence),
            "risk": self.risk(confidence),
            "precision_at_base_rate": self.precision_at_base_rates(confidence),
            "tie_share": self.tie_share,
            "control_tie_share": self.control_tie_share,
        }


def measure_linkability(
    guesses: LinkabilityGuesses, *, base_rates: Sequence[float] = DEFAULT_BASE_RATES
) -> LinkabilityResult:
    """Count the links of training and control targets (module docstring)."""
    ok = np.asarray(guesses.linked, dtype=bool)
    ctl = None if guesses.control_linked is None else np.asarray(guesses.control_linked, dtype=bool)
    return LinkabilityResult(
        aux_cols=guesses.aux_cols,
        n_neighbors=guesses.n_neighbors,
        attack=Proportion(int(ok.sum()), int(ok.size), "wilson"),
        control=None if ctl is None else Proportion(int(ctl.sum()), int(ctl.size), "wilson"),
        tie_share=float(np.mean(guesses.tied)),
        control_tie_share=None if guesses.control_tied is None else float(np.mean(guesses.control_tied)),
        base_rates=tuple(base_rates),
    )
