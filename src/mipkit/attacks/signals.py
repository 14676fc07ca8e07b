"""Membership signals computed from a model's outputs on labelled records.

Every function takes ``probs`` of shape ``(..., n, C)`` (``predict_proba`` outputs of one or many models,
e.g. ``(K, n, C)`` for K reference models) and integer labels ``y`` of shape ``(n,)`` in ``0..C-1``, and
returns an array of shape ``(..., n)``. With ``from_logits=True`` the first argument holds raw logits
(pre-softmax scores) instead, which keeps precision where a probability would round to 0 or 1.

Membership convention of the package: a *signal* is a number per record; attacks turn signals into
membership scores (higher = more likely a member).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from mipkit._validation import MipkitValueError

__all__ = ["cross_entropy_loss", "logit_confidence", "true_class_probability"]

TINY = np.finfo(float).tiny
"""Smallest positive normal float64 (about 2.2e-308): probabilities are clipped below at this value, so the
largest finite cross-entropy loss is ``-log(TINY)``, about 708.4."""


def _check_outputs(values, y, *, from_logits: bool, owner: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise MipkitValueError(f"The model outputs given to {owner} must be numeric.") from None
    if out.ndim < 2:
        raise MipkitValueError(
            f"The model outputs given to {owner} must have shape (..., n, C). Got shape {out.shape} instead."
        )
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != out.shape[-2]:
        raise MipkitValueError(
            f"The labels given to {owner} must have shape (n,) with n = {out.shape[-2]}. "
            f"Got shape {labels.shape} instead."
        )
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        if not np.all(np.mod(labels, 1) == 0):
            raise MipkitValueError(f"The labels given to {owner} must be integers 0..C-1.")
        labels = labels.astype(np.int64)
    n_classes = out.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise MipkitValueError(
            f"The labels given to {owner} must lie in 0..{n_classes - 1} (C = {n_classes} columns). "
            f"Got values in [{labels.min()}, {labels.max()}]."
        )
    if from_logits:
        if np.any(np.isnan(out)) or np.any(np.isposinf(out)):
            raise MipkitValueError(f"The logits given to {owner} must not contain NaN or +infinity.")
    elif np.any(~np.isfinite(out)) or np.any(out < 0) or np.any(out > 1 + 1e-6):
        raise MipkitValueError(
            f"The probabilities given to {owner} must lie in [0, 1] (use from_logits=True for logits)."
        )
    return out, labels.astype(np.int64)


def _take_label(values: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``values[..., i, y[i]]`` for every i, broadcasting over the leading axes."""
    index = np.broadcast_to(y[:, None], values.shape[:-1] + (1,))
    return np.take_along_axis(values, index, axis=-1)[..., 0]


def _log_other_mass(values: np.ndarray, y: np.ndarray, *, from_logits: bool) -> np.ndarray:
    """``log sum_{c != y} p_c`` (or, for logits, ``logsumexp_{c != y} z_c``), summing the other classes
    directly rather than forming ``1 - p_y``, which cancels catastrophically when ``p_y`` is near 1."""
    mask = np.zeros(values.shape[-2:], dtype=bool)
    mask[np.arange(values.shape[-2]), y] = True
    if from_logits:
        others = np.where(mask, -np.inf, values)
        return logsumexp(others, axis=-1)
    others = np.where(mask, 0.0, values).sum(axis=-1)
    return np.log(np.maximum(others, TINY))


def true_class_probability(probs, y, *, from_logits: bool = False) -> np.ndarray:
    """Probability the model gives the true class, ``p_y``.

    Parameters
    ----------
    probs : array of shape (..., n, C)
        ``predict_proba`` outputs (or logits with ``from_logits=True``, then ``p_y = softmax(z)_y``).
    y : array of shape (n,)
        Integer labels in ``0..C-1``.

    Returns
    -------
    ndarray of shape (..., n)
    """
    values, labels = _check_outputs(probs, y, from_logits=from_logits, owner="true_class_probability")
    if from_logits:
        return np.exp(_take_label(values, labels) - logsumexp(values, axis=-1))
    return _take_label(values, labels)


def cross_entropy_loss(probs, y, *, from_logits: bool = False) -> np.ndarray:
    """Cross-entropy loss ``-log p_y``: the LOSS attack's signal (Yeom et al. 2018).

    Probabilities are clipped below at the smallest normal float (``TINY``), so a record the model gives
    probability 0 has the finite loss ``-log(TINY)``, about 708.4, and sorting still works. From logits the
    loss is ``logsumexp(z) - z_y``, exact without clipping.

    Returns
    -------
    ndarray of shape (..., n), non-negative (up to rounding).
    """
    values, labels = _check_outputs(probs, y, from_logits=from_logits, owner="cross_entropy_loss")
    if from_logits:
        return logsumexp(values, axis=-1) - _take_label(values, labels)
    return -np.log(np.maximum(_take_label(values, labels), TINY))


def logit_confidence(probs, y, *, from_logits: bool = False) -> np.ndarray:
    """Logit-scaled true-class confidence ``phi = log p_y - log(sum_{c != y} p_c)``: LiRA's signal.

    Carlini et al. 2022 ("Membership Inference Attacks From First Principles", Sec. IV-C, eq. (4)) scale the
    confidence ``p = p_y`` by ``log(p / (1 - p))`` so that its distribution over training runs is close to
    Gaussian. Computing ``1 - p`` from ``p`` loses every digit when ``p`` is within a few ulps of 1 (for
    ``p = 1 - 1e-12`` the relative error of ``1 - p`` is about 1e-4, and ``p`` rounded to 1 gives infinity),
    so the other classes' mass ``sum_{c != y} p_c`` is summed directly, and the two logs are taken
    separately. Both masses are clipped below at ``TINY`` (about 2.2e-308), so the result is finite and lies
    in about ``[-708.4, 708.4]``. From logits, ``phi = z_y - logsumexp_{c != y} z_c`` (the softmax normaliser
    cancels), which is exact for any logit magnitude.

    Parameters
    ----------
    probs : array of shape (..., n, C)
        ``predict_proba`` outputs, or logits with ``from_logits=True``. ``C >= 2``.
    y : array of shape (n,)
        Integer labels.

    Returns
    -------
    ndarray of shape (..., n)
    """
    values, labels = _check_outputs(probs, y, from_logits=from_logits, owner="logit_confidence")
    if values.shape[-1] < 2:
        raise MipkitValueError("logit_confidence needs at least two classes (C >= 2).")
    if from_logits:
        return _take_label(values, labels) - _log_other_mass(values, labels, from_logits=True)
    log_true = np.log(np.maximum(_take_label(values, labels), TINY))
    return log_true - _log_other_mass(values, labels, from_logits=False)
