"""Risk targets: validation, serialisation, and each target's risk against the matching function of
mipkit.accounting.risk (closed-form curves exactly, PLD curves through their fast one-point path)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting import (
    GDP,
    TARGETS,
    AdvantageTarget,
    ApproxDP,
    ApproxDPCurve,
    EpsilonTarget,
    EtaTarget,
    GaussianCurve,
    LaplaceMechanism,
    PrecisionTarget,
    PureDP,
    SubsampledGaussian,
    SuccessTarget,
    TprAtFprTarget,
    certified_precision,
    eta_from_curve,
    success_bound,
    target_from_dict,
    tpr_at_fpr_bound,
    tradeoff_curve,
)

REP = {"neighbours": "replace_one"}
# replace-one curves: there the MIP game's eta is half the curve's own advantage
CLOSED = [
    tradeoff_curve(PureDP(1.0, **REP)),
    tradeoff_curve(ApproxDP(2.0, 1e-3, **REP)),
    tradeoff_curve(GDP(0.5, **REP)),
    tradeoff_curve(GDP(2.5, **REP)),
    tradeoff_curve(LaplaceMechanism(1.0, **REP)),
    tradeoff_curve(LaplaceMechanism(0.4, 2.0, **REP)),
]
TARGET_EXAMPLES = [
    EtaTarget(0.1),
    AdvantageTarget(0.2),
    TprAtFprTarget(0.01, 0.1),
    SuccessTarget(0.05, 0.3),
    PrecisionTarget(0.01, 0.2, 0.5),
    EpsilonTarget(1e-5, 1.0),
]


def reference_risk(target, curve) -> float:
    """The same risk from the functions of mipkit.accounting.risk (and the curve's own epsilon)."""
    if isinstance(target, EtaTarget):
        return eta_from_curve(curve)
    if isinstance(target, AdvantageTarget):
        return 2.0 * eta_from_curve(curve)
    if isinstance(target, TprAtFprTarget):
        return float(tpr_at_fpr_bound(curve, target.fpr))
    if isinstance(target, SuccessTarget):
        return float(success_bound(curve, target.baseline))
    if isinstance(target, PrecisionTarget):
        return float(certified_precision(curve, target.recall, target.base_rate))
    return float(curve.epsilon_for_delta(target.delta))


# ---------------------------------------------------------------------------------------------------
# Risk agrees with mipkit.accounting.risk
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", TARGET_EXAMPLES, ids=lambda t: t.name)
@pytest.mark.parametrize("curve", CLOSED, ids=repr)
def test_risk_agrees_with_risk_functions_on_closed_forms(target, curve):
    assert target.risk(curve) == pytest.approx(reference_risk(target, curve), rel=1e-15, abs=1e-300)
    assert target.risk_lower(curve) == target.risk(curve)  # exact curves: the two sides agree


def test_eta_target_reads_the_replace_one_curve_of_an_add_remove_record():
    assert EtaTarget.relation == "replace_one" and AdvantageTarget.relation is None
    # 1-GDP for add/remove is 2-GDP for the MIP game's replacement: eta = Phi(1) - 1/2
    assert EtaTarget(0.4).risk(GaussianCurve(1.0)) == pytest.approx(stats.norm.cdf(1.0) - 0.5, rel=1e-14)
    assert AdvantageTarget(0.9).risk(GaussianCurve(1.0)) == pytest.approx(2 * stats.norm.cdf(0.5) - 1)
    # (1, 0)-DP for add/remove: group privacy, adv = 1 - e^-1
    assert EtaTarget(0.4).risk(ApproxDPCurve(1.0)) == pytest.approx((1 - math.exp(-1)) / 2, rel=1e-14)


@pytest.fixture(scope="module")
def dpsgd_curve():
    rec = SubsampledGaussian(1.0, 0.05, 30, neighbours="replace_one")  # eta = adv / 2 on this curve
    return tradeoff_curve(rec, value_discretization_interval=1e-3)


@pytest.mark.parametrize("target", TARGET_EXAMPLES, ids=lambda t: t.name)
def test_risk_agrees_with_risk_functions_on_a_pld_curve(target, dpsgd_curve):
    # the fast path reads the PLD's supporting lines; the risk functions the curve's vertices
    assert target.risk(dpsgd_curve) == pytest.approx(reference_risk(target, dpsgd_curve), rel=1e-9, abs=1e-12)
    # the optimistic side is a lower bound, within a grid's width of the pessimistic one
    low = target.risk_lower(dpsgd_curve)
    assert low <= target.risk(dpsgd_curve) + 1e-12
    assert low >= target.risk(dpsgd_curve) - (0.05 if target.name == "epsilon" else 0.01)


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(0.01, 6.0), fpr=st.floats(1e-4, 0.5), base=st.floats(1e-3, 0.5), r=st.floats(0.01, 0.99))
def test_gaussian_risks_match_closed_forms(mu, fpr, base, r):
    curve = tradeoff_curve(GDP(mu, **REP))
    Phi, Phinv = stats.norm.cdf, stats.norm.ppf
    assert EtaTarget(0.4).risk(curve) == pytest.approx(Phi(mu / 2) - 0.5, rel=1e-10, abs=1e-15)
    assert AdvantageTarget(0.9).risk(curve) == pytest.approx(2 * Phi(mu / 2) - 1, rel=1e-10, abs=1e-15)
    assert TprAtFprTarget(fpr, 0.999).risk(curve) == pytest.approx(Phi(Phinv(fpr) + mu), rel=1e-10)
    assert SuccessTarget(base, 0.999).risk(curve) == pytest.approx(Phi(Phinv(base) + mu), rel=1e-10)
    pi = 0.01
    alpha = Phi(Phinv(r) - mu)
    expected = pi * r / (pi * r + (1 - pi) * alpha)
    assert PrecisionTarget(pi, r, 0.999).risk(curve) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("target", TARGET_EXAMPLES, ids=lambda t: t.name)
