"""Mechanism records: validation, the to_dict / mechanism_from_dict round trip, and tradeoff_curve."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting import (
    GDP,
    MECHANISM_NAMES,
    RDP,
    ZCDP,
    ApproxDP,
    ApproxDPCurve,
    Composed,
    GaussianCurve,
    GaussianMechanism,
    HeterogeneousSubsampledGaussian,
    LaplaceCurve,
    LaplaceMechanism,
    PLDCurve,
    PureDP,
    SubsampledGaussian,
    mechanism_from_dict,
    tradeoff_curve,
)

ALPHAS = np.unique(np.concatenate([np.logspace(-8, 0, 81), np.linspace(0.0, 1.0, 101)]))


# ---------------------------------------------------------------------------------------------------
# Validation at construction
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: PureDP(-0.1), "epsilon"),
        (lambda: PureDP(math.inf), "epsilon"),
        (lambda: PureDP(math.nan), "epsilon"),
        (lambda: PureDP("abc"), "epsilon"),
        (lambda: ApproxDP(-1.0, 0.0), "epsilon"),
        (lambda: ApproxDP(1.0, 1.0), "delta"),
        (lambda: ApproxDP(1.0, -1e-9), "delta"),
        (lambda: GaussianMechanism(0.0), "sigma"),
        (lambda: GaussianMechanism(-1.0), "sigma"),
        (lambda: GaussianMechanism(1.0, sensitivity=0.0), "sensitivity"),
        (lambda: LaplaceMechanism(0.0), "scale"),
        (lambda: LaplaceMechanism(1.0, sensitivity=-2.0), "sensitivity"),
        (lambda: GDP(-0.5), "mu"),
        (lambda: GDP(math.inf), "mu"),
        (lambda: SubsampledGaussian(0.0, 0.1, 10), "noise_multiplier"),
        (lambda: SubsampledGaussian(1.0, 0.0, 10), "sample_rate"),
        (lambda: SubsampledGaussian(1.0, 1.5, 10), "sample_rate"),
        (lambda: SubsampledGaussian(1.0, 0.1, 0), "steps"),
        (lambda: SubsampledGaussian(1.0, 0.1, 2.5), "steps"),
        (lambda: SubsampledGaussian(1.0, 0.1, True), "steps"),
        (lambda: Composed(()), "at least one"),
        (lambda: Composed((GDP(1.0), "gaussian")), "mechanism records"),
        (lambda: Composed(GDP(1.0)), "sequence"),
        (lambda: Composed("gdp"), "sequence"),
    ],
)
def test_records_validate_bad_input(build, match):
    with pytest.raises(MipkitValueError, match=match):
        build()


def test_messages_follow_scikit_learn_form():
    with pytest.raises(MipkitValueError) as info:
        SubsampledGaussian(1.0, 1.5, 10)
    assert str(info.value) == (
        "The 'sample_rate' parameter of SubsampledGaussian must be in (0, 1]. Got 1.5 instead."
    )


def test_records_are_frozen_hashable_and_normalised():
    m = SubsampledGaussian(1, 0.5, 10.0)
    assert m.noise_multiplier == 1.0 and isinstance(m.noise_multiplier, float)
    assert m.steps == 10 and isinstance(m.steps, int)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.steps = 3  # type: ignore[misc]
    c = Composed([GDP(1.0), PureDP(0.5)])
    assert c.mechanisms == (GDP(1.0), PureDP(0.5))  # a list is stored as a tuple
    assert len({c, Composed((GDP(1.0), PureDP(0.5)))}) == 1


# ---------------------------------------------------------------------------------------------------
# Serialisation: one name per type, and a round trip
# ---------------------------------------------------------------------------------------------------
def test_one_name_per_record_type():
    assert MECHANISM_NAMES == (
        "pure_dp",
        "approx_dp",
        "gaussian",
        "laplace",
        "gdp",
        "subsampled_gaussian",
        "heterogeneous_subsampled_gaussian",
        "rdp",
        "zcdp",
        "composed",
    )
    ar = {"neighbours": "add_remove"}  # every record states its neighbouring relation (default add/remove)
    assert PureDP(1.0).to_dict() == {"name": "pure_dp", "epsilon": 1.0} | ar
    assert ApproxDP(1.0, 1e-5).to_dict() == {"name": "approx_dp", "epsilon": 1.0, "delta": 1e-5} | ar
    assert GaussianMechanism(2.0).to_dict() == {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0} | ar
    assert LaplaceMechanism(2.0, 3.0).to_dict() == {"name": "laplace", "scale": 2.0, "sensitivity": 3.0} | ar
    assert GDP(0.5, neighbours="replace_one").to_dict() == {
        "name": "gdp",
        "mu": 0.5,
        "neighbours": "replace_one",
    }
    assert Composed((GDP(0.5), PureDP(1.0))).to_dict() == {
        "name": "composed",
        "mechanisms": [{"name": "gdp", "mu": 0.5} | ar, {"name": "pure_dp", "epsilon": 1.0} | ar],
    }
    assert RDP([2, 8], [0.1, 0.5]).to_dict() == {
        "name": "rdp", "orders": [2.0, 8.0], "rdp_values": [0.1, 0.5], "neighbours": "add_remove"
    }  # fmt: skip
    assert ZCDP(0.25).to_dict() == {"name": "zcdp", "rho": 0.25} | ar
    het = HeterogeneousSubsampledGaussian(groups=[(2.0, 0.1, 3)])
    assert het.to_dict() == {"name": "heterogeneous_subsampled_gaussian", "groups": [[2.0, 0.1, 3]]} | ar


def test_records_written_before_the_relation_field_read_as_add_remove():
    assert mechanism_from_dict({"name": "gdp", "mu": 0.5}) == GDP(0.5, neighbours="add_remove")
    old = {"name": "subsampled_gaussian", "noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 10}
    assert mechanism_from_dict(old).neighbours == "add_remove"
    with pytest.raises(MipkitValueError, match="neighbours"):
        GDP(1.0, neighbours="swap")
    with pytest.raises(MipkitValueError, match="orders"):
        RDP([1.0], [0.1])
    with pytest.raises(MipkitValueError, match="equal length"):
        RDP([2.0, 3.0], [0.1])
    with pytest.raises(MipkitValueError, match="rho"):
        ZCDP(-1.0)


POSITIVE = st.floats(1e-3, 1e3, allow_nan=False)
PROB = st.floats(0.0, 0.999, allow_nan=False)
LEAVES = st.one_of(
    st.builds(PureDP, st.floats(0.0, 50.0)),
    st.builds(ApproxDP, st.floats(0.0, 50.0), PROB),
    st.builds(GaussianMechanism, POSITIVE, POSITIVE),
    st.builds(LaplaceMechanism, POSITIVE, POSITIVE),
    st.builds(GDP, st.floats(0.0, 20.0)),
    st.builds(SubsampledGaussian, POSITIVE, st.floats(1e-4, 1.0), st.integers(1, 10_000)),
)
RECORDS = st.recursive(
    LEAVES, lambda inner: st.builds(Composed, st.lists(inner, min_size=1, max_size=3)), max_leaves=6
)


@settings(max_examples=200, deadline=None)
@given(RECORDS)
def test_round_trip_through_dict_and_json(record):
    d = record.to_dict()
    assert d["name"] == record.name
    assert mechanism_from_dict(d) == record
    assert mechanism_from_dict(json.loads(json.dumps(d, allow_nan=False))) == record


@pytest.mark.parametrize(
    ("d", "match"),
    [
        ({"epsilon": 1.0}, "name"),
        ("gdp", "name"),
        ({"name": "approximate_dp", "epsilon": 1.0, "delta": 0.0}, "must be one of"),
        ({"name": "gdp"}, "needs the 'mu' parameter"),
        ({"name": "subsampled_gaussian", "noise_multiplier": 1.0, "sample_rate": 0.1}, "needs the 'steps'"),
        ({"name": "gdp", "mu": 1.0, "sigma": 2.0}, "unknown keys"),
        ({"name": "gdp", "mu": -1.0}, "mu"),
        ({"name": "composed", "mechanisms": "gdp"}, "list of dicts"),
        ({"name": "composed", "mechanisms": []}, "at least one"),
    ],
)
def test_mechanism_from_dict_errors(d, match):
    with pytest.raises(MipkitValueError, match=match):
        mechanism_from_dict(d)


# ---------------------------------------------------------------------------------------------------
# tradeoff_curve: closed forms where they exist, PLDs otherwise; the curve carries the record
# ---------------------------------------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(sigma=st.floats(0.05, 50.0), sens=st.floats(0.05, 20.0))
def test_gaussian_mechanism_is_gdp_with_mu_l_over_sigma(sigma, sens):
    curve = tradeoff_curve(GaussianMechanism(sigma, sens))
    assert isinstance(curve, GaussianCurve)
    assert curve == tradeoff_curve(GDP(sens / sigma)) == GaussianCurve(sens / sigma)
    assert curve.mechanism == GaussianMechanism(sigma, sens)
    # independent: the Gaussian mechanism's curve is Phi(Phi^-1(1 - a) - L / sigma)
    np.testing.assert_allclose(
        curve.f(ALPHAS), stats.norm.cdf(stats.norm.isf(ALPHAS) - sens / sigma), atol=1e-15
    )


@settings(max_examples=50, deadline=None)
@given(eps=st.floats(0.0, 30.0))
def test_approx_dp_with_zero_delta_is_pure_dp(eps):
    a, p = tradeoff_curve(ApproxDP(eps, 0.0)), tradeoff_curve(PureDP(eps))
    assert a == p == ApproxDPCurve(eps)
    np.testing.assert_array_equal(a.f(ALPHAS), p.f(ALPHAS))
    assert (a.mechanism, p.mechanism) == (ApproxDP(eps, 0.0), PureDP(eps))


def test_laplace_and_approx_dp_records():
    curve = tradeoff_curve(LaplaceMechanism(2.0, sensitivity=3.0))
    assert curve == LaplaceCurve(2.0, 3.0) and curve.epsilon == 1.5
    # independent: the Laplace advantage is TV(Lap(0, b), Lap(L, b)) = 1 - exp(-L / (2b))
    assert curve.advantage() == pytest.approx(1 - math.exp(-0.75), rel=1e-14)
    dp = tradeoff_curve(ApproxDP(1.0, 1e-3))
    assert dp == ApproxDPCurve(1.0, 1e-3)
    assert dp.advantage() == pytest.approx(1e-3 + (1 - 1e-3) * math.tanh(0.5), rel=1e-14)


def test_default_records_of_closed_form_curves():
    assert ApproxDPCurve(1.0).mechanism == PureDP(1.0)
    assert ApproxDPCurve(1.0, 1e-5).mechanism == ApproxDP(1.0, 1e-5)
    assert GaussianCurve(0.5).mechanism == GDP(0.5)
    assert LaplaceCurve(2.0, 3.0).mechanism == LaplaceMechanism(2.0, 3.0)
    described = tradeoff_curve(GaussianMechanism(2.0, 1.5)).describe()
    assert described == {
        "curve": "GaussianCurve",
        "neighbours": "add_remove",
        "mechanism": {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.5, "neighbours": "add_remove"},
        "mu": 0.75,
    }


def test_subsampled_and_composed_records_give_pld_curves():
    curve = tradeoff_curve(SubsampledGaussian(2.0, 1.0, 4), value_discretization_interval=1e-4)
    assert isinstance(curve, PLDCurve) and curve.mechanism == SubsampledGaussian(2.0, 1.0, 4)
    # full batch, T steps: sqrt(T) / sigma-GDP (Dong, Roth & Su 2022, Cor. 3.3); the PLD is pessimistic
    exact = stats.norm.cdf(stats.norm.isf(ALPHAS) - 1.0)
    assert np.all(curve.f(ALPHAS) <= exact + 1e-9) and np.max(exact - curve.f(ALPHAS)) < 1e-4
    composed = tradeoff_curve(
        Composed((GDP(0.6), GaussianMechanism(1.25))), value_discretization_interval=1e-4
    )
    exact = stats.norm.cdf(stats.norm.isf(ALPHAS) - 1.0)  # sqrt(0.6^2 + 0.8^2) = 1
    assert np.all(composed.f(ALPHAS) <= exact + 1e-9) and np.max(exact - composed.f(ALPHAS)) < 1e-4


def test_tradeoff_curve_refuses_what_is_not_a_record():
    with pytest.raises(MipkitValueError, match="mechanism record"):
        tradeoff_curve({"name": "gdp", "mu": 1.0})
    with pytest.raises(MipkitValueError, match="mechanism record"):
        tradeoff_curve(GaussianCurve(1.0))


def test_documented_one_liner_and_light_import():
    code = (
        "import sys; import mipkit.accounting; assert 'dp_accounting' not in sys.modules; "
        "assert 'scipy' not in sys.modules; "
        "from mipkit.accounting import tradeoff_curve, SubsampledGaussian; "
        "c = tradeoff_curve(SubsampledGaussian(noise_multiplier=1.0, sample_rate=0.01, steps=1000)); "
        "print(round(c.advantage(), 4))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0.161"  # 0.16102, two-sided to 1e-4 (0.1611 on the old fixed 1e-3 grid)


def test_lazy_names_of_the_package_match_the_modules():
    import importlib

    import mipkit.accounting as acc

    for module, names in acc._MODULES.items():
        assert set(names.split()) == set(importlib.import_module(f"mipkit.accounting.{module}").__all__), (
            module
        )
    for name in acc.__all__:
        assert getattr(acc, name) is not None


def test_plot_title_names_the_record():
    import matplotlib

    matplotlib.use("Agg")
    from mipkit.accounting import plot_tradeoff

    fig = plot_tradeoff(tradeoff_curve(GaussianMechanism(2.0, sensitivity=1.5)))
    assert fig.get_suptitle() == (
        "Certified risk of the Gaussian mechanism with noise standard deviation 2 and sensitivity 1.5 "
        "(add_remove neighbours)"
    )
