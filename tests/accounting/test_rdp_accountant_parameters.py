"""f-DP from RDP and zCDP guarantees, the DP-SGD accountant (stepping, JSON state), calibration of any
parameter of any record, and the heterogeneous DP-SGD record as a first-class record."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting import (
    GDP,
    RDP,
    ZCDP,
    AdvantageTarget,
    Composed,
    DPSGDAccountant,
    EpsilonTarget,
    EtaTarget,
    HeterogeneousSubsampledGaussian,
    PureDP,
    SubsampledGaussian,
    calibrate_noise,
    eta_from_curve,
    mechanism_from_dict,
    parameter_family,
    tradeoff_curve,
)

ORDERS = [1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0, 128.0]


def _dpsgd_rdp(z: float, q: float, steps: int) -> RDP:
    acc = rdp_lib.RdpAccountant(ORDERS)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps)
    return RDP(ORDERS, [float(v) for v in acc._rdp])  # private: the RDP values Opacus / TF Privacy report


# ---------------------------------------------------------------------------------------------------
# RDP and zCDP
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("z", "q", "steps"), [(1.0, 0.01, 1000), (2.0, 0.1, 100)])
def test_rdp_epsilon_is_dp_accountings_conversion_and_never_below_the_pld(z, q, steps):
    rec = _dpsgd_rdp(z, q, steps)
    acc = rdp_lib.RdpAccountant(ORDERS)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps)
    curve = tradeoff_curve(rec)
    assert curve.epsilon_for_delta(1e-5) == pytest.approx(acc.get_epsilon(1e-5), rel=1e-6)
    # RDP is a looser guarantee than the PLD of the same run: every risk at least the PLD's lower side
    pld = tradeoff_curve(SubsampledGaussian(z, q, steps)).lower_curve()
    assert curve.advantage() >= pld.advantage()
    for a in (1e-3, 1e-2, 1e-1):
        assert float(curve.tpr(a)) >= float(pld.tpr(a)) - 1e-12
    assert curve.epsilon_for_delta(1e-5) >= pld.epsilon_for_delta(1e-5)


def test_rdp_curve_is_a_trade_off_curve():
    curve = tradeoff_curve(_dpsgd_rdp(1.0, 0.01, 1000))
    a = np.linspace(0.0, 1.0, 2001)
    f = np.asarray(curve.f(a))
    assert np.all(np.diff(f) <= 1e-12) and np.all(f <= 1 - a + 1e-12) and np.all(f >= 0)
    assert np.all(np.diff(f, 2) >= -1e-9)  # convex
    # the reported delta(eps) is the smaller of the conversion's and the curve's own profile
    fine = np.unique(np.concatenate([np.logspace(-12, 0, 4001), a]))
    tpr = np.asarray(curve.tpr(fine))
    for eps in (0.0, 0.5, 1.0, 2.0):
        own = float(np.max(tpr - math.exp(eps) * fine))
        reported = curve.delta_for_epsilon(eps)
        assert reported <= curve.conversion_delta(eps) + 1e-15
        assert reported >= min(own, curve.conversion_delta(eps)) - 1e-12  # a grid maximum is below the sup


def test_zcdp_is_weaker_than_the_gdp_that_implies_it():
    """mu-GDP implies (mu^2/2)-zCDP (Bun & Steinke 2016 / Dong, Roth & Su 2022): the zCDP curve allows at
    least the risks of the GDP curve."""
    mu = 0.8
    z = tradeoff_curve(ZCDP(mu**2 / 2))
    g = tradeoff_curve(GDP(mu))
    for a in (1e-4, 1e-2, 0.2):
        assert float(z.tpr(a)) >= float(g.tpr(a)) - 1e-12
    assert z.epsilon_for_delta(1e-6) >= g.epsilon_for_delta(1e-6)
    # composition of zCDP adds rho; the replace-one curve is its group-privacy curve
    both = tradeoff_curve(Composed([ZCDP(0.1), ZCDP(0.2)]))
    assert both.epsilon_for_delta(1e-5) == pytest.approx(tradeoff_curve(ZCDP(0.3)).epsilon_for_delta(1e-5))
    assert eta_from_curve(tradeoff_curve(ZCDP(0.1))) > tradeoff_curve(ZCDP(0.1)).advantage() / 2


# ---------------------------------------------------------------------------------------------------
# The accountant
# ---------------------------------------------------------------------------------------------------
def test_accountant_steps_groups_and_matches_the_record(tmp_path):
    acc = DPSGDAccountant()
    for _ in range(3):
        acc.step(1.0, 0.01, steps=100)
    assert acc.steps == 300 and acc.record().groups == ((1.0, 0.01, 300),)
    direct = tradeoff_curve(SubsampledGaussian(1.0, 0.01, 300))
    assert acc.curve().advantage() == pytest.approx(direct.advantage(), abs=1e-12)
    up, low = acc.epsilon(1e-5)
    assert low <= up and up == pytest.approx(direct.epsilon_for_delta(1e-5), rel=1e-9)
    eta_up, eta_low = acc.eta()
    assert eta_low <= eta_up and eta_up == pytest.approx(eta_from_curve(direct), abs=1e-9)
    acc.step(2.0, 0.02, steps=50)
    assert acc.record().groups == ((1.0, 0.01, 300), (2.0, 0.02, 50))
    assert acc.curve().advantage() > direct.advantage()  # more steps, more risk
    path = acc.save(tmp_path / "acc.json")
    again = DPSGDAccountant.load(path)
    assert again == acc and json.loads(path.read_text())["groups"] == [[1.0, 0.01, 300], [2.0, 0.02, 50]]
    prof = again.risk_profile(delta=1e-5)
    assert prof["relation_of"]["eta"] == "replace_one" and prof["eta"] == pytest.approx(again.eta()[0])


def test_accountant_validation():
    acc = DPSGDAccountant()
    with pytest.raises(MipkitValueError, match="No step"):
        acc.record()
    with pytest.raises(MipkitValueError, match="noise_multiplier"):
        acc.step(0.0, 0.1)
    with pytest.raises(MipkitValueError, match="sample_rate"):
        acc.step(1.0, 1.5)
    with pytest.raises(MipkitValueError, match="format"):
        DPSGDAccountant.from_dict({"groups": []})
    with pytest.raises(MipkitValueError, match="JSON"):
        DPSGDAccountant.from_json("{not json")


# ---------------------------------------------------------------------------------------------------
# Calibration of any parameter of any record
# ---------------------------------------------------------------------------------------------------
def test_largest_epsilon_for_an_eta_target():
    # replace-one (eps, 0)-DP: eta = 1/(1 + e^-eps) - 1/2 <= 0.1  <=>  eps <= log(1.2 / 0.8)
    res = calibrate_noise(parameter_family(PureDP(1.0, neighbours="replace_one"), "epsilon"), EtaTarget(0.1))
    assert res.noise == pytest.approx(math.log(1.2 / 0.8), rel=1e-9) and res.noise <= math.log(1.5)
    # add/remove: eta = (1 - e^-eps) / 2 <= 0.1  <=>  eps <= -log(0.8)
    res = calibrate_noise(parameter_family(PureDP(1.0), "epsilon"), EtaTarget(0.1))
    assert res.noise == pytest.approx(-math.log(0.8), rel=1e-9)
    import mpmath

    mpmath.mp.dps = 40
    assert mpmath.mpf(res.noise) <= -mpmath.log(mpmath.mpf("0.8"))  # safe side, exactly
    mpmath.mp.dps = 15


def test_largest_mu_and_sample_rate():
    res = calibrate_noise(parameter_family(GDP(1.0), "mu"), AdvantageTarget(0.2))
    assert res.noise == pytest.approx(2 * stats.norm.ppf(0.6), rel=1e-9)
    rate = calibrate_noise(
        parameter_family(SubsampledGaussian(1.0, 0.1, 100), "sample_rate"), AdvantageTarget(0.1)
    )
    curve = tradeoff_curve(SubsampledGaussian(1.0, rate.noise, 100))
    assert curve.advantage() <= 0.1 and rate.minimal
    over = tradeoff_curve(SubsampledGaussian(1.0, rate.noise * 1.006, 100)).lower_curve()
    assert over.advantage() > 0.1  # a 0.5% larger rate is unsafe


def test_largest_number_of_steps():
    fam = parameter_family(SubsampledGaussian(1.0, 0.05, 10), "steps", high=10_000)
    res = calibrate_noise(fam, EpsilonTarget(1e-5, 2.0))
    steps = int(res.noise)
    assert res.minimal and res.mechanism.steps == steps
    assert tradeoff_curve(SubsampledGaussian(1.0, 0.05, steps)).epsilon_for_delta(1e-5) <= 2.0
    assert (
        tradeoff_curve(SubsampledGaussian(1.0, 0.05, steps + 1)).lower_curve().epsilon_for_delta(1e-5) > 2.0
    )


def test_parameter_family_validation():
    with pytest.raises(MipkitValueError, match="numeric field"):
        parameter_family(PureDP(1.0), "neighbours")
    with pytest.raises(MipkitValueError, match="mechanism record"):
        parameter_family("pure_dp", "epsilon")


# ---------------------------------------------------------------------------------------------------
# The heterogeneous record is registered like the others
# ---------------------------------------------------------------------------------------------------
def test_heterogeneous_record_round_trip_and_curve():
    rec = HeterogeneousSubsampledGaussian(groups=[(2.0, 0.1, 30), (1.5, 0.1, 20)], neighbours="replace_one")
    assert mechanism_from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert HeterogeneousSubsampledGaussian.from_dict(rec.to_dict()) == rec
    one = tradeoff_curve(
        HeterogeneousSubsampledGaussian(groups=[(1.2, 0.05, 40)]), value_discretization_interval=1e-3
    )
    same = tradeoff_curve(SubsampledGaussian(1.2, 0.05, 40), value_discretization_interval=1e-3)
    assert one.advantage() == pytest.approx(same.advantage(), abs=1e-12)
    assert one.epsilon_for_delta(1e-5) == pytest.approx(same.epsilon_for_delta(1e-5), rel=1e-12)
    two = tradeoff_curve(rec)
    assert two.neighbours == "replace_one" and two.width <= 1e-4
    assert eta_from_curve(two) == pytest.approx(two.advantage() / 2)
    with pytest.raises(MipkitValueError, match="groups"):
        HeterogeneousSubsampledGaussian(groups=[])
