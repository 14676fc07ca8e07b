"""Certify: privacy guarantees as trade-off curves, and the operational risks they bound.

A guarantee becomes a :class:`TradeoffCurve` (``(epsilon, delta)``-DP, mu-GDP, the Laplace mechanism,
DP-SGD through privacy-loss distributions); :mod:`mipkit.accounting.risk` turns any curve into MIP eta,
attack advantage, TPR at low FPR, success over a baseline and precision at a base rate (MATH.md 1, 3, 4).

>>> from mipkit.accounting import ApproxDPCurve, eta_from_curve
>>> round(eta_from_curve(ApproxDPCurve(epsilon=1.0)), 4)
0.2311
"""

from __future__ import annotations

import importlib
from typing import Any

from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.risk import (
    advantage_over_baseline,
    binary_attribute_error_bound,
    certified_precision,
    eta_from_curve,
    eta_from_dp,
    mip_tpr_bound,
    risk_profile,
    singling_out_bound,
    success_bound,
    tpr_at_fpr_bound,
)
from mipkit.accounting.tradeoff import TradeoffCurve

# Names loaded on first use: they pull in dp_accounting (pld) or matplotlib (plots), which
# `import mipkit.accounting` should not pay for.
# --- PLD / calibration names (mipkit.accounting.pld, mipkit.accounting.calibrate): keep in step with
# --- those modules' __all__. (Not `calibrate`: importing the submodule mipkit.accounting.calibrate
# --- binds that name to the module, so a re-exported function of the same name would be shadowed.)
_LAZY: dict[str, str] = {
    "PLDCurve": "mipkit.accounting.pld",
    "compose": "mipkit.accounting.pld",
    "dpsgd_curve": "mipkit.accounting.pld",
    "Calibration": "mipkit.accounting.calibrate",
    "RiskTarget": "mipkit.accounting.calibrate",
    "calibrate_dpsgd": "mipkit.accounting.calibrate",
    "calibrate_gaussian": "mipkit.accounting.calibrate",
    "calibrate_laplace": "mipkit.accounting.calibrate",
    "plot_tradeoff": "mipkit.accounting.plots",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mipkit.accounting' has no attribute {name!r}")


__all__ = [
    "ApproxDPCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "TradeoffCurve",
    "advantage_over_baseline",
    "binary_attribute_error_bound",
    "certified_precision",
    "eta_from_curve",
    "eta_from_dp",
    "mip_tpr_bound",
    "risk_profile",
    "singling_out_bound",
    "success_bound",
    "tpr_at_fpr_bound",
    *_LAZY,
]
