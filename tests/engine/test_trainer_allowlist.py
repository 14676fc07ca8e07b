"""Trainers are resolved only to estimator classes, decided before anything is imported or built (issue 10).

A trainer path may come from a shared config file, so naming one must not run code: only scikit-learn
estimators, registered trainers and classes on the user's allow-list are accepted, and a path outside
scikit-learn and mipkit is imported only when it is on the allow-list.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

import mipkit.defences
import mipkit.game.testing
import mipkit.game.torch_adapter
import mipkit.game.trainers as trainers
import mipkit.trainers
import mipkit.workflows.demo  # noqa: F401 - every mipkit trainer registered before the registry is copied
from mipkit._validation import MipkitValueError
from mipkit.game import (
    UntrustedTrainerError,
    allow_trainers,
    allowed_trainers,
    register_trainer,
    registered_trainers,
    resolve_trainer,
    trainer_class,
)


class Unregistered(ClassifierMixin, BaseEstimator):
    """A perfectly good estimator class that nobody registered or allowed."""

    def fit(self, X, y):
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    """Each test starts with mipkit's own registry, an empty allow-list and no MIPKIT_ALLOWED_MODELS."""
    monkeypatch.setattr(trainers, "_ALLOWED", [])
    monkeypatch.setattr(trainers, "_REGISTRY", dict(trainers._REGISTRY))
    monkeypatch.delenv(trainers.ALLOWED_MODELS_ENV, raising=False)
    trainers._import_object.cache_clear()
    yield
    trainers._import_object.cache_clear()


@pytest.mark.parametrize(
    "path",
    [
        "sklearn.linear_model.LogisticRegression",
        "sklearn.linear_model:LogisticRegression",
        "sklearn.ensemble.RandomForestClassifier",
        "mipkit.trainers.SoftLogisticRegression",
        "mipkit.trainers.TorchMLPClassifier",
        "mipkit.defences.OptimallySoftLabels",
        "mipkit.defences.LabelSmoothing",
        "mipkit.game.testing.SlowTrainer",
        "mipkit.game.torch_adapter.TorchClassifier",
        "mipkit.workflows.demo.ProtectedLogisticRegression",
    ],
)
def test_scikit_learn_and_registered_trainers_are_accepted(path):
    cls = trainer_class(path)
    assert callable(cls.fit)


def test_mipkit_registers_its_own_trainers():
    names = set(registered_trainers())
    for name in (
        "mipkit.trainers.logistic:SoftLogisticRegression",
        "mipkit.defences.soft_labels:OptimallySoftLabels",
        "mipkit.game.testing:SlowTrainer",
    ):
        assert name in names


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("subprocess.Popen", "is not a trainer"),  # the case: refused before it is called
        ("os.system", "not a class"),
        ("builtins.eval", "not a class"),
        ("json.JSONDecoder", "is not a trainer"),
        ("sklearn.utils.Bunch", "is not a trainer"),
        ("mipkit.mechanisms.MIPNoise", "not a scikit-learn estimator or a registered"),  # not registered
        (f"{__name__}.Unregistered", "not a scikit-learn estimator or a registered"),
        ("antigravity.Anything", "was not imported"),  # importing it would open a web browser
    ],
)
def test_everything_else_is_refused(path, message):
    with pytest.raises(UntrustedTrainerError, match=message) as info:
        trainer_class(path)
    assert info.value.import_path == path
    assert "antigravity" not in sys.modules


def test_popen_never_runs_through_resolve_trainer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params = {"args": "touch X", "shell": True}
    with pytest.raises(UntrustedTrainerError):
        resolve_trainer("subprocess.Popen", params)
    assert not (tmp_path / "X").exists()


def test_a_registered_or_allowed_class_is_accepted():
    path = f"{__name__}.Unregistered"
    with pytest.raises(UntrustedTrainerError) as info:
        resolve_trainer(path)
    assert info.value.allowable and "MIPKIT_ALLOWED_MODELS" in str(info.value)
    allow_trainers([path])
    assert allowed_trainers() == (path,)
    assert resolve_trainer(path).build(0).__class__ is Unregistered


class Decorated(Unregistered):
    pass


def test_register_trainer_as_a_decorator():
    path = f"{__name__}.Decorated"
    with pytest.raises(UntrustedTrainerError):
        trainer_class(path)
    assert register_trainer(Decorated) is Decorated
    assert trainer_class(path) is Decorated
    with pytest.raises(MipkitValueError, match="register_trainer takes a class"):
        register_trainer(len)


def test_allow_list_from_the_environment_with_a_package_pattern(monkeypatch):
    monkeypatch.setenv(trainers.ALLOWED_MODELS_ENV, f" other.Thing , {__name__.split('.')[0]}.* ")
    assert allowed_trainers() == ("other.Thing", f"{__name__.split('.')[0]}.*")
    assert trainer_class(f"{__name__}.Unregistered") is Unregistered


def test_the_allow_list_does_not_make_a_non_trainer_acceptable():
    allow_trainers(["subprocess.Popen"])
    with pytest.raises(UntrustedTrainerError, match="is not a trainer"):
        trainer_class("subprocess.Popen")


MODULE = textwrap.dedent(
    """
    from pathlib import Path
    from sklearn.linear_model import LogisticRegression

    Path("imported.marker").write_text("module code ran")

    class MyClass(LogisticRegression):
        pass
    """
)


def test_a_module_in_the_working_folder_only_when_allowed(tmp_path, monkeypatch):
    name = "mipkit_test_local_model_xyz"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(UntrustedTrainerError, match="was not imported"):
        resolve_trainer(f"{name}.MyClass")
    assert not (tmp_path / "imported.marker").exists()  # not allowed: its code never ran
    allow_trainers([f"{name}.MyClass"])
    spec = resolve_trainer(f"{name}.MyClass", {"C": 0.5})
    assert spec.build(1).C == 0.5 and (tmp_path / "imported.marker").exists()
    assert str(tmp_path) in sys.path  # kept, so that worker processes started later import it too
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_an_allowed_module_that_does_not_exist_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    allow_trainers(["nowhere_module_xyz.Model"])
    with pytest.raises(MipkitValueError, match="working folder") as info:
        resolve_trainer("nowhere_module_xyz.Model")
    assert "nowhere_module_xyz.py" in str(info.value)


def test_a_network_factory_outside_mipkit_is_not_imported():
    from mipkit.game.torch_adapter import _resolve_factory, mlp

    assert _resolve_factory("mlp") is mlp
    assert _resolve_factory("mipkit.game.torch_adapter:mlp") is mlp
    with pytest.raises(UntrustedTrainerError, match="module_factory"):
        _resolve_factory("subprocess:Popen")
    with pytest.raises(MipkitValueError, match="module_factory"):
        _resolve_factory("nodots")


def test_load_estimator_of_protect_uses_the_same_rules(tmp_path, monkeypatch):
    from mipkit.mechanisms.mip_noise import load_estimator

    monkeypatch.chdir(tmp_path)
    assert load_estimator("sklearn.linear_model.Ridge", {"alpha": 2.0}).alpha == 2.0  # a regressor is fine
    with pytest.raises(UntrustedTrainerError):
        load_estimator("subprocess.Popen", {"args": "touch X", "shell": True})
    assert not (tmp_path / "X").exists()
