"""The settings of :func:`mipkit.workflows.calibrate.calibrate`: :class:`CalibrateConfig`, the risk target
and how close to the least safe noise the answer must be; checked when built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mipkit._validation import check_interval
from mipkit.workflows._shape import VerbConfig
from mipkit.workflows.calibrate.target import TARGET_PARAMETERS, risk_target_from

if TYPE_CHECKING:  # pragma: no cover
    from mipkit.accounting.targets import RiskTarget

__all__ = ["TARGET_PARAMETERS", "CalibrateConfig"]

OWNER = "calibrate"


@dataclass(frozen=True)
class CalibrateConfig(VerbConfig):
    """The risk target to meet, and the tolerance on the noise (checked when built).

    Attributes
    ----------
    target : {"eta", "advantage", "tpr-at-fpr", "success", "precision", "epsilon"}
        The risk to bound (:mod:`mipkit.accounting.targets`); eta concerns the membership game
        (replace-one).
    value : float
        The largest risk allowed.
    fpr : float, optional
        For ``tpr-at-fpr``: the false-positive rate.
    baseline : float, optional
        For ``success``: the attack's success without the release.
    base_rate, recall : float, optional
        For ``precision``: the member fraction and the recall.
    delta : float, optional
        For ``epsilon``: the DP delta.
    tolerance : float
        DP-SGD: the relative distance in (0, 0.5) allowed to the least safe noise.
    """

    target: str = "eta"
    value: float = 0.05
    fpr: float | None = None
    baseline: float | None = None
    base_rate: float | None = None
    recall: float | None = None
    delta: float | None = None
    tolerance: float = 0.005

    def check(self) -> None:
        """The target takes exactly the parameters given and accepts the value; the tolerance is in range."""
        self.risk_target()
        object.__setattr__(
            self, "tolerance", check_interval("tolerance", self.tolerance, 0.0, 0.5, owner=OWNER)
        )

    def risk_target(self) -> RiskTarget:
        """The target (:mod:`mipkit.accounting.targets`) these settings state."""
        params = {k: getattr(self, k) for k in ("fpr", "baseline", "base_rate", "recall", "delta")}
        return risk_target_from(self.target, self.value, params, owner=OWNER)
