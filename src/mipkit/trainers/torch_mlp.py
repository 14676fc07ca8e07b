"""A ReLU network trained with SGD or DP-SGD on hard or soft targets (the ``torch`` extra), many at a time.

:class:`TorchMLPClassifier` is a scikit-learn classifier. torch is imported only inside ``fit``; the fitted
parameters are NumPy arrays, so prediction, pickling and the engine's workers need no torch. Training is
:func:`mipkit.trainers._torch_train.train_stack`: a stack of networks trained together with ``torch.func``
(``vmap`` over models of ``grad``), one seeded generator per model; DP-SGD clips per-sample gradients whose
norms and clipped sums come from per-sample output gradients (:func:`~mipkit.trainers._torch_train.
clipped_gradient_sum`), equal to Opacus's step. :meth:`TorchMLPClassifier.fit` is a stack of one.
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from mipkit._progress import Progress
from mipkit._random import check_noise_seed, spawn_seed
from mipkit._validation import MipkitValueError, check_positive, check_positive_int
from mipkit.trainers._params import store_params
from mipkit.trainers.logistic import StackedFit, _check_X

__all__ = ["TorchMLPClassifier"]


class TorchMLPClassifier(StackedFit, ClassifierMixin, BaseEstimator):
    """Fully connected ReLU network with soft-target cross-entropy, plain SGD or DP-SGD.

    Parameters
    ----------
    hidden_layer_sizes : sequence of int
        Widths of the hidden layers; ``()`` gives multinomial logistic regression.
    epochs : int
        Passes over the data. SGD: each epoch is a fresh permutation cut into ``ceil(n / batch_size)``
        batches. DP-SGD: ``ceil(n / batch_size)`` Poisson-sampled batches per epoch.
    learning_rate : float
        Step size of SGD.
    batch_size : int
        Batch size (SGD) or expected batch size (DP-SGD: sample rate ``q = min(1, batch_size / n)``).
    weight_decay : float
        L2 term ``weight_decay * theta`` added to the (noised) gradient, as ``torch.optim.SGD`` does.
    noise_multiplier : float or None
        DP-SGD noise ``sigma``: Gaussian noise of standard deviation ``sigma * max_grad_norm`` is added to
        the sum of clipped per-sample gradients. ``None`` (with ``max_grad_norm=None``) trains without DP.
    max_grad_norm : float or None
        DP-SGD clipping norm ``c``. DP-SGD runs when this is set (``noise_multiplier=None`` then means 0).
    random_state : int or None
        Seeds the initialisation and SGD's batches; None draws a fresh seed per fit.
    noise_seed : int or None
        DP-SGD's protective randomness (its Poisson batches and its noise): None (default) draws it from OS
        entropy, so that knowing ``random_state`` does not let anyone replay the training; an integer makes
        it reproducible, and the model then is not private against anyone who holds that integer
        (:func:`mipkit._random.noise_generator`; audits set it from each fit's seed).
    n_threads : int or None
        torch intra-op threads while training (restored afterwards); a fixed count keeps results
        reproducible.
    max_models : int
        How many models :func:`mipkit.trainers.fit_many` trains in one vectorised stack (memory:
        per-sample gradients of ``max_models`` x batch x parameters floats).

    Attributes
    ----------
    classes_ : ndarray
    coefs_ : list of ndarray
        Weight matrices ``(fan_in, fan_out)``, as scikit-learn's MLPClassifier.
    intercepts_ : list of ndarray
    n_features_in_ : int
    steps_ : int
        Optimiser steps taken.
    sample_rate_ : float or None
        Poisson sampling rate ``q`` of DP-SGD (None without DP).
    noise_multiplier_, max_grad_norm_ : float or None
        The DP-SGD noise multiplier and clipping norm that ran (None without DP). With ``sample_rate_`` and
        ``steps_`` they are what an accountant needs (``mipkit.accounting.SubsampledGaussian``).
    expected_batch_size_ : float
        ``q n`` (DP-SGD) or ``min(batch_size, n)``; the DP-SGD gradient is divided by it.
    """

    accepts_soft_targets = True

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        epochs: int = 20,
        learning_rate: float = 0.05,
        batch_size: int = 32,
        weight_decay: float = 0.0,
        noise_multiplier: float | None = None,
        max_grad_norm: float | None = None,
        random_state=None,
        noise_seed: int | None = None,
        n_threads: int | None = 1,
        max_models: int = 32,
    ):
        store_params(self, locals())

    def _noise_seeds(self, count: int) -> list[int | None]:
        """The validated ``noise_seed`` of each of ``count`` models (each keys its stream by its own seed)."""
        return [check_noise_seed(self.noise_seed, owner=type(self).__name__)] * count

    def _settings(self):
        from mipkit.trainers._torch_train import TrainSettings

        owner = type(self).__name__
        try:
            hidden = tuple(int(h) for h in self.hidden_layer_sizes)
        except (TypeError, ValueError):
            hidden = (-1,)
        if any(h < 1 for h in hidden):
            raise MipkitValueError(
                f"The 'hidden_layer_sizes' parameter of {owner} must be a list of positive integers. "
                f"Got {self.hidden_layer_sizes!r} instead."
            )
        if self.noise_multiplier is not None and self.max_grad_norm is None:
            raise MipkitValueError(
                f"{owner} runs DP-SGD only with a clipping norm: set 'max_grad_norm' with 'noise_multiplier'."
            )
        noise = None
        if self.max_grad_norm is not None:
            check_positive("max_grad_norm", self.max_grad_norm, owner=owner)
            noise = 0.0 if self.noise_multiplier is None else float(self.noise_multiplier)
            if not noise >= 0:
                raise MipkitValueError(
                    f"The 'noise_multiplier' parameter of {owner} must be >= 0. "
                    f"Got {self.noise_multiplier!r} instead."
                )
        wd = float(self.weight_decay)
        if not wd >= 0:
            raise MipkitValueError(f"The 'weight_decay' parameter of {owner} must be >= 0. Got {wd!r}.")
        threads = (
            None if self.n_threads is None else check_positive_int("n_threads", self.n_threads, owner=owner)
        )
        return TrainSettings(
            hidden=hidden,
            epochs=check_positive_int("epochs", self.epochs, owner=owner),
            learning_rate=check_positive("learning_rate", self.learning_rate, owner=owner),
            batch_size=check_positive_int("batch_size", self.batch_size, owner=owner),
            weight_decay=wd,
            noise_multiplier=noise,
            max_grad_norm=None if self.max_grad_norm is None else float(self.max_grad_norm),
            n_threads=threads,
        )

    @staticmethod
    def _seed(seed) -> int:
        if seed is None or isinstance(seed, np.random.Generator):
            return spawn_seed(seed)
        return int(seed)

    def _fit_stack(
        self, Xs: list[np.ndarray], Ys: list[np.ndarray], seeds: list, progress: Progress | None = None
    ) -> list:
        """Train one clone per ``(Xs[m], Ys[m], seeds[m])`` in vectorised stacks of ``max_models``;
        ``progress(stage, done, total)`` counts the steps of each stack in turn."""
        from mipkit.trainers._torch_train import train_stack

        settings = self._settings()
        chunk = check_positive_int("max_models", self.max_models, owner=type(self).__name__)
        out = []
        for start in range(0, len(Xs), chunk):
            part = slice(start, start + chunk)
            used = [self._seed(s) for s in seeds[part]]
            res = train_stack(Xs[part], Ys[part], used, settings, self._noise_seeds(len(used)), progress)
            for j, s in enumerate(seeds[part]):
                est = clone(self).set_params(random_state=s)
                weights = res.params[j]
                est.coefs_ = [np.ascontiguousarray(w.T) for w in weights[0::2]]
                est.intercepts_ = [b.copy() for b in weights[1::2]]
                est.classes_ = np.arange(Ys[start + j].shape[1])
                est.n_features_in_ = int(Xs[start + j].shape[1])
                est.steps_ = int(res.steps[j])
                est.sample_rate_ = res.sample_rate[j]
                est.noise_multiplier_ = settings.noise_multiplier
                est.max_grad_norm_ = settings.max_grad_norm
                est.expected_batch_size_ = float(res.expected_batch_size[j])
                out.append(est)
        return out

    def decision_function(self, X) -> np.ndarray:
        """Logits of shape (n, n_classes), computed in float64 from the float32 parameters."""
        h = _check_X(X, type(self).__name__, getattr(self, "n_features_in_", None))
        last = len(self.coefs_) - 1
        for layer, (W, b) in enumerate(zip(self.coefs_, self.intercepts_, strict=True)):
            h = h @ W.astype(np.float64) + b.astype(np.float64)
            if layer < last:
                h = np.maximum(h, 0.0)
        return h

    def predict_proba(self, X) -> np.ndarray:
        """``softmax`` of the logits; columns follow ``classes_``."""
        return softmax(self.decision_function(X), axis=1)

    def predict(self, X) -> np.ndarray:
        """The most probable class."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
