"""Measured privacy lower bounds against independent computations: exact binomial sums (Python integers
and fractions), brute force over thresholds and guess rules, and Monte-Carlo validity for mechanisms whose
epsilon is known exactly."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mipkit import MipkitValueError
from mipkit.metrics.dp_lower_bounds import (
    clopper_pearson_upper,
    epsilon_from_rates,
    epsilon_lower_bound,
    gdp_lower_bound,
    mu_from_rates,
    one_run_epsilon,
    one_run_lower_bound,
    one_run_p_value,
    threshold_counts,
)


def _binom_tail_exact(n: int, p: Fraction, k: int) -> Fraction:
    """``P[Bin(n, p) >= k]`` as an exact fraction (sum of ``C(n, j) p^j (1-p)^(n-j)``)."""
    return sum(
        (Fraction(math.comb(n, j)) * p**j * (1 - p) ** (n - j) for j in range(max(k, 0), n + 1)), Fraction(0)
    )


def _binom_cdf(n: int, p: float, k: int) -> float:
    """``P[Bin(n, p) <= k]`` summed term by term (no scipy)."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (9, 10), (10, 10), (17, 60), (0, 400)])
def test_clopper_pearson_upper_solves_the_binomial_tail_equation(k, n):
    alpha = 0.025
    p = float(clopper_pearson_upper(k, n, alpha))
    if k == n:
        assert p == 1.0
        return
    assert _binom_cdf(n, p, k) == pytest.approx(alpha, rel=1e-8)
    assert _binom_cdf(n, p * (1 - 1e-6), k) > alpha  # the smallest such p


def test_rates_to_epsilon_and_mu():
    # an (eps, delta)-DP curve's vertex gives back eps; both orders of the test count
    eps, delta = 1.3, 1e-3
    fpr = 0.05
    fnr = 1 - delta - math.exp(eps) * fpr
    assert epsilon_from_rates(fpr, fnr, delta) == pytest.approx(eps)
    assert epsilon_from_rates(fnr, fpr, delta) == pytest.approx(eps)
    assert epsilon_from_rates(fnr, fpr, delta, one_sided=True) < eps
    assert epsilon_from_rates(0.5, 0.5, 0.0) == 0.0
    # a point of the mu-GDP curve gives back mu: FNR = Phi(Phi^-1(1 - FPR) - mu)
    mu = 1.7
    for a in (1e-4, 0.01, 0.3):
        b = stats.norm.cdf(stats.norm.ppf(1 - a) - mu)
        assert mu_from_rates(a, b) == pytest.approx(mu)
        assert mu_from_rates(b, a) == pytest.approx(mu)


def test_threshold_counts_against_a_loop():
    rng = np.random.default_rng(1)
    s = np.round(rng.normal(size=300), 1)  # ties
    y = rng.random(300) < 0.4
    thr, fp, fn, n_neg, n_pos = threshold_counts(s, y)
    assert n_pos == y.sum() and n_neg == (~y).sum() and thr[-1] == np.inf
    for t, a, b in zip(thr, fp, fn, strict=True):
        assert a == sum(1 for v, m in zip(s, y, strict=True) if v >= t and not m)
        assert b == sum(1 for v, m in zip(s, y, strict=True) if v < t and m)


