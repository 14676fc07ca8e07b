"""Trade-off curves: the contract every curve meets, and closed forms against independent computations.

Independent computations used here: numerical integration of the two output densities (scipy quad),
Neyman-Pearson tests built directly from the densities (sorting cells by likelihood ratio), exact
enumeration of the finite mechanism that attains the (eps, delta)-DP curve, and the base class's numeric
defaults (grid + refinement) against each subclass's closed form.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from mipkit._validation import MipkitValueError
from mipkit.accounting import GaussianMechanism, mechanism_from_dict, tradeoff_curve
from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.tradeoff import TradeoffCurve

CURVES = [
    ApproxDPCurve(0.0),
    ApproxDPCurve(1.0),
    ApproxDPCurve(1.0, 1e-3),
    ApproxDPCurve(8.0, 1e-5),
    ApproxDPCurve(0.3, 0.2),
    GaussianCurve(0.0),
    GaussianCurve(0.5),
    GaussianCurve(2.0),
    GaussianCurve(6.0),
    tradeoff_curve(GaussianMechanism(3.0, sensitivity=2.0)),
    LaplaceCurve(1.0),
    LaplaceCurve(0.2),
    LaplaceCurve(10.0, sensitivity=3.0),
]
IDS = [repr(c) for c in CURVES]

UNIFORM = np.linspace(0.0, 1.0, 2001)
GRID = np.unique(np.concatenate([UNIFORM, np.logspace(-9, 0, 400), 1 - np.logspace(-9, 0, 400)]))


# --------------------------------------------------------------------------------------------------
# The contract of a trade-off function (Dong, Roth & Su 2022, Prop. 2.2)
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_contract_non_increasing_convex_bounded(curve: TradeoffCurve) -> None:
    f = curve.f(GRID)
    assert f.shape == GRID.shape
    assert np.all(np.diff(f) <= 1e-12), "f must be non-increasing"
    assert np.all(f >= 0.0) and np.all(f <= 1.0 - GRID + 1e-12), "0 <= f(a) <= 1 - a"
    assert float(curve.f(1.0)) == pytest.approx(0.0, abs=1e-15)
    assert float(curve.f(0.0)) <= 1.0
    # convexity: second differences on a uniform grid are >= 0 (up to rounding)
    fu = curve.f(UNIFORM)
    assert np.all(fu[:-2] - 2 * fu[1:-1] + fu[2:] >= -1e-12), "f must be convex"
    # tpr is 1 - f
    np.testing.assert_allclose(curve.tpr(GRID), 1.0 - f, atol=1e-12)


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_contract_symmetric(curve: TradeoffCurve) -> None:
    """All three families are symmetric: f is its own inverse where f > 0."""
    a = UNIFORM[curve.f(UNIFORM) > 1e-9]
    np.testing.assert_allclose(curve.f(curve.f(a)), a, atol=1e-8)


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_scalar_in_scalar_out_and_bad_alpha(curve: TradeoffCurve) -> None:
    assert np.ndim(curve.f(0.3)) == 0
    assert np.ndim(curve.tpr(0.3)) == 0
    assert np.ndim(curve.alpha_at_tpr(0.3)) == 0
    for bad in (-0.1, 1.5, np.nan):
        with pytest.raises(MipkitValueError):
            curve.f(bad)
    with pytest.raises(MipkitValueError):
        curve.alpha_at_tpr(1.2)


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_closed_forms_match_numeric_defaults(curve: TradeoffCurve) -> None:
    """Each closed form equals the base class's numeric default computed from f alone."""
    assert curve.advantage() == pytest.approx(TradeoffCurve.advantage(curve), abs=1e-12)
    # r = 1 is left out: where 1 - f(alpha) rounds to 1.0 below the true alpha*(1) the numeric default
    # (bisection in floating point) stops early; test_alpha_at_tpr_is_smallest_fpr_reaching_tpr covers it.
    r = np.array([0.0, 1e-4, 0.01, 0.2, 0.5, 0.77, 0.999])
    np.testing.assert_allclose(curve.alpha_at_tpr(r), TradeoffCurve.alpha_at_tpr(curve, r), atol=1e-12)
    for eps in (0.0, 0.1, 0.7, 2.0, 5.0, 9.0):
        closed = curve.delta_for_epsilon(eps)
        numeric = TradeoffCurve.delta_for_epsilon(curve, eps)
        assert closed == pytest.approx(numeric, rel=1e-9, abs=1e-15)
    for delta in (1e-6, 1e-3, 0.05, 0.3):
        closed = curve.epsilon_for_delta(delta)
        numeric = TradeoffCurve.epsilon_for_delta(curve, delta)
        if math.isinf(closed):
            assert math.isinf(numeric)
        else:
            # the numeric inverse errs on the safe (larger) side by at most ~1e-9
            assert numeric == pytest.approx(closed, rel=1e-8, abs=1e-9)
            assert numeric >= closed - 1e-12


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_alpha_at_tpr_is_smallest_fpr_reaching_tpr(curve: TradeoffCurve) -> None:
    r = np.linspace(0.0, 1.0, 101)
    a = curve.alpha_at_tpr(r)
    assert np.all(curve.tpr(a) >= r - 1e-9)
    below = np.clip(a - 1e-6, 0.0, 1.0)
    assert np.all((a == 0.0) | (curve.tpr(below) < r + 1e-9))


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_epsilon_for_delta_inverts_delta_for_epsilon(curve: TradeoffCurve) -> None:
    for delta in (1e-8, 1e-5, 1e-2, 0.2):
        eps = curve.epsilon_for_delta(delta)
        if math.isinf(eps):
            assert curve.delta_for_epsilon(50.0) > delta
            continue
        assert curve.delta_for_epsilon(eps) <= delta * (1 + 1e-9) + 1e-15
        if eps > 1e-6:
            assert curve.delta_for_epsilon(max(eps - 1e-4 * max(eps, 1.0), 0.0)) > delta