def test_gdp_mu_is_where_the_gaussian_risk_meets_the_target(target):
    mu = target.gdp_mu()  # for a mu-GDP curve of the target's relation (replace-one for eta)
    assert mu > 0 and math.isfinite(mu)
    assert target.risk(tradeoff_curve(GDP(mu, **REP))) == pytest.approx(target.value, rel=1e-9)
    assert target.risk(tradeoff_curve(GDP(mu * 1.01, **REP))) > target.value  # risk grows with mu


def test_epsilon_target_gdp_mu_edges():
    assert EpsilonTarget(0.0, 1.0).gdp_mu() == 0.0  # delta = 0: no mu > 0 is (eps, 0)-DP
    assert EpsilonTarget(1e-5, 1e9).gdp_mu() == math.inf  # delta(1e9) of 1e4-GDP is below 1e-5


# ---------------------------------------------------------------------------------------------------
# Validation and serialisation
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: EtaTarget(0.5), "eta"),
        (lambda: EtaTarget(0.0), "eta"),
        (lambda: AdvantageTarget(1.0), "advantage"),
        (lambda: AdvantageTarget(-0.1), "advantage"),
        (lambda: TprAtFprTarget(0.0, 0.5), "fpr"),
        (lambda: TprAtFprTarget(0.01, 1.0), "tpr"),
        (lambda: TprAtFprTarget(0.01, 0.01), "unreachable"),
        (lambda: SuccessTarget(1.0, 0.5), "baseline"),
        (lambda: SuccessTarget(0.3, 0.2), "unreachable"),
        (lambda: PrecisionTarget(0.0, 0.5, 0.5), "base_rate"),
        (lambda: PrecisionTarget(0.1, 1.0, 0.5), "recall"),
        (lambda: PrecisionTarget(0.1, 0.5, 0.1), "unreachable"),
        (lambda: EpsilonTarget(1.0, 1.0), "delta"),
        (lambda: EpsilonTarget(1e-5, -1.0), "epsilon"),
        (lambda: EpsilonTarget(1e-5, math.inf), "epsilon"),
        (lambda: EtaTarget("abc"), "eta"),
    ],
)
def test_targets_validate_bad_input(build, match):
    with pytest.raises(MipkitValueError, match=match):
        build()


def test_message_form():
    with pytest.raises(MipkitValueError) as info:
        TprAtFprTarget(1.5, 0.5)
    assert str(info.value) == "The 'fpr' parameter of TprAtFprTarget must be in (0, 1). Got 1.5 instead."


@pytest.mark.parametrize("target", TARGET_EXAMPLES, ids=lambda t: t.name)
def test_to_dict_round_trip_and_frozen(target):
    d = target.to_dict()
    assert d["name"] == target.name and d["value"] == target.value
    assert target_from_dict(d) == target
    assert TARGETS[target.name] is type(target)
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.value = 0.3  # type: ignore[misc]


def test_parameters_and_dict():
    t = PrecisionTarget(base_rate=0.01, recall=0.2, value=0.5)
    assert PrecisionTarget.parameter_names() == ("base_rate", "recall")
    assert t.params() == {"base_rate": 0.01, "recall": 0.2}
    assert t.to_dict() == {"name": "precision", "base_rate": 0.01, "recall": 0.2, "value": 0.5}
    assert list(TARGETS) == ["eta", "advantage", "tpr-at-fpr", "success", "precision", "epsilon"]


@pytest.mark.parametrize(
    ("d", "match"),
    [
        ({"value": 0.1}, "name"),
        ({"name": "accuracy", "value": 0.1}, "must be one of"),
        ({"name": "tpr-at-fpr", "value": 0.1}, "needs the 'fpr'"),
        ({"name": "tpr-at-fpr", "fpr": None, "value": 0.1}, "needs the 'fpr'"),
        ({"name": "advantage"}, "needs the 'value'"),
        ({"name": "advantage", "value": 0.1, "fpr": 0.01}, "unknown keys"),
    ],
)
def test_target_from_dict_errors(d, match):
    with pytest.raises(MipkitValueError, match=match):
        target_from_dict(d)


def test_risk_never_grows_with_noise():
    sigmas = np.geomspace(0.2, 20.0, 25)
    for target in TARGET_EXAMPLES:
        risks = [target.risk(GaussianCurve(1.0 / s)) for s in sigmas]
        assert np.all(np.diff(risks) <= 1e-12), target.name
