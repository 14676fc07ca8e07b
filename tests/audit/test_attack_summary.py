"""The per-attack metric bundle against brute force and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipkit.metrics.attack_summary import (
    auc_interval,
    base_rate_label,
    crossfit_guesses,
    summarize_attack,
)
from mipkit.stats import clopper_pearson


def _brute_tpr_at_fpr(scores, labels, fpr):
    """Largest TPR of 'member iff score >= t' over every t (and 'nobody'), subject to FPR <= fpr."""
    best = 0.0
    pos, neg = labels == 1, labels == 0
    for t in np.concatenate([np.unique(scores), [np.inf]]):
        flag = scores >= t
        if flag[neg].mean() <= fpr + 1e-12:
            best = max(best, flag[pos].mean())
    return best


def _brute_randomised_tpr(scores, labels, fpr):
    """Largest TPR of 'member if score > t, and a random share q of the records at t' over every t and q,
    subject to at most floor(fpr m) of the m non-members flagged (expected member count)."""
    best = 0.0
    pos, neg = labels == 1, labels == 0
    for t in np.unique(scores):
        above, tied = scores > t, scores == t
        room = np.floor(fpr * neg.sum() + 1e-9) - above[neg].sum()  # whole non-members flagged
        if room < -1e-9:
            continue
        q = 1.0 if tied[neg].sum() == 0 else min(1.0, room / tied[neg].sum())
        best = max(best, (above[pos].sum() + q * tied[pos].sum()) / pos.sum())
    return best


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(10, 60), st.sampled_from([0.01, 0.1, 0.3]))
def test_tpr_at_fpr_matches_brute_force_and_interval_is_clopper_pearson(seed, n, fpr):
    rng = np.random.default_rng(seed)
    labels = np.r_[np.ones(n), np.zeros(n)].astype(int)
    scores = np.round(rng.normal(size=2 * n) + 0.7 * labels, 1)  # rounding makes ties
    summ = summarize_attack(scores, labels, fprs=(fpr,), random_state=seed)
    point = summ.tpr_at_fpr[0]
    # the randomised rule at the tied scores (expected counts, rounded), never below a threshold rule's
    assert point.tpr == pytest.approx(_brute_randomised_tpr(scores, labels, fpr), abs=0.5 / n + 1e-9)
    assert point.tpr >= _brute_tpr_at_fpr(scores, labels, fpr) - 1e-12
    assert point.fpr <= fpr + 1e-12
    assert point.interval() == clopper_pearson(point.true_positives, n)
    # the stored threshold and tied share reproduce the counts
    above, tied = scores > point.threshold, scores == point.threshold
    if point.tied_share == 0:
        above, tied = scores >= point.threshold, np.zeros_like(tied)
    for lab, count in ((1, point.true_positives), (0, point.false_positives)):
        got = above[labels == lab].sum() + point.tied_share * tied[labels == lab].sum()
        assert abs(got - count) <= 0.5 + 1e-9


def test_perfect_attack_gets_eta_one_half_and_full_tpr():
    labels = np.r_[np.ones(200), np.zeros(200)].astype(int)
    scores = labels + np.linspace(0, 0.5, 400)
    summ = summarize_attack(scores, labels, groups=np.arange(400) % 4, random_state=0)
    assert summ.auc == 1.0
    assert all(p.tpr == 1.0 for p in summ.tpr_at_fpr)
    assert summ.eta.eta == 0.5 and summ.balanced_accuracy == 1.0
    assert summ.eta.interval()[0] == pytest.approx(clopper_pearson(400, 400)[0] - 0.5)


def test_uninformative_scores_give_eta_near_zero():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 4000)
    summ = summarize_attack(rng.normal(size=4000), labels, random_state=1)
    lo, hi = summ.eta.interval()
    assert lo < 0.03 and hi > -0.03
    assert abs(summ.auc - 0.5) < 0.04


def test_crossfit_threshold_never_sees_its_own_group():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=300)
    labels = (scores + rng.normal(size=300) > 0).astype(int)
    groups = np.r_[np.zeros(150), np.ones(150)]
    g1 = crossfit_guesses(scores, labels, groups=groups, random_state=0)
    flipped = labels.copy()
    flipped[:150] = 1 - flipped[:150]  # labels of group 0 only change the threshold used on group 1
    g2 = crossfit_guesses(scores, flipped, groups=groups, random_state=0)
    np.testing.assert_array_equal(g1[:150], g2[:150])
    assert not np.array_equal(g1[150:], g2[150:])


def test_auc_interval_closed_form_at_one_half():
    n = 50
    # Hanley & McNeil at A = 1/2: Q1 = Q2 = 1/3, var = (1/4 + 2 (n - 1)(1/3 - 1/4)) / n^2
    var = (0.25 + 2 * (n - 1) * (1 / 3 - 0.25)) / n**2
    lo, hi = auc_interval(0.5, n, n, 0.95)
    assert hi - 0.5 == pytest.approx(1.959963984540054 * np.sqrt(var))
    assert 0.5 - lo == pytest.approx(hi - 0.5)


def test_precision_at_base_rate_follows_the_formula():
    rng = np.random.default_rng(5)
    labels = np.r_[np.ones(500), np.zeros(500)].astype(int)
    scores = rng.normal(size=1000) + 1.5 * labels
    summ = summarize_attack(scores, labels, fprs=(0.1,), base_rates=(1 / 101,), random_state=0)
    point = summ.tpr_at_fpr[0]
    pi = 1 / 101
    expected = pi * point.tpr / (pi * point.tpr + (1 - pi) * point.fpr)
    got = summ.precision_at_base_rate()["1:100"]["0.1"]
    assert got["precision"] == pytest.approx(expected)
    assert got["precision_ci"][0] <= expected <= got["precision_ci"][1]
    assert base_rate_label(0.5) == "1:1" and base_rate_label(1 / 1001) == "1:1000"


def test_tied_scores_give_the_randomised_rule_and_say_where_measurement_starts():
    """Rounded scores: a third of the records share the top score. A threshold rule finds nobody at 1% FPR
    (its first point is at FPR ~8%), though the AUC is 0.69; the randomised rule at the tie finds members
    in proportion, and the result says below which FPR no threshold measures."""
    from mipkit.metrics.attack_summary import summarize_attack
    from mipkit.metrics.roc import smallest_measured_fpr, tpr_at_fpr

    rng = np.random.default_rng(0)
    y = np.r_[np.ones(1000), np.zeros(1000)].astype(int)
    p = np.where(y == 1, rng.uniform(0.3, 1.2, 2000), rng.uniform(0.0, 1.1, 2000))
    p = np.minimum(p, 1.0).round(2)
    low = smallest_measured_fpr(p, y)
    assert low > 0.05  # non-members tie at p = 1.00
    t = tpr_at_fpr(p, y, [0.01, low])
    first = tpr_at_fpr(p, y, low)[0]
    assert t[0] == pytest.approx(0.01 / low * first, rel=1e-6) and t[0] > 0.01
    point = summarize_attack(p, y, fprs=(0.01,), random_state=0).tpr_at_fpr[0]
    assert point.true_positives > 10 and point.false_positives == 10 and 0 < point.tied_share < 1
    assert point.to_dict()["smallest_measured_fpr"] == pytest.approx(low)
    # without ties nothing changes: the largest TPR of a threshold at FPR <= 1%
    s = rng.normal(size=2000) + y
    assert tpr_at_fpr(s, y, 0.01)[0] == pytest.approx(_brute_tpr_at_fpr(s, y, 0.01))
    assert summarize_attack(s, y, fprs=(0.01,), random_state=0).tpr_at_fpr[0].tied_share == 0