@pytest.mark.parametrize("curve", CURVES, ids=IDS)
def test_describe_and_frozen(curve: TradeoffCurve) -> None:
    d = curve.describe()
    assert d["curve"] == type(curve).__name__
    # the curve serialises the record it was built from, and the record rebuilds an equal curve
    assert d["mechanism"] == curve.mechanism.to_dict()
    assert tradeoff_curve(mechanism_from_dict(d["mechanism"])) == curve
    json.dumps(d, allow_nan=False)
    field = dataclasses.fields(curve)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(curve, field, 1.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda: ApproxDPCurve(-1.0),
        lambda: ApproxDPCurve(1.0, 1.0),
        lambda: ApproxDPCurve(1.0, -0.1),
        lambda: ApproxDPCurve(math.inf),
        lambda: GaussianCurve(-0.5),
        lambda: GaussianCurve(math.nan),
        lambda: GaussianMechanism(0.0),
        lambda: GaussianMechanism(1.0, sensitivity=-1.0),
        lambda: GaussianCurve(1.0, mechanism={"name": "gdp", "mu": 1.0}),
        lambda: LaplaceCurve(0.0),
        lambda: LaplaceCurve(1.0, sensitivity=0.0),
        lambda: LaplaceCurve("abc"),
    ],
)
def test_bad_parameters_raise(build) -> None:
    with pytest.raises(MipkitValueError):
        build()


def test_numeric_delta_for_epsilon_is_relative_accurate_far_in_the_tail() -> None:
    """The numeric default reaches delta ~ 1e-37 (maximiser ~ 1e-40) to relative precision."""
    curve = GaussianCurve(1.5)
    for eps in (8.0, 15.0, 20.0):
        assert TradeoffCurve.delta_for_epsilon(curve, eps) == pytest.approx(
            curve.delta_for_epsilon(eps), rel=1e-7
        )


def test_epsilon_for_delta_limits() -> None:
    assert GaussianCurve(1.0).epsilon_for_delta(0.0) == math.inf
    assert GaussianCurve(0.0).epsilon_for_delta(0.0) == 0.0
    assert ApproxDPCurve(2.0, 1e-3).epsilon_for_delta(1e-4) == math.inf
    assert ApproxDPCurve(2.0, 1e-3).epsilon_for_delta(1e-3) == pytest.approx(2.0, rel=1e-12)
    assert ApproxDPCurve(2.0, 1e-3).epsilon_for_delta(0.9) == 0.0
    assert LaplaceCurve(0.5).epsilon_for_delta(0.0) == pytest.approx(2.0)
    with pytest.raises(MipkitValueError):
        GaussianCurve(1.0).epsilon_for_delta(1.0)
    with pytest.raises(MipkitValueError):
        GaussianCurve(1.0).delta_for_epsilon(-1.0)


