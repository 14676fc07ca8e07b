"""What a model released with MIP noise may hold: its noised parameters and the public schema, nothing else.

A fitted estimator keeps more than the parameters that :class:`~mipkit.mechanisms.MIPNoise` perturbs: the
iterations its solver took (``n_iter_``), the singular values of the training features (``singular_``),
class means (``means_``, ``xbar_``), a fitted scaler's ``mean_`` and ``scale_`` inside a wrapped pipeline.
Each is a statistic of the private data that the certificate does not cover, so the released estimator is a
fresh, unfitted clone (hyperparameters only) given back just the noised ``attributes`` and the schema
(:data:`PUBLIC_FITTED`: the classes, the number and names of the features, the number of outputs; the
released parameters' shapes show these already). An estimator that needs anything else to predict is
refused: its predictions on a few training rows must be the same with and without the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone

from mipkit._validation import MipkitValueError

__all__ = ["PREDICT_METHODS", "PUBLIC_FITTED", "published_estimator"]

PUBLIC_FITTED = ("classes_", "n_features_in_", "feature_names_in_", "n_outputs_")
"""Fitted attributes that describe the schema, not the records: kept in a released estimator."""

PREDICT_METHODS = ("predict", "predict_proba", "decision_function")
"""The methods whose outputs must not change when the other fitted state is left out."""


def _same(a: Any, b: Any) -> bool:
    """Equal outputs: numerically (NaN equal to NaN) or, for labels, element by element."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    try:
        return bool(np.allclose(a.astype(float), b.astype(float), rtol=0.0, atol=0.0, equal_nan=True))
    except (TypeError, ValueError):
        return bool(np.array_equal(a, b))


def _predicts_alike(fitted: Any, public: Any, probe: Any) -> bool:
    """True when every prediction method of ``fitted`` gives the same output on ``probe`` from ``public``."""
    for method in PREDICT_METHODS:
        if not callable(getattr(fitted, method, None)):
            continue
        try:
            want = getattr(fitted, method)(probe)
        except Exception:  # a method the fitted estimator itself cannot run: nothing to compare
            continue
        try:
            got = getattr(public, method)(probe)
        except Exception:  # any failure means the left-out state is needed
            return False
        if not _same(want, got):
            return False
    return True


def published_estimator(fitted: Any, attributes: Sequence[str], probe: Any) -> Any:
    """A clone of ``fitted`` that holds only ``attributes`` (the parameters noised) and the public schema.

    Parameters
    ----------
    fitted : estimator
        The fitted estimator whose ``attributes`` are (or will be) the noisy release.
    attributes : sequence of str
        The fitted attributes that form the released vector (the certificate covers them).
    probe : array-like
        A few rows of the training features, used here only to check that the clone predicts as
        ``fitted`` does (never stored).

    Returns
    -------
    estimator
        An unfitted clone of ``fitted`` with ``attributes`` and the :data:`PUBLIC_FITTED` that ``fitted``
        holds set on it.

    Raises
    ------
    MipkitValueError
        When the clone does not predict as ``fitted`` does: the estimator needs other fitted state (a
        statistic of the private data that the certificate does not cover) to predict.
    """
    public = clone(fitted)
    own = vars(fitted)
    try:
        for name in attributes:
            setattr(public, name, getattr(fitted, name))
        for name in PUBLIC_FITTED:
            if name in own and name not in attributes:
                setattr(public, name, own[name])
        alike = _predicts_alike(fitted, public, probe)
    except Exception:  # an attribute that cannot be set alone is state the clone lacks
        alike = False
    if not alike:
        params = set(fitted.get_params(deep=False))
        left = sorted(k for k in own if k not in params and k not in attributes and k not in PUBLIC_FITTED)
        held = ", ".join(left) if left else "state inside its parameters"
        raise MipkitValueError(
            f"{type(fitted).__name__} needs more than its noised attributes ({', '.join(attributes)}) to "
            f"predict: its other fitted state ({held}) holds statistics of the private data that the "
            "certificate does not cover. Add that state to 'attributes' so that it is noised too, or wrap "
            "an estimator that predicts from the noised parameters alone."
        )
    return public
