"""mipkit.game: the membership game - who trains on whom, and the trainer protocol.

- :func:`balanced_membership`: LiRA's split, each record IN for exactly half of the models.
- :func:`random_half`: one random half (members) and the rest (non-members).
- :class:`TrainerSpec` / :func:`resolve_trainer`: a trainer named by import path + JSON parameters.
- :func:`predict_full_proba`: class probabilities over all global classes, whatever a fit saw.
- ``mipkit.game.torch_adapter.TorchClassifier``: PyTorch modules as trainers (``torch`` extra).
"""

from mipkit.game.splits import balanced_membership, random_half
from mipkit.game.trainers import TrainerSpec, is_trainer, predict_full_proba, resolve_trainer

__all__ = [
    "TrainerSpec",
    "balanced_membership",
    "is_trainer",
    "predict_full_proba",
    "random_half",
    "resolve_trainer",
]
