"""Neighbouring relations: the MIP game replaces a record, so eta must come from the replace-one curve.

The counter-example that exposed the bug (docs/theory.md section 3): one full-batch DP-SGD step, noise
multiplier 2 (0.5-GDP for add/remove). A target whose clipped gradient is +1 among 11 records at -1, trained
on random halves of 6: replacing a -1 by the target moves the sum by 2, so the game is N(-4, 4) against
N(-6, 4) and a threshold attack is right Phi(1/2) = 0.691 of the time. The add/remove curve certified
eta = Phi(1/4) - 1/2 = 0.0987 (accuracy 0.599): violated. The replace-one curve certifies Phi(1/2) - 1/2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from mipkit.accounting import (
    GDP,
    ApproxDP,
    GaussianMechanism,
    LaplaceMechanism,
    PureDP,
    SubsampledGaussian,
    eta_from_curve,
    eta_from_dp,
    risk_profile,
    tradeoff_curve,
)
from mipkit.accounting.pld_pmfs import gaussian_delta
from mipkit.accounting.relations import GroupPrivacyCurve


def _clopper_pearson(k: int, n: int, level: float = 0.999) -> tuple[float, float]:
    a = (1 - level) / 2
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def test_counter_example_monte_carlo_respects_the_replace_one_certificate():
    rng = np.random.default_rng(20260412)
    trials, pool, half, z = 200_000, 12, 6, 2.0
    grads = -np.ones(pool)
    grads[0] = 1.0  # the target's clipped gradient
    halves = rng.random((trials, pool)).argsort(axis=1)[:, :half]  # fixed-size random halves
    member = (halves == 0).any(axis=1)
    released = grads[halves].sum(axis=1) + rng.normal(0.0, z, size=trials)  # one full-batch step
    guess = released > -5.0  # threshold halfway between the two sums, -4 (in) and -6 (out)
    correct = int((guess == member).sum())
    lo, hi = _clopper_pearson(correct, trials)
    assert lo < stats.norm.cdf(0.5) < hi  # the attack's accuracy is Phi(1/2) = 0.691

    record = SubsampledGaussian(noise_multiplier=z, sample_rate=1.0, steps=1)
    certified = eta_from_curve(tradeoff_curve(record))
    assert certified == pytest.approx(stats.norm.cdf(0.5) - 0.5, abs=2e-4)  # 0.1915
    assert lo <= 0.5 + certified  # the certificate now holds
    old = tradeoff_curve(record).advantage() / 2  # adv / 2 of the add/remove curve: what was certified
    assert old == pytest.approx(stats.norm.cdf(0.25) - 0.5, abs=2e-4)  # 0.0987
    assert lo > 0.5 + old  # ... and was violated
    prof = risk_profile(tradeoff_curve(record))
    assert prof["relation_of"]["eta"] == "replace_one" and prof["eta_lower"] <= certified <= prof["eta"]


@pytest.mark.parametrize("q", [0.3, 0.7])
def test_poisson_subsampled_replacement_game_is_within_the_replace_one_certificate(q):
    """The same game with Poisson sampling at rate q inside the half: its optimal accuracy, by numerical
    integration of the two output laws, is at most 1/2 + the certified eta (dp_accounting's REPLACE_ONE pair
    accounted for the replace-one relation)."""
    z, others = 2.0, 5  # the half holds the target and 5 others at -1 (in) or 6 others (out)
    k = np.arange(others + 2)

    def density(x: np.ndarray, member: bool) -> np.ndarray:
        if member:  # target sampled (+1) w.p. q, plus -B with B ~ Bin(5, q)
            w = stats.binom.pmf(k[:-1], others, q)
            base = sum(wi * stats.norm.pdf(x, -ki, z) for ki, wi in zip(k[:-1], w, strict=True))
            shifted = sum(wi * stats.norm.pdf(x, 1.0 - ki, z) for ki, wi in zip(k[:-1], w, strict=True))
            return (1 - q) * base + q * shifted
        w = stats.binom.pmf(k, others + 1, q)
        return sum(wi * stats.norm.pdf(x, -ki, z) for ki, wi in zip(k, w, strict=True))

    tv, _ = integrate.quad(lambda x: abs(density(np.array(x), True) - density(np.array(x), False)), -40, 40,
                           limit=400)  # fmt: skip
    accuracy = 0.5 + tv / 4  # (1 + TV / 2) / 2 with TV the L1 distance
    certified = eta_from_curve(tradeoff_curve(SubsampledGaussian(z, q, 1)))
    assert accuracy <= 0.5 + certified + 1e-9
    # and the add/remove half of it (what was certified before) is below the game
    assert accuracy > 0.5 + tradeoff_curve(SubsampledGaussian(z, q, 1)).advantage() / 2


@pytest.mark.parametrize("q", [0.1, 0.5])
def test_replace_one_pair_dominates_any_two_contributions(q):
    """dp_accounting's REPLACE_ONE pair (contributions -1 and +1) dominates the pair of any two clipped
    contributions u, v (norm <= 1) of the replaced record: delta_{u,v}(eps) <= delta_replace(eps), by 2-D
    numerical integration over the plane spanned by u and v."""
    rng = np.random.default_rng(7)
    sigma = 1.0
    g = np.linspace(-9, 9, 721)
    x, y = np.meshgrid(g, g, indexing="ij")
    cell = (g[1] - g[0]) ** 2
    base = stats.norm.pdf(x, 0, sigma) * stats.norm.pdf(y, 0, sigma)
    for _ in range(6):
        u = rng.normal(size=2)
        u *= rng.uniform(0.2, 1.0) / np.linalg.norm(u)
        v = rng.normal(size=2)
        v *= rng.uniform(0.0, 1.0) / max(np.linalg.norm(v), 1e-12)
        p = (1 - q) * base + q * stats.norm.pdf(x, u[0], sigma) * stats.norm.pdf(y, u[1], sigma)
        r = (1 - q) * base + q * stats.norm.pdf(x, v[0], sigma) * stats.norm.pdf(y, v[1], sigma)
        for eps in (0.0, 0.1, 0.5, 1.0):
            delta = float(np.sum(np.maximum(p - math.exp(eps) * r, 0.0)) * cell)
            bound = float(gaussian_delta(np.array([eps]), sigma, q, "replace")[0])
            assert delta <= bound + 1e-6


def test_replace_one_curves_of_every_record():
    # GDP: group privacy is exact, 2 mu
    assert tradeoff_curve(GDP(0.7), neighbours="replace_one").mu == pytest.approx(1.4)
    # Gaussian / Laplace: a replacement moves the query by twice the add/remove sensitivity
    assert tradeoff_curve(GaussianMechanism(2.0, 1.5), neighbours="replace_one").mu == pytest.approx(1.5)
    lap = tradeoff_curve(LaplaceMechanism(2.0, 1.5), neighbours="replace_one")
    assert lap.sensitivity == 3.0 and lap.neighbours == "replace_one"
    # (eps, delta)-DP: the group-privacy curve 1 - g(g(a)), advantage 1 - e^-eps (1 - 2 delta)
    gp = tradeoff_curve(ApproxDP(1.0, 1e-3), neighbours="replace_one")
    assert isinstance(gp, GroupPrivacyCurve) and gp.neighbours == "replace_one"
    assert gp.advantage() == pytest.approx(1 - math.exp(-1) * (1 - 2e-3), rel=1e-14)
    grid = np.linspace(0, 1, 20001)
    assert float(np.max(gp.tpr(grid) - grid)) == pytest.approx(gp.advantage(), abs=1e-4)
    # it is tighter than the (2 eps, (1 + e^eps) delta)-DP curve and looser than (eps, delta)-DP
    loose = tradeoff_curve(ApproxDP(2.0, (1 + math.e) * 1e-3))
    assert np.all(gp.f(grid) >= loose.f(grid) - 1e-12)
    assert np.all(gp.f(grid) <= tradeoff_curve(ApproxDP(1.0, 1e-3)).f(grid) + 1e-12)
    # a replace-one record is its own MIP curve; eta_from_dp agrees with the curves in both readings
    rep = tradeoff_curve(PureDP(1.0, neighbours="replace_one"))
    assert eta_from_curve(rep) == pytest.approx(eta_from_dp(1.0, neighbours="replace_one"))
    assert eta_from_curve(tradeoff_curve(PureDP(1.0))) == pytest.approx(eta_from_dp(1.0))


def test_dpsgd_replace_one_is_tighter_than_group_privacy_and_looser_than_add_remove():
    rec = SubsampledGaussian(1.0, 0.05, 100)
    add = tradeoff_curve(rec, value_discretization_interval=1e-3)
    rep = tradeoff_curve(rec, neighbours="replace_one", value_discretization_interval=1e-3)
    group = GroupPrivacyCurve(add)
    grid = np.concatenate([np.logspace(-5, -1, 30), np.linspace(0.15, 0.9, 16)])
    assert np.all(rep.tpr(grid) >= add.tpr(grid) - 1e-9)
    assert np.all(rep.tpr(grid) <= group.tpr(grid) + 1e-9)
    assert eta_from_curve(add) == pytest.approx(rep.advantage() / 2)  # eta reads the replace-one curve


def test_a_replace_one_guarantee_does_not_give_add_remove():
    with pytest.raises(ValueError, match="replace-one neighbours only"):
        tradeoff_curve(PureDP(1.0, neighbours="replace_one"), neighbours="add_remove")
    # DP-SGD describes the mechanism itself: both relations are accounted from the record
    c = tradeoff_curve(SubsampledGaussian(1.0, 0.1, 5, neighbours="replace_one"), neighbours="add_remove")
    assert c.neighbours == "add_remove"
