"""How close two fitted models are: the LTU retraining attacker's yardstick (Pedersen, thesis Sec. 4.2.4).

Black-box: :func:`model_outputs` (``predict_proba``, else ``decision_function``, else ``predict`` on probe
records), compared by the sum of squared differences. White-box: :func:`parameter_distance`, the sum of
squared differences of every numeric fitted attribute (recursing into lists of estimators and into objects
whose pickled state is a dict, such as scikit-learn's ``Tree``); ``inf`` when the structures differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError

__all__ = ["model_outputs", "parameter_distance"]


def model_outputs(model: Any, X: np.ndarray) -> np.ndarray:
    """Black-box outputs of a fitted model on ``X``: ``predict_proba``, else ``decision_function``, else
    ``predict``, as a float array. (RidgeClassifier and Perceptron have no ``predict_proba``; their
    ``decision_function`` values are what a black-box query returns.)"""
    for method in ("predict_proba", "decision_function", "predict"):
        fn = getattr(model, method, None)
        if callable(fn):
            return np.asarray(fn(X), dtype=float)
    raise MipkitValueError(f"{type(model).__name__} has no predict_proba, decision_function or predict.")


def _numeric_arrays(value: Any, depth: int = 0) -> list[np.ndarray]:
    """Numeric content of a fitted attribute, flattened to float arrays (recursing into lists of estimators,
    object arrays and objects whose pickled state is a dict, e.g. scikit-learn's ``Tree``)."""
    if depth > 4 or value is None or isinstance(value, (str, bytes)):
        return []
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return [np.array([float(value)])]
    if isinstance(value, np.ndarray):
        if value.dtype.names:
            from numpy.lib import recfunctions

            return [recfunctions.structured_to_unstructured(value).astype(float).ravel()]
        if value.dtype == object:
            return [a for item in value.ravel() for a in _numeric_arrays(item, depth + 1)]
        if np.issubdtype(value.dtype, np.number) or value.dtype == bool:
            return [value.astype(float).ravel()]
        return []
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _numeric_arrays(item, depth + 1)]
    if hasattr(value, "get_params") and hasattr(value, "__dict__"):
        return _fitted_parameters(value, depth + 1)
    getstate = getattr(value, "__getstate__", None)
    if callable(getstate):
        try:
            state = getstate()
        except TypeError:
            return []
        if isinstance(state, dict):
            return [a for key in sorted(state) for a in _numeric_arrays(state[key], depth + 1)]
    return []


def _fitted_parameters(model: Any, depth: int = 0) -> list[np.ndarray]:
    names = sorted(k for k in vars(model) if k.endswith("_") and not k.startswith("_"))
    return [a for name in names for a in _numeric_arrays(getattr(model, name), depth)]


def _squared_distance(first: list[np.ndarray], second: list[np.ndarray]) -> float:
    if len(first) != len(second) or any(a.shape != b.shape for a, b in zip(first, second, strict=True)):
        return math.inf
    total = 0.0
    for a, b in zip(first, second, strict=True):
        both_nan = np.isnan(a) & np.isnan(b)
        diff = np.where(both_nan, 0.0, a - b)
        total += float(np.sum(np.where(np.isnan(diff), np.inf, diff * diff)))
    return total


def parameter_distance(model_a: Any, model_b: Any) -> float:
    """Sum of squared differences between two fitted models' numeric fitted attributes (white-box); ``inf``
    when their structures differ (e.g. trees of different shapes)."""
    return _squared_distance(_fitted_parameters(model_a), _fitted_parameters(model_b))
