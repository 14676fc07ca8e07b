"""The LTU attacker (Pedersen ch. 4-5): deterministic trainers leak everything to the retraining attack,
randomness defends, and the privacy formula is eq. (4.9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits

from mipkit._validation import MipkitValueError
from mipkit.attacks import cross_entropy_loss, ltu_game, ltu_privacy, parameter_distance
from mipkit.game.trainers import TrainerSpec, predict_full_proba

LOGREG = TrainerSpec("sklearn.linear_model.LogisticRegression", {"max_iter": 1000})
FOREST = TrainerSpec("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 10})


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(y))
    return X / 16.0, y, rows[:60], rows[60:120]


@pytest.mark.parametrize(
    "trainer, compare",
    [
        (LOGREG, "predictions"),
        (LOGREG, "parameters"),
        (TrainerSpec("sklearn.naive_bayes.GaussianNB", {}), "predictions"),
        (TrainerSpec("sklearn.linear_model.RidgeClassifier", {}), "predictions"),  # decision_function
    ],
)
def test_deterministic_trainer_gives_accuracy_one(digits, trainer, compare):
    """Thm 4.2.4: fixed seed and original order -> the retrained model with the true member IS the
    defender's model; the other one differs. Accuracy 1, privacy 0, and no ties."""
    X, y, defenders, reserves = digits
    result = ltu_game(
        trainer,
        X,
        y,
        defender_idx=defenders,
        reserve_idx=reserves,
        strategy="retrain",
        n_rounds=8,
        random_state=0,
        compare=compare,
        scenario="original",
    )
    assert result.accuracy.successes == 8
    assert result.privacy == 0.0 and result.privacy_error == 0.0
    assert not result.per_record["tie"].any()
    # the true member's model reproduces the defender's model exactly
    assert (result.per_record["score_defender"] == 0.0).all()
    assert (result.per_record["score_reserve"] < 0.0).all()


def test_randomised_trainer_defends(digits):
    """A random forest with a secret seed and order: retraining no longer reproduces the model."""
    X, y, defenders, reserves = digits
    result = ltu_game(
        FOREST,
        X,
        y,
        defender_idx=defenders,
        reserve_idx=reserves,
        strategy="retrain",
        n_rounds=30,
        random_state=0,
        scenario="unseeded",
    )
    assert result.accuracy.value < 0.85
    # a true accuracy of 1 would give 30/30; the exact interval excludes it
    assert result.accuracy.interval()[1] < 1.0


def test_privacy_formula_by_hand():
    assert ltu_privacy(7, 10) == pytest.approx((0.6, 2 * math.sqrt(0.7 * 0.3 / 10)))
    assert ltu_privacy(10, 10) == (0.0, 0.0)
    assert ltu_privacy(3, 10)[0] == 1.0  # worse than a coin is capped at privacy 1
    assert ltu_privacy(5, 10) == pytest.approx((1.0, 2 * math.sqrt(0.25 / 10)))
    with pytest.raises(MipkitValueError):
        ltu_privacy(3, 0)


def test_loss_strategy_by_hand_and_result_consistency(digits):
    """Thm 4.2.1: the record with the lower loss under M_D is called the member; recompute independently."""
    X, y, defenders, reserves = digits
    result = ltu_game(
        LOGREG,
        X,
        y,
        defender_idx=defenders,
        reserve_idx=reserves,
        strategy="loss",
        n_rounds=40,
        random_state=3,
    )
    model = LOGREG.build(None).fit(X[defenders], y[defenders])  # deterministic: same model as the defender's
    table = result.per_record
    loss_d = cross_entropy_loss(predict_full_proba(model, X[table["defender"]], 10), y[table["defender"]])
    loss_r = cross_entropy_loss(predict_full_proba(model, X[table["reserve"]], 10), y[table["reserve"]])
    decided = loss_d != loss_r
    np.testing.assert_array_equal(table["correct"][decided], (loss_d < loss_r)[decided])
    np.testing.assert_allclose(-table["score_defender"], loss_d, rtol=1e-9)
    privacy, error = ltu_privacy(int(table["correct"].sum()), 40)
    assert result.privacy == privacy and result.privacy_error == error
    # the defender records are drawn without replacement (40 <= 60)
    assert table["defender"].nunique() == 40
    assert set(table["defender"]) <= set(defenders) and set(table["reserve"]) <= set(reserves)