def test_bonferroni_and_fixed_thresholds_against_brute_force():
    rng = np.random.default_rng(2)
    y = rng.random(500) < 0.5
    s = rng.normal(size=500) + 1.5 * y
    conf, delta = 0.9, 1e-5
    best = 0.0
    thresholds = sorted(set(s.tolist())) + [math.inf]
    for t in thresholds:
        fp = int(np.sum(s[~y] >= t))
        fn = int(np.sum(s[y] < t))
        a = (1 - conf) / len(thresholds) / 2
        fu = stats.beta.ppf(1 - a, fp + 1, (~y).sum() - fp) if fp < (~y).sum() else 1.0
        nu = stats.beta.ppf(1 - a, fn + 1, y.sum() - fn) if fn < y.sum() else 1.0
        cands = [0.0]
        if 1 - delta - nu > 0:
            cands.append(math.log((1 - delta - nu) / fu))
        if 1 - delta - fu > 0:
            cands.append(math.log((1 - delta - fu) / nu))
        best = max(best, *cands)
    got = epsilon_lower_bound(s, y, delta=delta, confidence=conf, threshold="bonferroni")
    assert got.epsilon == pytest.approx(best, rel=1e-9)
    assert "501 thresholds" in got.method
    fixed = epsilon_lower_bound(s, y, delta=delta, confidence=conf, threshold=0.7)
    fp, fn = int(np.sum(s[~y] >= 0.7)), int(np.sum(s[y] < 0.7))
    assert (fixed.false_positives, fixed.false_negatives) == (fp, fn)
    assert fixed.fpr_upper == pytest.approx(stats.beta.ppf(1 - 0.05, fp + 1, (~y).sum() - fp))


@pytest.mark.parametrize("threshold", ["split", "bonferroni"])
def test_the_epsilon_lower_bound_is_valid_for_randomized_response(threshold):
    """Randomized response is exactly eps-DP (no better): with 95% confidence the bound stays below eps."""
    eps, trials, runs = 1.0, 400, 60
    keep = math.exp(eps) / (1 + math.exp(eps))
    rng = np.random.default_rng(7)
    over, values = 0, []
    for _ in range(runs):
        y = rng.random(trials) < 0.5
        out = np.where(rng.random(trials) < keep, y, ~y).astype(float)
        lb = epsilon_lower_bound(out, y, delta=0.0, threshold=threshold, random_state=rng)
        values.append(lb.epsilon)
        over += lb.epsilon > eps
    assert over <= 3  # at most 5% expected; Clopper-Pearson is conservative
    assert np.mean(values) > 0.3  # and it does measure something


def test_the_gdp_lower_bound_recovers_mu_of_gaussian_scores():
    rng = np.random.default_rng(4)
    y = rng.random(40_000) < 0.5
    s = rng.normal(size=y.size) + 1.5 * y
    lb = gdp_lower_bound(s, y, delta=1e-5, threshold="split", random_state=1)
    assert 1.3 < lb.mu < 1.5  # below the true mu = 1.5, close at this size
    from mipkit.accounting import GDP, tradeoff_curve

    assert lb.epsilon == pytest.approx(tradeoff_curve(GDP(lb.mu)).epsilon_for_delta(1e-5))


def test_split_by_groups_keeps_groups_whole():
    rng = np.random.default_rng(5)
    y = rng.random(800) < 0.5
    s = rng.normal(size=800) + y
    groups = np.repeat(np.arange(8), 100)
    lb = epsilon_lower_bound(s, y, delta=1e-5, threshold="split", groups=groups, random_state=3)
    assert lb.negatives + lb.positives == 400 and "groups" in lb.method


# ------------------------------------------------------------------------------------------- one run
def test_one_run_p_value_at_delta_zero_is_the_exact_binomial_tail():
    for r, v, eps in [(10, 7, 0.5), (30, 25, 1.2), (5, 0, 2.0), (8, 8, 0.1)]:
        q = Fraction(math.exp(eps)) / (1 + Fraction(math.exp(eps)))
        assert one_run_p_value(50, r, v, eps, 0.0) == pytest.approx(
            float(_binom_tail_exact(r, q, v)), rel=1e-9
        )


def test_one_run_p_value_delta_term_against_exact_fractions():
    """``B(v) + 2 m delta max_i (B(v - i) - B(v)) / i`` summed with exact fractions."""
    m, r, v, eps, delta = 40, 20, 16, 0.8, 1e-3
    q = Fraction(math.exp(eps)) / (1 + Fraction(math.exp(eps)))
    b = _binom_tail_exact(r, q, v)
    alpha = max((_binom_tail_exact(r, q, v - i) - b) / i for i in range(1, v + 1))
    expect = b + alpha * Fraction(delta) * 2 * m
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(float(expect), rel=1e-9)


