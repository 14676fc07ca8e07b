"""mipkit.trainers: classifiers that learn from soft targets, and training many of them at once.

- :class:`SoftLogisticRegression`: multinomial logistic regression (NumPy/SciPy), hard or soft targets.
- :class:`TorchMLPClassifier`: ReLU network, SGD or DP-SGD (Poisson sampling, per-sample clipping, Gaussian
  noise), hard or soft targets; the ``torch`` extra is needed to fit it, not to import it.
- :func:`fit_many`: fit ``M`` models of one trainer on different rows with different seeds, vectorised over
  models where the trainer allows (batched L-BFGS; ``torch.func`` over a stack of networks), each equal to
  the model fitted alone.
- :class:`DPSGDClassifier`: DP-SGD to a noise multiplier or a risk target, with its certificate.
- :func:`accepts_soft_targets`: whether a trainer's ``fit`` takes targets of shape ``(n, C)``.
"""

from mipkit.game.trainers import register_trainer
from mipkit.trainers._targets import accepts_soft_targets, as_targets, one_hot
from mipkit.trainers.dpsgd import DPSGDClassifier
from mipkit.trainers.logistic import SoftLogisticRegression
from mipkit.trainers.many import fit_many, with_seed
from mipkit.trainers.torch_mlp import TorchMLPClassifier

__all__ = [
    "DPSGDClassifier",
    "SoftLogisticRegression",
    "TorchMLPClassifier",
    "accepts_soft_targets",
    "as_targets",
    "fit_many",
    "one_hot",
    "with_seed",
]

register_trainer(SoftLogisticRegression)  # may be named by import path in an audit (mipkit.game.trainers)
register_trainer(TorchMLPClassifier)
