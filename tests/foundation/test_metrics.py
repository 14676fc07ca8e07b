"""Metrics against independent computations: exact binomial coverage, brute-force ROC, closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit import MipkitValueError
from mipkit.metrics import (
    best_threshold_accuracy,
    precision_at_base_rate,
    precision_recall_at_base_rate,
    roc_auc,
    tpr_at_fpr,
)
from mipkit.stats import EtaEstimate, Proportion, clopper_pearson, eta_from_guesses, wilson


def _exact_coverage(interval_fn, p: float, n: int, conf: float) -> float:
    """Probability, summed exactly over the binomial law, that the interval covers p."""
    total = 0.0
    for x in range(n + 1):
        lo, hi = interval_fn(x, n, conf)
        if lo <= p <= hi:
            total += stats.binom.pmf(x, n, p)
    return total


@pytest.mark.parametrize("p", [0.02, 0.1, 0.3, 0.5, 0.77, 0.97])
@pytest.mark.parametrize("n", [10, 37])
def test_clopper_pearson_has_at_least_nominal_coverage(p, n):
    assert _exact_coverage(clopper_pearson, p, n, 0.95) >= 0.95 - 1e-12


def test_clopper_pearson_known_values():
    # x = 0: upper end solves (1 - p)^n = a/2
    lo, hi = clopper_pearson(0, 20, 0.95)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 20), rel=1e-10)
    lo, hi = clopper_pearson(20, 20, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 20), rel=1e-10)


def test_wilson_matches_closed_form_and_is_close_to_nominal():
    x, n, z = 37, 120, stats.norm.ppf(0.975)
    p = x / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert wilson(x, n) == pytest.approx((centre - half, centre + half), rel=1e-12)
    assert _exact_coverage(wilson, 0.3, 120, 0.95) > 0.93


def test_proportion_and_eta_estimate():
    prop = Proportion(30, 40)
    assert prop.value == 0.75
    assert prop.interval() == clopper_pearson(30, 40)
    est = EtaEstimate(60, 100)
    assert est.eta == pytest.approx(0.1)
    lo, hi = est.interval()
    cp = clopper_pearson(60, 100)
    assert (lo, hi) == pytest.approx((cp[0] - 0.5, cp[1] - 0.5))
    d = est.to_dict()
    assert d["eta_ci"][0] < d["eta"] < d["eta_ci"][1]


@pytest.mark.parametrize(("x", "n"), [(-1, 5), (6, 5), (0, 0)])
def test_bad_counts_raise(x, n):
    with pytest.raises(MipkitValueError):
        clopper_pearson(x, n)


def _brute_auc(s, y):
    pos, neg = s[y == 1], s[y == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (pos.size * neg.size)


def _brute_tpr_at_fpr(s, y, a):
    best = 0.0
    for t in np.concatenate([np.unique(s), [np.inf]]):
        guess = s >= t
        fpr = guess[y == 0].mean()
        if fpr <= a:
            best = max(best, guess[y == 1].mean())
    return best


def _brute_randomised_tpr(scores, labels, fpr):
    """Largest TPR of 'member if score > t, and a random share q of the records at t' over every t and q,
    subject to FPR <= fpr (expected rates)."""
    best = 0.0
    pos, neg = labels == 1, labels == 0
    for t in np.unique(scores):
        above, tied = scores > t, scores == t
        room = fpr * neg.sum() - above[neg].sum()
        if room < -1e-9:
            continue
        q = 1.0 if tied[neg].sum() == 0 else min(1.0, room / tied[neg].sum())
        best = max(best, (above[pos].sum() + q * tied[pos].sum()) / pos.sum())
    return best


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=6, max_size=40),
    st.randoms(use_true_random=False),
)
def test_auc_and_tpr_at_fpr_match_brute_force(values, rnd):
    s = np.asarray(values, dtype=float)
    y = np.array([rnd.randint(0, 1) for _ in values])
    if y.min() == y.max():
        y[0] = 1 - y[0]
    assert roc_auc(s, y) == pytest.approx(_brute_auc(s, y))
    for a in (0.0, 0.1, 0.5):
        # ties: the randomised rule at the tied scores, never below the best threshold rule
        assert tpr_at_fpr(s, y, a)[0] == pytest.approx(_brute_randomised_tpr(s, y, a))
        assert tpr_at_fpr(s, y, a)[0] >= _brute_tpr_at_fpr(s, y, a) - 1e-12


def _tie_order_points(scores, labels):
    """Expected (FPR, TPR) of 'flag the k highest records' for k = 0..n, averaged over every order of the
    tied records (each tie-breaking order equally likely)."""
    import itertools

    groups = [np.flatnonzero(scores == v) for v in np.unique(scores)[::-1]]
    orders = [np.concatenate(o) for o in itertools.product(*(itertools.permutations(g) for g in groups))]
    hits = np.array([labels[o] for o in orders], dtype=float)  # one row per order, best record first
    tp = np.concatenate([[0.0], np.cumsum(hits, axis=1).mean(axis=0)])
    fp = np.concatenate([[0.0], np.cumsum(1 - hits, axis=1).mean(axis=0)])
    return fp / (labels == 0).sum(), tp / (labels == 1).sum()


def _tpr_on_polyline(fs, ts, a):
    """Highest TPR at FPR ``a`` on the broken line through the points in order (walked segment by
    segment)."""
    best = 0.0
    for k in range(len(fs) - 1):
        (f0, t0), (f1, t1) = (fs[k], ts[k]), (fs[k + 1], ts[k + 1])
        if f0 <= a <= f1:
            best = max(best, t1 if f1 == f0 else t0 + (a - f0) / (f1 - f0) * (t1 - t0))
    return best


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), min_size=2, max_size=7))
def test_tpr_at_fpr_is_the_mean_over_every_tie_breaking_order(records):
    s = np.array([r[0] for r in records], dtype=float)
    y = np.array([r[1] for r in records])
    if y.min() == y.max():
        y[0] = 1 - y[0]
    fs, ts = _tie_order_points(s, y)
    for a in (0.0, 0.1, 0.25, 0.5, 0.9, 1.0):
        assert tpr_at_fpr(s, y, a)[0] == pytest.approx(_tpr_on_polyline(fs, ts, a))


def test_tpr_at_fpr_does_not_join_points_across_a_tie():
    # one non-member above five tied members: no rule below FPR 1 flags a member (the diagonal from
    # (0, 0) to (1, 1) mixes two thresholds and is no tie-breaking order's curve)
    s = np.array([0, 0, 0, 0, 1, 0], dtype=float)
    y = np.array([1, 1, 1, 1, 0, 1])
    assert tpr_at_fpr(s, y, np.array([0.0, 0.1, 0.5, 1.0])) == pytest.approx([0, 0, 0, 1])


def test_precision_at_base_rate_formula_and_curve():
    assert precision_at_base_rate(0.5, 0.01, 0.5) == pytest.approx(0.5 / 0.51)
    assert precision_at_base_rate(0.5, 0.01, 1 / 101) == pytest.approx(0.5 / (0.5 + 100 * 0.01))
    assert np.isnan(precision_at_base_rate(0.0, 0.0, 0.1))
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(500), np.zeros(500)].astype(int)
    s = rng.normal(size=1000) + y
    r, p = precision_recall_at_base_rate(s, y, 0.5)
    # at base rate 1/2 the re-weighted precision is the plain precision on this balanced sample
    order = np.argsort(-s, kind="stable")
    k = 100
    top = order[:k]
    assert p[np.searchsorted(r, y[top].sum() / 500, side="left")] == pytest.approx(y[top].mean(), abs=0.02)


def test_best_threshold_and_guesses():
    y = np.array([0, 0, 1, 1])
    s = np.array([0.1, 0.2, 0.8, 0.9])
    acc, _ = best_threshold_accuracy(s, y)
    assert acc == 1.0
    est = eta_from_guesses(np.array([1, 0, 1, 1]), y)
    assert (est.correct, est.trials) == (3, 4)


def test_roc_input_validation():
    with pytest.raises(MipkitValueError):
        roc_auc([0.1, np.nan], [0, 1])
    with pytest.raises(MipkitValueError):
        roc_auc([0.1, 0.2], [1, 1])
    with pytest.raises(MipkitValueError):
        roc_auc([0.1, 0.2], [0, 2])
