"""DP noise for a MIP target: inverses checked against the trade-off curves and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.linear_model import LogisticRegression

from mipkit._validation import MipkitValueError
from mipkit.accounting import GaussianMechanism, LaplaceMechanism, tradeoff_curve
from mipkit.accounting.risk import eta_from_curve, eta_from_dp
from mipkit.attacks.bayes import optimal_accuracy_1d
from mipkit.mechanisms.dp_noise import (
    dp_alternatives,
    epsilon_for_eta,
    exp_norm_l2_scale_for_eta,
    gaussian_sigma_for_eta,
    laplace_scale_for_eta,
    logistic_regression_sensitivity,
)

ETAS = [0.01, 0.05, 0.1, 0.2, 0.4]


@pytest.mark.parametrize("eta", ETAS)
def test_laplace_exact_curve_inverse(eta):
    b = laplace_scale_for_eta(eta, 3.0, method="exact-curve")
    curve = tradeoff_curve(LaplaceMechanism(b, 3.0, neighbours="replace_one"))  # replace-one sensitivity
    assert eta_from_curve(curve) == pytest.approx(eta, rel=1e-9)


@pytest.mark.parametrize("eta", ETAS)
def test_thm4_inverse(eta):
    eps = epsilon_for_eta(eta)
    assert eta_from_dp(eps, 0.0, neighbours="replace_one") == pytest.approx(eta, rel=1e-12)
    assert laplace_scale_for_eta(eta, 2.0, method="thm4") == pytest.approx(2.0 / eps)
    assert exp_norm_l2_scale_for_eta(eta, 2.0) == pytest.approx(2.0 / eps)


@pytest.mark.parametrize("eta", ETAS)
def test_gaussian_inverse(eta):
    sigma = gaussian_sigma_for_eta(eta, 1.5)
    curve = tradeoff_curve(GaussianMechanism(sigma, 1.5, neighbours="replace_one"))
    assert eta_from_curve(curve) == pytest.approx(eta, rel=1e-9)
    # the same noise for an add/remove sensitivity of half as much (a replacement moves the query by 2L)
    assert eta_from_curve(tradeoff_curve(GaussianMechanism(sigma, 0.75))) == pytest.approx(eta, rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.floats(1e-4, 0.499), st.floats(1e-3, 1e3))
def test_calibrated_noise_is_the_closed_form_on_the_safe_side(eta, sens):
    """The calls of mipkit.accounting.calibrate_noise return the closed forms, checked on the exact curves."""
    sigma = gaussian_sigma_for_eta(eta, sens)
    closed = sens / (2.0 * stats.norm.ppf(0.5 + eta))  # 2 Phi(mu/2) - 1 = 2 eta, mu = L / sigma
    assert sigma == pytest.approx(closed, rel=1e-11) and sigma >= closed
    assert eta_from_curve(tradeoff_curve(GaussianMechanism(sigma, sens, neighbours="replace_one"))) <= eta
    b = laplace_scale_for_eta(eta, sens, method="exact-curve")
    closed = sens / (-2.0 * math.log1p(-2.0 * eta))  # 1 - exp(-L / (2b)) = 2 eta
    assert b == pytest.approx(closed, rel=1e-11)
    assert eta_from_curve(tradeoff_curve(LaplaceMechanism(b, sens, neighbours="replace_one"))) <= eta


@settings(max_examples=50, deadline=None)
@given(st.floats(1e-4, 0.499), st.floats(1e-3, 1e3))
def test_exact_curve_needs_less_noise_than_thm4(eta, sens):
    assert laplace_scale_for_eta(eta, sens, method="exact-curve") <= laplace_scale_for_eta(
        eta, sens, method="thm4"
    ) * (1 + 1e-12)


@pytest.mark.parametrize("eta", [0.05, 0.2])
def test_exact_laplace_scale_gives_optimal_accuracy_half_plus_eta(eta):
    """Independent check by numerical integration: two neighbouring outputs 0 and L, Laplace(b) noise."""
    from mipkit.mechanisms.noise_samplers import ExpNormNoise

    b = laplace_scale_for_eta(eta, 1.0, method="exact-curve")
    outputs = np.array([[0.0], [1.0]])
    halves = np.array([[True, False], [False, True]])
    acc = optimal_accuracy_1d(outputs, halves, ExpNormNoise(b, [1.0], p=1.0), target=0)
    assert acc == pytest.approx(0.5 + eta, abs=2e-5)


def test_fig1_dp_noise_formula():
    # Izzo et al. (TMLR 2024), Sec. 4: DP Laplace scale Delta / log((1+2 eta)/(1-2 eta)).
    for eta in (0.01, 0.1, 0.3):
        assert laplace_scale_for_eta(eta, 7.0, method="thm4") == pytest.approx(
            7.0 / math.log((1 + 2 * eta) / (1 - 2 * eta))
        )


def test_logistic_regression_sensitivity_conventions():
    assert logistic_regression_sensitivity(100, C=0.5) == pytest.approx(1.0)
    assert logistic_regression_sensitivity(100, lam=0.02) == pytest.approx(1.0)
    with pytest.raises(MipkitValueError):
        logistic_regression_sensitivity(100)
    with pytest.raises(MipkitValueError):
        logistic_regression_sensitivity(100, C=1.0, lam=1.0)


def test_logistic_regression_sensitivity_bound_holds_on_neighbours():
    """Brute force: replace one record, refit (exact minimiser), the coefficients move <= 2C."""
    rng = np.random.default_rng(0)
    n, d, C = 60, 4, 0.3
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    bound = logistic_regression_sensitivity(n, C=C)

    def fit(Xa, ya):
        m = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(Xa, ya)
        return m.coef_.ravel()

    w0 = fit(X, y)
    worst = 0.0
    for i in range(8):
        X1, y1 = X.copy(), y.copy()
        v = rng.normal(size=d)
        X1[i] = v / np.linalg.norm(v)
        y1[i] = 1 - y1[i]
        worst = max(worst, float(np.linalg.norm(fit(X1, y1) - w0)))
    assert 0 < worst <= bound


@pytest.mark.parametrize(("norm", "dim"), [("l2", 1), ("l2", 5), ("l1", 1), ("l1", 5)])
def test_dp_alternatives_noise_laws_match_their_stds(norm, dim):
    options = dp_alternatives(0.1, 2.0, dim, sensitivity_norm=norm)
    names = {o.name for o in options}
    assert "gaussian-gdp" in names
    assert ("laplace-exact-curve" in names) == (dim == 1)
    for o in options:
        law = o.noise_law()
        assert law.dim == dim
        assert np.allclose(law.coordinate_std(), o.coordinate_std)
        x = law.sample(20_000, random_state=1)
        assert np.sqrt((x**2).mean()) == pytest.approx(o.coordinate_std, rel=0.05)


def test_dp_noise_validation():
    with pytest.raises(MipkitValueError, match="eta"):
        gaussian_sigma_for_eta(0.5, 1.0)
    with pytest.raises(MipkitValueError, match="eta"):
        laplace_scale_for_eta(0.0, 1.0)
    with pytest.raises(MipkitValueError, match="method"):
        laplace_scale_for_eta(0.1, 1.0, method="bogus")
    with pytest.raises(MipkitValueError, match="sensitivity"):
        dp_alternatives(0.1, -1.0, 3)
