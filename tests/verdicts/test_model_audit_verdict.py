"""The model audit's verdict is calibrated: few false alarms on a null trainer, power on a known leak, valid
cluster-bootstrap machinery, and a verdict box that follows the stated policy (docs/theory.md section 11).

Reduced sizes (the full-size study is benchmarks/verdict_calibration_model.py): the whole file runs in well
under a minute on two shared cores.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sst
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score

from mipkit.data.io import Dataset
from mipkit.stats import (
    clopper_pearson,
    pigeonhole_weights,
    simultaneous_intervals,
    two_way_ratio_replicates,
)
from mipkit.workflows.audit.calibration import NullTrainer, null_audit
from mipkit.workflows.audit.config import AuditConfig
from mipkit.workflows.audit.verdict import _auc_replicates, check_policy, verdict

# ------------------------------------------------------------------------------------------ machinery


def test_pigeonhole_replicate_is_the_weighted_mean():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 5))
    d = (rng.random((3, 5)) < 0.6).astype(float)
    W, V = pigeonhole_weights(4, 3, 5, random_state=1)
    assert W.sum(axis=1).tolist() == [3] * 4 and V.sum(axis=1).tolist() == [5] * 4
    rep = two_way_ratio_replicates(a, d, W, V, chunk=3)
    for b in range(4):
        w = W[b][:, None] * V[b][None, :]
        for j in range(2):
            assert rep[b, j] == pytest.approx((w * a[j]).sum() / (w * d).sum())


def test_weighted_auc_replicates_match_sklearn_with_ties():
    rng = np.random.default_rng(3)
    scores = np.round(rng.random((4, 40)), 1)  # many ties
    labels = rng.random((4, 40)) < 0.5
    W, V = pigeonhole_weights(5, 4, 40, random_state=2)
    rep = _auc_replicates(scores, labels, W, V)
    for b in range(5):
        w = (W[b][:, None] * V[b][None, :]).ravel()
        assert rep[b] == pytest.approx(roc_auc_score(labels.ravel(), scores.ravel(), sample_weight=w))


def test_simultaneous_intervals_cover_jointly():
    """Gaussian family of 5 correlated statistics: the max-|t| intervals cover all 5 together ~95% of the
    time, more often than each marginal interval taken alone would."""
    rng = np.random.default_rng(5)
    cov = 0.5 * np.eye(5) + 0.5
    joint = 0
    for _ in range(300):
        est = rng.multivariate_normal(np.zeros(5), cov)
        rep = est + rng.multivariate_normal(np.zeros(5), cov, size=400)
        lo, hi, q = simultaneous_intervals(est, rep, 0.95)
        joint += np.all((lo <= 0) & (hi >= 0))
        assert q > sst.norm.ppf(0.975)  # wider than one marginal interval
    assert joint / 300 == pytest.approx(0.95, abs=0.04)


# ------------------------------------------------------------------------------- null and power cases

N_NULL = 16
"""Null audits here (the benchmark runs >= 200)."""


@pytest.fixture(scope="module")
def null_runs():
    X, y = make_classification(160, 5, random_state=0)
    cfg = {
        "model": "mipkit.workflows.audit.calibration.NullTrainer",
        "n_models": 6,
        "attacks": ("loss", "lira"),
    }
    return [null_audit(X, y, AuditConfig(seed=s, n_boot=300, **cfg)) for s in range(N_NULL)]


def test_null_trainer_ignores_its_data():
    X, y = make_classification(50, 4, n_informative=2, random_state=1)
    p1 = NullTrainer(7).fit(X, y).predict_proba(X)
    p2 = NullTrainer(7).fit(X[::-1], 1 - y).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)
    assert np.allclose(p1.sum(axis=1), 1)


def test_null_false_alarm_rate(null_runs):
    """The headline says "measurably reveals" on a null trainer at most 5% of the time. With 16 runs, a rate
    of 5% gives 3 or more alarms with probability 0.04 (binomial), so 3+ alarms fail the test."""
    alarms = sum(r["new_reveals"] for r in null_runs)
    assert sst.binom.sf(2, N_NULL, 0.05) < 0.05
    assert alarms <= 2, alarms
    # every headline interval holds the true eta 0 or lies entirely on one side only rarely
    assert sum(r["eta_ci"][0] <= 0 <= r["eta_ci"][1] for r in null_runs) >= N_NULL - 2
    # the new interval is wider than the old one; the design effect (bootstrap / binomial variance) > 1
    assert all(min(r["design_effect"].values()) > 1 for r in null_runs)


@pytest.fixture(scope="module")
def leaky():
    """An unregularised random forest (min_samples_leaf 1, full depth) memorises its training half."""
    import tempfile

    from mipkit.workflows.audit import audit

    X, y = make_classification(200, 8, n_informative=4, flip_y=0.1, random_state=0)
    ds = Dataset(X=X, y=y, feature_names=tuple(f"x{i}" for i in range(8)), classes=np.array([0, 1]))
    cfg = AuditConfig(
        model="sklearn.ensemble.RandomForestClassifier",
        params={"n_estimators": 30},
        n_models=6,
        attacks=("loss",),
        n_jobs=1,
        n_boot=300,
        fail_above=0.02,
    )
    with tempfile.TemporaryDirectory() as out:
        return audit(ds, cfg, run_dir=out, report=False)


def test_power_on_a_memorising_forest(leaky):
    assert leaky.reveals and leaky.eta_ci[0] > 0.02
    assert leaky.verdict["status"] == "finding"
    assert leaky.verdict["policy"] == {"metric": "eta", "fail_above": 0.02}
    # the headline interval contains the estimate and is wider than Clopper-Pearson on the pooled trials
    best = leaky.summaries[leaky.strongest_attack].eta
    cp = [v - 0.5 for v in clopper_pearson(best.correct, best.trials)]
    assert leaky.eta_ci[0] < leaky.eta < leaky.eta_ci[1] and leaky.eta_ci[0] < cp[0]
    d = leaky.to_dict()
    assert d["verdict"]["status"] == "finding" and d["headline"]["attack"] == leaky.strongest_attack
    assert len(d["provenance"]["data_sha256"]) == 64 and d["provenance"]["model_fingerprint"]
    assert "label" not in leaky.scores  # labels only on request
    assert (
        d["utility"]["learns"] and d["utility"]["majority_class_rate"] < d["utility"]["accuracy_nonmembers"]
    )


# ------------------------------------------------------------------------------------------- verdict


def _stats(lo, hi, cert_tpr=None):
    return {
        "headline": {"attack": "a", "eta": (lo + hi) / 2, "eta_ci": [lo, hi]},
        "attacks": {
            "a": {
                "auc": 0.6,
                "auc_ci_simultaneous": [0.55, 0.65],
                "tpr_at_fpr": {"0.01": {"tpr": 0.05, "tpr_ci_simultaneous": [0.03, 0.07]}},
            }
        },
        "confidence": 0.95,
    }


@pytest.mark.parametrize(
    ("lo", "hi", "limit", "status"),
    [(0.06, 0.1, 0.05, "finding"), (0.0, 0.04, 0.05, "pass"), (0.03, 0.07, 0.05, "inconclusive")],
)
def test_verdict_against_the_policy(lo, hi, limit, status):
    v = verdict(_stats(lo, hi), fail_metric="eta", fail_above=limit)
    assert v["status"] == status and v["policy"] == {"metric": "eta", "fail_above": limit}
    assert verdict(_stats(lo, hi), fail_metric=None, fail_above=None)["status"] == "no policy"


def test_verdict_other_metrics_and_certificates():
    s = _stats(-0.01, 0.02)
    assert verdict(s, fail_metric="auc", fail_above=0.5)["status"] == "finding"
    assert verdict(s, fail_metric="tpr@0.01", fail_above=0.1)["status"] == "pass"
    # a measured TPR whose lower end is above the certified TPR violates the certificate: a finding
    v = verdict(s, fail_metric=None, fail_above=None, certificate={"eta": 0.1, "tpr_bound": {"0.01": 0.02}})
    assert v["status"] == "finding" and "above the certified" in v["certificate_violations"][0]
    ok = verdict(s, fail_metric=None, fail_above=None, certificate={"eta": 0.1, "tpr_bound": {"0.01": 0.21}})
    assert ok["status"] == "no policy" and not ok["certificate_violations"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.7])
def test_policy_is_validated(bad):
    with pytest.raises(ValueError):
        check_policy("eta", bad, (0.01,))
    assert check_policy("TPR@0.010", 0.2, (0.001, 0.01)) == "tpr@0.01"
    assert check_policy("eta", None, (0.01,)) is None
