"""The released model's outputs on the audited records (members, then non-members).

``predict_proba`` for a classifier (a scikit-learn estimator or Pipeline, or a ``torch.nn.Module`` through
:class:`mipkit.game.torch_adapter.TorchClassifier`: its logits in float64), the per-record squared error for
a regressor. A regressor's outputs enter as a per-record loss ``l = (y - f(x))^2 / (2 s^2)``, the negative
Gaussian log-likelihood up to a constant with ``s^2`` the variance of the audited targets (a fixed scale, so
LOSS's ranking is that of the squared error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.game.trainers import predict_full_proba
from mipkit.workflows.audit_fitted.inputs import _codes, _is_torch_module
from mipkit.workflows.audit_fitted.reference import describe
from mipkit.workflows.audit_scores.outputs import ModelOutputs

__all__ = ["Labels", "Released", "labels_of", "refuse_text", "released_outputs"]


class _Coded:
    """A fitted classifier seen with class codes ``0..C-1`` (its ``classes_`` in order) for
    :func:`mipkit.game.trainers.predict_full_proba`."""

    def __init__(self, model: Any, n_classes: int) -> None:
        self._model = model
        self.classes_ = np.arange(n_classes)
        for name in ("predict_proba", "decision_function"):
            if callable(getattr(model, name, None)):
                setattr(self, name, getattr(model, name))


def refuse_text(model: Any, X: pd.DataFrame) -> None:
    """Refuse text columns for a model fitted without column names (it takes numbers only)."""
    if getattr(model, "feature_names_in_", None) is not None:
        return
    text = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if text:
        shown = ", ".join(map(repr, text[:8])) + (" ..." if len(text) > 8 else "")
        raise MipkitValueError(
            f"The model takes numbers without column names, but the column(s) {shown} hold text: give the "
            "tables encoded as the model was trained, or audit a Pipeline that encodes its own columns."
        )


def _model_input(model: Any, X: pd.DataFrame) -> Any:
    """A DataFrame for a model fitted with column names, else a float array."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return X[list(names)]
    refuse_text(model, X)
    return X.to_numpy(dtype=np.float32 if _is_torch_module(model) else float)


@dataclass(frozen=True)
class Labels:
    """The audited records' labels as the model sees them.

    Attributes
    ----------
    codes : int array of shape (n,)
        Class codes in the order of the model's ``classes_`` (zeros for a regressor or a torch module,
        whose codes follow its logits).
    classes : array or None
        The model's ``classes_`` (None for a regressor or a torch module).
    values : float array of shape (n,) or None
        A regressor's numeric targets.
    """

    codes: np.ndarray
    classes: np.ndarray | None = None
    values: np.ndarray | None = None


def labels_of(model: Any, kind: str, y: pd.Series, target: str | None) -> Labels:
    """The labels of the audited records for a model of ``kind`` (checked before the model is scored): a
    regressor's numeric target, or a classifier's codes among its ``classes_``."""
    if kind == "regressor":
        values = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(values)):
            raise MipkitValueError(f"A regressor's target {target!r} must be numeric without missing values.")
        return Labels(np.zeros(len(y), np.int64), None, values)
    if kind == "classifier":
        classes = np.asarray(getattr(model, "classes_", None) if hasattr(model, "classes_") else [])
        if classes.size < 2:
            raise MipkitValueError("The model has no classes_ with at least two classes; is it fitted?")
        return Labels(_codes(y, classes, "the audited records"), classes)
    return Labels(np.zeros(len(y), np.int64))


@dataclass(frozen=True)
class Released:
    """The released model's outputs on the audited records, with the labels they are read against.

    Attributes
    ----------
    outputs : ModelOutputs
        Probabilities (classifier), float64 logits (torch module) or the scaled squared error (regressor).
    labels : Labels
        The labels, a torch module's codes among its logits' classes.
    scale : float or None
        A regressor's loss scale ``var(y)``.
    info : dict
        The model's description for ``results.json`` (``import_path``, ``kind``, ...).
    """

    outputs: ModelOutputs
    labels: Labels
    scale: float | None
    info: dict


def _torch_logits(model: Any, X: pd.DataFrame) -> np.ndarray:
    from mipkit.game.torch_adapter import import_torch

    torch = import_torch()
    model.eval()
    with torch.no_grad():  # logits in float64: a float32 softmax would round confident records to 1
        return model(torch.from_numpy(_model_input(model, X))).double().numpy()


def released_outputs(model: Any, kind: str, X: pd.DataFrame, y: pd.Series, labels: Labels) -> Released:
    """Score the audited records ``X`` (labels ``y``) with the released model."""
    info = {
        "import_path": describe(model),
        "params": {},
        "kind": "regressor" if kind == "regressor" else "classifier",
    }
    if kind == "regressor":
        scale = float(np.var(labels.values)) or 1.0
        predicted = np.asarray(model.predict(_model_input(model, X)), dtype=float).ravel()
        info["loss"] = "squared error / (2 var(y)) over the audited records"
        return Released(
            ModelOutputs(loss=(labels.values - predicted) ** 2 / (2 * scale)), labels, scale, info
        )
    if kind == "torch":
        logits = _torch_logits(model, X)
        classes = np.arange(logits.shape[1])
        return Released(
            ModelOutputs(logits=logits),
            Labels(_codes(y, classes, "the audited records"), classes),
            None,
            info,
        )
    n_classes = labels.classes.size
    proba = predict_full_proba(_Coded(model, n_classes), _model_input(model, X), n_classes)
    return Released(ModelOutputs(proba=proba), labels, None, info)
