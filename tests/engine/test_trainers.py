"""Trainer resolution, seeding and full class-probability outputs."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from mipkit._validation import MipkitValueError
from mipkit.game import TrainerSpec, predict_full_proba, resolve_trainer


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("nonexistent_pkg_xyz.models.Model", "was not imported"),  # outside sklearn/mipkit, not allowed
        ("sklearn.linear_model.NoSuchModel", "has no attribute"),
        ("LogisticRegression", "import path"),
        ("", "import path"),
        ("numpy.mean", "not a class"),
        ("sklearn.cluster.KMeans", "is not a trainer"),
        ("sklearn.preprocessing.StandardScaler", "is not a trainer"),
    ],
)
def test_bad_trainers_are_refused_with_one_clear_message(path, message):
    with pytest.raises(MipkitValueError, match=message):
        resolve_trainer(path)


def test_bad_trainer_parameters_are_refused():
    with pytest.raises(MipkitValueError, match="rejected its parameters"):
        resolve_trainer("sklearn.linear_model.LogisticRegression", {"no_such_option": 1})
    with pytest.raises(MipkitValueError, match="JSON"):
        resolve_trainer("sklearn.linear_model.LogisticRegression", {"C": object()})
    with pytest.raises(MipkitValueError, match="dict"):
        resolve_trainer("sklearn.linear_model.LogisticRegression", [1, 2])


def test_colon_and_dotted_paths_name_the_same_trainer():
    a = resolve_trainer("sklearn.linear_model.LogisticRegression", {"C": 0.5, "max_iter": 200})
    b = resolve_trainer("sklearn.linear_model:LogisticRegression", {"max_iter": 200, "C": 0.5})
    assert a.trainer_class is b.trainer_class is LogisticRegression
    assert a.fingerprint() == b.fingerprint()
    assert (
        a.fingerprint()
        != resolve_trainer("sklearn.linear_model.LogisticRegression", {"C": 0.6}).fingerprint()
    )


def test_build_sets_random_state_only_when_seeded():
    spec = resolve_trainer("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 3, "random_state": 5})
    assert spec.build(None).random_state == 5  # no seed: the trainer's own setting is kept
    assert spec.build(17).random_state == 17  # a task seed overrides it
    assert resolve_trainer("sklearn.ensemble.RandomForestClassifier").build(None).random_state is None
    # a trainer without random_state is built as is
    knn = resolve_trainer("sklearn.neighbors.KNeighborsClassifier", {"n_neighbors": 3}).build(4)
    assert knn.n_neighbors == 3 and "random_state" not in knn.get_params()


def test_decision_function_only_trainers_are_accepted():
    spec = resolve_trainer("sklearn.svm.LinearSVC")
    assert isinstance(spec, TrainerSpec)


def test_missing_class_gets_probability_zero_in_the_global_columns():
    X, y = make_classification(120, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    keep = y != 1
    model = LogisticRegression(max_iter=500).fit(X[keep], y[keep])
    full = predict_full_proba(model, X, 3)
    assert full.shape == (120, 3)
    np.testing.assert_array_equal(full[:, 1], 0.0)
    np.testing.assert_array_equal(full[:, [0, 2]], model.predict_proba(X))
    np.testing.assert_allclose(full.sum(axis=1), 1.0)


def test_decision_function_becomes_sigmoid_or_softmax():
    X, y = make_classification(100, 4, n_informative=3, n_redundant=0, random_state=1)
    svm = LinearSVC().fit(X, y)
    d = svm.decision_function(X)
    p1 = 1.0 / (1.0 + np.exp(-d))
    np.testing.assert_allclose(predict_full_proba(svm, X, 2), np.column_stack([1 - p1, p1]), rtol=1e-12)

    X3, y3 = make_classification(150, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=2)
    # put the fitted classes in columns 1 and 3 of 4 global classes, plus 0
    y_codes = np.array([0, 1, 3])[y3]
    svm3 = LinearSVC().fit(X3, y_codes)
    d3 = svm3.decision_function(X3)
    e = np.exp(d3 - d3.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    full = predict_full_proba(svm3, X3, 4)
    np.testing.assert_allclose(full[:, [0, 1, 3]], soft, rtol=1e-12)
    np.testing.assert_array_equal(full[:, 2], 0.0)


def test_classes_outside_the_global_range_are_refused():
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    model = LogisticRegression().fit(X, y + 5)
    with pytest.raises(MipkitValueError, match="outside"):
        predict_full_proba(model, X, 2)


def test_seed_reaches_nested_random_states_of_a_pipeline():
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mipkit.game.trainers import _set_random_state

    pipe = make_pipeline(StandardScaler(), MLPClassifier(random_state=1))
    _set_random_state(pipe, 42)
    assert pipe.named_steps["mlpclassifier"].random_state == 42


def test_string_classes_are_refused():
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    model = LogisticRegression().fit(X, np.array(["a", "b"])[y])
    with pytest.raises(MipkitValueError, match="integer class codes"):
        predict_full_proba(model, X, 2)
