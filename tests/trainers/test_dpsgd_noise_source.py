"""DP-SGD's batches and noise come from OS entropy: knowing ``--seed`` does not replay a release.

The attack: an attacker who knows the released seed retrains on the data with the target in and compares
with the released weights; equal weights would prove membership. Reproducible noise exists only behind an
explicit ``noise_seed``; audits (measurements) set it from each fit's seed and stay reproducible.
"""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest

from mipkit._random import OS_ENTROPY, SEEDED, noise_generator
from mipkit.cli import main
from mipkit.trainers import DPSGDClassifier

pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

KW = {"epochs": 2, "batch_size": 40, "noise_multiplier": 1.0, "random_state": 0}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)


def _weights(model) -> np.ndarray:
    return np.concatenate([w.ravel() for w in model.coefs_ + model.intercepts_])


def test_retraining_with_the_known_seed_does_not_reproduce_the_release(data):
    X, y = data
    released = DPSGDClassifier((), **KW).fit(X, y)
    replay = DPSGDClassifier((), **KW).fit(X, y)  # the attacker: known seed, target in
    assert np.abs(_weights(released) - _weights(replay)).max() > 0
    assert released.certificate_.noise_source == OS_ENTROPY
    assert released.certificate_.to_dict()["noise_source"] == "os-entropy"


def test_an_explicit_noise_seed_gives_the_identical_release_and_says_so(data):
    X, y = data
    a = DPSGDClassifier((), noise_seed=7, **KW).fit(X, y)
    b = DPSGDClassifier((), noise_seed=7, **KW).fit(X, y)
    other = DPSGDClassifier((), noise_seed=8, **KW).fit(X, y)
    assert np.array_equal(_weights(a), _weights(b))
    assert not np.array_equal(_weights(a), _weights(other))
    assert a.certificate_.to_dict()["noise_source"] == SEEDED


def test_noise_streams_of_one_noise_seed_differ_by_random_state():
    same = [noise_generator(3, stream=(s,)).random(4) for s in (1, 1, 2)]
    assert np.array_equal(same[0], same[1]) and not np.array_equal(same[0], same[2])
    assert not np.array_equal(noise_generator(None).random(4), noise_generator(None).random(4))


def test_an_audit_seeds_the_noise_of_each_fit_and_stays_reproducible(data):
    from mipkit.engine.runner import FitTask, run_fits
    from mipkit.game.trainers import resolve_trainer

    X, y = data
    params = {"hidden_layer_sizes": [], "epochs": 1, "batch_size": 40, "noise_multiplier": 1.0}
    spec = resolve_trainer("mipkit.trainers.DPSGDClassifier", params)
    assert spec.build(5).noise_seed == 5 and spec.build(None).noise_seed is None
    assert (
        resolve_trainer("mipkit.trainers.DPSGDClassifier", {**params, "noise_seed": 2}).build(5).noise_seed
        == 2
    )
    tasks = [FitTask(k, np.arange(k, 400, 2), seed) for k, seed in enumerate((11, 12))]
    first = run_fits(spec, X, y, tasks, n_jobs=1)
    again = run_fits(spec, X, y, tasks, n_jobs=1)
    assert np.array_equal(first, again) and not np.array_equal(first[0], first[1])


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("noise")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = (X[:, 0] > 0).astype(int)
    df.to_csv(d / "t.csv", index=False)
    return d / "t.csv"


def _train(table, out, capsys, *extra) -> tuple[dict, np.ndarray]:
    args = ["train-private", "--data", str(table), "--target", "label", "--epochs", "2", "--batch-size", "32",
            "--hidden", "0", "--noise-multiplier", "1.0", "--seed", "0", "--out", str(out), "--json",
            *extra]  # fmt: skip
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    with open(out / "model.joblib", "rb") as f:
        return payload, _weights(joblib.load(f)["dpsgd"])


def test_train_private_runs_differ_without_noise_seed_and_match_with_one(table, tmp_path, capsys):
    d1, w1 = _train(table, tmp_path / "a", capsys)
    _, w2 = _train(table, tmp_path / "b", capsys)
    assert np.abs(w1 - w2).max() > 0  # the seed in results.json does not replay the training
    saved = json.loads((tmp_path / "a" / "results.json").read_text())
    assert d1["noise_source"] == saved["noise_source"] == "os-entropy"
    assert saved["config"]["noise_seed"] is None
    assert json.loads((tmp_path / "a" / "certificate.json").read_text())["noise_source"] == "os-entropy"
    d3, w3 = _train(table, tmp_path / "c", capsys, "--noise-seed", "7")
    _, w4 = _train(table, tmp_path / "d", capsys, "--noise-seed", "7")
    assert np.array_equal(w3, w4)
    assert d3["noise_source"].startswith("seeded: not private")
    assert "seeded: not private" in (tmp_path / "c" / "report.md").read_text()
