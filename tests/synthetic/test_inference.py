"""Attribute inference measures on tiny hand-computed examples; the DCR attack on planted copies.

The attacks (:mod:`mipkit.attacks.inference`, :mod:`mipkit.attacks.distance`) produce guesses and distances;
the measures (:mod:`mipkit.metrics.inference`, :mod:`mipkit.metrics.dcr`) score them; the attacks never
import the measures.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mipkit.attacks.distance as attack_distance
import mipkit.attacks.inference as attack_inference
from mipkit.attacks.distance import dcr_scores, distance_to_closest_record
from mipkit.attacks.inference import InferenceGuesses, attribute_inference_guesses
from mipkit.data.tables import check_tables
from mipkit.metrics.dcr import dcr_attack, dcr_overfitting_protection, dcr_protection
from mipkit.metrics.inference import (
    PrecisionCoverage,
    anonymeter_risk,
    baseline_at_attack_coverage,
    is_correct,
    measure_inference,
    precision_coverage_curve,
    precision_improvement,
)
from mipkit.stats import Proportion, wilson
from mipkit.workflows.audit_synthetic.measure import attribute_inference


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
        orig,
        syn,
        secret="y",
        schema=schema,
        n_attacks=100,
        random_state=1,
        attacks=("nearest",),
        match_reference_size=False,  # the attacker holds the whole release
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


def _imported_modules(path: str) -> set[str]:
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):  # also imports inside functions
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("module", [attack_inference, attack_distance])
def test_attacks_import_no_metrics(module):
    names = _imported_modules(module.__file__)
    assert names, "the parser found no import at all"
    assert not [n for n in names if n == "mipkit.metrics" or n.startswith("mipkit.metrics.")]


def test_measure_inference_by_hand():
    # 4 targets, categorical secret; the attack is right on 3 (most confident first: right, right, wrong,
    # right), the baselines on 2 and 1; the control attack is right on 1 of 3 control targets
    truth = np.array(["a", "b", "a", "b"], dtype=object)
    guesses = InferenceGuesses(
        secret="y",
        known=("z",),
        numeric=False,
        tolerance=0.0,
        rows=np.array([3, 5, 8, 9]),
        truth=truth,
        attacks={"nearest": (np.array(["a", "b", "b", "b"], dtype=object), np.array([0.9, 0.8, 0.2, 0.1]))},
        baselines={
            "nearest": np.array(["a", "a", "a", "b"], dtype=object),
            "most_frequent": np.array(["a", "a", "a", "a"], dtype=object),
        },
        control_rows=np.array([0, 1, 2]),
        control_truth=np.array(["a", "b", "b"], dtype=object),
        control_guesses=np.array(["b", "b", "a"], dtype=object),
    )
    res = measure_inference(guesses)
    assert guesses.primary == "nearest" and res.primary == "nearest"
    assert res.precision == 3 / 4 and res.attacks["nearest"].coverage == 1.0
    assert res.baselines["nearest"].precision == 3 / 4 and res.baselines["most_frequent"].precision == 2 / 4
    assert res.baseline_precision == 3 / 4
    assert res.precision_improvement == pytest.approx(0.0)
    d = res.to_dict()
    assert d["precision_ci"] == pytest.approx(list(wilson(3, 4)))
    assert d["baseline"] == "nearest"
    # curve: thresholds 0.9, 0.8, 0.2, 0.1 -> attack 1, 1, 2/3, 3/4; best baseline on the same targets
    # (nearest: 1, 1/2, 2/3, 3/4; mode: 1, 1/2, 2/3, 2/4) -> 1, 1/2, 2/3, 3/4
    np.testing.assert_allclose(res.curve["precision"], [1, 1, 2 / 3, 3 / 4])
    np.testing.assert_allclose(res.curve["baseline_precision"], [1, 1 / 2, 2 / 3, 3 / 4])
    # control risk from the Wilson centres of 3/4 and 1/3
    lo_a, hi_a = wilson(3, 4)
    lo_c, hi_c = wilson(1, 3)
    a, c = (lo_a + hi_a) / 2, (lo_c + hi_c) / 2
    assert res.control["risk"]["value"] == pytest.approx((a - c) / (1 - c))
    assert res.control["control_success"]["successes"] == 1
    assert res.per_target["row"].tolist() == [3, 5, 8, 9]
    assert res.per_target["attack_nearest_correct"].tolist() == [True, True, False, True]
    assert res.per_target["baseline_most_frequent_correct"].tolist() == [True, False, True, False]


def test_guesses_then_measures_equal_attribute_inference():
    # the workflow's attribute_inference is exactly the attack's guesses scored by measure_inference
    rng = np.random.default_rng(4)
    n = 300
    orig = pd.DataFrame(
        {
            "z": rng.normal(size=n).round(2),
            "c": rng.choice(["p", "q", "r"], n),
            "age": rng.integers(20, 70, n).astype(float),
        }
    )
    syn = orig.sample(n, replace=True, random_state=2).reset_index(drop=True)
    ctl = orig.sample(80, random_state=5).reset_index(drop=True)
    schema = check_tables(orig, {"synthetic": syn, "control": ctl})
    kw = {
        "secret": "age",
        "schema": schema,
        "control": ctl,
        "n_attacks": 60,
        "tolerance": 0.1,
        "n_jobs": 1,
        "match_reference_size": False,
    }
    g = attribute_inference_guesses(orig, syn, random_state=7, **kw)
    assert g.numeric and g.tolerance == pytest.approx(0.1 * np.ptp(orig["age"].to_numpy()[g.rows]))
    assert list(g.attacks) == ["nearest", "model"]
    assert list(g.baselines) == ["nearest", "model", "most_frequent"]
    assert len(g.rows) == 60 and len(np.unique(g.rows)) == 60
    np.testing.assert_array_equal(g.truth, orig["age"].to_numpy()[g.rows])
    assert len(g.control_guesses) == len(g.control_truth) == 60
    # the nearest attack's guess is the secret of a closest synthetic record on the known columns
    # (brute force: range-normalised L1 on z plus a mismatch on c), any of them when several tie
    tgt = orig.iloc[g.rows]
    d = np.abs(tgt["z"].to_numpy()[:, None] - syn["z"].to_numpy()[None, :]) / np.ptp(orig["z"])
    d += tgt["c"].to_numpy()[:, None] != syn["c"].to_numpy()[None, :]
    for i in range(len(tgt)):
        assert g.attacks["nearest"][0][i] in set(syn["age"].to_numpy()[d[i] == d[i].min()])
    np.testing.assert_allclose(-g.attacks["nearest"][1], d.min(axis=1))
    right = np.abs(g.attacks["nearest"][0] - g.truth) <= g.tolerance + 1e-9
    res = attribute_inference(orig, syn, random_state=7, **kw)
    assert res.precision == pytest.approx(right.mean())
    assert res.to_dict()["control"] == measure_inference(g).to_dict()["control"]
    np.testing.assert_array_equal(res.per_target["attack_nearest_correct"], right)


def test_dcr_scores_and_overfitting_protection_by_hand():
    # 1-d Euclidean: synthetic points sit on the training points, far from the holdout points
    train = np.array([[0.0], [1.0], [2.0], [3.0]])
    holdout = np.array([[10.0], [11.0], [12.0], [13.0]])
    syn = np.array([[0.1], [1.1], [2.1], [2.9]])
    d = distance_to_closest_record(train, syn, metric="euclidean", n_jobs=1)
    np.testing.assert_allclose(d, [0.1, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(dcr_scores(d), -d)
    prot = dcr_overfitting_protection(train, holdout, syn, metric="euclidean", random_state=0, n_jobs=1)
    assert prot["share_closer_to_train"] == 1.0 and prot["score"] == 0.0 and prot["n_real_each"] == 4


def test_numeric_secret_falls_back_to_the_mode():
    # Francis & Wagner's most-frequent value (their code: dfCol.mode()[0]), numeric secrets too
    from mipkit.attacks.inference import most_frequent_guesses

    ref = pd.DataFrame({"x": [1.0, 5.0, 5.0, 9.0, 9.0, 12.0, 14.0, np.nan, np.nan, np.nan]})
    g = most_frequent_guesses(ref, secret="x", n=3, numeric=True)
    assert g.tolist() == [float(ref["x"].mode()[0])] * 3 == [5.0] * 3  # ties: the smallest, NaN ignored
    assert np.median(ref["x"].dropna()) != 5.0  # (the former median fallback would differ)


def test_like_for_like_pairs_and_their_intervals():
    # attack "nearest" right on 8/10 targets, its own baseline on 5/10; "model" right on 9/10 vs its own
    # baseline 9/10; the most-frequent value is right on 7/10 (would be the wrong baseline for "nearest")
    truth = np.array(list("aaaaabbbbb"), dtype=object)
    right = lambda k: np.where(np.arange(10) < k, truth, np.where(truth == "a", "b", "a"))  # noqa: E731
    guesses = InferenceGuesses(
        secret="y",
        known=("z",),
        numeric=False,
        tolerance=0.0,
        rows=np.arange(10),
        truth=truth,
        attacks={"nearest": (right(8), np.linspace(1, 0, 10)), "model": (right(9), np.ones(10))},
        baselines={"nearest": right(5), "model": right(9), "most_frequent": right(7)},
    )
    res = measure_inference(guesses, n_bootstrap=500, random_state=3)
    assert res.pairs == {"nearest": "nearest", "model": "model"}
    assert res.pi_of("nearest") == pytest.approx((0.8 - 0.5) / 0.5)
    assert res.pi_of("model") == pytest.approx(0.0)
    assert res.primary == "nearest"  # the strongest like-for-like pair
    assert res.precision_improvement == pytest.approx(0.6) and res.baseline == "nearest"
    assert res.best_baseline == "model"  # F&W's best analysis, reported separately
    d = res.to_dict()
    assert d["pairs"]["model"]["precision_improvement"] == pytest.approx(0.0)
    assert d["best_baseline"] == "model" and d["best_baseline_precision"] == pytest.approx(0.9)
    # the paired bootstrap by hand: the same resampled targets for attack and baseline
    rng = np.random.default_rng(3)
    a, b = right(8) == truth, right(5) == truth
    idx = rng.integers(0, 10, size=(500, 10))
    pa, pb = a[idx].mean(axis=1), b[idx].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = np.where(pb < 1, (pa - pb) / (1 - pb), np.nan)
    reps = reps[np.isfinite(reps)]
    lo, hi = res.pi_interval("nearest")
    assert [lo, hi] == pytest.approx(list(np.quantile(reps, [0.025, 0.975])))
    assert lo <= 0.6 <= hi


def test_pi_not_a_number_says_why():
    truth = np.array(["a"] * 6, dtype=object)
    guesses = InferenceGuesses(
        secret="y",
        known=("z",),
        numeric=False,
        tolerance=0.0,
        rows=np.arange(6),
        truth=truth,
        attacks={"nearest": (truth.copy(), np.ones(6))},
        baselines={"nearest": truth.copy(), "most_frequent": truth.copy()},
    )
    res = measure_inference(guesses)
    assert np.isnan(res.precision_improvement)
    assert "already right on every target" in res.to_dict()["precision_improvement_note"]


def test_numeric_tolerance_is_stored_as_a_share():
    rng = np.random.default_rng(8)
    n = 200
    orig = pd.DataFrame({"z": rng.normal(size=n).round(2), "age": rng.integers(20, 70, n).astype(float)})
    schema = check_tables(orig, {"synthetic": orig})
    res = attribute_inference(orig, orig, secret="age", schema=schema, n_attacks=30, tolerance=0.1, n_jobs=1)
    d = res.to_dict()
    assert d["tolerance_share"] == 0.1 and "tolerance" not in d
    assert res.tolerance == pytest.approx(0.1 * np.ptp(orig["age"].to_numpy()[res.per_target["row"]]))


def test_attacks_learn_from_as_many_rows_as_the_baseline():
    # a synthetic table larger than the original without the targets: the attack's reference is a random
    # subset of that size (a non-memorising generator's extra rows must not count as an improvement)
    rng = np.random.default_rng(6)
    orig = pd.DataFrame({"z": rng.permutation(300).astype(float), "y": rng.choice(["a", "b"], 300)})
    syn = pd.concat([orig] * 3, ignore_index=True)  # 900 rows, each original row three times
    schema = check_tables(orig, {"synthetic": syn})
    g = attribute_inference_guesses(
        orig, syn, secret="y", schema=schema, n_attacks=50, random_state=0, n_jobs=1
    )
    # with the full table every target would find its own copy; with 250 of 900 rows most do not
    full = attribute_inference_guesses(
        orig,
        syn,
        secret="y",
        schema=schema,
        n_attacks=50,
        random_state=0,
        n_jobs=1,
        match_reference_size=False,
    )
    right = lambda guesses: np.mean(guesses.attacks["nearest"][0] == guesses.truth)  # noqa: E731
    assert right(full) == 1.0 and right(g) < 1.0
    np.testing.assert_array_equal(g.rows, full.rows)  # the same targets either way


def test_dcr_auc_interval_and_unresolved_fprs():
    # DeLong's interval by hand; an FPR below 1/(number of unseen records) is flagged, not silently reported
    from scipy.stats import norm

    rng = np.random.default_rng(4)
    members, nonmembers = rng.gamma(2.0, 1.0, 80).round(1), rng.gamma(2.2, 1.0, 100).round(1)
    res = dcr_attack(members, nonmembers)
    sm, sh = -members[:, None], -nonmembers[None, :]
    psi = (sm > sh) + 0.5 * (sm == sh)
    se = np.sqrt(psi.mean(axis=1).var(ddof=1) / 80 + psi.mean(axis=0).var(ddof=1) / 100)
    z = norm.ppf(0.975)
    assert res.auc_se == pytest.approx(se)
    assert res.auc_ci == pytest.approx([res.auc - z * se, res.auc + z * se])
    d = res.to_dict()
    assert list(d["tpr_at_fpr_unresolved"]) == ["0.001"]  # 1/100 = 0.01 is resolved, 0.001 is not
    assert "TPR at FPR 0" in d["tpr_at_fpr_unresolved"]["0.001"]


def test_headline_interval_is_adjusted_for_picking_the_strongest_attack_on_null_data():
    # four attacks that know nothing: each guesses from the same distribution as its baseline. The headline
    # is the largest of four PIs; an unadjusted 95% interval of the largest excludes 0 from below on about
    # 4 x 2.5% of null splits, the adjusted one (Bonferroni over the attacks) on at most 2.5%
    from types import SimpleNamespace

    from mipkit.metrics.inference import measure_inference

    rng = np.random.default_rng(0)
    names = ["a1", "a2", "a3", "a4"]
    alarms, n_splits = 0, 300
    for _ in range(n_splits):
        truth = rng.choice(["x", "y", "z"], 150, p=[0.5, 0.3, 0.2])
        draw = lambda: rng.choice(["x", "y", "z"], 150, p=[0.5, 0.3, 0.2])  # noqa: E731
        g = SimpleNamespace(
            secret="s",
            known=("k",),
            numeric=False,
            tolerance=0.0,
            rows=np.arange(150),
            truth=truth,
            attacks={a: (draw(), np.ones(150)) for a in names},
            baselines={**{a: draw() for a in names}, "most_frequent": np.full(150, "x")},
            control_truth=None,
            control_guesses=None,
        )
        res = measure_inference(g, n_bootstrap=400, random_state=rng)
        d = res.to_dict(0.95)
        assert d["precision_improvement_ci_level"] == pytest.approx(1 - 0.05 / 4)
        assert d["precision_improvement_ci"] == res.pi_interval(res.primary, 1 - 0.05 / 4)
        alarms += d["precision_improvement_ci"][0] > 0
    assert alarms / n_splits <= 0.04
