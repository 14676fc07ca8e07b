"""TorchClassifier: deterministic given the seed, a proper trainer for the engine."""

from __future__ import annotations

import numpy as np
import pytest

from mipkit._validation import MipkitValueError
from mipkit.engine import FitTask, run_fits
from mipkit.game import resolve_trainer

torch = pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

PATH = "mipkit.game.torch_adapter.TorchClassifier"


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64) * 2  # classes {0, 2} of 3
    return X, y


def test_same_seed_same_model_and_global_rng_untouched():
    X, y = _data()
    params = {"module_kwargs": {"hidden": [16]}, "epochs": 15, "lr": 0.01, "batch_size": 16}
    spec = resolve_trainer(PATH, params)
    state = torch.get_rng_state().clone()
    a = spec.build(3).fit(X, y).predict_proba(X)
    b = spec.build(3).fit(X, y).predict_proba(X)
    c = spec.build(4).fit(X, y).predict_proba(X)
    assert torch.equal(torch.get_rng_state(), state)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_allclose(a.sum(axis=1), 1.0, rtol=1e-6)
    model = spec.build(3).fit(X, y)
    np.testing.assert_array_equal(model.classes_, [0, 2])
    # a linearly separable problem is learned (well above the 50 % of a constant guess)
    assert np.mean(model.predict(X) == y) > 0.9


def test_engine_runs_the_torch_trainer_with_full_class_columns():
    X, y = _data()
    spec = resolve_trainer(
        PATH, {"module_kwargs": {"hidden": [8]}, "epochs": 5, "optimizer": "sgd", "lr": 0.1}
    )
    tasks = [FitTask(0, np.arange(60), 11), FitTask(1, np.arange(60, 120), 12)]
    out = run_fits(spec, X, y, tasks, n_jobs=1, n_classes=3)
    assert out.shape == (2, 120, 3)
    np.testing.assert_array_equal(out[:, :, 1], 0.0)
    direct = spec.build(12).fit(X[60:], y[60:]).predict_proba(X)
    np.testing.assert_allclose(out[1][:, [0, 2]], direct, rtol=1e-12)


def test_bad_module_factory():
    X, y = _data(20)
    with pytest.raises(MipkitValueError, match="module_factory"):
        resolve_trainer(PATH, {"module_factory": "no_such_module_xyz:make"}).build(0).fit(X, y)
    with pytest.raises(MipkitValueError, match="optimizer"):
        resolve_trainer(PATH, {"optimizer": "lbfgs"}).build(0).fit(X, y)
