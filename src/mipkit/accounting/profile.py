"""Every operational risk of a release in one JSON-ready dict, each with its lower value and its relation.

:func:`risk_profile` is the ``mipkit risk --json`` contract. Two relations are at play (docs/theory.md
sections 1 and 3):

* the **membership** relation, the one the record states (``curve.neighbours``): the test "with against
  without the target's record" (removal for add/remove, replacement for replace-one): advantage, TPR at
  FPR, success over a baseline (Kulynych et al. 2025), precision at a base rate, epsilon;
* the **MIP game** relation, always replace-one (fixed-size random halves): eta, the accuracy
  ``1/2 + eta``, the game's advantage and TPR at FPR, and what eta alone allows.

Every number from a PLD curve comes with its value on the optimistic side (``<key>_lower``): the true risk
lies between the two, which differ by at most the stated tolerance. Closed-form curves are exact: the two
values agree. ``relation_of`` names the relation of every key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mipkit._defaults import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit._validation import check_delta
from mipkit.accounting.risk import (
    DEFAULT_BASELINES,
    DEFAULT_RECALLS,
    _check_curve,
    _check_rates,
    advantage_over_baseline,
    certified_precision,
    eta_from_curve,
    mip_tpr_bound,
    replace_one_curve,
    success_bound,
    tpr_at_fpr_bound,
)
from mipkit.accounting.tradeoff import TradeoffCurve

__all__ = ["risk_profile"]

#: Keys computed on the membership curve (the record's relation).
MEMBERSHIP_KEYS = (
    "advantage",
    "tpr_at_fpr",
    "success_bound",
    "advantage_over_baseline",
    "precision_at_base_rate",
    "epsilon",
)
#: Keys computed on the replace-one curve of the MIP game.
MIP_KEYS = ("eta", "accuracy", "mip_advantage", "mip_game_tpr_at_fpr", "mip_tpr_at_fpr")


def _key(x: float) -> str:
    return f"{x:g}"


def _table(keys: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """``{format(k, "g"): float(v)}`` for matching keys and values."""
    return {_key(k): float(v) for k, v in zip(keys, np.asarray(values).ravel(), strict=True)}


def _side(curve: TradeoffCurve, mip: TradeoffCurve, fprs, baselines, rates, recalls) -> dict:
    """The risks of one side (upper: the curves; lower: their optimistic sides)."""
    eta = eta_from_curve(mip)
    return {
        "eta": eta,
        "accuracy": 0.5 + eta,
        "mip_advantage": float(mip.advantage()),
        "mip_game_tpr_at_fpr": _table(fprs, tpr_at_fpr_bound(mip, fprs)),
        "advantage": float(curve.advantage()),
        "tpr_at_fpr": _table(fprs, tpr_at_fpr_bound(curve, fprs)),
        "success_bound": _table(baselines, success_bound(curve, baselines)),
        "advantage_over_baseline": _table(baselines, advantage_over_baseline(curve, baselines)),
        "precision_at_base_rate": {
            _key(pi): _table(recalls, certified_precision(curve, recalls, pi)) for pi in rates
        },
    }


def risk_profile(
    curve: TradeoffCurve,
    *,
    fprs: Sequence[float] = DEFAULT_FPRS,
    baselines: Sequence[float] = DEFAULT_BASELINES,
    base_rates: Sequence[float] = DEFAULT_BASE_RATES,
    recalls: Sequence[float] = DEFAULT_RECALLS,
    delta: float | None = None,
    mip_curve: TradeoffCurve | None = None,
) -> dict:
    """Every operational risk of a release in one JSON-ready dict (the ``mipkit risk --json`` contract).

    Keys (numbers as keys are written with ``format(x, "g")``); each risk key ``k`` has ``k_lower``:

    * ``neighbours``: the relation of the record's guarantee (the premise); ``relations``:
      ``{"membership": <that relation>, "mip_game": "replace_one"}``; ``relation_of``: key -> relation.
    * ``curve`` / ``mip_curve``: :meth:`TradeoffCurve.describe` of the membership and MIP-game curves;
      ``exact``: whether both are exact (then every ``_lower`` equals its value); ``tolerance`` and
      ``width``: the PLD's, when the grid was chosen for a tolerance.
    * MIP game (replace-one): ``eta`` (:func:`~mipkit.accounting.risk.eta_from_curve`), ``accuracy``
      (``1/2 + eta``), ``mip_advantage`` (``2 eta``), ``mip_game_tpr_at_fpr`` (largest TPR at each FPR in
      the game), ``mip_tpr_at_fpr`` (what eta alone allows, :func:`~mipkit.accounting.risk.mip_tpr_bound`).
    * Membership (the record's relation): ``advantage``, ``tpr_at_fpr``, ``success_bound`` and
      ``advantage_over_baseline`` (baseline -> value), ``precision_at_base_rate`` (base rate -> {recall ->
      precision}), and with ``delta``: ``delta``, ``epsilon`` (``None`` when no finite epsilon exists).

    Parameters
    ----------
    curve : TradeoffCurve
        The release's trade-off curve (for the relation its record states).
    fprs, baselines, recalls : sequences of float
        FPRs in (0, 1), baselines in [0, 1], recalls in (0, 1].
    base_rates : sequence of float
        Member fractions in (0, 1); the defaults are skews 1:1, 1:10, 1:100 and 1:1000.
    delta : float, optional
        Report the epsilon of the curve at this delta.
    mip_curve : TradeoffCurve, optional
        The replace-one curve (default :func:`~mipkit.accounting.risk.replace_one_curve` of ``curve``).
    """
    c = _check_curve(curve, "risk_profile")
    m = (
        replace_one_curve(c)
        if mip_curve is None
        else replace_one_curve(_check_curve(mip_curve, "risk_profile"))
    )
    fpr_arr = _check_rates("fpr", list(fprs), "risk_profile", closed="neither")
    base_arr = _check_rates("baseline", list(baselines), "risk_profile")
    rec_arr = _check_rates("recall", list(recalls), "risk_profile", closed="right")
    rates = [float(x) for x in _check_rates("base_rate", list(base_rates), "risk_profile", closed="neither")]
    args = (fpr_arr, base_arr, rates, rec_arr)
    upper = _side(c, m, *args)
    lower = _side(c.lower_curve(), m.lower_curve(), *args)
    out: dict = {
        "neighbours": c.neighbours,
        "relations": {"membership": c.neighbours, "mip_game": "replace_one"},
        "curve": c.describe(),
        "mip_curve": m.describe(),
        "exact": bool(c.exact and m.exact),
    }
    for key, value in upper.items():
        out[key] = value
        out[f"{key}_lower"] = lower[key]
    out["mip_tpr_at_fpr"] = _table(fpr_arr, mip_tpr_bound(min(upper["eta"], 0.5), fpr_arr))
    if delta is not None:
        d = check_delta(delta, owner="risk_profile")
        eps, eps_low = c.epsilon_for_delta(d), c.lower_curve().epsilon_for_delta(d)
        out["delta"] = d
        out["epsilon"] = None if math.isinf(eps) else float(eps)
        out["epsilon_lower"] = None if math.isinf(eps_low) else float(eps_low)
    tolerance = getattr(c, "tolerance", None)
    if tolerance is not None:
        out["tolerance"] = tolerance
        out["width"] = max(getattr(c, "width", 0.0) or 0.0, getattr(m, "width", 0.0) or 0.0)
    out["relation_of"] = {k: c.neighbours for k in MEMBERSHIP_KEYS if k in out} | dict.fromkeys(
        MIP_KEYS, "replace_one"
    )
    return out
