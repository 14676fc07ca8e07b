"""SoftLogisticRegression and fit_many: hard = one-hot, agreement with independent solvers, batch = alone."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression

from mipkit import MipkitValueError
from mipkit.trainers import SoftLogisticRegression, accepts_soft_targets, fit_many, one_hot


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


def test_one_hot_targets_give_the_hard_label_model_bit_for_bit(iris):
    X, y = iris
    hard = SoftLogisticRegression(C=0.7).fit(X, y)
    soft = SoftLogisticRegression(C=0.7).fit(X, one_hot(y, 3))
    assert np.array_equal(hard.coef_, soft.coef_)
    assert np.array_equal(hard.intercept_, soft.intercept_)
    assert np.array_equal(hard.classes_, [0, 1, 2]) and np.array_equal(soft.classes_, [0, 1, 2])


def test_hard_labels_match_scikit_learn_multinomial_logistic_regression(iris):
    X, y = iris
    ours = SoftLogisticRegression(C=0.5, tol=1e-10, max_iter=2000).fit(X, y)
    ref = LogisticRegression(C=0.5, tol=1e-12, max_iter=10_000).fit(X, y)
    assert ours.converged_
    assert np.max(np.abs(ours.coef_ - ref.coef_)) < 1e-5
    assert np.max(np.abs(ours.predict_proba(X) - ref.predict_proba(X))) < 1e-6


def test_soft_targets_minimise_the_soft_cross_entropy_objective(iris):
    """Independent solver: scipy's L-BFGS-B on the objective written out here."""
    X, y = iris
    rng = np.random.default_rng(3)
    Y = softmax(one_hot(y, 3) * 2.0 + rng.normal(size=(y.size, 3)), axis=1)
    C = 2.0
    n, d = X.shape

    def objective(theta):
        W, b = theta[: d * 3].reshape(d, 3), theta[d * 3 :]
        logp = log_softmax(X @ W + b, axis=1)
        f = -np.sum(Y * logp) / n + np.sum(W**2) / (2 * C * n)
        R = (np.exp(logp) - Y) / n
        return f, np.concatenate([(X.T @ R + W / (C * n)).ravel(), R.sum(0)])

    res = minimize(
        objective,
        np.zeros(d * 3 + 3),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
    )
    ref_logits = X @ res.x[: d * 3].reshape(d, 3) + res.x[d * 3 :]
    ours = SoftLogisticRegression(C=C, tol=1e-10, max_iter=2000).fit(X, Y)
    assert np.max(np.abs(ours.predict_proba(X) - softmax(ref_logits, axis=1))) < 1e-6


def test_fit_many_equals_fitting_each_model_alone_bit_for_bit():
    X, y = make_classification(200, 6, n_informative=4, n_classes=3, random_state=0)
    rng = np.random.default_rng(1)
    subsets = [rng.choice(200, 100, replace=False) for _ in range(6)]
    seeds = [11, 12, 13, 14, 15, 16]
    many = fit_many(SoftLogisticRegression(C=0.3), X, y, subsets, seeds)
    for rows, seed, model in zip(subsets, seeds, many, strict=True):
        alone = SoftLogisticRegression(C=0.3, random_state=seed).fit(X[rows], y[rows])
        assert np.array_equal(model.coef_, alone.coef_)
        assert np.array_equal(model.intercept_, alone.intercept_)
        assert model.random_state == seed and model.n_iter_ == alone.n_iter_


def test_fit_many_with_unequal_sizes_and_per_model_targets_matches_alone():
    X, y = make_classification(150, 5, n_informative=3, n_classes=3, random_state=4)
    rng = np.random.default_rng(2)
    subsets = [rng.choice(150, k, replace=False) for k in (40, 75, 110)]
    targets = np.stack([softmax(rng.normal(size=(150, 3)) + 3 * one_hot(y, 3), axis=1) for _ in range(3)])
    many = fit_many(SoftLogisticRegression(), X, targets, subsets, [0, 1, 2])
    for m, rows in enumerate(subsets):
        alone = SoftLogisticRegression().fit(X[rows], targets[m][rows])
        # padding rows of weight 0 only change the order of the floating-point sums
        assert np.max(np.abs(many[m].predict_proba(X) - alone.predict_proba(X))) < 1e-8


def test_fit_many_fits_a_subset_missing_a_class_on_its_own():
    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=5)
    full = np.arange(120)
    no_class_2 = np.flatnonzero(y != 2)
    many = fit_many(SoftLogisticRegression(), X, y, [full, no_class_2], [0, 0])
    assert np.array_equal(many[0].classes_, [0, 1, 2])
    assert np.array_equal(many[1].classes_, [0, 1])
    alone = SoftLogisticRegression().fit(X[no_class_2], y[no_class_2])
    assert np.array_equal(many[1].coef_, alone.coef_)


def test_scikit_learn_protocol_pickle_and_declared_soft_targets(iris):
    X, y = iris
    model = SoftLogisticRegression(random_state=3).fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict_proba(X), model.predict_proba(X))
    assert model.predict_proba(X).shape == (150, 3)
    assert np.allclose(model.predict_proba(X).sum(1), 1.0)
    assert np.array_equal(model.predict(X), np.argmax(model.decision_function(X), axis=1))
    assert accepts_soft_targets(model) and accepts_soft_targets(SoftLogisticRegression)
    assert not accepts_soft_targets(LogisticRegression())


@pytest.mark.parametrize(
    "targets, match",
    [
        (np.full((150, 3), 0.5), "sum to 1"),
        (np.full((150, 3), np.nan), "finite"),
        (np.zeros((149,)), "same non-zero number of rows"),
        (np.zeros((150, 3, 1)), "shape"),
    ],
)
def test_bad_targets_are_refused_with_one_clear_message(iris, targets, match):
    with pytest.raises(MipkitValueError, match=match):
        SoftLogisticRegression().fit(iris[0], targets)


def test_bad_parameters_and_inputs_are_refused(iris):
    X, y = iris
    with pytest.raises(MipkitValueError, match="'C' parameter"):
        SoftLogisticRegression(C=0).fit(X, y)
    with pytest.raises(MipkitValueError, match="2-dimensional"):
        SoftLogisticRegression().fit(X[:, 0], y)
    with pytest.raises(MipkitValueError, match="features"):
        SoftLogisticRegression().fit(X, y).predict(X[:, :2])
    with pytest.raises(MipkitValueError, match="one seed per subset"):
        fit_many(SoftLogisticRegression(), X, y, [np.arange(10)], [1, 2])
    with pytest.raises(MipkitValueError, match="outside"):
        fit_many(SoftLogisticRegression(), X, y, [np.array([0, 150])], [1])
