"""The statistics of the optimally-soft-labels benchmarks (benchmarks/_soft_labels_stats.py) on small
constructed inputs: the cluster bootstrap covers a known difference where treating pairs as independent
does not, the TOST accepts and rejects equivalence where it must, the power formulas match known values."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def sl():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import _soft_labels_stats

        yield _soft_labels_stats
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_per_model_auc_is_each_rows_auc_with_ties_one_half(sl):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, size=(4, 30)).astype(float)  # many ties
    member = np.zeros((4, 30), dtype=bool)
    member[:, :12] = True
    got = sl.per_model_auc(scores, member)
    want = [roc_auc_score(member[t], scores[t]) for t in range(4)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_weighted_tpr_is_the_pooled_tpr_of_the_resampled_models(sl):
    from mipkit.metrics.roc import tpr_at_fpr

    rng = np.random.default_rng(1)
    scores = np.round(rng.normal(size=(5, 200)), 1)  # ties across models
    member = np.zeros((5, 200), dtype=bool)
    member[:, :100] = True
    scores[member] += 0.4
    W = np.array([[1, 1, 1, 1, 1], [3, 0, 0, 2, 0], [0, 0, 5, 0, 0]])
    got = sl.weighted_tpr_at_fpr(scores, member, W, 0.05)
    for b in range(3):
        rows = np.repeat(np.arange(5), W[b])
        want = tpr_at_fpr(scores[rows].ravel(), member[rows].ravel(), 0.05)[0]
        assert got[b] == pytest.approx(want, abs=1e-12)


def _clustered_games(rng, n_models, n_pairs, effect):
    """Per-model accuracies of two settings: model effects shared by all pairs of a model."""
    base = 0.55 + rng.normal(0, 0.05, size=n_models)
    a = rng.binomial(n_pairs, np.clip(base, 0, 1)) / n_pairs
    b = rng.binomial(n_pairs, np.clip(base + rng.normal(0, 0.08, n_models) + effect, 0, 1)) / n_pairs
    return a, b


def test_cluster_bootstrap_covers_a_known_difference_where_independent_pairs_do_not(sl):
    """The attack on the old interval: pairs of one model share it, so +-1.96 sqrt(A(1-A)/N) over pooled
    pairs is far too narrow; resampling models keeps the nominal coverage."""
    rng = np.random.default_rng(2)
    effect, n_models, n_pairs, sims = 0.01, 30, 400, 200
    cover_cluster = cover_naive = 0
    for _ in range(sims):
        a, b = _clustered_games(rng, n_models, n_pairs, effect)
        W = sl.model_weights(400, n_models, rng)
        reps = sl.bootstrap_means(b, W) - sl.bootstrap_means(a, W)
        lo, hi = sl.percentile_interval(reps)
        cover_cluster += lo <= effect <= hi
        N = n_models * n_pairs
        se = np.sqrt(a.mean() * (1 - a.mean()) / N + b.mean() * (1 - b.mean()) / N)
        d = b.mean() - a.mean()
        cover_naive += abs(d - effect) <= 1.96 * se
    assert cover_cluster / sims >= 0.88
    assert cover_naive / sims <= 0.65


def test_tost_shows_equivalence_only_when_the_interval_is_inside_the_margin(sl):
    rng = np.random.default_rng(3)
    tight = rng.normal(0.0, 0.01, size=200)
    res = sl.tost_paired(tight, 0.01)
    assert res["equivalent"] and res["p"] < 1e-6
    assert -0.01 < res["interval"][0] < res["interval"][1] < 0.01
    off = rng.normal(0.015, 0.002, size=200)  # precisely outside the margin
    assert not sl.tost_paired(off, 0.01)["equivalent"]
    assert sl.tost_paired(-off, 0.01)["p_lower"] > 0.5


def test_a_non_significant_difference_is_not_equivalence(sl):
    """The old argument ('keeps accuracy', Mann-Whitney p = 0.33) on noisy per-model accuracies: the t test
    does not reject a difference, and the TOST does not show equivalence either."""
    rng = np.random.default_rng(4)
    d = rng.normal(-0.008, 0.06, size=50)
    assert stats.ttest_1samp(d, 0.0).pvalue > 0.05
    res = sl.tost_paired(d, 0.01)
    assert not res["equivalent"] and res["p"] > 0.05


def test_tost_p_values_are_the_two_one_sided_t_tests(sl):
    d = np.array([0.004, -0.002, 0.006, 0.001, 0.0, 0.003, -0.001, 0.002])
    res = sl.tost_paired(d, 0.01)
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert res["p_lower"] == pytest.approx(stats.t.sf((d.mean() + 0.01) / se, d.size - 1))
    assert res["p_upper"] == pytest.approx(stats.t.cdf((d.mean() - 0.01) / se, d.size - 1))


def test_power_matches_known_sample_sizes(sl):
    # Paired t, effect size 0.5 SD, two-sided 0.05, 80% power: 34 pairs (Cohen 1988, Table 2.4.1 via nct).
    assert sl.models_for_power(1.0, 0.5) == 34
    assert sl.power_paired(1.0, 0.5, 34) >= 0.8 > sl.power_paired(1.0, 0.5, 33)
    # TOST at true difference 0: n = (t_{0.95} + t_{0.90})^2 sd^2 / margin^2 (normal approx ~ 8.6 -> ~10).
    n = sl.models_for_tost(1.0, 1.0)
    assert sl.tost_power(1.0, 1.0, n) >= 0.8 > sl.tost_power(1.0, 1.0, n - 1)
    assert 8 <= n <= 12
    assert sl.models_for_tost(0.06, 0.01) > 250  # the old run's spread: 50 models were far too few


def test_tost_power_holds_in_simulation(sl):
    rng = np.random.default_rng(5)
    sd, margin = 1.0, 0.8
    n = sl.models_for_tost(sd, margin)
    hits = sum(sl.tost_paired(rng.normal(0, sd, n), margin)["equivalent"] for _ in range(400))
    assert abs(hits / 400 - sl.tost_power(sd, margin, n)) < 0.08


def test_the_analysis_reports_intervals_tost_and_the_chosen_alphas(sl):
    """benchmarks/_soft_labels_analysis.py on synthetic model outputs (no fitting): the JSON the docs cite."""
    import _soft_labels
    import _soft_labels_analysis

    rng = np.random.default_rng(6)
    T, S, n_def = 6, 8, 20
    n_pool = 2 * n_def
    cfg = _soft_labels.Config(name="synthetic", n_defenders=T, n_shadows=S, n_boot=200)
    member = np.zeros(n_pool, dtype=bool)
    member[:n_def] = True
    shadow_in = np.stack([rng.permutation(n_pool) < n_def for _ in range(S)])

    def outputs(in_mask, gap):
        conf = rng.normal(0, 1, in_mask.shape) + gap * in_mask
        return {
            "conf": conf,
            "p_true": 1 / (1 + np.exp(-conf)),
            "pred": rng.integers(0, 3, in_mask.shape).astype(np.int16),
            "test_accuracy": rng.uniform(0.6, 0.7, in_mask.shape[0]),
        }

    store = {"shadow": {}, "defender": {}, "alphas": {}}
    for label, _, value in _soft_labels.SETTINGS + _soft_labels.VALIDATED:
        gap = 2.0 if label == "hard" else 0.5
        store["shadow"][label] = outputs(shadow_in, gap)
        store["defender"][label] = outputs(np.tile(member, (T, 1)), gap)
        if value == "validate":
            chosen = (2.0, 2.0, 1.0, 2.0, 0.5, 2.0)
            store["alphas"][label] = [{"alpha": a, "group_alphas": None} for a in chosen]
        elif value == "per-sample":
            store["alphas"][label] = [{"alpha": None, "group_alphas": [1.0, 2.0]}] * T
    data = {
        "y": rng.integers(0, 3, n_pool),
        "y_clean": rng.integers(0, 3, n_pool),
        "n_defender": n_def,
        "description": "synthetic",
    }
    result = _soft_labels_analysis.analyse(cfg, data, store, shadow_in)
    rows = {r["setting"]: r for r in result["settings"]}
    assert rows["OSL validated"]["chosen_alpha_counts"] == {"2": 4, "1": 1, "0.5": 1}
    assert rows["OSL per-sample"]["chosen_alpha_counts"] == {"1/2": T}
    assert "chosen_alpha_counts" not in rows["OSL 0.5"]
    for row in rows.values():
        for key in ("test_accuracy", "ltu_privacy", "lira_tpr", "rmia_tpr"):
            lo, hi = row[key + "_ci"]
            assert lo <= row[key] <= hi
    diff = rows["OSL 0"]["vs_hard"]
    assert diff["ltu_privacy"]["ci"][0] > 0  # the gap 2 -> 0.5 is a large privacy gain
    assert set(diff["test_accuracy"]["tost"]) >= {"p", "interval", "equivalent", "margin"}
    assert len(result["per_model"]["hard"]["ltu_expected_accuracy"]) == T


def test_the_vectorised_lira_is_lira_online_row_by_row(sl):
    import _soft_labels_analysis
    from mipkit.attacks import lira_online

    rng = np.random.default_rng(7)
    shadow_in = rng.random((10, 40)) < 0.5
    sh_conf = rng.normal(size=(10, 40)) + shadow_in
    conf = rng.normal(size=(3, 40))
    for gv in (False, True):
        got = _soft_labels_analysis.lira(conf, sh_conf, shadow_in, gv)
        want = np.stack([lira_online(c, sh_conf, shadow_in, global_variance=gv) for c in conf])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
