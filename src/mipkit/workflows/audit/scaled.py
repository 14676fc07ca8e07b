"""Standardised features inside the trainer: :class:`ScaledTrainer`, what ``scale=True`` audits.

Scaling inside the trainer (``Pipeline(StandardScaler(), model)``, the scaler fitted on each model's own
training half) means every model of the audit - the target and the attacker's reference models - is trained
by the same procedure, so the audit measures that procedure. Scaling the pool once before the audit would use
statistics of every record, members or not, and would not be what a deployed model does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from mipkit.game.trainers import register_trainer, resolve_trainer

__all__ = ["SCALED_TRAINER", "ScaledTrainer"]

SCALED_TRAINER = "mipkit.workflows.audit.scaled:ScaledTrainer"


@register_trainer
class ScaledTrainer(ClassifierMixin, BaseEstimator):
    """``Pipeline(StandardScaler(), model)``: the model is named by import path and JSON parameters.

    The inner class passes through :func:`mipkit.game.trainers.resolve_trainer` (only estimator classes are
    built). A ``certificate_`` of the fitted inner model is exposed as this trainer's ``certificate_``.

    Parameters
    ----------
    model : str
        Import path of the inner trainer.
    params : dict or None
        Its constructor arguments.
    random_state : int or None
        Passed on as the inner trainer's seed.
    """

    def __init__(self, model: str = "", params: dict | None = None, random_state: int | None = None):
        self.model = model
        self.params = params
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> ScaledTrainer:
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        inner = resolve_trainer(self.model, dict(self.params or {})).build(self.random_state)
        self.pipeline_ = make_pipeline(StandardScaler(), inner).fit(X, y)
        self.classes_ = np.asarray(self.pipeline_.classes_)
        cert = getattr(inner, "certificate_", None)
        if cert is not None:
            self.certificate_ = cert
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        return self.pipeline_.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        return self.pipeline_.predict(X)
