"""The noise samplers draw from the laws they claim (KS tests, closed-form moments, normalisation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit._validation import MipkitValueError
from mipkit.mechanisms.noise_samplers import (
    ExpNormNoise,
    GaussianNoise,
    Izzo2024Noise,
    direction_second_moment,
    generalized_normal,
    log_unit_ball_volume,
    weighted_norm,
)

N = 20_000
KS_P = 1e-3  # reject the sampler only on overwhelming evidence (each test is one fixed seed)


@pytest.mark.parametrize(
    ("d", "p", "weights"), [(1, 2.0, [1.0]), (3, 2.0, [1, 1, 1]), (4, 1.5, [0.5, 1, 2, 3])]
)
def test_exp_norm_radius_is_gamma_d_s(d, p, weights):
    law = ExpNormNoise(0.7, weights, p=p)
    x = law.sample(N, random_state=0)
    r = weighted_norm(x, law.weights, p)
    assert stats.kstest(r, stats.gamma(a=d, scale=0.7).cdf).pvalue > KS_P


def test_l2_direction_is_uniform_on_the_sphere():
    # Archimedes: a coordinate of a uniform point on S^2 is Uniform(-1, 1).
    x = ExpNormNoise(2.0, [1.0, 1.0, 1.0]).sample(N, random_state=1)
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    for i in range(3):
        assert stats.kstest(u[:, i], stats.uniform(-1, 2).cdf).pvalue > KS_P
    # and independent of the radius
    r = np.linalg.norm(x, axis=1)
    assert abs(stats.spearmanr(r, np.abs(u[:, 0])).statistic) < 4 / math.sqrt(N)


def test_weighted_lp_exp_norm_matches_rejection_sampling():
    """d = 2, p = 3, unequal weights: compare with direct rejection sampling from exp(-||x||/s)."""
    w, p, s = np.array([1.0, 2.5]), 3.0, 0.8
    law = ExpNormNoise(s, w, p=p)
    x = law.sample(6000, random_state=2)
    rng = np.random.default_rng(3)
    # proposal: independent Laplace with scales b_i; the target is exp(-||x||_{w,p}/s) <= M * proposal
    # since ||x||_{w,p} >= (1/2)^(1/p) max_i |x_i|/w_i >= (1/2)^(1/p) * (1/2) sum_i |x_i|/w_i
    c = 0.5 ** (1 / p) * 0.5 / s
    accepted = []
    while sum(a.shape[0] for a in accepted) < 6000:
        prop = rng.laplace(0.0, 1.0 / (c * (1 / w)), size=(40_000, 2))
        log_ratio = -weighted_norm(prop, w, p) / s + c * np.sum(np.abs(prop) / w, axis=1)
        keep = np.log(rng.random(40_000)) < log_ratio
        accepted.append(prop[keep])
    y = np.concatenate(accepted)[:6000]
    assert np.all(-weighted_norm(y, w, p) / s + c * np.sum(np.abs(y) / w, axis=1) <= 1e-12)
    for i in range(2):
        assert stats.ks_2samp(x[:, i], y[:, i]).pvalue > KS_P
    angle_x, angle_y = np.arctan2(x[:, 1], x[:, 0]), np.arctan2(y[:, 1], y[:, 0])
    assert stats.ks_2samp(angle_x, angle_y).pvalue > KS_P


@pytest.mark.parametrize(("d", "p"), [(1, 2.0), (3, 2.0), (5, 1.0), (4, 3.0)])
def test_direction_second_moment_closed_form(d, p):
    w = np.linspace(0.5, 2.0, d)
    x = ExpNormNoise(1.0, w, p=p).sample(N, random_state=4)
    u = x / weighted_norm(x, w, p)[:, None]
    assert np.allclose(weighted_norm(u, w, p), 1.0)
    m2 = (u**2).mean(axis=0)
    se = (u**2).std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(m2 - direction_second_moment(w, p)) <= 5 * se + 1e-12)
    if p == 2.0:
        assert np.allclose(direction_second_moment(w, p), w**2)


def test_generalized_normal_orders():
    g2 = generalized_normal(N, 2.0, random_state=5)
    assert stats.kstest(g2, stats.norm(scale=math.sqrt(0.5)).cdf).pvalue > KS_P
    g1 = generalized_normal(N, 1.0, random_state=6)
    assert stats.kstest(g1, stats.laplace.cdf).pvalue > KS_P
    g3 = generalized_normal(N, 3.0, random_state=7)
    assert stats.kstest(g3, stats.gennorm(3.0).cdf).pvalue > KS_P


def test_gaussian_variances():
    w = np.array([0.5, 1.0, 0.0, 2.0])
    law = GaussianNoise(0.3, w)
    x = law.sample(N, random_state=8)
    expected = 0.3 * math.sqrt(3) * w  # d counts active coordinates only
    assert np.allclose(law.coordinate_std(), expected)
    assert np.all(x[:, 2] == 0.0)
    for i in (0, 1, 3):
        # chi-square interval for the variance
        v = x[:, i].var(ddof=1) * (N - 1) / expected[i] ** 2
        assert stats.chi2(N - 1).ppf(1e-4) < v < stats.chi2(N - 1).ppf(1 - 1e-4)
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 4 / math.sqrt(N)


def test_izzo_radius_is_laplace_as_published():
    c = 3.0
    law = Izzo2024Noise(c, [1.0, 2.0, 0.5], moment=2.0)
    x = law.sample(N, random_state=9)
    r = weighted_norm(x, law.weights, 2.0)  # = |r| with r ~ Laplace(c)
    assert stats.kstest(r, stats.expon(scale=c).cdf).pvalue > KS_P
    # d = 1: the published sampler is Laplace(c * sigma) exactly
    x1 = Izzo2024Noise(c, [0.4]).sample(N, random_state=10)[:, 0]
    assert stats.kstest(x1, stats.laplace(scale=c * 0.4).cdf).pvalue > KS_P
    # d = 3: its radius is NOT Gamma(3, c), the law Thm 9 assumes (docs/theory.md section 2a, caution)
    assert stats.kstest(r, stats.gamma(a=3, scale=c).cdf).pvalue < 1e-10


@pytest.mark.parametrize(
    "law",
    [
        ExpNormNoise(0.6, [1.0, 2.0, 0.5], p=2.0),
        ExpNormNoise(0.6, [1.0, 2.0, 0.5], p=1.0),
        GaussianNoise(0.6, [1.0, 2.0, 0.5]),
        Izzo2024Noise(0.6, [1.0, 2.0, 0.5], moment=3.0),
    ],
    ids=["expnorm-l2", "expnorm-l1", "gaussian", "izzo-M3"],
)
def test_coordinate_std_matches_monte_carlo(law):
    x = law.sample(N, random_state=11)
    std = law.coordinate_std()
    # sqrt of a mean of squares: compare second moments with a CLT interval
    m2, se = (x**2).mean(axis=0), (x**2).std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(m2 - std**2) < 5 * se)


def _grid_integral(log_density, half_width, n=1201):
    g = np.linspace(-half_width, half_width, n)
    xx, yy = np.meshgrid(g, g)
    pts = np.stack([xx, yy], axis=-1)
    return float(np.exp(log_density(pts)).sum() * (g[1] - g[0]) ** 2)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_exp_norm_density_is_normalised(p):
    law = ExpNormNoise(0.5, [1.0, 2.0], p=p)
    assert _grid_integral(law.log_density, 40.0) == pytest.approx(1.0, abs=2e-3)
    g = np.linspace(-30, 30, 200_001)
    law1 = ExpNormNoise(0.5, [1.5], p=p)
    assert np.trapezoid(np.exp(law1.log_density(g[:, None])), g) == pytest.approx(1.0, abs=1e-6)
    # and the exponent: log-density differences are -(||x|| - ||y||)/s
    a, b = np.array([0.3, -1.0]), np.array([2.0, 0.5])
    diff = law.log_density(a) - law.log_density(b)
    assert diff == pytest.approx(-(weighted_norm(a, law.weights, p) - weighted_norm(b, law.weights, p)) / 0.5)


def test_gaussian_and_izzo_densities_are_normalised():
    assert _grid_integral(GaussianNoise(0.5, [1.0, 2.0]).log_density, 15.0) == pytest.approx(1.0, abs=1e-4)
    # Izzo in d = 2 has an integrable 1/t singularity at 0: integrate in polar form instead,
    # int p(x) dx = int_0^inf p(t u) * d V t^(d-1) dt, u on the unit sphere of the norm.
    law = Izzo2024Noise(0.5, [1.0, 2.0])
    t = np.linspace(1e-9, 60, 400_001)
    u = np.array([1.0 * math.sqrt(2), 0.0])  # ||u||_{w,2} = 1 with w = (1, 2), d = 2
    dens = np.exp(law.log_density(t[:, None] * u)) * 2 * np.exp(log_unit_ball_volume(law.weights, 2.0)) * t
    assert np.trapezoid(dens, t) == pytest.approx(1.0, abs=1e-4)


def test_constant_coordinates_get_no_noise_and_zero_density_off_support():
    law = ExpNormNoise(1.0, [1.0, 0.0])
    x = law.sample(100, random_state=12)
    assert np.all(x[:, 1] == 0.0)
    assert np.isneginf(law.log_density(np.array([0.1, 0.2])))
    assert np.isfinite(law.log_density(np.array([0.1, 0.0])))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3),
    st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3),
    st.floats(-50, 50),
    st.sampled_from([1.0, 1.5, 2.0, 4.0]),
)
def test_weighted_norm_is_a_norm(a, b, lam, p):
    w = np.array([0.5, 1.0, 3.0])
    a, b = np.array(a), np.array(b)
    na, nb = weighted_norm(a, w, p), weighted_norm(b, w, p)
    assert weighted_norm(a + b, w, p) <= na + nb + 1e-9 * (1 + na + nb)
    assert weighted_norm(lam * a, w, p) == pytest.approx(abs(lam) * na, rel=1e-9, abs=1e-12)


def test_laws_validate():
    with pytest.raises(MipkitValueError, match="scale"):
        ExpNormNoise(-1.0, [1.0])
    with pytest.raises(MipkitValueError, match="'p'"):
        ExpNormNoise(1.0, [1.0], p=0.5)
    with pytest.raises(MipkitValueError, match="moment"):
        Izzo2024Noise(1.0, [1.0], moment=1.5)
    with pytest.raises(MipkitValueError, match="weights"):
        GaussianNoise(1.0, [0.0, 0.0])
    with pytest.raises(MipkitValueError, match="weights"):
        GaussianNoise(1.0, [1.0, -1.0])


def test_same_seed_same_draws():
    law = ExpNormNoise(1.0, [1.0, 2.0])
    assert np.array_equal(law.sample(5, random_state=3), law.sample(5, random_state=3))
    assert not np.array_equal(law.sample(5, random_state=3), law.sample(5, random_state=4))
