"""Progress of DP-SGD training: ``fit(X, y, progress=...)`` and ``train_private(..., progress=...)`` report
``progress("DP-SGD steps", done, total)`` with ``done`` rising step by step to the steps the certificate
counts, and a fit with progress is the fit without it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mipkit.trainers import DPSGDClassifier, TorchMLPClassifier

pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch


class FakeBar:
    """Records every call, as the command line's bar would receive them."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []
        self.stages: set[str] = set()

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.stages.add(stage)
        self.calls.append((done, total))


def _rising_to_total(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "the bar was never called"
    assert {t for _, t in calls} == {total}
    done = [d for d, _ in calls]
    assert done == list(range(total + 1))  # 0, then one call per step, up to the total


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def test_dpsgd_fit_reports_each_step_and_trains_the_same_model(data):
    X, y = data
    kw = {"epochs": 2, "batch_size": 16, "noise_multiplier": 1.0, "random_state": 0, "noise_seed": 7}
    bar = FakeBar()
    clf = DPSGDClassifier((4,), **kw).fit(X, y, progress=bar)
    _rising_to_total(bar.calls, clf.steps_)
    assert bar.stages == {"DP-SGD steps"}
    assert clf.steps_ == clf.certificate_.steps == 2 * math.ceil(90 / 16)
    plain = DPSGDClassifier((4,), **kw).fit(X, y)
    for a, b in zip(clf.coefs_, plain.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_torch_mlp_fit_reports_each_step(data):
    X, y = data
    bar = FakeBar()
    clf = TorchMLPClassifier((4,), epochs=3, batch_size=30, random_state=0).fit(X, y, progress=bar)
    _rising_to_total(bar.calls, clf.steps_)
    assert bar.stages == {"SGD steps"}


def test_train_private_passes_the_bar_to_the_fit(data):
    from mipkit.data import Dataset
    from mipkit.workflows.train_private import TrainPrivateConfig, train_private

    X, y = data
    cfg = TrainPrivateConfig(noise_multiplier=1.0, epochs=2, batch_size=12, hidden=(), noise_seed=3)
    bar = FakeBar()
    ds = Dataset(X=X, y=y, feature_names=["a", "b", "c"], classes=np.array([0, 1]))
    result = train_private(ds, cfg, progress=bar)
    steps = result.to_dict()["steps"]
    _rising_to_total(bar.calls, steps)
    assert steps == 2 * math.ceil(result.to_dict()["n_train"] / 12)
