"""Class probabilities of a fitted trainer over all classes of the game, whatever classes its fit saw."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, softmax

from mipkit._validation import MipkitValueError

__all__ = ["predict_full_proba"]


def predict_full_proba(estimator: Any, X: Any, n_classes: int) -> np.ndarray:
    """Class probabilities of a fitted estimator over all global classes ``0..n_classes-1``.

    Uses ``predict_proba`` when available. Otherwise ``decision_function`` is turned into probabilities:
    a 1-D score ``d`` (binary) becomes ``p(classes_[1]) = sigmoid(d)``, ``p(classes_[0]) = 1 - sigmoid(d)``;
    a 2-D score matrix becomes ``softmax(d)`` row-wise. These are monotone transforms of the scores, not
    calibrated probabilities, which is enough for the loss / confidence signals of the attacks.

    The estimator's columns follow its ``classes_``; they are placed in the global columns they name, and a
    class the fit never saw gets probability 0.

    Returns
    -------
    proba : ndarray of float64, shape (n_query, n_classes)
    """
    if callable(getattr(estimator, "predict_proba", None)):
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    else:
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if scores.ndim == 1 or scores.shape[1] == 1:
            p1 = expit(scores.reshape(-1))
            proba = np.column_stack([1.0 - p1, p1])
        else:
            proba = softmax(scores, axis=1)
    if proba.ndim == 1:
        proba = proba[:, None]
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        if proba.shape[1] != n_classes:
            raise MipkitValueError(
                f"The trainer returned {proba.shape[1]} probability columns for {n_classes} classes "
                "and has no classes_ attribute saying which classes they are."
            )
        full = proba
    else:
        classes = np.asarray(classes)
        integral = classes.dtype.kind in "iu" or (
            classes.dtype.kind == "f"
            and bool(np.all(np.isfinite(classes)))
            and bool(np.all(classes % 1 == 0))
        )
        if not integral:
            raise MipkitValueError(
                f"The trainer's classes_ must be integer class codes 0..{n_classes - 1}. Got {classes!r}."
            )
        codes = classes.astype(np.int64)
        if codes.size != proba.shape[1]:
            # Binary decision_function with a single fitted class cannot happen in scikit-learn; be explicit.
            raise MipkitValueError(
                f"The trainer returned {proba.shape[1]} probability columns for classes_ {classes.tolist()}."
            )
        if codes.min() < 0 or codes.max() >= n_classes:
            raise MipkitValueError(
                f"The trainer's classes_ {classes.tolist()} fall outside the class codes 0..{n_classes - 1}."
            )
        full = np.zeros((proba.shape[0], n_classes), dtype=np.float64)
        full[:, codes] = proba
    if not np.all(np.isfinite(full)):
        raise MipkitValueError("The trainer returned non-finite probabilities (a diverged fit?).")
    return full
