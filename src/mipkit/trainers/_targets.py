"""Targets for trainers that learn from soft labels: hard labels or rows of class probabilities.

A *soft-target trainer* accepts ``fit(X, Y)`` with ``Y`` of shape ``(n, C)``, each row a probability vector,
as well as ordinary hard labels ``y`` of shape ``(n,)``. Hard labels are one-hot encoded over the classes they
contain, so that ``fit(X, y)`` and ``fit(X, one_hot(y))`` run the same arithmetic (docs/theory.md section 7).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError

__all__ = ["SOFT_TARGET_TOLERANCE", "accepts_soft_targets", "as_targets", "one_hot"]

SOFT_TARGET_TOLERANCE = 1e-6
"""Largest ``|sum_c Y[i, c] - 1|`` accepted for a row of soft targets."""


def accepts_soft_targets(estimator: Any) -> bool:
    """True iff ``estimator`` (an instance or a class) declares that ``fit`` takes soft targets ``(n, C)``.

    The declaration is a class attribute ``accepts_soft_targets = True`` (mipkit's trainers and defences
    set it). scikit-learn classifiers do not: they take hard labels only.
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    return getattr(cls, "accepts_soft_targets", False) is True


def one_hot(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """``(n, n_classes)`` float64 matrix with a 1 in column ``codes[i]`` of row ``i``."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros((codes.size, int(n_classes)), dtype=np.float64)
    out[np.arange(codes.size), codes] = 1.0
    return out


def as_targets(y: Any, n_rows: int, *, owner: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate targets and return ``(classes, Y, hard)``.

    Parameters
    ----------
    y : array of shape (n,) or (n, C)
        Hard labels (any sortable values), or soft targets: finite, non-negative rows summing to 1 (within
        :data:`SOFT_TARGET_TOLERANCE`).
    n_rows : int
        Number of rows of ``X``.
    owner : str
        Estimator name for messages.

    Returns
    -------
    classes : ndarray
        ``np.unique(y)`` for hard labels; ``arange(C)`` for soft targets.
    Y : ndarray of float64, shape (n, len(classes))
        One-hot rows for hard labels; the soft targets (as float64) otherwise.
    hard : bool
        Whether ``y`` held hard labels.
    """
    arr = np.asarray(y)
    if arr.ndim == 1:
        if arr.shape[0] != n_rows or n_rows == 0:
            raise MipkitValueError(
                f"X and y of {owner} must have the same non-zero number of rows. Got {n_rows} and "
                f"{arr.shape[0]}."
            )
        classes, codes = np.unique(arr, return_inverse=True)
        return classes, one_hot(codes, classes.size), True
    if arr.ndim != 2 or arr.shape[0] != n_rows or n_rows == 0 or arr.shape[1] < 2:
        raise MipkitValueError(
            f"The targets of {owner} must be labels of shape ({n_rows},) or class probabilities of shape "
            f"({n_rows}, C) with C >= 2. Got shape {arr.shape} instead."
        )
    try:
        Y = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise MipkitValueError(f"The soft targets of {owner} must be numeric.") from None
    if not np.all(np.isfinite(Y)) or np.any(Y < 0):
        raise MipkitValueError(f"The soft targets of {owner} must be finite and non-negative.")
    worst = float(np.max(np.abs(Y.sum(axis=1) - 1.0)))
    if worst > SOFT_TARGET_TOLERANCE:
        raise MipkitValueError(
            f"Each row of the soft targets of {owner} must sum to 1. The worst row is off by {worst:.3g}."
        )
    return np.arange(Y.shape[1]), Y, False
