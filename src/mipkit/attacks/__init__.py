"""Membership-inference attacks: signals, LOSS, LiRA, RMIA, the LTU attacker and the registry of them.

Convention: every attack returns a membership *score*, higher = more likely a member; ``ref_in[k, i]`` is
True iff record ``i`` was in reference model ``k``'s training set. :data:`ATTACKS`
(:mod:`mipkit.attacks.registry`) describes the attacks an audit runs as frozen specs. Attacks never import
:mod:`mipkit.metrics`: what they achieve is measured there. The Bayes-optimal attack on noise-wrapped
outputs, distance to closest record and attribute inference live in ``mipkit.attacks.bayes``,
``mipkit.attacks.distance`` and ``mipkit.attacks.inference`` (import them from there).
"""

from mipkit.attacks.lira import GaussianFits, lira_gaussian_fits, lira_offline, lira_online
from mipkit.attacks.loss import loss_attack, loss_threshold_guesses
from mipkit.attacks.ltu import (
    LTUResult,
    ltu_game,
    ltu_loss_game,
    ltu_privacy,
    model_outputs,
    parameter_distance,
)
from mipkit.attacks.registry import ATTACKS, AttackInputs, AttackOutput, AttackSpec, attack_names, get_attack
from mipkit.attacks.rmia import rmia_from_ratios, rmia_reference_probability, rmia_scores, tune_rmia_a
from mipkit.attacks.signals import cross_entropy_loss, logit_confidence, true_class_probability

__all__ = [
    "ATTACKS",
    "AttackInputs",
    "AttackOutput",
    "AttackSpec",
    "GaussianFits",
    "LTUResult",
    "attack_names",
    "cross_entropy_loss",
    "get_attack",
    "lira_gaussian_fits",
    "lira_offline",
    "lira_online",
    "logit_confidence",
    "loss_attack",
    "loss_threshold_guesses",
    "ltu_game",
    "ltu_loss_game",
    "ltu_privacy",
    "model_outputs",
    "parameter_distance",
    "rmia_from_ratios",
    "rmia_reference_probability",
    "rmia_scores",
    "true_class_probability",
    "tune_rmia_a",
]
