"""Membership-inference attacks: signals, LOSS, LiRA, RMIA, the LTU attacker and the registry of them.

Convention: every attack returns a membership *score*, higher = more likely a member; ``ref_in[k, i]`` is
True iff record ``i`` was in reference model ``k``'s training set. :data:`ATTACKS`
(:mod:`mipkit.attacks.registry`) describes the attacks an audit runs as frozen specs. Attacks never import
:mod:`mipkit.metrics`: what they achieve is measured there. The Bayes-optimal attack on noise-wrapped
outputs, distance to closest record and attribute inference live in ``mipkit.attacks.bayes``,
``mipkit.attacks.distance`` and ``mipkit.attacks.inference`` (import them from there).
"""

from __future__ import annotations

from mipkit._lazy import lazy_exports

# Lazy: LiRA needs scipy.stats, the registry the trainers' signals; a command that only needs
# mipkit.attacks.distance or .inference should not pay for them (module -> the names it exports).
_MODULES: dict[str, str] = {
    "lira": "GaussianFits lira_gaussian_fits lira_offline lira_online",
    "loss": "loss_attack loss_threshold_guesses",
    "ltu": "LTUResult ltu_game ltu_loss_game ltu_privacy model_outputs parameter_distance",
    "registry": "ATTACKS AttackInputs AttackOutput AttackSpec attack_names get_attack",
    "rmia": "rmia_from_ratios rmia_reference_probability rmia_scores tune_rmia_a",
    "signals": "cross_entropy_loss logit_confidence true_class_probability",
}
_LAZY, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())

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
