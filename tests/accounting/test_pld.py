"""PLD trade-off curves: oracles (Gaussian closed form, exact Neyman-Pearson curve of the subsampled
Gaussian by numerical integration), the trade-off-curve contract, monotonicity properties, composition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from mipkit import MipkitValueError
from mipkit.accounting import (
    GDP,
    ApproxDP,
    Composed,
    GaussianMechanism,
    LaplaceMechanism,
    PureDP,
    SubsampledGaussian,
    tradeoff_curve,
)
from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.pld import PLDCurve, pld_curve, privacy_loss_distribution

ALPHAS = np.unique(np.concatenate([np.logspace(-6, 0, 121), np.linspace(0.0, 1.0, 201)]))


def gdp_f(alpha: np.ndarray, mu: float) -> np.ndarray:
    return stats.norm.cdf(stats.norm.isf(alpha) - mu)


def dpsgd_curve(
    z: float, q: float, steps: int, value_discretization_interval: float | None = None
) -> PLDCurve:
    """DP-SGD's curve through the one public door, ``tradeoff_curve(SubsampledGaussian(...))``."""
    curve = tradeoff_curve(
        SubsampledGaussian(z, q, steps), value_discretization_interval=value_discretization_interval
    )
    assert isinstance(curve, PLDCurve)
    return curve


# ---------------------------------------------------------------------------------------------------
# Oracle 1: the Gaussian mechanism (T = 1, q = 1) and its compositions have closed forms
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 4.0])
def test_single_gaussian_matches_closed_form(sigma):
    curve = dpsgd_curve(sigma, 1.0, 1, value_discretization_interval=1e-4)
    exact = gdp_f(ALPHAS, 1.0 / sigma)
    got = curve.f(ALPHAS)
    assert np.max(np.abs(got - exact)) < 1e-4
    assert np.all(got <= exact + 1e-12)  # pessimistic: never less risk than the truth
    assert curve.advantage() == pytest.approx(2 * stats.norm.cdf(0.5 / sigma) - 1, abs=1e-6)
    assert curve.advantage() >= 2 * stats.norm.cdf(0.5 / sigma) - 1 - 1e-12


def test_gaussian_pld_curve_matches_closed_form_with_sensitivity():
    curve = pld_curve(GaussianMechanism(3.0, sensitivity=1.5), value_discretization_interval=1e-4)
    np.testing.assert_allclose(curve.f(ALPHAS), gdp_f(ALPHAS, 0.5), atol=1e-4)


def test_full_batch_composition_is_gdp():
    # T full-batch Gaussian steps with noise sigma are sqrt(T)/sigma-GDP (Dong, Roth & Su, Cor. 3.3)
    curve = dpsgd_curve(2.0, 1.0, 9, value_discretization_interval=1e-4)
    exact = gdp_f(ALPHAS, 3.0 / 2.0)
    assert np.max(np.abs(curve.f(ALPHAS) - exact)) < 1e-4
    assert np.all(curve.f(ALPHAS) <= exact + 1e-9)


def test_delta_and_epsilon_agree_with_gdp():
    curve = pld_curve(GaussianMechanism(1.0), value_discretization_interval=1e-4)
    ref = GaussianCurve(1.0)
    for eps in (0.0, 0.5, 1.0, 3.0):
        d = curve.delta_for_epsilon(eps)
        assert d == pytest.approx(ref.delta_for_epsilon(eps), abs=1e-4)
        assert d >= ref.delta_for_epsilon(eps) - 1e-12
    e = curve.epsilon_for_delta(1e-5)
    assert e == pytest.approx(ref.epsilon_for_delta(1e-5), abs=1e-3)
    assert e >= ref.epsilon_for_delta(1e-5) - 1e-9


