"""Noise calibration to a risk target: closed-form oracles, minimality, safe side, DP-SGD, errors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting.calibrate import (
    Calibration,
    RiskTarget,
    calibrate,
    calibrate_dpsgd,
    calibrate_gaussian,
    calibrate_laplace,
)
from mipkit.accounting.pld import dpsgd_curve

Phi, Phinv = stats.norm.cdf, stats.norm.ppf


# ---------------------------------------------------------------------------------------------------
# Independent risk formulas (written here from the definitions, not through mipkit's curves)
# ---------------------------------------------------------------------------------------------------
def gauss_risk(target: str, sigma: float, sens: float = 1.0, **p) -> float:
    mu = sens / sigma
    if target == "eta":
        return Phi(mu / 2) - 0.5
    if target == "advantage":
        return 2 * Phi(mu / 2) - 1
    if target == "tpr-at-fpr":
        return Phi(Phinv(p["fpr"]) + mu)
    if target == "success":
        return Phi(Phinv(p["baseline"]) + mu)
    if target == "precision":
        pi, r = p["base_rate"], p["recall"]
        alpha = Phi(Phinv(r) - mu)
        return pi * r / (pi * r + (1 - pi) * alpha)
    # epsilon at delta: invert Balle & Wang's delta(eps) by bisection on eps
    d = p["delta"]

    def delta_of(eps: float) -> float:
        return Phi(-eps / mu + mu / 2) - math.exp(eps) * Phi(-eps / mu - mu / 2)

    lo, hi = 0.0, 200.0
    if delta_of(0.0) <= d:
        return 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if delta_of(mid) <= d else (mid, hi)
    return hi


def laplace_advantage(scale: float, sens: float = 1.0) -> float:
    # TV(Lap(0, b), Lap(L, b)) = 1 - exp(-L / (2b)) (integral of the positive part of the difference)
    return 1.0 - math.exp(-sens / (2 * scale))


def laplace_tpr(alpha: float, scale: float, sens: float = 1.0) -> float:
    """Largest TPR at FPR alpha for Lap(0,b) vs Lap(L,b), by thresholding the output (monotone ratio)."""
    # reject 'out' when X > t: alpha = P0(X > t); tpr = P1(X > t)
    t = stats.laplace(0, scale).isf(alpha)
    return float(stats.laplace(sens, scale).sf(t))


PARAMS = {
    "eta": {},
    "advantage": {},
    "tpr-at-fpr": {"fpr": 0.01},
    "success": {"baseline": 0.05},
    "precision": {"base_rate": 0.01, "recall": 0.2},
    "epsilon": {"delta": 1e-5},
}
VALUES = {"eta": 0.05, "advantage": 0.2, "tpr-at-fpr": 0.1, "success": 0.3, "precision": 0.5, "epsilon": 1.0}


# ---------------------------------------------------------------------------------------------------
# Gaussian: meets the target, and is minimal
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", list(PARAMS))
@pytest.mark.parametrize("sens", [1.0, 2.5])
def test_gaussian_meets_target_and_is_minimal(target, sens):
    res = calibrate_gaussian(target, VALUES[target], sensitivity=sens, **PARAMS[target])
    assert isinstance(res, Calibration) and res.parameter_name == "sigma" and res.converged
    assert res.achieved <= res.target_value and res.achieved_fine <= res.target_value
    assert gauss_risk(target, res.noise, sens, **PARAMS[target]) <= VALUES[target] + 1e-9
    assert gauss_risk(target, res.noise * (1 - 1e-6), sens, **PARAMS[target]) > VALUES[target]


def test_gaussian_advantage_closed_form():
    # 2 Phi(1 / (2 sigma)) - 1 = 0.1  <=>  sigma = 1 / (2 Phi^-1(0.55))
    res = calibrate_gaussian("advantage", 0.1)
    assert res.noise == pytest.approx(1 / (2 * Phinv(0.55)), rel=1e-10)
    assert res.noise >= 1 / (2 * Phinv(0.55))


@settings(max_examples=25, deadline=None)
@given(
    target=st.sampled_from(["eta", "advantage", "tpr-at-fpr", "success", "precision"]),
    level=st.floats(0.05, 0.95),
    sens=st.floats(0.1, 10.0),
)
def test_gaussian_random_targets(target, level, sens):
    p = PARAMS[target]
    value = {
        "eta": 0.49 * level,
        "advantage": 0.98 * level,
        "tpr-at-fpr": 0.01 + 0.98 * level,
        "success": 0.05 + 0.94 * level,
        "precision": 0.01 + 0.98 * level,
    }[target]
    res = calibrate_gaussian(target, value, sensitivity=sens, **p)
    assert gauss_risk(target, res.noise, sens, **p) <= value + 1e-9
    assert gauss_risk(target, res.noise * (1 - 1e-2), sens, **p) > value


# ---------------------------------------------------------------------------------------------------
# Laplace (exact curve)
# ---------------------------------------------------------------------------------------------------
def test_laplace_advantage_closed_form():
    # 1 - exp(-1/(2b)) = a  <=>  b = -1 / (2 log(1 - a))
    res = calibrate_laplace("advantage", 0.1)
    assert res.noise == pytest.approx(-1 / (2 * math.log(0.9)), rel=1e-8)
    assert laplace_advantage(res.noise) <= 0.1
    assert res.converged and res.parameter_name == "scale"


def test_laplace_epsilon_is_pure_dp():
    res = calibrate_laplace("epsilon", 0.5, sensitivity=2.0, delta=0.0)
    assert res.noise == pytest.approx(4.0, rel=1e-8)
    assert res.noise >= 4.0 * (1 - 1e-12)


@settings(max_examples=20, deadline=None)
@given(level=st.floats(0.02, 0.9), alpha=st.sampled_from([0.001, 0.01, 0.1]), sens=st.floats(0.2, 5.0))
def test_laplace_random_targets(level, alpha, sens):
    adv = calibrate_laplace("advantage", level, sensitivity=sens)
    assert laplace_advantage(adv.noise, sens) <= level + 1e-12
    assert laplace_advantage(adv.noise * (1 - 1e-2), sens) > level
    value = alpha + (1 - alpha) * level
    tpr = calibrate_laplace("tpr-at-fpr", value, sensitivity=sens, fpr=alpha)
    assert laplace_tpr(alpha, tpr.noise, sens) <= value + 1e-9
    assert laplace_tpr(alpha, tpr.noise * (1 - 1e-2), sens) > value


# ---------------------------------------------------------------------------------------------------
# DP-SGD (small T for speed)
# ---------------------------------------------------------------------------------------------------
def test_dpsgd_full_batch_single_step_is_the_gaussian_mechanism():
    res = calibrate_dpsgd("advantage", 0.2, sample_rate=1.0, steps=1)
    exact = 1 / (2 * Phinv(0.6))
    assert res.noise >= exact * (1 - 1e-9)  # the PLD is pessimistic: never less noise than needed
    assert res.noise == pytest.approx(exact, rel=2e-3)
    assert res.converged


@pytest.mark.parametrize(
    ("target", "value", "params"),
    [
        ("advantage", 0.1, {}),
        ("eta", 0.05, {}),
        ("tpr-at-fpr", 0.1, {"fpr": 0.01}),
        ("success", 0.3, {"baseline": 0.1}),
        ("precision", 0.5, {"base_rate": 0.02, "recall": 0.1}),
        ("epsilon", 2.0, {"delta": 1e-5}),
    ],
)
def test_dpsgd_meets_target_on_fine_grid_and_is_minimal(target, value, params):
    q, steps = 0.1, 10
    res = calibrate_dpsgd(
        target, value, sample_rate=q, steps=steps, value_discretization_interval=2e-3, **params
    )
    assert res.converged and res.parameter_name == "noise_multiplier"
    assert res.achieved <= value and res.achieved_fine <= value
    tgt = RiskTarget(target, value, **params)
    fine = res.details["fine_discretization_interval"]
    # independent re-evaluation on the fine grid: meets the target ...
    assert tgt.risk(dpsgd_curve(res.noise, q, steps, value_discretization_interval=fine)) <= value
    # ... and 1% less noise misses it, even on the fine grid
    less = dpsgd_curve(res.noise * (1 - 1e-2), q, steps, value_discretization_interval=fine)
    assert tgt.risk(less) > value


@settings(max_examples=4, deadline=None)
@given(frac=st.floats(0.1, 0.3), q=st.floats(0.05, 0.3), steps=st.integers(1, 10))
def test_dpsgd_random_advantage_targets(frac, q, steps):
    level = frac * (1 - (1 - q) ** steps)  # a fraction of the largest advantage any noise allows
    res = calibrate_dpsgd("advantage", level, sample_rate=q, steps=steps, value_discretization_interval=2e-3)
    fine = dpsgd_curve(res.noise, q, steps, value_discretization_interval=4e-4)
    assert fine.advantage() <= level
    if not res.details["at_noise_floor"]:
        coarse_less = dpsgd_curve(res.noise * (1 - 1e-2), q, steps, value_discretization_interval=2e-3)
        assert coarse_less.advantage() > level


def test_dpsgd_risk_falls_with_noise_so_harder_targets_need_more():
    a = calibrate_dpsgd("advantage", 0.2, sample_rate=0.1, steps=10, value_discretization_interval=2e-3)
    b = calibrate_dpsgd("advantage", 0.1, sample_rate=0.1, steps=10, value_discretization_interval=2e-3)
    assert b.noise > a.noise


# ---------------------------------------------------------------------------------------------------
# The record, the dispatcher and errors
# ---------------------------------------------------------------------------------------------------
def test_record_is_frozen_and_serialisable():
    res = calibrate("gaussian", "tpr-at-fpr", 0.2, fpr=0.01, sensitivity=None)
    d = res.to_dict()
    for key in (
        "noise",
        "parameter_name",
        "mechanism",
        "target",
        "target_value",
        "achieved",
        "achieved_fine",
        "converged",
        "seconds",
        "details",
    ):
        assert key in d
    assert d["details"]["fpr"] == 0.01
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.noise = 1.0  # type: ignore[misc]
    assert np.isfinite(d["seconds"]) and d["seconds"] >= 0


def test_dispatcher_routes():
    assert calibrate("laplace", "advantage", 0.1).mechanism == "laplace"
    assert calibrate("dpsgd", "advantage", 0.05, sample_rate=0.1, steps=3).mechanism == "dpsgd"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: calibrate_gaussian("advantage", 1.0), "advantage"),
        (lambda: calibrate_gaussian("advantage", 0.0), "advantage"),
        (lambda: calibrate_gaussian("eta", 0.5), "eta"),
        (lambda: calibrate_gaussian("tpr-at-fpr", 0.01, fpr=0.01), "unreachable"),
        (lambda: calibrate_gaussian("tpr-at-fpr", 0.005, fpr=0.01), "unreachable"),
        (lambda: calibrate_gaussian("tpr-at-fpr", 0.2), "fpr"),
        (lambda: calibrate_gaussian("success", 0.1, baseline=0.2), "unreachable"),
        (lambda: calibrate_gaussian("precision", 0.01, base_rate=0.1, recall=0.5), "unreachable"),
        (lambda: calibrate_gaussian("precision", 0.5, base_rate=0.1), "recall"),
        (lambda: calibrate_gaussian("epsilon", 1.0, delta=0.0), "unreachable"),
        (lambda: calibrate_gaussian("epsilon", -1.0, delta=1e-5), "epsilon"),
        (lambda: calibrate_gaussian("epsilon", 1.0, delta=1.0), "delta"),
        (lambda: calibrate_gaussian("bogus", 0.1), "target"),
        (lambda: calibrate_gaussian("advantage", 0.1, sensitivity=0.0), "sensitivity"),
        (lambda: calibrate_dpsgd("advantage", 0.1, sample_rate=0.0, steps=10), "sample_rate"),
        (lambda: calibrate_dpsgd("advantage", 0.1, sample_rate=1.5, steps=10), "sample_rate"),
        (lambda: calibrate_dpsgd("advantage", 0.1, sample_rate=0.1, steps=0), "steps"),
        (lambda: calibrate_dpsgd("epsilon", 1.0, sample_rate=0.1, steps=10, delta=0.0), "unreachable"),
        (lambda: calibrate("gaussian", "advantage", 0.1, steps=10), "dpsgd"),
        (lambda: calibrate_dpsgd("advantage", 0.3, sample_rate=0.1, steps=3), "any noise"),
        (lambda: calibrate_dpsgd("tpr-at-fpr", 0.5, sample_rate=0.1, steps=3, fpr=0.01), "any noise"),
        (lambda: calibrate("dpsgd", "advantage", 0.1, sample_rate=0.1), "steps"),
        (lambda: calibrate("uniform", "advantage", 0.1), "mechanism"),
    ],
)
def test_errors(call, match):
    with pytest.raises(MipkitValueError, match=match):
        call()
