"""Contract every membership attack must pass: on a model that memorises its training set, members score
higher than non-members (AUC above 1/2 with a margin)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from mipkit.attacks import (
    cross_entropy_loss,
    lira_offline,
    lira_online,
    logit_confidence,
    loss_attack,
    loss_threshold_guesses,
    ltu_game,
    rmia_scores,
    true_class_probability,
)
from mipkit.game.trainers import TrainerSpec, predict_full_proba
from mipkit.metrics import roc_auc
from mipkit.stats import eta_from_guesses

N_TARGETS, N_POPULATION, N_REFS = 300, 300, 8
MEMORISER = TrainerSpec("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 25})


@pytest.fixture(scope="module")
def world():
    """Noisy labels (flip_y) make a random forest memorise: members get a high true-class probability."""
    X, y = make_classification(
        n_samples=N_TARGETS + N_POPULATION, n_features=10, n_informative=5, flip_y=0.3, random_state=0
    )
    rng = np.random.default_rng(0)
    targets, population = np.arange(N_TARGETS), np.arange(N_TARGETS, N_TARGETS + N_POPULATION)
    ref_in = np.zeros((N_REFS, N_TARGETS), dtype=bool)
    for i in range(N_TARGETS):
        ref_in[rng.choice(N_REFS, size=N_REFS // 2, replace=False), i] = True
    target_in = rng.random(N_TARGETS) < 0.5

    def fit_and_predict(mask, seed):
        model = MEMORISER.build(seed).fit(X[targets[mask]], y[targets[mask]])
        return predict_full_proba(model, X, 2)

    ref_probs = np.stack([fit_and_predict(ref_in[k], seed=k + 1) for k in range(N_REFS)])
    target_probs = fit_and_predict(target_in, seed=100)
    return {
        "X": X,
        "y": y,
        "targets": targets,
        "population": population,
        "ref_in": ref_in,
        "member": target_in.astype(int),
        "ref_probs": ref_probs,
        "target_probs": target_probs,
    }


def _scores(attack: str, w: dict) -> np.ndarray:
    t, pop, y = w["targets"], w["population"], w["y"]
    if attack == "loss":
        return loss_attack(cross_entropy_loss(w["target_probs"][t], y[t]))
    if attack.startswith("lira"):
        target_conf = logit_confidence(w["target_probs"][t], y[t])
        ref_conf = logit_confidence(w["ref_probs"][:, t], y[t])
        if attack == "lira-online":
            return lira_online(target_conf, ref_conf, w["ref_in"])
        if attack == "lira-online-global":
            return lira_online(target_conf, ref_conf, w["ref_in"], global_variance=True)
        return lira_offline(target_conf, ref_conf, w["ref_in"], test=attack.removeprefix("lira-offline-"))
    online = attack == "rmia-online"
    return rmia_scores(
        true_class_probability(w["target_probs"][t], y[t]),
        true_class_probability(w["ref_probs"][:, t], y[t]),
        w["ref_in"],
        true_class_probability(w["target_probs"][pop], y[pop]),
        true_class_probability(w["ref_probs"][:, pop], y[pop]),
        a=0.3,
        online=online,
    )


ATTACKS = [
    "loss",
    "lira-online",
    "lira-online-global",
    "lira-offline-one-sided",
    "lira-offline-logpdf",
    "rmia-offline",
    "rmia-online",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_scores_members_higher_on_a_memorising_model(world, attack):
    scores = _scores(attack, world)
    assert scores.shape == (N_TARGETS,)
    assert np.all(np.isfinite(scores))
    assert roc_auc(scores, world["member"]) > 0.65


def test_yeom_threshold_guesses_beat_a_coin(world):
    t, y = world["targets"], world["y"]
    loss = cross_entropy_loss(world["target_probs"][t], y[t])
    # Yeom et al.: threshold = the target model's average training loss (known to the attacker there)
    threshold = float(np.mean(loss[world["member"] == 1]))
    estimate = eta_from_guesses(loss_threshold_guesses(loss, threshold=threshold), world["member"])
    assert estimate.interval()[0] > 0.0  # eta > 0 with 95% confidence


def test_ltu_loss_strategy_beats_a_coin(world):
    X, y = world["X"], world["y"]
    rng = np.random.default_rng(1)
    rows = rng.permutation(len(y))
    result = ltu_game(
        MEMORISER,
        X,
        y,
        defender_idx=rows[:200],
        reserve_idx=rows[200:400],
        strategy="loss",
        n_rounds=200,
        random_state=0,
    )
    assert result.accuracy.interval()[0] > 0.5