def test_bounded_loss_strategy_matches_theorem_4_2_2_in_expectation(digits):
    """Given the pairs, E[accuracy] = 1/2 + mean(l(r) - l(d))/2 with l = 1 - p_y (Thm 4.2.2, eq. (4.13)
    with equality); the observed count must fall in the binomial-type 99.9% band around it."""
    X, y, defenders, reserves = digits
    n = 600
    result = ltu_game(
        FOREST,
        X,
        y,
        defender_idx=defenders,
        reserve_idx=reserves,
        strategy="bounded-loss",
        n_rounds=n,
        random_state=4,
    )
    t = result.per_record
    per_round = 0.5 + ((1 - t["score_reserve"]) - (1 - t["score_defender"])) / 2
    mean = per_round.sum()
    sd = math.sqrt(float(np.sum(per_round * (1 - per_round))))
    z = stats.norm.ppf(0.9995)
    assert abs(result.accuracy.successes - mean) < z * sd + 1


def test_exact_ties_are_settled_by_a_fair_coin(digits):
    """A trainer whose outputs never depend on the data: every round ties, accuracy ~ 1/2."""
    X, y, defenders, reserves = digits
    dummy = TrainerSpec("sklearn.dummy.DummyClassifier", {"strategy": "uniform"})
    result = ltu_game(
        dummy,
        X,
        y,
        defender_idx=defenders,
        reserve_idx=reserves,
        strategy="retrain",
        n_rounds=200,
        random_state=5,
    )
    assert result.per_record["tie"].all()
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 200, 0.5)
    assert lo <= result.accuracy.successes <= hi


def test_individual_scores_and_reproducibility(digits):
    X, y, defenders, reserves = digits
    kwargs = {"defender_idx": defenders, "reserve_idx": reserves, "strategy": "loss", "n_rounds": 30}
    kwargs["random_state"] = 7
    first = ltu_game(FOREST, X, y, fixed_defender=int(defenders[3]), **kwargs)
    second = ltu_game(FOREST, X, y, fixed_defender=int(defenders[3]), **kwargs)
    assert first.per_record.equals(second.per_record)
    assert (first.per_record["defender"] == defenders[3]).all()
    individual = first.individual("defender")
    assert len(individual) == 1
    assert individual["accuracy"].iloc[0] == pytest.approx(first.accuracy.value)
    assert individual["privacy"].iloc[0] == pytest.approx(first.privacy)


def test_parameter_distance_sees_tree_structure(digits):
    X, y, defenders, _ = digits
    tree = TrainerSpec("sklearn.tree.DecisionTreeClassifier", {})
    a = tree.build(0).fit(X[defenders], y[defenders])
    b = tree.build(0).fit(X[defenders], y[defenders])
    c = tree.build(0).fit(X[defenders[1:]], y[defenders[1:]])
    assert parameter_distance(a, b) == 0.0
    assert parameter_distance(a, c) > 0.0


def test_bad_inputs(digits):
    X, y, defenders, reserves = digits
    with pytest.raises(MipkitValueError):
        ltu_game(LOGREG, X, y, defender_idx=defenders, reserve_idx=defenders, n_rounds=2)
    with pytest.raises(MipkitValueError):
        ltu_game(LOGREG, X, y, defender_idx=defenders, reserve_idx=reserves, strategy="magic")
    with pytest.raises(MipkitValueError):
        ltu_game(LOGREG, X, y, defender_idx=defenders, reserve_idx=reserves, scenario="shuffled")
    with pytest.raises(MipkitValueError):
        ltu_game(LOGREG, X, y, defender_idx=defenders, reserve_idx=reserves, fixed_defender=int(reserves[0]))
    with pytest.raises(MipkitValueError):
        ltu_game(LOGREG, X, y[:-1], defender_idx=defenders, reserve_idx=reserves)
