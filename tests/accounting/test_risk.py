"""Risk bounds against independent computations: exact enumeration of Izzo et al.'s tightness mechanism,
Monte Carlo of the MIP game with a confidence interval, numerical integration of Bayes errors, closed
forms, and hypothesis properties (risk grows with epsilon / mu and falls with noise)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from mipkit._validation import MipkitValueError
from mipkit.accounting import GDP, ApproxDP, GaussianMechanism, tradeoff_curve
from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.profile import risk_profile
from mipkit.accounting.relations import GroupPrivacyCurve
from mipkit.accounting.risk import (
    advantage_over_baseline,
    binary_attribute_error_bound,
    certified_precision,
    eta_from_curve,
    eta_from_dp,
    mip_tpr_bound,
    singling_out_bound,
    success_bound,
    tpr_at_fpr_bound,
)
from mipkit.metrics import precision_at_base_rate

CURVES = [ApproxDPCurve(1.0, 1e-3), GaussianCurve(1.2), LaplaceCurve(0.7)]
GRID = np.unique(np.concatenate([np.logspace(-9, 0, 4001), np.linspace(0.0, 1.0, 20001)]))
EPS = st.floats(min_value=0.0, max_value=30.0, allow_nan=False)
DELTA = st.floats(min_value=0.0, max_value=0.999, allow_nan=False)
MU = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
PROB = st.floats(min_value=1e-6, max_value=1 - 1e-6, allow_nan=False)


# --------------------------------------------------------------------------------------------------
# Theorem 4 of Izzo et al. (TMLR 2024) and its tightness example
# --------------------------------------------------------------------------------------------------
def _tightness_mechanism(eps: float, delta: float) -> dict[int, dict[str, float]]:
    """Output laws of the mechanism in the proof of Thm 4: D = {0, 1}, k = 1, target x* = 0.

    A({0}) = 0 w.p. delta, bot_a w.p. (1-delta)/(1+e^-eps), bot_b w.p. (1-delta)/(1+e^eps);
    A({1}) = 1 w.p. delta, bot_a w.p. (1-delta)/(1+e^eps), bot_b w.p. (1-delta)/(1+e^-eps).
    """
    hi = (1 - delta) / (1 + math.exp(-eps))
    lo = (1 - delta) / (1 + math.exp(eps))
    return {
        0: {"0": delta, "a": hi, "b": lo, "1": 0.0},
        1: {"0": 0.0, "a": lo, "b": hi, "1": delta},
    }


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (0.5, 0.0), (1.0, 1e-5), (2.0, 0.1), (8.0, 1e-5)])
def test_thm4_tightness_example_by_enumeration(eps: float, delta: float) -> None:
    laws = _tightness_mechanism(eps, delta)
    outputs = ["0", "a", "b", "1"]
    # (eps, delta)-DP: check every event S in both directions
    for size in range(len(outputs) + 1):
        for event in itertools.combinations(outputs, size):
            p0 = sum(laws[0][o] for o in event)
            p1 = sum(laws[1][o] for o in event)
            assert p0 <= math.exp(eps) * p1 + delta + 1e-12
            assert p1 <= math.exp(eps) * p0 + delta + 1e-12
    # optimal attacker (Prop. 2): guess "member" iff P(x* in D_train | output) >= 1/2; D_train uniform
    # the two datasets differ by replacing the record: Thm 4 is the replace-one reading of the guarantee
    accuracy = sum(0.5 * max(laws[0][o], laws[1][o]) for o in outputs)
    assert accuracy - 0.5 == pytest.approx(eta_from_dp(eps, delta, neighbours="replace_one"), abs=1e-14)
    rec = ApproxDP(eps, delta, neighbours="replace_one")
    assert eta_from_curve(tradeoff_curve(rec)) == pytest.approx(accuracy - 0.5, abs=1e-14)
    # the same numbers read as an add/remove guarantee allow more (group privacy for two records)
    assert eta_from_dp(eps, delta) >= accuracy - 0.5 - 1e-14


def test_eta_from_dp_known_values() -> None:
    rep = {"neighbours": "replace_one"}
    assert eta_from_dp(0.0, **rep) == 0.0
    assert eta_from_dp(0.0, 0.3, **rep) == pytest.approx(0.3 + 0.7 / 2 - 0.5)
    assert eta_from_dp(math.log(3), **rep) == pytest.approx(0.75 - 0.5)  # 1/(1 + 1/3) = 3/4
    assert eta_from_dp(800.0, 0.0, **rep) == pytest.approx(0.5)
    # add/remove (the default): eta = (1 - e^-eps (1 - 2 delta)) / 2, the group-privacy curve's adv / 2
    assert eta_from_dp(0.0) == 0.0
    assert eta_from_dp(0.0, 0.1) == pytest.approx(0.1)  # two leaks of 0.1 give TV 0.2
    assert eta_from_dp(math.log(3)) == pytest.approx((1 - 1 / 3) / 2)
    assert eta_from_dp(800.0, 0.0) == pytest.approx(0.5)
    with pytest.raises(MipkitValueError):
        eta_from_dp(-1.0)
    with pytest.raises(MipkitValueError):
        eta_from_dp(1.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(eps=EPS, delta=DELTA)
def test_eta_from_curve_equals_thm4_for_approx_dp(eps: float, delta: float) -> None:
    rep = tradeoff_curve(ApproxDP(eps, delta, neighbours="replace_one"))
    assert eta_from_curve(rep) == pytest.approx(eta_from_dp(eps, delta, neighbours="replace_one"), abs=1e-13)
    # add/remove: the closed form of the group-privacy curve agrees with its numeric supremum
    add = ApproxDPCurve(eps, delta)
    assert eta_from_curve(add) == pytest.approx(eta_from_dp(eps, delta), abs=1e-13)
    numeric = float(np.max(np.asarray(GroupPrivacyCurve(add).tpr(GRID)) - GRID)) / 2
    assert numeric <= eta_from_dp(eps, delta) + 1e-12 and numeric >= eta_from_dp(eps, delta) - 2e-3


@settings(max_examples=40, deadline=None)
@given(mu=MU)
def test_eta_from_curve_for_gdp(mu: float) -> None:
    rep = tradeoff_curve(GDP(mu, neighbours="replace_one"))
    assert eta_from_curve(rep) == pytest.approx(stats.norm.cdf(mu / 2) - 0.5, abs=1e-14)
    # add/remove mu-GDP: a replacement is 2 mu-GDP (group privacy is exact for GDP)
    assert eta_from_curve(GaussianCurve(mu)) == pytest.approx(stats.norm.cdf(mu) - 0.5, abs=1e-14)


# --------------------------------------------------------------------------------------------------
# The MIP TPR bound: TPR <= FPR + 2 eta (MATH.md 1), not FPR + eta
# --------------------------------------------------------------------------------------------------
def test_mip_tpr_bound_perfect_attacker() -> None:
    # a perfect attacker: accuracy 1, so eta = 1/2, and TPR = 1 at FPR = 0
    assert float(mip_tpr_bound(0.5, 0.0)) == 1.0
    assert float(mip_tpr_bound(0.0, 0.3)) == pytest.approx(0.3)
    np.testing.assert_allclose(mip_tpr_bound(0.1, [0.0, 0.5, 0.9]), [0.2, 0.7, 1.0])
    with pytest.raises(MipkitValueError):
        mip_tpr_bound(0.6, 0.1)
    with pytest.raises(MipkitValueError):
        mip_tpr_bound(0.1, 1.5)


@pytest.mark.parametrize("eps,delta", [(2.0, 0.0), (1.0, 0.05)])
def test_mip_game_monte_carlo_attains_tpr_minus_fpr_two_eta(eps: float, delta: float) -> None:
    """Play the MIP game with the Thm 4 mechanism: TPR - FPR reaches 2 eta (so FPR + eta is wrong)."""
    rng = np.random.default_rng(20240407)
    trials = 200_000
    laws = _tightness_mechanism(eps, delta)
    outputs = np.array(["0", "a", "b", "1"])
    member = rng.integers(0, 2, size=trials) == 0  # D_train = {0} (target in) or {1} (target out)
    p_in = np.array([laws[0][o] for o in outputs])
    p_out = np.array([laws[1][o] for o in outputs])
    u = rng.random(trials)
    idx_in = np.searchsorted(np.cumsum(p_in), u, side="right").clip(0, 3)
    idx_out = np.searchsorted(np.cumsum(p_out), u, side="right").clip(0, 3)
    released = np.where(member, idx_in, idx_out)
    guess = np.isin(released, [0, 1])  # the optimal attacker: "member" on outputs 0 and bot_a
    tpr = guess[member].mean()
    fpr = guess[~member].mean()
    se = math.sqrt(tpr * (1 - tpr) / member.sum() + fpr * (1 - fpr) / (~member).sum())
    eta = eta_from_dp(eps, delta, neighbours="replace_one")  # the game replaces the record
    assert abs((tpr - fpr) - 2 * eta) < 4 * se + 1e-12
    assert tpr - fpr > eta + 10 * se  # Thm 8 as printed (TPR <= FPR + eta) is violated
    assert tpr <= float(mip_tpr_bound(eta, fpr)) + 4 * se
    # the accuracy of the game is 1/2 + eta
    acc = (guess == member).mean()
    assert abs(acc - (0.5 + eta)) < 4 * math.sqrt(0.25 / trials)


@pytest.mark.parametrize("curve", CURVES, ids=repr)
def test_f_dp_tpr_bound_is_tighter_than_mip_bound(curve) -> None:
    a = np.linspace(0, 1, 501)
    assert np.all(tpr_at_fpr_bound(curve, a) <= mip_tpr_bound(eta_from_curve(curve), a) + 1e-12)


def test_tpr_at_fpr_bound_gdp_closed_form() -> None:
    a = np.array([1e-3, 1e-2, 0.1])
    np.testing.assert_allclose(
        tpr_at_fpr_bound(GaussianCurve(1.0), a), stats.norm.cdf(stats.norm.ppf(a) + 1.0), rtol=1e-12
    )


# --------------------------------------------------------------------------------------------------
# Unified bounds (Kulynych et al.)
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("curve", CURVES, ids=repr)
def test_success_and_advantage_over_baseline(curve) -> None:
    b = np.linspace(0, 1, 2001)
    np.testing.assert_allclose(success_bound(curve, b), 1 - curve.f(b), atol=1e-12)
    adv = advantage_over_baseline(curve, b)
    np.testing.assert_allclose(adv, 1 - curve.f(b) - b, atol=1e-12)
    # worst case over baselines is the advantage (TV)
    assert adv.max() <= curve.advantage() + 1e-12
    assert adv.max() == pytest.approx(curve.advantage(), abs=1e-3)  # grid step 5e-4, slope <= e^eps


def test_success_bound_gdp_value() -> None:
    # mu = 1, baseline 0.1: 1 - f(0.1) = Phi(Phi^-1(0.1) + 1)
    assert float(success_bound(GaussianCurve(1.0), 0.1)) == pytest.approx(
        stats.norm.cdf(stats.norm.ppf(0.1) + 1.0), rel=1e-12
    )


def test_singling_out_bound() -> None:
    curve = GaussianCurve(0.5)
    # n = 1: the single-record bound minus baseline w
    for w in (0.001, 0.1, 0.5):
        assert float(singling_out_bound(curve, 1, w)) == pytest.approx(
            float(advantage_over_baseline(curve, w)), abs=1e-15
        )
    # closed form for GDP at n = 1000, w = 1/5000 (the setting of Kulynych et al.'s Fig. 2)
    n, w = 1000, 1 / 5000
    expected = min(1.0, n * stats.norm.cdf(stats.norm.ppf(w) + 0.5)) - n * w * (1 - w) ** (n - 1)
    assert float(singling_out_bound(curve, n, w)) == pytest.approx(expected, rel=1e-12)
    # no information (mu = 0): success <= n w (union bound), so the bound is n w - n w (1-w)^(n-1) >= 0
    assert float(singling_out_bound(GaussianCurve(0.0), n, w)) == pytest.approx(
        n * w - n * w * (1 - w) ** (n - 1), rel=1e-12
    )
    # success part is capped at 1
    assert float(singling_out_bound(GaussianCurve(8.0), n, 0.01)) <= 1.0
    with pytest.raises(MipkitValueError):
        singling_out_bound(curve, 0, 0.1)


def test_singling_out_baseline_is_isolation_probability_monte_carlo() -> None:
    """The baseline n w (1-w)^(n-1) is the chance a weight-w predicate isolates exactly one record."""
    rng = np.random.default_rng(7)
    n, w, reps = 50, 0.02, 100_000
    hits = (rng.random((reps, n)) < w).sum(axis=1) == 1
    p = hits.mean()
    base = n * w * (1 - w) ** (n - 1)
    assert abs(p - base) < 4 * math.sqrt(base * (1 - base) / reps)
    # for mu = 0 the bound's success part is n w; the isolation chance never exceeds it
    assert base <= n * w


def _gauss_bayes_error(mu: float, pi: float) -> float:
    """min over tests of P(error) for secret bit s ~ Bernoulli(pi), output N(mu s, 1): integrate
    min((1 - pi) phi(x), pi phi(x - mu)); the two weighted densities cross at x*."""
    x_star = mu / 2 + math.log((1 - pi) / pi) / mu

    def p0(x: float) -> float:
        return (1 - pi) * stats.norm.pdf(x)

    def p1(x: float) -> float:
        return pi * stats.norm.pdf(x, mu)

    return (
        integrate.quad(p1, -math.inf, x_star, epsabs=1e-14)[0]
        + integrate.quad(p0, x_star, math.inf, epsabs=1e-14)[0]
    )


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.5])
@pytest.mark.parametrize("pi", [0.02, 0.3, 0.5, 0.7, 0.98])
def test_binary_attribute_error_gdp_equals_brute_force_bayes_error(mu: float, pi: float) -> None:
    bound = float(binary_attribute_error_bound(GaussianCurve(mu), pi))
    assert bound == pytest.approx(_gauss_bayes_error(mu, pi), abs=1e-9)


@pytest.mark.parametrize("eps,delta", [(0.5, 0.0), (2.0, 0.01)])
@pytest.mark.parametrize("pi", [0.1, 0.5, 0.8])
def test_binary_attribute_error_approx_dp_equals_enumeration(eps: float, delta: float, pi: float) -> None:
    """Bayes error on the finite mechanism attaining the (eps, delta) curve, by enumeration."""
    laws = _tightness_mechanism(eps, delta)
    err = sum(min((1 - pi) * laws[1][o], pi * laws[0][o]) for o in ("0", "a", "b", "1"))
    assert float(binary_attribute_error_bound(ApproxDPCurve(eps, delta), pi)) == pytest.approx(err, abs=1e-12)


@pytest.mark.parametrize("curve", CURVES, ids=repr)
def test_binary_attribute_error_symmetric_and_bounded(curve) -> None:
    pis = np.array([0.0, 0.01, 0.2, 0.5, 0.8, 0.99, 1.0])
    err = binary_attribute_error_bound(curve, pis)
    np.testing.assert_allclose(err, err[::-1], atol=1e-12)
    # never more than guessing the likelier value, never negative
    assert np.all(err <= np.minimum(pis, 1 - pis) + 1e-15)
    assert np.all(err >= 0)


@pytest.mark.parametrize("mu", [0.5, 2.0])
@pytest.mark.parametrize("pi", [0.5, 1 / 11, 1 / 1001])
def test_certified_precision_gdp_closed_form(mu: float, pi: float) -> None:
    r = np.array([0.01, 0.1, 0.5, 0.9])
    alpha_star = stats.norm.cdf(stats.norm.ppf(r) - mu)
    expected = pi * r / (pi * r + (1 - pi) * alpha_star)
    np.testing.assert_allclose(certified_precision(GaussianCurve(mu), r, pi), expected, rtol=1e-12)
    # and it is the precision of the optimal threshold test, built by root-finding on N(mu, 1) masses
    for ri, pr in zip(r, certified_precision(GaussianCurve(mu), r, pi), strict=True):
        t = optimize.brentq(lambda s, ri=ri: stats.norm.sf(s, mu) - ri, -20, 20, xtol=1e-14)
        fpr = stats.norm.sf(t)
        assert pr == pytest.approx(float(precision_at_base_rate(ri, fpr, pi)), rel=1e-8)


def test_certified_precision_edge_cases() -> None:
    curve = ApproxDPCurve(1.0, 0.01)
    # recall below delta is reachable at FPR 0: precision can be 1
    assert float(certified_precision(curve, 0.005, 0.01)) == 1.0
    assert math.isnan(float(certified_precision(GaussianCurve(1.0), 0.0, 0.5)))
    with pytest.raises(MipkitValueError):
        certified_precision(curve, 0.5, 0.0)
    with pytest.raises(MipkitValueError):
        certified_precision(curve, 1.5, 0.5)
    with pytest.raises(MipkitValueError):
        certified_precision("not a curve", 0.5, 0.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Monotonicity: risk grows with epsilon and mu, falls with noise
# --------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(e1=EPS, e2=EPS, delta=st.floats(0.0, 0.5), fpr=PROB)
def test_risk_grows_with_epsilon(e1: float, e2: float, delta: float, fpr: float) -> None:
    lo, hi = sorted((e1, e2))
    c_lo, c_hi = ApproxDPCurve(lo, delta), ApproxDPCurve(hi, delta)
    assert eta_from_dp(lo, delta) <= eta_from_dp(hi, delta) + 1e-15
    assert c_lo.advantage() <= c_hi.advantage() + 1e-15
    assert float(tpr_at_fpr_bound(c_lo, fpr)) <= float(tpr_at_fpr_bound(c_hi, fpr)) + 1e-15
    assert float(LaplaceCurve(1 / max(lo, 1e-3)).advantage()) <= LaplaceCurve(1 / max(hi, 1e-3)).advantage()


@settings(max_examples=40, deadline=None)
@given(m1=MU, m2=MU, fpr=PROB, pi=st.floats(0.01, 0.99))
def test_risk_grows_with_mu(m1: float, m2: float, fpr: float, pi: float) -> None:
    lo, hi = GaussianCurve(min(m1, m2)), GaussianCurve(max(m1, m2))
    assert eta_from_curve(lo) <= eta_from_curve(hi) + 1e-15
    assert lo.advantage() <= hi.advantage() + 1e-15
    assert float(tpr_at_fpr_bound(lo, fpr)) <= float(tpr_at_fpr_bound(hi, fpr)) + 1e-15
    assert float(binary_attribute_error_bound(lo, pi)) >= float(binary_attribute_error_bound(hi, pi)) - 1e-12


@settings(max_examples=40, deadline=None)
@given(s1=st.floats(0.05, 50.0), s2=st.floats(0.05, 50.0), sens=st.floats(0.1, 5.0), fpr=PROB)
def test_risk_falls_with_noise(s1: float, s2: float, sens: float, fpr: float) -> None:
    small, big = min(s1, s2), max(s1, s2)
    g_small = tradeoff_curve(GaussianMechanism(small, sensitivity=sens))
    g_big = tradeoff_curve(GaussianMechanism(big, sensitivity=sens))
    l_small, l_big = LaplaceCurve(small, sensitivity=sens), LaplaceCurve(big, sensitivity=sens)
    for noisy, quiet in ((g_big, g_small), (l_big, l_small)):
        assert eta_from_curve(noisy) <= eta_from_curve(quiet) + 1e-15
        assert noisy.advantage() <= quiet.advantage() + 1e-15
        assert float(tpr_at_fpr_bound(noisy, fpr)) <= float(tpr_at_fpr_bound(quiet, fpr)) + 1e-15


# --------------------------------------------------------------------------------------------------
# risk_profile: the JSON contract of `mipkit risk --json`
# --------------------------------------------------------------------------------------------------
def test_risk_profile_contract() -> None:
    curve = GaussianCurve(1.0)  # 1-GDP for add/remove: the MIP game (replace-one) sees 2-GDP
    prof = risk_profile(curve, fprs=(0.001, 0.1), baselines=(0.01,), base_rates=(0.5, 1 / 101), delta=1e-5)
    json.dumps(prof, allow_nan=False)
    assert prof["curve"] == curve.describe()
    assert prof["neighbours"] == "add_remove" and prof["exact"] is True
    assert prof["relations"] == {"membership": "add_remove", "mip_game": "replace_one"}
    assert prof["relation_of"]["eta"] == "replace_one" and prof["relation_of"]["tpr_at_fpr"] == "add_remove"
    assert prof["mip_curve"]["mu"] == 2.0 and prof["mip_curve"]["neighbours"] == "replace_one"
    assert prof["eta"] == pytest.approx(stats.norm.cdf(1.0) - 0.5)
    assert prof["accuracy"] == pytest.approx(stats.norm.cdf(1.0))
    assert prof["mip_advantage"] == pytest.approx(2 * prof["eta"])
    assert prof["mip_game_tpr_at_fpr"]["0.1"] == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.1) + 2))
    for key in ("eta", "advantage", "accuracy"):  # exact curve: the two sides agree
        assert prof[f"{key}_lower"] == prof[key]
    assert prof["tpr_at_fpr_lower"] == prof["tpr_at_fpr"]
    assert prof["advantage"] == pytest.approx(2 * stats.norm.cdf(0.5) - 1)
    assert set(prof["tpr_at_fpr"]) == {"0.001", "0.1"}
    assert prof["tpr_at_fpr"]["0.1"] == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.1) + 1))
    assert prof["mip_tpr_at_fpr"]["0.1"] == pytest.approx(0.1 + 2 * prof["eta"])
    assert prof["success_bound"]["0.01"] == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.01) + 1))
    assert prof["advantage_over_baseline"]["0.01"] == pytest.approx(prof["success_bound"]["0.01"] - 0.01)
    assert set(prof["precision_at_base_rate"]) == {"0.5", "0.00990099"}
    r = 0.5
    a = stats.norm.cdf(stats.norm.ppf(r) - 1)
    assert prof["precision_at_base_rate"]["0.5"]["0.5"] == pytest.approx(r / (r + a))
    # epsilon at delta = 1e-5 for mu = 1 is about 4.4 (the Gaussian mechanism's well-known value)
    assert GaussianCurve(1.0).delta_for_epsilon(prof["epsilon"]) == pytest.approx(1e-5, rel=1e-6)
    assert 4.0 < prof["epsilon"] < 5.0 and prof["epsilon_lower"] == prof["epsilon"]
    assert "epsilon" not in risk_profile(curve)
    # a replace-one record: one curve for both relations
    rep = risk_profile(tradeoff_curve(GDP(1.0, neighbours="replace_one")))
    assert rep["eta"] == pytest.approx(stats.norm.cdf(0.5) - 0.5) and rep["neighbours"] == "replace_one"


def test_risk_profile_epsilon_none_when_unreachable_and_bad_inputs() -> None:
    prof = risk_profile(ApproxDPCurve(1.0, 1e-3), delta=1e-6)
    assert prof["epsilon"] is None
    json.dumps(prof, allow_nan=False)
    with pytest.raises(MipkitValueError):
        risk_profile(GaussianCurve(1.0), fprs=(0.0,))
    with pytest.raises(MipkitValueError):
        risk_profile(GaussianCurve(1.0), base_rates=(1.0,))
    with pytest.raises(MipkitValueError):
        risk_profile(GaussianCurve(1.0), delta=1.0)
