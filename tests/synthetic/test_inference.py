"""Attribute inference measures on tiny hand-computed examples; the DCR attack on planted copies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit.attacks.distance import dcr_attack, dcr_protection
from mipkit.attacks.inference import (
    PrecisionCoverage,
    anonymeter_risk,
    attribute_inference,
    baseline_at_attack_coverage,
    is_correct,
    precision_coverage_curve,
    precision_improvement,
)
from mipkit.data.tables import check_tables
from mipkit.metrics import Proportion


def test_precision_improvement_paper_examples():
    # Francis & Wagner Sec. 4.3: both pairs have PI = 0.5
    assert precision_improvement(0.75, 0.5) == pytest.approx(0.5)
    assert precision_improvement(0.97, 0.94) == pytest.approx(0.5)
    assert np.isnan(precision_improvement(1.0, 1.0))


def test_precision_coverage_counts():
    pc = PrecisionCoverage(correct=3, predictions=4, targets=10)
    assert pc.precision == 0.75 and pc.coverage == 0.4 and pc.success_rate == 0.3
    d = pc.to_dict()
    assert d["precision_ci"][0] < 0.75 < d["precision_ci"][1]


def test_curve_and_baseline_at_equal_coverage_by_hand():
    # 5 targets; confidences 0.9, 0.8, 0.8, 0.5, 0.1 -> thresholds give coverage 1/5, 3/5, 4/5, 5/5
    correct = np.array([True, True, False, False, True])
    conf = np.array([0.9, 0.8, 0.8, 0.5, 0.1])
    cov, prec, thr = precision_coverage_curve(correct, conf)
    np.testing.assert_allclose(cov, [0.2, 0.6, 0.8, 1.0])
    np.testing.assert_allclose(prec, [1, 2 / 3, 2 / 4, 3 / 5])
    np.testing.assert_allclose(thr, [0.9, 0.8, 0.5, 0.1])
    base = {
        "model": np.array([False, True, True, False, False]),
        "mode": np.array([True, False, False, False, True]),
    }
    tbl = baseline_at_attack_coverage(correct, conf, base)
    # on the first target: model 0/1, mode 1/1 -> 1; first three: model 2/3, mode 1/3 -> 2/3; ...
    np.testing.assert_allclose(tbl["baseline_precision"], [1.0, 2 / 3, 2 / 4, 2 / 5])
    assert np.isnan(tbl["precision_improvement"][0])
    assert tbl["precision_improvement"].iloc[-1] == pytest.approx((3 / 5 - 2 / 5) / (1 - 2 / 5))


def test_numeric_tolerance_is_symmetric():
    ok = is_correct(
        np.array([10.0, 10.6, 9.4, 9.5]), np.array([10.0, 10.0, 10.0, 10.0]), numeric=True, tolerance=0.5
    )
    assert ok.tolist() == [True, False, False, True]


def test_anonymeter_risk_formula():
    r = anonymeter_risk(Proportion(60, 100, "wilson"), Proportion(40, 100, "wilson"))
    a, c = r["attack_rate"], r["control_rate"]
    assert r["value"] == pytest.approx((a - c) / (1 - c))
    assert r["ci"][0] < r["value"] < r["ci"][1]


def test_attribute_inference_tiny_example():
    # secret y is independent of the known z; the "generator" releases its training data unchanged, so the
    # nearest synthetic record of each target is the target itself (z is unique): attack precision is 1,
    # while the non-member baseline (the population without the targets) can only guess.
    rng = np.random.default_rng(0)
    n = 400
    orig = pd.DataFrame({"z": rng.permutation(n).astype(float), "y": rng.choice(["a", "b"], n)})
    syn = orig.copy()
    schema = check_tables(orig, {"synthetic": syn})
    res = attribute_inference(
        orig, syn, secret="y", schema=schema, n_attacks=100, random_state=1, attacks=("nearest",)
    )
    assert res.precision == 1.0
    assert res.attacks["nearest"].coverage == 1.0
    tgt = res.per_target["row"].to_numpy()
    rest = np.setdiff1d(np.arange(n), tgt)
    # most-frequent baseline by hand: the mode of y among non-targets, scored on the targets
    mode = orig["y"].iloc[rest].value_counts().index[0]
    assert res.baselines["most_frequent"].precision == pytest.approx(np.mean(orig["y"].iloc[tgt] == mode))
    assert res.baseline_precision < 0.7
    assert res.precision_improvement == pytest.approx(
        (1.0 - res.baseline_precision) / (1 - res.baseline_precision)
    )


def test_dcr_attack_on_planted_copies():
    rng = np.random.default_rng(2)
    members = np.concatenate([np.zeros(50), rng.uniform(0.5, 1.5, 50)])  # half have exact copies
    nonmembers = rng.uniform(0.5, 1.5, 100)
    res = dcr_attack(members, nonmembers)
    # AUC by hand: P(score_m > score_h) + 1/2 P(tie); copies beat every non-member
    sm, sh = -members[:, None], -nonmembers[None, :]
    assert res.auc == pytest.approx(np.mean(sm > sh) + 0.5 * np.mean(sm == sh))
    assert res.tpr_at_fpr["0.01"] >= 0.5
    prot = dcr_protection(members, nonmembers)
    assert prot["exact_match_share"] == 0.5 and prot["holdout_exact_match_share"] == 0.0
    assert prot["share_below_holdout_p05"] >= 0.5
