"""Traditional label smoothing, the comparison of Pedersen ch. 5.5: ``(1 - a) * onehot + a * uniform``."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from mipkit._validation import check_interval
from mipkit.defences._base import FittedBasePredictions, resolve_base
from mipkit.defences.soft_labels import _check_labels
from mipkit.trainers import fit_many, one_hot

__all__ = ["LabelSmoothing", "smoothed_targets"]


def smoothed_targets(codes: np.ndarray, n_classes: int, a: float) -> np.ndarray:
    """``(1 - a) * onehot(codes) + a / C``."""
    return (1.0 - a) * one_hot(codes, n_classes) + a / n_classes


class LabelSmoothing(FittedBasePredictions, ClassifierMixin, BaseEstimator):
    """Train a base classifier on smoothed labels ``(1 - a) * onehot + a * uniform``.

    Parameters
    ----------
    base : str or estimator
        As for :class:`mipkit.defences.OptimallySoftLabels` (``"logistic"``, ``"mlp"``, an import path or an
        instance of a trainer that learns from soft targets).
    a : float in [0, 1]
        Smoothing weight; ``a = 0`` is training on the hard labels.
    base_params : dict, optional
        Constructor parameters of the base trainer.
    random_state : int or None
        The base trainer's seed.
    noise_seed : int or None
        Handed to a DP-SGD base whose own ``noise_seed`` is None (reproducible noise; not private against
        anyone who holds it); None: its noise comes from OS entropy.

    Attributes
    ----------
    classes_ : ndarray
    base_ : estimator
        The model fitted on the smoothed targets.
    n_features_in_ : int
    """

    accepts_soft_targets = False

    def __init__(
        self,
        base: Any = "logistic",
        a: float = 0.1,
        *,
        base_params: dict | None = None,
        random_state=None,
        noise_seed: int | None = None,
    ):
        self.base = base
        self.a = a
        self.base_params = base_params
        self.random_state = random_state
        self.noise_seed = noise_seed
        self._check_params()

    def _check_params(self) -> tuple[Any, float]:
        owner = type(self).__name__
        a = check_interval("a", self.a, 0.0, 1.0, closed="both", owner=owner)
        return resolve_base(self.base, self.base_params, owner, self.noise_seed), a

    def fit(self, X, y) -> LabelSmoothing:
        """Fit the base trainer on the smoothed one-hot labels; returns self."""
        X, y = _check_labels(X, y, type(self).__name__)
        fitted = self._fit_many(X, y, [np.arange(X.shape[0])], [self.random_state])[0]
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
        return self

    def _fit_many(self, X, y, subsets, seeds) -> list:
        """:func:`mipkit.trainers.fit_many` for this defence (the base fits in one batch)."""
        base, a = self._check_params()
        X, y = _check_labels(X, y, type(self).__name__)
        out: list[Any] = [None] * len(subsets)
        groups: dict[tuple, list[int]] = {}
        for m, rows in enumerate(subsets):
            groups.setdefault(tuple(np.unique(y[rows]).tolist()), []).append(m)
        for members in groups.values():
            classes = np.unique(y[subsets[members[0]]])
            known = np.isin(y, classes)
            codes = np.where(known, np.searchsorted(classes, y), 0)
            T = np.where(known[:, None], smoothed_targets(codes, classes.size, a), 1.0 / classes.size)
            finals = fit_many(base, X, T, [subsets[m] for m in members], [seeds[m] for m in members])
            for m, final in zip(members, finals, strict=True):
                est = clone(self).set_params(random_state=seeds[m])
                est.classes_ = classes
                est.base_ = final
                est.n_features_in_ = int(X.shape[1])
                out[m] = est
        return out
