"""Shared pieces of the label defences: the base trainer, and the leave-out statistics of Pedersen ch. 5.3."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax
from sklearn.base import clone

from mipkit._random import check_noise_seed
from mipkit._validation import MipkitValueError
from mipkit.game.trainers import resolve_trainer, seed_noise
from mipkit.trainers import accepts_soft_targets, fit_many, one_hot

__all__ = [
    "BASE_TRAINERS",
    "FittedBasePredictions",
    "LeaveOutStatistics",
    "leave_out_logits",
    "leave_out_statistics",
    "optimally_soft_targets",
    "resolve_base",
]

BASE_TRAINERS = {
    "logistic": "mipkit.trainers.SoftLogisticRegression",
    "mlp": "mipkit.trainers.TorchMLPClassifier",
}
"""Short names accepted for ``base``: JSON parameters (``mipkit audit --params``) can name a base trainer."""


class FittedBasePredictions:
    """Predictions of a defence through its fitted base model ``base_`` (columns follow ``classes_``)."""

    def decision_function(self, X) -> np.ndarray:
        """The fitted base model's logits: its ``decision_function``, else ``log predict_proba``."""
        if callable(getattr(self.base_, "decision_function", None)):
            return self.base_.decision_function(X)
        return np.log(np.clip(self.base_.predict_proba(X), 1e-300, None))

    def predict_proba(self, X) -> np.ndarray:
        """The fitted base model's class probabilities (``softmax`` of the logits when it has none)."""
        if callable(getattr(self.base_, "predict_proba", None)):
            return np.asarray(self.base_.predict_proba(X), dtype=np.float64)
        return softmax(self.decision_function(X), axis=1)

    def predict(self, X) -> np.ndarray:
        """The most probable class."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def resolve_base(base: Any, base_params: dict | None, owner: str, noise_seed: int | None = None) -> Any:
    """An unfitted base estimator that learns from soft targets.

    ``base`` is a short name of :data:`BASE_TRAINERS`, an import path of a trainer class (built with
    ``base_params``), or an estimator instance (cloned; ``base_params`` are set on the clone). A
    ``noise_seed`` is handed to a base whose own ``noise_seed`` is None (each fit keys its noise stream by
    its own seed); without one, a DP-SGD base draws its noise from OS entropy.
    """
    if base_params is not None and not isinstance(base_params, dict):
        raise MipkitValueError(
            f"The 'base_params' parameter of {owner} must be a dict of the base trainer's parameters. "
            f"Got {base_params!r} instead."
        )
    if isinstance(base, str):
        path = BASE_TRAINERS.get(base.strip(), base)
        estimator = resolve_trainer(path, base_params or {}).build(None)
        name = base
    elif callable(getattr(base, "fit", None)) and callable(getattr(base, "get_params", None)):
        estimator = clone(base)
        if base_params:
            estimator.set_params(**base_params)
        name = type(base).__name__
    else:
        raise MipkitValueError(
            f"The 'base' parameter of {owner} must be one of {sorted(BASE_TRAINERS)}, an import path of a "
            f"trainer, or an estimator. Got {base!r} instead."
        )
    if noise_seed is not None:
        seed_noise(estimator, check_noise_seed(noise_seed, owner=owner))
    if not accepts_soft_targets(estimator):
        raise MipkitValueError(
            f"The base trainer {name!r} of {owner} cannot learn from soft targets; use "
            f"{' or '.join(repr(k) for k in BASE_TRAINERS)}, or a trainer whose class sets "
            "accepts_soft_targets = True."
        )
    return estimator


@dataclass(frozen=True)
class LeaveOutStatistics:
    """Per-sample statistics of the centred logits of models that did not train on the sample.

    Attributes
    ----------
    mean : ndarray (n, C)
        ``mu``: the leave-out average of the centred logits.
    std : ndarray (n, C)
        Their standard deviation over the ``n_splits`` models (``ddof=1``), unsigned.
    logits : ndarray (n_splits, n, C)
        The centred leave-out logits themselves (split ``s`` left each sample out exactly once).
    """

    mean: np.ndarray
    std: np.ndarray
    logits: np.ndarray

    def label_probability(self, codes: np.ndarray) -> np.ndarray:
        """``softmax(mu)_y``: the leave-out average's probability of each sample's given class."""
        return softmax(self.mean, axis=1)[np.arange(codes.size), codes]


def _logits(model: Any, X: np.ndarray) -> np.ndarray:
    if callable(getattr(model, "decision_function", None)):
        z = np.asarray(model.decision_function(X), dtype=np.float64)
        if z.ndim == 2:
            return z
    return np.log(np.clip(np.asarray(model.predict_proba(X), dtype=np.float64), 1e-300, None))


def split_halves(n: int, permutations: np.ndarray) -> list[np.ndarray]:
    """``[A_1, B_1, A_2, B_2, ...]``: each permutation cut into its first ``n // 2`` and the rest (sorted)."""
    out = []
    for perm in permutations:
        out.append(np.sort(perm[: n // 2]))
        out.append(np.sort(perm[n // 2 :]))
    return out


def _check_halves_hold_every_class(Y: np.ndarray, halves: list[np.ndarray]) -> None:
    """Refuse an inner half that lacks a class of the training set: a model that never saw the class gives it
    a leave-out logit wherever its optimiser stopped (about -14 for L-BFGS, unstable from split to split),
    which would push that sample's soft target hard and unflagged."""
    present = (Y == 1.0).any(axis=0)
    for h, half in enumerate(halves):
        missing = np.flatnonzero(present & ~(Y[half] == 1.0).any(axis=0))
        if missing.size:
            counts = (Y[:, missing] == 1.0).sum(axis=0)
            raise MipkitValueError(
                f"Optimally soft labels: inner split {h // 2 + 1} leaves class index {int(missing[0])} "
                f"({int(counts[0])} training sample(s)) out of one half, so its leave-out logits would be "
                "arbitrary; give every class at least a few samples per half (merge or drop rare classes)."
            )


def leave_out_logits(
    inner: Any,
    X: np.ndarray,
    Y: np.ndarray,
    subsets: list[np.ndarray],
    permutations: list[np.ndarray],
    inner_seeds: list[np.ndarray],
) -> list[np.ndarray]:
    """Centred leave-out logits ``(n_splits, n_m, C)`` of several defence fits, all inner fits in one batch.

    Fit ``m`` trains on rows ``subsets[m]`` of ``X``; ``Y`` (n, C) holds the one-hot labels of every row
    (rows no fit uses may hold any probability vector). Split ``s`` of fit ``m`` cuts ``permutations[m][s]``
    (a permutation of ``0..n_m-1``) into halves ``A`` and ``B`` (:func:`split_halves`); ``inner`` is trained
    on the one-hot labels of each half (seeds ``inner_seeds[m][2s]`` and ``[2s + 1]``, through
    :func:`mipkit.trainers.fit_many`) and predicts the other half. Logits are centred per sample (their mean
    over classes is 0).
    """
    n_classes = Y.shape[1]
    rows_all, seeds_all, owners, halves_of = [], [], [], []
    for m, rows in enumerate(subsets):
        halves = split_halves(rows.size, permutations[m])
        halves_of.append(halves)
        _check_halves_hold_every_class(Y[rows], halves)
        for h, half in enumerate(halves):
            rows_all.append(rows[half])
            seeds_all.append(int(inner_seeds[m][h]))
            owners.append((m, h))
    models = fit_many(inner, X, Y, rows_all, seeds_all)
    out = [np.empty((len(permutations[m]), rows.size, n_classes)) for m, rows in enumerate(subsets)]
    for (m, h), model in zip(owners, models, strict=True):
        left_out = halves_of[m][h ^ 1]
        z = _logits(model, X[subsets[m][left_out]])
        out[m][h // 2, left_out] = z - z.mean(axis=1, keepdims=True)
    return out


def leave_out_statistics(logits: np.ndarray) -> LeaveOutStatistics:
    """``mu`` and the standard deviation (``ddof=1``) over splits of centred leave-out logits."""
    return LeaveOutStatistics(mean=logits.mean(axis=0), std=logits.std(axis=0, ddof=1), logits=logits)


def optimally_soft_targets(stats: LeaveOutStatistics, codes: np.ndarray, alpha: Any) -> np.ndarray:
    """``softmax(mu + alpha * sigma*)`` (Pedersen eq. (5.15); docs/theory.md section 7).

    ``sigma*`` is the leave-out standard deviation with the sign ``+`` on the labelled class and ``-`` on the
    others; ``alpha`` is a number or one value per sample.
    """
    sign = np.where(one_hot(codes, stats.mean.shape[1]) > 0, 1.0, -1.0)
    a = np.asarray(alpha, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    return softmax(stats.mean + a * stats.std * sign, axis=1)