# --------------------------------------------------------------------------------------------------
# (eps, delta)-DP: the curve is attained by the finite mechanism of Thm 4's tightness proof
# --------------------------------------------------------------------------------------------------
def _finite_np_roc(p0: np.ndarray, p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ROC (alpha, tpr) of the randomised Neyman-Pearson tests of p0 (null) against p1 (alternative).

    Reject on the cells with the largest likelihood ratio p1/p0 first; randomising on the boundary cell
    gives the linear interpolation between consecutive points (Neyman-Pearson lemma).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(p0 > 0, p1 / np.where(p0 > 0, p0, 1.0), np.inf)
    order = np.argsort(-lr, kind="stable")
    alpha = np.concatenate([[0.0], np.cumsum(p0[order])])
    tpr = np.concatenate([[0.0], np.cumsum(p1[order])])
    return alpha, tpr


def _rr_with_leak(eps: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Output laws of Izzo et al.'s tightness mechanism (outputs 0, bot_a, bot_b, 1)."""
    hi = (1 - delta) / (1 + math.exp(-eps))
    lo = (1 - delta) / (1 + math.exp(eps))
    p_in = np.array([delta, hi, lo, 0.0])
    p_out = np.array([0.0, lo, hi, delta])
    return p_out, p_in


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (0.5, 0.0), (1.0, 1e-3), (3.0, 0.05), (8.0, 1e-5)])
def test_approx_dp_curve_is_attained_by_randomised_response_with_leak(eps: float, delta: float) -> None:
    p_out, p_in = _rr_with_leak(eps, delta)
    alpha, tpr = _finite_np_roc(p_out, p_in)
    a = np.linspace(0, 1, 501)
    beta_np = 1.0 - np.interp(a, alpha, tpr)
    np.testing.assert_allclose(ApproxDPCurve(eps, delta).f(a), beta_np, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# Gaussian: closed forms against numerical integration of N(0, 1) and N(mu, 1)
# --------------------------------------------------------------------------------------------------
def _phi(x: float, m: float = 0.0) -> float:
    return math.exp(-0.5 * (x - m) ** 2) / math.sqrt(2 * math.pi)


def _upper_mass(t: float, m: float) -> float:
    """P(X > t) for X ~ N(m, 1), by quadrature of the density."""
    return integrate.quad(_phi, t, math.inf, args=(m,), epsabs=1e-14, epsrel=1e-12)[0]


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_advantage_is_total_variation_by_integration(mu: float) -> None:
    # the densities cross at mu/2: TV = int_{mu/2}^inf (p1 - p0)
    tv = integrate.quad(lambda x: _phi(x, mu) - _phi(x), mu / 2, math.inf, epsabs=1e-13)[0]
    assert GaussianCurve(mu).advantage() == pytest.approx(tv, abs=1e-10)
    assert GaussianCurve(mu).advantage() == pytest.approx(2 * stats.norm.cdf(mu / 2) - 1, abs=1e-15)


@pytest.mark.parametrize("mu", [0.5, 1.5])
@pytest.mark.parametrize("r", [0.05, 0.3, 0.6, 0.95])
def test_gaussian_alpha_at_tpr_and_f_by_integration(mu: float, r: float) -> None:
    """Threshold test of N(0,1) vs N(mu,1) with TPR r, built by root-finding on integrated masses."""
    t = optimize.brentq(lambda s: _upper_mass(s, mu) - r, -20, 20, xtol=1e-13)
    alpha = _upper_mass(t, 0.0)
    curve = GaussianCurve(mu)
    assert float(curve.alpha_at_tpr(r)) == pytest.approx(alpha, rel=1e-8, abs=1e-12)
    assert float(curve.alpha_at_tpr(r)) == pytest.approx(stats.norm.cdf(stats.norm.ppf(r) - mu), rel=1e-12)
    assert float(curve.f(alpha)) == pytest.approx(1.0 - r, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0, 5.0])
def test_gaussian_delta_for_epsilon_is_hockey_stick_by_integration(mu: float, eps: float) -> None:
    """delta(eps) = int max(0, p1 - e^eps p0): the integrand is positive above x* = eps/mu + mu/2."""
    x_star = eps / mu + mu / 2
    hs = integrate.quad(
        lambda x: _phi(x, mu) - math.exp(eps) * _phi(x), x_star, math.inf, epsabs=1e-16, epsrel=1e-11
    )[0]
    assert GaussianCurve(mu).delta_for_epsilon(eps) == pytest.approx(hs, rel=1e-7, abs=1e-15)