# ---------------------------------------------------------------------------------------------------
# Oracle 2: the subsampled Gaussian at T = 1, exact Neyman-Pearson curve by numerical integration
# ---------------------------------------------------------------------------------------------------
def _lower_hull(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pts = sorted(zip(x.tolist(), y.tolist(), strict=True))
    hull: list[tuple[float, float]] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    hx, hy = np.array(hull).T
    return hx, hy


def _exact_subsampled_curve(s: float, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """P = N(0, s^2) ("out"), Q = (1-q) N(0, s^2) + q N(1, s^2) ("in").

    The likelihood ratio dQ/dP = (1-q) + q exp((x - 1/2)/s^2) increases in x, so the most powerful tests
    of P against Q reject for x > t (Neyman-Pearson): alpha(t) = P(X > t), beta(t) = Q(X <= t). These
    integrals are computed by quadrature of the densities at a few thresholds and, densely, by the normal
    CDF (the two are checked against each other). The other order (Q against P) swaps the roles.
    Returns (T(P,Q) as alpha, beta) and the symmetrised envelope conv(min(T(P,Q), T(Q,P))).
    """
    c = 1.0 / (s * math.sqrt(2 * math.pi))

    def p_pdf(x: float) -> float:
        return c * math.exp(-0.5 * (x / s) ** 2)

    def q_pdf(x: float) -> float:
        return (1 - q) * p_pdf(x) + q * c * math.exp(-0.5 * ((x - 1.0) / s) ** 2)

    ts = np.linspace(-12 * s, 1 + 12 * s, 40001)
    alpha = stats.norm.sf(ts / s)
    beta = (1 - q) * stats.norm.cdf(ts / s) + q * stats.norm.cdf((ts - 1.0) / s)
    for t in np.linspace(-3 * s, 1 + 3 * s, 25):
        a_quad = integrate.quad(p_pdf, t, np.inf, epsabs=1e-14)[0]
        b_quad = integrate.quad(q_pdf, -np.inf, t, epsabs=1e-14)[0]
        assert a_quad == pytest.approx(stats.norm.sf(t / s), abs=1e-10)
        assert b_quad == pytest.approx(
            (1 - q) * stats.norm.cdf(t / s) + q * stats.norm.cdf((t - 1) / s), abs=1e-10
        )
    alpha = np.concatenate([[1.0], alpha, [0.0]])
    beta = np.concatenate([[0.0], beta, [1.0]])
    x = np.concatenate([alpha, beta])
    y = np.concatenate([beta, alpha])
    hx, hy = _lower_hull(x, y)
    return alpha, beta, hx, hy


@pytest.mark.parametrize(("s", "q"), [(1.0, 0.3), (0.7, 0.1)])
def test_subsampled_gaussian_matches_numerical_integration(s, q):
    alpha, beta, hx, hy = _exact_subsampled_curve(s, q)
    curve = dpsgd_curve(s, q, 1, value_discretization_interval=1e-4)
    exact = np.interp(ALPHAS, hx, hy)
    got = curve.f(ALPHAS)
    assert np.all(got <= exact + 1e-9)  # pessimistic
    assert np.max(exact - got) < 2e-4  # and tight
    # At low FPR the envelope is the one-directional membership test "out" vs "in", T(P, Q).
    small = ALPHAS[(ALPHAS > 0) & (ALPHAS < 0.05)]
    order = np.argsort(alpha)
    one_way = np.interp(small, alpha[order], beta[order])
    np.testing.assert_allclose(curve.f(small), one_way, atol=2e-4)


# ---------------------------------------------------------------------------------------------------
# The trade-off-curve contract and internal consistency
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dpsgd_small() -> PLDCurve:
    return dpsgd_curve(1.0, 0.05, 50, value_discretization_interval=1e-3)


def test_contract(dpsgd_small):
    a = np.linspace(0.0, 1.0, 4001)
    f = dpsgd_small.f(a)
    assert np.all(np.diff(f) <= 1e-15)  # non-increasing
    assert np.all(np.diff(f, 2) >= -1e-12)  # convex
    assert np.all(f >= 0.0) and np.all(f <= 1.0 - a + 1e-15)
    assert dpsgd_small.f(1.0) == 0.0
    # symmetric: f(f(alpha)) = alpha wherever f is strictly decreasing
    inner = a[(f > 1e-6) & (a > 1e-6)]
    np.testing.assert_allclose(dpsgd_small.f(dpsgd_small.f(inner)), inner, atol=1e-9)
    np.testing.assert_allclose(dpsgd_small.tpr(a), 1.0 - f, atol=1e-12)


def test_advantage_is_delta_at_zero_and_max_gap(dpsgd_small):
    a = np.linspace(0.0, 1.0, 200001)
    gap = np.max(1.0 - a - dpsgd_small.f(a))
    assert dpsgd_small.advantage() == pytest.approx(float(dpsgd_small.pld.get_delta_for_epsilon(0.0)), abs=0)
    assert gap <= dpsgd_small.advantage() + 1e-12
    assert gap == pytest.approx(dpsgd_small.advantage(), abs=1e-6)


def test_fast_point_queries_agree_with_vertices(dpsgd_small):
    for alpha in (1e-5, 1e-3, 0.01, 0.1, 0.3, 0.7):
        assert dpsgd_small.tpr_at_fpr(alpha) == pytest.approx(float(dpsgd_small.tpr(alpha)), abs=1e-12)
        assert dpsgd_small.tpr_at_fpr(alpha) >= float(dpsgd_small.tpr(alpha)) - 1e-12
    for r in (0.01, 0.1, 0.5, 0.9):
        a_fast = dpsgd_small.alpha_at_tpr_fast(r)
        assert a_fast == pytest.approx(float(dpsgd_small.alpha_at_tpr(r)), abs=1e-12)
        assert float(dpsgd_small.tpr(a_fast)) == pytest.approx(r, abs=1e-9)


def test_describe_and_validation():
    c = dpsgd_curve(1.2, 0.01, 10, value_discretization_interval=1e-3)
    desc = c.describe()
    assert desc == {
        "curve": "PLDCurve",
        "neighbours": "add_remove",
        "mechanism": {
            "name": "subsampled_gaussian",
            "noise_multiplier": 1.2,
            "sample_rate": 0.01,
            "steps": 10,
            "neighbours": "add_remove",
        },
        "value_discretization_interval": 1e-3,  # a fixed grid
        "side": "upper",
    }
    adaptive = dpsgd_curve(1.2, 0.01, 10).describe()  # the grid chosen for the default tolerance
    assert adaptive["tolerance"] == 1e-4 and adaptive["width"] <= 1e-4
    assert c.mechanism == SubsampledGaussian(1.2, 0.01, 10)
    assert PLDCurve(c.pld).describe()["mechanism"] is None  # a bare PLD names no record
    bad = [
        {"noise_multiplier": 0.0, "sample_rate": 0.1, "steps": 1},
        {"noise_multiplier": -1.0, "sample_rate": 0.1, "steps": 1},
        {"noise_multiplier": 1.0, "sample_rate": 0.0, "steps": 1},
        {"noise_multiplier": 1.0, "sample_rate": 1.5, "steps": 1},
        {"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 0},
        {"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 2.5},
        {"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": True},
    ]
    for kw in bad:
        with pytest.raises(MipkitValueError):
            dpsgd_curve(kw["noise_multiplier"], kw["sample_rate"], kw["steps"])
    for grid in (0.0, -1e-3, 1.5):
        with pytest.raises(MipkitValueError, match="value_discretization_interval"):
            dpsgd_curve(1.0, 0.1, 1, value_discretization_interval=grid)
    with pytest.raises(MipkitValueError):
        PLDCurve("not a pld")
    with pytest.raises(MipkitValueError, match="mechanism"):
        PLDCurve(c.pld, mechanism={"name": "subsampled_gaussian"})
    with pytest.raises(MipkitValueError):
        c.f(1.5)
    with pytest.raises(MipkitValueError):
        c.alpha_at_tpr(-0.1)


# ---------------------------------------------------------------------------------------------------
# Properties: risk grows with the sampling rate and the number of steps, falls with the noise
# ---------------------------------------------------------------------------------------------------
def _risks(sigma: float, q: float, steps: int) -> tuple[float, float]:
    c = dpsgd_curve(sigma, q, steps, value_discretization_interval=5e-3)
    return c.advantage(), c.tpr_at_fpr(0.01)


@settings(max_examples=8, deadline=None)
@given(
    sigma=st.floats(0.8, 3.0),
    q=st.floats(0.01, 0.5),
    steps=st.integers(1, 30),
    factor=st.floats(1.2, 2.0),
)
def test_risk_monotone_in_noise_rate_and_steps(sigma, q, steps, factor):
    base = _risks(sigma, q, steps)
    more_noise = _risks(sigma * factor, q, steps)
    higher_rate = _risks(sigma, min(q * factor, 1.0), steps)
    more_steps = _risks(sigma, q, int(math.ceil(steps * factor)) + 1)
    for i in range(2):
        assert more_noise[i] <= base[i] + 1e-9
        assert higher_rate[i] >= base[i] - 1e-9
        assert more_steps[i] >= base[i] - 1e-9


# ---------------------------------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------------------------------
def _composed(*parts, value_discretization_interval=None) -> PLDCurve:
    curve = tradeoff_curve(Composed(parts), value_discretization_interval=value_discretization_interval)
    assert isinstance(curve, PLDCurve)
    return curve


def test_compose_gaussians_is_gdp():
    curve = _composed(GDP(0.6), GDP(0.8), value_discretization_interval=1e-4)
    exact = gdp_f(ALPHAS, 1.0)  # sqrt(0.6^2 + 0.8^2)
    assert np.max(np.abs(curve.f(ALPHAS) - exact)) < 1e-4
    assert np.all(curve.f(ALPHAS) <= exact + 1e-9)
    # the Gaussian mechanism with sigma and sensitivity L is the same L/sigma-GDP
    same = _composed(GaussianMechanism(2.5, 1.5), GaussianMechanism(1.25), value_discretization_interval=1e-4)
    np.testing.assert_allclose(same.f(ALPHAS), curve.f(ALPHAS), atol=1e-4)


def test_compose_single_laplace_matches_exact_laplace_curve():
    curve = _composed(LaplaceMechanism(2.0), value_discretization_interval=1e-4)
    exact = LaplaceCurve(2.0).f(ALPHAS)
    assert np.max(np.abs(curve.f(ALPHAS) - exact)) < 1e-3
    assert np.all(curve.f(ALPHAS) <= exact + 1e-9)
    wider = _composed(LaplaceMechanism(6.0, sensitivity=3.0), value_discretization_interval=1e-4)
    np.testing.assert_allclose(wider.f(ALPHAS), curve.f(ALPHAS), atol=1e-9)


def test_compose_approx_dp_is_pessimistic():
    # (eps, delta)-DP composed with nothing: the PLD of the worst case (eps, delta) mechanism
    eps, delta = 1.0, 1e-3
    curve = _composed(ApproxDP(eps, delta), value_discretization_interval=1e-4)
    ref = ApproxDPCurve(eps, delta)
    assert curve.advantage() == pytest.approx(ref.advantage(), abs=1e-4)
    assert np.all(curve.f(ALPHAS) <= ref.f(ALPHAS) + 1e-9)
    pure = _composed(PureDP(eps), value_discretization_interval=1e-4)
    assert pure.advantage() == pytest.approx(ApproxDPCurve(eps).advantage(), abs=1e-4)


def test_compose_mixes_dpsgd_and_closed_forms():
    d = 1e-3
    a = dpsgd_curve(1.0, 0.1, 5, value_discretization_interval=d)
    both = _composed(SubsampledGaussian(1.0, 0.1, 5), GDP(0.5))
    assert both.describe()["value_discretization_interval"] == d  # DP-SGD inside: its default grid
    # composition can only add risk
    assert both.advantage() >= a.advantage() - 1e-12
    assert both.advantage() >= GaussianCurve(0.5).advantage() - 1e-9
    twice = _composed(SubsampledGaussian(1.0, 0.1, 5), SubsampledGaussian(1.0, 0.1, 5))
    ten = dpsgd_curve(1.0, 0.1, 10, value_discretization_interval=d)
    assert twice.advantage() == pytest.approx(ten.advantage(), abs=1e-6)
    # nested compositions flatten: ((A, B), C) = (A, B, C)
    nested = _composed(Composed((GDP(0.3), GDP(0.4))), GDP(1.2), value_discretization_interval=1e-4)
    flat = _composed(GDP(0.3), GDP(0.4), GDP(1.2), value_discretization_interval=1e-4)
    np.testing.assert_allclose(nested.f(ALPHAS), flat.f(ALPHAS), atol=1e-12)
    assert both.describe()["mechanism"] == {
        "name": "composed",
        "mechanisms": [
            {
                "name": "subsampled_gaussian",
                "noise_multiplier": 1.0,
                "sample_rate": 0.1,
                "steps": 5,
                "neighbours": "add_remove",
            },
            {"name": "gdp", "mu": 0.5, "neighbours": "add_remove"},
        ],
    }


def test_gdp_zero_is_the_identity():
    curve = pld_curve(GDP(0.0))
    assert curve.advantage() == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(curve.f(ALPHAS), 1.0 - ALPHAS, atol=1e-12)


def test_privacy_loss_distribution_errors():
    with pytest.raises(MipkitValueError, match="mechanism"):
        privacy_loss_distribution(GaussianCurve(1.0))
    with pytest.raises(MipkitValueError, match="value_discretization_interval"):
        privacy_loss_distribution(GDP(1.0), value_discretization_interval=2.0)


def test_little_noise_gives_finite_certificate_equal_to_the_sampling_bound():
    """Noise multiplier 0.05, q = 0.1, 10 steps: almost every sampled step reveals the record, so the
    advantage is close to 1 - (1 - q)^T (the chance the record is ever sampled) and never NaN (losses above
    e^700 join the +inf atom instead of overflowing)."""
    from mipkit.accounting import SubsampledGaussian, tradeoff_curve

    curve = tradeoff_curve(SubsampledGaussian(noise_multiplier=0.05, sample_rate=0.1, steps=10))
    ever_sampled = 1.0 - 0.9**10
    for fpr in (1e-6, 1e-3, 0.01, 0.1):
        tpr = float(curve.tpr(fpr))
        assert math.isfinite(tpr)
        # at least the record's sampled steps are caught; at most those plus the FPR of the rest
        assert ever_sampled - 1e-3 <= tpr <= ever_sampled + fpr + 1e-3


@pytest.mark.parametrize("noise", [1e-4, 1e-2])
def test_far_too_little_noise_is_refused_not_allocated(noise):
    """A step whose privacy loss overflows double precision, or whose grid would need billions of points,
    is refused with a clear message (it used to try to allocate hundreds of GiB)."""
    from mipkit.accounting import SubsampledGaussian, tradeoff_curve

    with pytest.raises(MipkitValueError, match="noise is far too small"):
        tradeoff_curve(SubsampledGaussian(noise_multiplier=noise, sample_rate=0.1, steps=10))
