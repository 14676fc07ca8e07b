"""The ``train_private`` verb: a table in, a DP-SGD model trained to a risk target and its certificate out.

``train_private(TrainingTable(...), TrainPrivateConfig(...)) -> TrainPrivateResult``: a secret held-out
split, features scaled with the held-out rows' statistics, DP-SGD calibrated to the target for the run's
exact sample rate and steps, the certificate and, with ``audit``, the fitted model audited against it.
"""

from mipkit.workflows.train_private.config import TrainPrivateConfig
from mipkit.workflows.train_private.data import TrainingTable
from mipkit.workflows.train_private.result import TrainPrivateResult
from mipkit.workflows.train_private.run import train_private

__all__ = ["TrainPrivateConfig", "TrainPrivateResult", "TrainingTable", "train_private"]