def test_gaussian_mechanism_curve() -> None:
    assert tradeoff_curve(GaussianMechanism(2.0)).mu == 0.5
    assert tradeoff_curve(GaussianMechanism(2.0, sensitivity=3.0)).mu == 1.5
    # mu = 1 gives the familiar (1, 0.127)-ish profile: delta(1) = Phi(-1/2) - e Phi(-3/2)
    expected = stats.norm.cdf(-0.5) - math.e * stats.norm.cdf(-1.5)
    assert GaussianCurve(1.0).delta_for_epsilon(1.0) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------------------
# Laplace: the three-piece curve against a direct Neyman-Pearson test on the two densities
# --------------------------------------------------------------------------------------------------
def _laplace_np_f(scale: float, sens: float, alphas: np.ndarray) -> np.ndarray:
    """f(alpha) of the optimal test of Lap(0, b) vs Lap(L, b) from the densities, no formula used.

    The real line is cut into fine cells (plus the two tails); the exact cell masses come from the
    Laplace CDF; cells are rejected in order of decreasing likelihood ratio with randomisation on the
    boundary cell (Neyman-Pearson). Coarse-graining can only lose power, and the cells are fine enough
    that the loss is below 1e-6.
    """
    lo, hi = -40 * scale, sens + 40 * scale
    edges = np.concatenate([[-np.inf], np.linspace(lo, hi, 400_001), [np.inf]])
    c0 = stats.laplace.cdf(edges, loc=0.0, scale=scale)
    c1 = stats.laplace.cdf(edges, loc=sens, scale=scale)
    p0, p1 = np.diff(c0), np.diff(c1)
    alpha, tpr = _finite_np_roc(p0, p1)
    return 1.0 - np.interp(alphas, alpha, tpr)


@pytest.mark.parametrize("scale,sens", [(1.0, 1.0), (0.4, 1.0), (2.0, 5.0)])
def test_laplace_curve_matches_direct_likelihood_ratio_test(scale: float, sens: float) -> None:
    curve = LaplaceCurve(scale, sensitivity=sens)
    eps = sens / scale
    # points on all three pieces, including the kinks e^-eps/2 and 1/2
    alphas = np.unique(
        np.concatenate([np.linspace(0, 1, 201), [math.exp(-eps) / 2, 0.5, math.exp(-eps / 2) / 2]])
    )
    np.testing.assert_allclose(curve.f(alphas), _laplace_np_f(scale, sens, alphas), atol=2e-6)


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
def test_laplace_advantage_and_delta_by_integration(scale: float) -> None:
    curve = LaplaceCurve(scale)
    eps = 1.0 / scale

    def p0(x: float) -> float:
        return stats.laplace.pdf(x, 0.0, scale)

    def p1(x: float) -> float:
        return stats.laplace.pdf(x, 1.0, scale)

    # densities cross at 1/2: TV = int_{1/2}^inf (p1 - p0)
    tv = integrate.quad(lambda x: p1(x) - p0(x), 0.5, 1.0, epsabs=1e-13)[0]
    tv += integrate.quad(lambda x: p1(x) - p0(x), 1.0, math.inf, epsabs=1e-13)[0]
    assert curve.advantage() == pytest.approx(tv, abs=1e-10)
    assert curve.advantage() == pytest.approx(1 - math.exp(-eps / 2), abs=1e-15)
    for e2 in (0.0, eps / 3, eps / 2, eps, 2 * eps):
        hs = integrate.quad(
            lambda x, e2=e2: max(p1(x) - math.exp(e2) * p0(x), 0.0),
            -30 * scale,
            1 + 30 * scale,
            points=[0.0, 0.5, 1.0],
            limit=400,
            epsabs=1e-13,
        )[0]
        assert curve.delta_for_epsilon(e2) == pytest.approx(hs, abs=1e-9)


def test_laplace_is_eps_dp_and_tighter_between_the_kinks() -> None:
    lap, dp = LaplaceCurve(0.5), ApproxDPCurve(2.0)
    a = np.linspace(0, 1, 1001)
    assert np.all(lap.f(a) >= dp.f(a) - 1e-15)
    inner = (a > math.exp(-2) / 2 + 1e-3) & (a < 0.5 - 1e-3)
    assert np.all(lap.f(a[inner]) > dp.f(a[inner]) + 1e-6)
    outer = (a < math.exp(-2) / 2) | (a > 0.5)
    np.testing.assert_allclose(lap.f(a[outer]), dp.f(a[outer]), atol=1e-15)
