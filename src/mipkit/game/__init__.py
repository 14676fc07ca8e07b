"""mipkit.game: the membership game - who trains on whom, the MIP game loop, and the trainer protocol.

- :func:`random_halves`: the one source of random halves (:func:`random_half` is one row of it,
  :func:`independent_halves` the model audit's design); :func:`all_halves` enumerates them.
- :func:`balanced_membership`: LiRA's split, each record IN for exactly half of the models.
- :func:`mip_game` / :class:`MIPGameResult`: the MIP game against a noise-wrapped release, with the attack
  passed in (e.g. :func:`mipkit.attacks.bayes.membership_posterior`).
- :class:`TrainerSpec` / :func:`resolve_trainer`: a trainer named by import path + JSON parameters; only
  estimator classes (scikit-learn, :func:`register_trainer`-ed, or on the :func:`allow_trainers` list).
- :func:`predict_full_proba`: class probabilities over all global classes, whatever a fit saw.
- ``mipkit.game.torch_adapter.TorchClassifier``: PyTorch modules as trainers (``torch`` extra).
"""

from mipkit.game.mip_game import MIPGameResult, mip_game
from mipkit.game.splits import (
    all_halves,
    balanced_membership,
    independent_halves,
    membership_probability,
    random_half,
    random_halves,
)
from mipkit.game.trainers import (
    TrainerSpec,
    UntrustedTrainerError,
    allow_trainers,
    allowed_trainers,
    is_trainer,
    predict_full_proba,
    register_trainer,
    registered_trainers,
    resolve_trainer,
    trainer_class,
)

__all__ = [
    "MIPGameResult",
    "TrainerSpec",
    "UntrustedTrainerError",
    "allow_trainers",
    "allowed_trainers",
    "all_halves",
    "balanced_membership",
    "independent_halves",
    "is_trainer",
    "membership_probability",
    "mip_game",
    "predict_full_proba",
    "random_half",
    "random_halves",
    "register_trainer",
    "registered_trainers",
    "resolve_trainer",
    "trainer_class",
]
