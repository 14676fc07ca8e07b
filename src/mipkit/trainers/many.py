"""Fit many models of one trainer on different rows with different seeds, vectorised where it can be.

:func:`fit_many` is the one entry point: model ``m`` is, up to floating-point rounding of batched matrix
products, ``clone(estimator).set_params(random_state=seeds[m]).fit(X[subsets[m]], y[subsets[m]])``. Trainers
that can be vectorised say so by a method:

- ``_fit_stack(Xs, Ys, seeds)`` (mipkit's soft-target trainers): fit one clone per ``(Xs[m], Ys[m])`` with
  soft targets ``Ys[m]`` of equal width, in one batch;
- ``_fit_many(X, y, subsets, seeds)`` (meta-estimators such as the defences): the whole of
  :func:`fit_many` for that estimator.

Anything else is fitted one model at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from mipkit._validation import MipkitValueError
from mipkit.trainers._targets import as_targets, one_hot

__all__ = ["check_subsets", "fit_many", "with_seed"]


def with_seed(estimator: Any, seed: Any) -> Any:
    """An unfitted clone of ``estimator`` with ``random_state=seed`` (when it has that parameter)."""
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
    return est


def check_subsets(subsets: Any, n_rows: int, *, owner: str = "fit_many") -> list[np.ndarray]:
    """A list of non-empty 1-D integer row-index arrays within ``0..n_rows-1``."""
    out = []
    for m, rows in enumerate(subsets):
        arr = np.asarray(rows)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise MipkitValueError(
                f"Subset {m} of {owner} must be a non-empty 1-D array of row indices (use np.flatnonzero on "
                "a boolean mask)."
            )
        if arr.min() < 0 or arr.max() >= n_rows:
            raise MipkitValueError(f"Subset {m} of {owner} holds row indices outside 0..{n_rows - 1}.")
        out.append(arr.astype(np.int64))
    if not out:
        raise MipkitValueError(f"{owner} needs at least one subset.")
    return out


def fit_many(estimator: Any, X: Any, y: Any, subsets: Any, seeds: Any) -> list:
    """Fit ``len(subsets)`` clones of ``estimator``: model ``m`` on rows ``subsets[m]``, seed ``seeds[m]``.

    Parameters
    ----------
    estimator : estimator
        Unfitted template (its parameters are kept; ``random_state`` is set per model).
    X : array (n, d)
    y : array (n,), (n, C) or (M, n, C)
        Hard labels, soft targets shared by all models, or soft targets per model (model ``m`` uses
        ``y[m][subsets[m]]``).
    subsets : sequence of int arrays
        Rows of each model, in the order it sees them.
    seeds : sequence of int or None
        ``random_state`` of each model.

    Returns
    -------
    list of fitted estimators, in the order of ``subsets``.

    Notes
    -----
    With hard labels, a vectorised trainer is given one-hot targets over the classes of ``y``; a subset
    that lacks a class (so that a lone fit would have fewer output columns) is fitted on its own.
    """
    X = np.asarray(X)
    subsets = check_subsets(subsets, X.shape[0])
    seeds = list(seeds)
    if len(seeds) != len(subsets):
        raise MipkitValueError(f"fit_many needs one seed per subset. Got {len(seeds)} for {len(subsets)}.")
    y = np.asarray(y)
    per_model = y.ndim == 3
    if per_model and y.shape[0] != len(subsets):
        raise MipkitValueError(
            "Per-model targets of fit_many must have one row per subset. "
            f"Got {y.shape[0]} for {len(subsets)}."
        )
    if callable(getattr(estimator, "_fit_many", None)):
        return estimator._fit_many(X, y, subsets, seeds)
    if not callable(getattr(estimator, "_fit_stack", None)):
        return [
            with_seed(estimator, s).fit(X[rows], (y[m] if per_model else y)[rows])
            for m, (rows, s) in enumerate(zip(subsets, seeds, strict=True))
        ]
    if per_model:
        Ys = [
            as_targets(y[m][rows], rows.size, owner=type(estimator).__name__)[1]
            for m, rows in enumerate(subsets)
        ]
        classes = [np.arange(y.shape[2])] * len(subsets)
        stack = list(range(len(subsets)))
    elif y.ndim == 2:
        Y = as_targets(y, X.shape[0], owner=type(estimator).__name__)[1]
        Ys = [Y[rows] for rows in subsets]
        classes = [np.arange(y.shape[1])] * len(subsets)
        stack = list(range(len(subsets)))
    else:
        all_classes, codes = np.unique(y, return_inverse=True)
        Y = one_hot(codes, all_classes.size)
        Ys = [Y[rows] for rows in subsets]
        classes = [all_classes] * len(subsets)
        stack = [m for m, rows in enumerate(subsets) if np.unique(codes[rows]).size == all_classes.size]
    out: list[Any] = [None] * len(subsets)
    if stack:
        fitted = estimator._fit_stack(
            [np.asarray(X[subsets[m]], dtype=np.float64) for m in stack],
            [Ys[m] for m in stack],
            [seeds[m] for m in stack],
        )
        for m, est in zip(stack, fitted, strict=True):
            est.classes_ = classes[m]
            out[m] = est
    for m in range(len(subsets)):
        if out[m] is None:
            out[m] = with_seed(estimator, seeds[m]).fit(X[subsets[m]], y[subsets[m]])
    return out