def test_the_one_run_theorem_holds_for_randomized_response_by_exact_enumeration():
    """m canaries, each in with probability 1/2; the mechanism reveals each S_i through eps-randomized
    response and the auditor guesses on the first r canaries. Enumerating all 4^m outcomes gives the exact
    law of the number of correct guesses W; the theorem's bound (delta = 0) must dominate its tail, and is
    exact here (W ~ Bin(r, e^eps / (1 + e^eps)))."""
    m, r, eps = 6, 4, Fraction(1, 1)
    keep = Fraction(math.exp(1.0)) / (1 + Fraction(math.exp(1.0)))
    law = [Fraction(0)] * (r + 1)
    for s_bits in range(2**m):
        for flip_bits in range(2**m):
            p = Fraction(1, 2**m)
            correct = 0
            for i in range(m):
                member, flipped = (s_bits >> i) & 1, (flip_bits >> i) & 1
                p *= (1 - keep) if flipped else keep
                revealed = member ^ flipped  # what the release shows of canary i
                if i < r and revealed == member:  # the auditor guesses the revealed bit
                    correct += 1
            law[correct] += p
    assert sum(law) == 1
    for v in range(r + 1):
        tail = float(sum(law[v:]))
        assert one_run_p_value(m, r, v, float(eps), 0.0) == pytest.approx(tail, rel=1e-9)
        assert one_run_p_value(m, r, v, float(eps), 1e-4) >= tail


def test_one_run_epsilon_is_the_root_and_valid_in_simulation():
    lb = one_run_epsilon(1000, 100, 90, delta=1e-5, confidence=0.95)
    assert one_run_p_value(1000, 100, 90, lb, 1e-5) == pytest.approx(0.05, rel=1e-6)
    assert one_run_epsilon(1000, 100, 50, delta=1e-5) == 0.0
    # randomized response with eps = 1: the bound exceeds 1 in at most ~5% of runs
    rng = np.random.default_rng(11)
    keep = math.exp(1) / (1 + math.exp(1))
    over = 0
    for _ in range(200):
        s = rng.random(200) < 0.5
        out = np.where(rng.random(200) < keep, s, ~s)
        over += one_run_lower_bound(out.astype(float) + 0.01 * rng.random(200), s, delta=0.0,
                                    k_plus=(0.25,), k_minus=(0.25,)).epsilon > 1.0  # fmt: skip
    assert over <= 16


def test_one_run_lower_bound_is_the_best_rule_at_the_bonferroni_level():
    rng = np.random.default_rng(9)
    m = 300
    inc = rng.random(m) < 0.5
    s = rng.normal(size=m) + 2.0 * inc
    got = one_run_lower_bound(s, inc, delta=1e-5, confidence=0.95, k_plus=(0.05, 0.1, 30), k_minus=(0, 0.1))
    order = np.argsort(-s)
    best = 0.0
    rules = [(p, n) for p in (15, 30, 30) for n in (0, 30)]
    for p, n in rules:
        v = int(inc[order[:p]].sum()) + (int((~inc[order[m - n :]]).sum()) if n else 0)
        best = max(best, one_run_epsilon(m, p + n, v, delta=1e-5, confidence=1 - 0.05 / len(rules)))
    assert got.epsilon == pytest.approx(best) and got.rules_tried == 6 and got.m == m
    assert got.epsilon > 0.5


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: epsilon_lower_bound([0.1, 0.2], [1, 1], delta=1e-5), "both members"),
        (lambda: epsilon_lower_bound([0.1, np.nan], [1, 0], delta=1e-5), "finite"),
        (lambda: epsilon_lower_bound([0.1, 0.2], [1, 0], delta=1e-5, threshold="best"), "split"),
        (lambda: one_run_p_value(5, 3, 4, 1.0, 0.0), "n_correct <= n_guess"),
        (lambda: one_run_lower_bound([0.1, 0.2, 0.3], [1, 0, 1], delta=1e-5, k_plus=(7,)), "Guess counts"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(MipkitValueError, match=match):
        call()
