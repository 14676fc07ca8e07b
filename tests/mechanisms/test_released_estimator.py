"""The attack on a model released with MIP noise: read a statistic of the private data from the object.

The certificate covers the noised ``attributes`` alone. A fitted estimator holds more: a linear
discriminant analysis keeps the class means and the overall mean of the training features (``means_``,
``xbar_``), a logistic regression its solver's iterations (``n_iter_``), a scaler inside a pipeline the
columns' means. The attacker loads the released object (the pickle ``protect`` saves, or
``MIPNoise.release()``) and looks for the private column means among every number it holds. The released
estimator holds the noised parameters and the schema only; an estimator that needs anything else to predict
is refused.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mipkit._validation import MipkitValueError
from mipkit.mechanisms import MIPNoise
from mipkit.mechanisms.published import PUBLIC_FITTED
from mipkit.workflows.protect import ProtectConfig, protect


def _private(n: int = 80, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=[3.0, -2.0, 7.0], scale=[1.0, 2.0, 0.5], size=(n, 3))
    return X, (X[:, 0] + rng.normal(size=n) > 3.0).astype(int)


def _arrays(obj, seen=None):
    """Every numeric array or number reachable from ``obj`` (attributes, containers, nested estimators)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (np.ndarray, float, np.floating)):
        if np.asarray(obj).dtype.kind == "f":
            yield np.asarray(obj, dtype=float).ravel()
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _arrays(v, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _arrays(v, seen)
    elif hasattr(obj, "__dict__"):
        yield from _arrays(vars(obj), seen)


def _means_found(obj, X: np.ndarray) -> list[float]:
    """The private column means found (to 1e-9) in the object as an attacker loads it from its pickle."""
    loaded = pickle.loads(pickle.dumps(obj))
    values = np.concatenate([a for a in _arrays(loaded) if a.size] or [np.zeros(0)])
    return [m for m in X.mean(axis=0) if np.any(np.abs(values - m) <= 1e-9 * (1 + abs(m)))]


def _fitted_state(est) -> set[str]:
    return set(vars(est)) - set(est.get_params(deep=False))


def test_the_private_mean_cannot_be_read_from_a_released_lda():
    X, y = _private()
    lda = LinearDiscriminantAnalysis()
    assert _means_found(lda.fit(X, y), X)  # the attack works on the fitted estimator: xbar_ is the mean
    kw = {"eta": 0.1, "sigma": 1.0, "noise_seed": 0}
    released = MIPNoise(LinearDiscriminantAnalysis(), **kw).fit(X, y).release()
    assert not _means_found(released, X)
    assert _fitted_state(released.estimator_) == {"coef_", "intercept_", "classes_", "n_features_in_"}
    assert released.predict(X).shape == (80,) and released.predict_proba(X).shape == (80, 2)
    # a fitted estimator passed as the parameter is published unfitted
    assert not _means_found(MIPNoise(lda, **kw).fit(X, y).release(), X)

    result = protect((X, y), ProtectConfig(model=LinearDiscriminantAnalysis(), **kw))
    assert not _means_found(result.model, X)


def test_a_released_logistic_regression_holds_its_parameters_and_the_schema():
    X, y = _private()
    m = MIPNoise(LogisticRegression(), eta=0.1, sigma=1.0, noise_seed=0).fit(X, y)
    held = _fitted_state(m.release().estimator_)
    assert held == {"coef_", "intercept_", "classes_", "n_features_in_"}  # no n_iter_
    assert held <= {"coef_", "intercept_", *PUBLIC_FITTED}
    np.testing.assert_array_equal(m.estimator_.coef_.ravel(), m.released_[:3])


class ScaledLogistic(ClassifierMixin, BaseEstimator):
    """``Pipeline(StandardScaler(), LogisticRegression())`` exposing the regression's parameters."""

    def __init__(self, C: float = 1.0):
        self.C = C

    def fit(self, X, y):
        self.pipeline_ = make_pipeline(StandardScaler(), LogisticRegression(C=self.C)).fit(X, y)
        self.classes_ = self.pipeline_.classes_
        return self

    @property
    def coef_(self):
        return self.pipeline_[-1].coef_

    @coef_.setter
    def coef_(self, value):
        self.pipeline_[-1].coef_ = value

    @property
    def intercept_(self):
        return self.pipeline_[-1].intercept_

    @intercept_.setter
    def intercept_(self, value):
        self.pipeline_[-1].intercept_ = value

    def predict_proba(self, X):
        return self.pipeline_.predict_proba(X)

    def predict(self, X):
        return self.pipeline_.predict(X)


def test_an_estimator_that_needs_its_scaler_to_predict_is_refused():
    """The scaler's ``mean_`` is the private mean and the model cannot predict without it: refused, before
    the fits that estimate sigma."""
    X, y = _private()
    assert _means_found(ScaledLogistic().fit(X, y), X)
    with pytest.raises(MipkitValueError, match=r"pipeline_.*statistics of the private data"):
        MIPNoise(ScaledLogistic(), eta=0.1, n_estimates=5, noise_seed=0).fit(X, y)
    with pytest.raises(MipkitValueError, match="pipeline_"):
        protect((X, y), ProtectConfig(model=ScaledLogistic(), eta=0.1, n_estimates=5, noise_seed=0))
