"""LiRA on synthetic Gaussian signals where the true likelihood ratio and the optimal ROC are known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mipkit._validation import MipkitValueError
from mipkit.attacks import lira_gaussian_fits, lira_offline, lira_online
from mipkit.metrics import roc_auc


def _gaussian_world(n, k, *, shift, sd_in=1.0, sd_out=1.0, seed=0):
    """Per-record OUT means vary (N(0, 2^2)); IN means are shifted by ``shift``. Each record is IN for a
    random half of the k reference models; the target model holds each record with probability 1/2."""
    rng = np.random.default_rng(seed)
    mu_out = rng.normal(0.0, 2.0, size=n)
    mu_in = mu_out + shift
    ref_in = np.zeros((k, n), dtype=bool)
    for i in range(n):
        ref_in[rng.choice(k, size=k // 2, replace=False), i] = True
    ref_conf = np.where(
        ref_in, rng.normal(mu_in, sd_in, size=(k, n)), rng.normal(mu_out, sd_out, size=(k, n))
    )
    member = rng.random(n) < 0.5
    target = np.where(member, rng.normal(mu_in, sd_in), rng.normal(mu_out, sd_out))
    true_lr = stats.norm.logpdf(target, mu_in, sd_in) - stats.norm.logpdf(target, mu_out, sd_out)
    return target, ref_conf, ref_in, member.astype(int), true_lr


def test_online_lira_reaches_the_neyman_pearson_auc():
    """Equal variances, IN mean shifted by d' sd: the LR of every record is d' z - d'^2/2 with z standard
    normal shifted by d' for members, so the optimal AUC is Phi(d'/sqrt(2)) (independent of the means)."""
    d_prime = 1.5
    target, ref_conf, ref_in, member, true_lr = _gaussian_world(3000, 64, shift=d_prime, seed=1)
    scores = lira_online(target, ref_conf, ref_in)
    auc = roc_auc(scores, member)
    theory = stats.norm.cdf(d_prime / math.sqrt(2))
    assert abs(auc - theory) < 0.03  # Monte Carlo SE of an AUC on 3000 records ~ 0.007
    # the estimated LR ranks records almost like the true LR on the same draws
    assert abs(auc - roc_auc(true_lr, member)) < 0.01
    # a raw-confidence threshold, blind to the per-record means, is far from optimal
    assert roc_auc(target, member) < auc - 0.15


def test_online_score_equals_the_closed_form_lr_up_to_estimation_error():
    """Unequal variances: with many reference models the score converges to the true log LR."""
    target, ref_conf, ref_in, _, true_lr = _gaussian_world(400, 800, shift=1.0, sd_in=0.5, sd_out=1.5, seed=2)
    scores = lira_online(target, ref_conf, ref_in)
    assert np.corrcoef(scores, true_lr)[0, 1] > 0.995
    # 400 references per side: means off by ~0.05 sd, variances by ~7%: the LR error is small
    assert np.median(np.abs(scores - true_lr)) < 0.1
    # and the closed form is what we compute when the fits are exact
    fits = lira_gaussian_fits(ref_conf, ref_in)
    by_hand = (
        -0.5 * np.log(2 * np.pi * fits.var_in)
        - (target - fits.mean_in) ** 2 / (2 * fits.var_in)
        + 0.5 * np.log(2 * np.pi * fits.var_out)
        + (target - fits.mean_out) ** 2 / (2 * fits.var_out)
    )
    np.testing.assert_allclose(scores, by_hand, rtol=1e-10, atol=1e-10)


def test_global_variance_helps_with_few_reference_models():
    """K = 4 (two per side): per-record variances from 1 degree of freedom are noisy; one pooled variance
    is what Carlini et al. advise, and it gives a clearly higher AUC here."""
    target, ref_conf, ref_in, member, _ = _gaussian_world(3000, 4, shift=1.5, seed=3)
    per_record = roc_auc(lira_online(target, ref_conf, ref_in), member)
    pooled = roc_auc(lira_online(target, ref_conf, ref_in, global_variance=True), member)
    assert pooled > per_record + 0.03
    fits = lira_gaussian_fits(ref_conf, ref_in, global_variance=True)
    # the pooled within-record variance estimates the true variance 1 (3000 dof: SE ~ 0.026)
    assert fits.var_in[0] == pytest.approx(1.0, abs=0.1)
    assert np.all(fits.var_in == fits.var_in[0])


def test_fits_by_hand_and_fallbacks():
    """Record 0 has no IN reference, record 1 no OUT, record 2 a single IN: check every fallback."""
    ref_conf = np.array(
        [
            [1.0, 5.0, 2.0, 0.0],
            [2.0, 6.0, 4.0, 1.0],
            [3.0, 7.0, 3.0, 3.0],
        ]
    )
    ref_in = np.array(
        [
            [False, True, True, True],
            [False, True, False, True],
            [False, True, False, False],
        ]
    )
    fits = lira_gaussian_fits(ref_conf, ref_in)
    # means where data exist
    assert fits.mean_in[1] == 6.0 and fits.mean_in[2] == 2.0 and fits.mean_in[3] == 0.5
    assert fits.mean_out[0] == 2.0 and fits.mean_out[2] == 3.5 and fits.mean_out[3] == 3.0
    # gap = mean over records with both sides (2 and 3) of mean_in - mean_out = ((2 - 3.5) + (0.5 - 3)) / 2
    gap = -2.0
    assert fits.mean_in[0] == pytest.approx(2.0 + gap)
    assert fits.mean_out[1] == pytest.approx(6.0 - gap)
    # pooled variances: IN from record 1 (var 1, 2 dof) and record 3 (var 0.5, 1 dof): (2 + 0.5) / 3
    pooled_in = (((5 - 6) ** 2 + (7 - 6) ** 2) + ((0 - 0.5) ** 2 + (1 - 0.5) ** 2)) / 3
    pooled_out = (((1 - 2) ** 2 + (3 - 2) ** 2) + ((4 - 3.5) ** 2 + (3 - 3.5) ** 2)) / 3
    assert fits.var_in[1] == pytest.approx(1.0) and fits.var_in[3] == pytest.approx(0.5)
    assert fits.var_in[0] == pytest.approx(pooled_in) and fits.var_in[2] == pytest.approx(pooled_in)
    assert fits.var_out[1] == pytest.approx(pooled_out) and fits.var_out[3] == pytest.approx(pooled_out)
    assert fits.var_out[0] == pytest.approx(1.0)
    assert list(fits.n_in) == [0, 3, 1, 2] and list(fits.n_out) == [3, 0, 2, 1]


def test_offline_one_sided_and_logpdf_ordering():
    rng = np.random.default_rng(4)
    ref_conf = rng.normal(size=(16, 1)) * 2 + 3
    ref_in = np.zeros((16, 1), dtype=bool)
    fits = lira_gaussian_fits(ref_conf, ref_in)
    mu, sd = fits.mean_out[0], math.sqrt(fits.var_out[0])
    xs = mu + sd * np.linspace(-6, 12, 91)
    ref_many = np.repeat(ref_conf, xs.size, axis=1)
    in_many = np.repeat(ref_in, xs.size, axis=1)
    one_sided = lira_offline(xs, ref_many, in_many, test="one-sided")
    logpdf = lira_offline(xs, ref_many, in_many, test="logpdf")
    # one-sided: strictly increasing in x, and equal to -log(1 - Phi(z)) = -log(erfc(z / sqrt 2) / 2)
    assert np.all(np.diff(one_sided) > 0)
    z = (xs - mu) / sd
    expected = [-math.log(0.5 * math.erfc(v / math.sqrt(2))) for v in z]
    np.testing.assert_allclose(one_sided, expected, rtol=1e-9, atol=1e-15)
    # it does not saturate: z = 10 and z = 12 stay apart (1 - Phi would round both to 1 as Phi)
    assert one_sided[-1] - one_sided[-6] > 1.0
    # logpdf: symmetric about the OUT mean, so a record far BELOW it also scores high
    np.testing.assert_allclose(logpdf, 0.5 * z**2 + math.log(sd) + 0.5 * math.log(2 * math.pi), rtol=1e-9)
    below, above = np.argmin(np.abs(z + 3)), np.argmin(np.abs(z - 3))
    assert logpdf[below] == pytest.approx(logpdf[above], rel=1e-9)
    assert one_sided[below] < one_sided[above]
    # on x >= mu_out both tests order records the same way
    upper = z >= 0
    assert np.all(np.diff(logpdf[upper]) > 0)


def test_offline_attack_detects_members():
    target, ref_conf, ref_in, member, _ = _gaussian_world(2000, 16, shift=2.0, seed=5)
    for test in ("one-sided", "logpdf"):
        assert roc_auc(lira_offline(target, ref_conf, ref_in, test=test), member) > 0.75
    # the one-sided test matches the direction of the shift, so it beats the two-sided logpdf
    one = roc_auc(lira_offline(target, ref_conf, ref_in, test="one-sided"), member)
    two = roc_auc(lira_offline(target, ref_conf, ref_in, test="logpdf"), member)
    assert one > two


def test_bad_inputs():
    with pytest.raises(MipkitValueError):
        lira_online(np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3), dtype=bool))  # no IN references
    with pytest.raises(MipkitValueError):
        lira_offline(np.zeros(3), np.zeros((4, 3)), np.ones((4, 3), dtype=bool))  # no OUT references
    with pytest.raises(MipkitValueError):
        lira_online(np.zeros(3), np.zeros((4, 2)), np.zeros((4, 2), dtype=bool))  # shapes
    with pytest.raises(MipkitValueError):
        lira_offline(np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3), dtype=bool), test="two-sided")
