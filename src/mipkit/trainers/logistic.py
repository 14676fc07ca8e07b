"""Multinomial logistic regression on hard or soft targets (NumPy/SciPy only), fitted many at a time.

The objective of one model on ``n`` rows with targets ``Y`` (one-hot for hard labels) is

    f(W, b) = (1/n) sum_i CE(Y_i, softmax(x_i W + b)) + (1 / (2 C n)) ||W||^2,
    CE(y, p) = - sum_c y_c log p_c,

the multinomial objective of scikit-learn's ``LogisticRegression(C=C)`` divided by ``C n`` (same minimiser;
the intercept is not penalised). It is minimised by L-BFGS from ``W = 0, b = 0``
(:func:`mipkit.trainers._lbfgs.batched_lbfgs`). Several models (different rows, different targets) are
fitted in one batch by :meth:`SoftLogisticRegression._fit_stack`; :meth:`~SoftLogisticRegression.fit` is the
same code with a batch of one, so a model fitted in a batch equals the model fitted alone (docs/theory.md
section 7).
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from mipkit._progress import Progress
from mipkit._validation import MipkitValueError, check_positive, check_positive_int
from mipkit.trainers._lbfgs import batched_lbfgs
from mipkit.trainers._params import store_params
from mipkit.trainers._targets import as_targets

__all__ = ["SoftLogisticRegression"]


def _check_X(X, owner: str, n_features: int | None = None) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise MipkitValueError(f"X of {owner} must be 2-dimensional (n, d). Got shape {arr.shape} instead.")
    if not np.all(np.isfinite(arr)):
        raise MipkitValueError(f"X of {owner} must not contain NaN or infinity.")
    if n_features is not None and arr.shape[1] != n_features:
        raise MipkitValueError(
            f"X has {arr.shape[1]} features, but {owner} was fitted with {n_features} features."
        )
    return arr


class StackedFit:
    """``fit`` of a soft-target trainer through its batched ``_fit_stack`` (a stack of one model)."""

    def fit(self, X, y, progress: Progress | None = None):
        """Fit on hard labels ``y`` (n,) or soft targets ``y`` (n, C); returns self.

        ``progress(stage, done, total)``, optional: called after each optimisation step by the trainers whose
        ``_fit_stack`` takes it (the torch trainers: SGD steps); the library draws nothing.
        """
        owner = type(self).__name__
        X = _check_X(X, owner)
        classes, Y, _ = as_targets(y, X.shape[0], owner=owner)
        report = {} if progress is None else {"progress": progress}
        fitted = self._fit_stack([X], [Y], [self.random_state], **report)[0]
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
        self.classes_ = classes
        return self


class SoftLogisticRegression(StackedFit, ClassifierMixin, BaseEstimator):
    """L2-penalised multinomial logistic regression that learns from soft targets or hard labels.

    Parameters
    ----------
    C : float
        Inverse regularisation strength, as in scikit-learn (penalty ``||W||^2 / (2 C)`` against the summed
        cross-entropy).
    fit_intercept : bool
        Fit an unpenalised intercept per class.
    max_iter : int
        L-BFGS iterations at most.
    tol : float
        Stop when the largest absolute gradient entry of the mean objective is at most ``tol``.
    history : int
        Curvature pairs kept by L-BFGS.
    random_state : int or None
        Accepted for the trainer protocol; the fit is deterministic (L-BFGS from zero), so it has no effect.

    Attributes
    ----------
    classes_ : ndarray
        ``np.unique(y)`` for hard labels, ``arange(C)`` for soft targets ``(n, C)``.
    coef_ : ndarray of shape (n_classes, n_features)
        One row per class (also for two classes).
    intercept_ : ndarray of shape (n_classes,)
    n_iter_ : int
    converged_ : bool
        False when L-BFGS stopped at ``max_iter`` or in a failed line search.
    n_features_in_ : int
    """

    accepts_soft_targets = True

    def __init__(
        self,
        C: float = 1.0,
        *,
        fit_intercept: bool = True,
        max_iter: int = 500,
        tol: float = 1e-6,
        history: int = 10,
        random_state=None,
    ):
        store_params(self, locals())

    def _fit_stack(self, Xs: list[np.ndarray], Ys: list[np.ndarray], seeds: list) -> list:
        """Fit one clone per ``(Xs[m], Ys[m])`` (soft targets of equal width) in one L-BFGS batch.

        Rows are stacked into ``(M, n_max, d)`` arrays; a model with fewer rows is padded with rows of weight
        0, which add exact zeros to its sums. Returns the fitted clones (``random_state=seeds[m]``,
        ``classes_ = arange(C)``).
        """
        owner = type(self).__name__
        C_reg = check_positive("C", self.C, owner=owner)
        tol = check_positive("tol", self.tol, owner=owner)
        max_iter = check_positive_int("max_iter", self.max_iter, owner=owner)
        history = check_positive_int("history", self.history, owner=owner)
        M = len(Xs)
        d = Xs[0].shape[1]
        n_classes = Ys[0].shape[1]
        sizes = np.array([x.shape[0] for x in Xs])
        n_max = int(sizes.max())
        width = d + 1 if self.fit_intercept else d
        Xb = np.zeros((M, n_max, width))
        Yb = np.zeros((M, n_max, n_classes))
        weight = np.zeros((M, n_max))
        for m, (x, t) in enumerate(zip(Xs, Ys, strict=True)):
            Xb[m, : x.shape[0], :d] = x
            if self.fit_intercept:
                Xb[m, : x.shape[0], d] = 1.0
            Yb[m, : x.shape[0]] = t
            weight[m, : x.shape[0]] = 1.0
        XbT = np.ascontiguousarray(Xb.transpose(0, 2, 1))
        inv_n = 1.0 / sizes
        lam = 1.0 / (C_reg * sizes)
        penalised = np.ones((width, n_classes))
        if self.fit_intercept:
            penalised[d] = 0.0

        def objective(theta: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            W = theta.reshape(-1, width, n_classes)
            Z = np.matmul(Xb[rows], W)
            top = Z.max(axis=2, keepdims=True)
            log_p = Z - (top + np.log(np.sum(np.exp(Z - top), axis=2, keepdims=True)))
            ce = -np.sum(Yb[rows] * log_p, axis=2)
            Wp = W * penalised
            f = np.sum(weight[rows] * ce, axis=1) * inv_n[rows]
            f += 0.5 * lam[rows] * np.sum(Wp.reshape(rows.size, -1) ** 2, axis=1)
            R = (weight[rows] * inv_n[rows, None])[:, :, None] * (np.exp(log_p) - Yb[rows])
            G = np.matmul(XbT[rows], R) + lam[rows, None, None] * Wp
            return f, G.reshape(rows.size, -1)

        theta, n_iter, status = batched_lbfgs(
            objective, np.zeros((M, width * n_classes)), max_iter=max_iter, tol=tol, history=history
        )
        out = []
        for m in range(M):
            W = theta[m].reshape(width, n_classes)
            est = clone(self).set_params(random_state=seeds[m])
            est.coef_ = np.ascontiguousarray(W[:d].T)
            est.intercept_ = W[d].copy() if self.fit_intercept else np.zeros(n_classes)
            est.classes_ = np.arange(n_classes)
            est.n_iter_ = int(n_iter[m])
            est.converged_ = bool(status[m] in (1, 2))
            est.n_features_in_ = int(d)
            out.append(est)
        return out

    def decision_function(self, X) -> np.ndarray:
        """Logits ``X W + b`` of shape (n, n_classes) (two columns also for two classes)."""
        X = _check_X(X, type(self).__name__, getattr(self, "n_features_in_", None))
        return X @ self.coef_.T + self.intercept_

    def predict_proba(self, X) -> np.ndarray:
        """``softmax`` of the logits; columns follow ``classes_``."""
        return softmax(self.decision_function(X), axis=1)

    def predict(self, X) -> np.ndarray:
        """The most probable class."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
