"""MIP noise and protect's secret half come from OS entropy: a known ``random_state`` replays neither.

The attacks: with the seed of a release, an attacker who could redraw its noise would subtract it and read
the noise-free parameters; one who could redraw the released half of ``train_on="half"`` would know every
record's membership outright. Reproducible noise exists only behind ``noise_seed``.
"""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from mipkit._random import OS_ENTROPY, SEEDED
from mipkit.cli import main
from mipkit.mechanisms import MIPNoise, mip_release
from mipkit.mechanisms.mip_noise import spawn_seeds


def regression(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, X @ np.array([1.0, 2.0]) + rng.normal(size=n)


def test_the_known_seed_does_not_give_the_noise_away():
    X, y = regression()
    kw = {"eta": 0.1, "sigma": 0.1, "random_state": 3}
    a = MIPNoise(LinearRegression(), **kw).fit(X, y)
    b = MIPNoise(LinearRegression(), **kw).fit(X, y)
    assert not np.array_equal(a.released_, b.released_)
    # the attack: redraw the noise from the seed the release records, subtract it, compare with the fit
    theta = np.r_[LinearRegression().fit(X, y).coef_, LinearRegression().fit(X, y).intercept_]
    guessed_noise = a.noise_.sample(1, random_state=spawn_seeds(3, 4)[3])[0]
    assert not np.allclose(a.released_ - guessed_noise, theta)
    assert a.certificate_.noise_source == OS_ENTROPY == a.certificate_.to_dict()["noise_source"]
    seeded = [MIPNoise(LinearRegression(), noise_seed=7, **kw).fit(X, y) for _ in range(2)]
    assert np.array_equal(seeded[0].released_, seeded[1].released_)
    assert seeded[0].certificate_.noise_source == SEEDED


def test_the_released_half_is_secret():
    X, y = regression()
    kw = {"eta": 0.1, "sigma": 0.1, "train_on": "half", "random_state": 0}
    halves = [MIPNoise(LinearRegression(), **kw).fit(X, y).train_indices_ for _ in range(2)]
    assert not np.array_equal(halves[0], halves[1])
    fixed = [MIPNoise(LinearRegression(), noise_seed=1, **kw).fit(X, y).train_indices_ for _ in range(2)]
    assert np.array_equal(fixed[0], fixed[1])


def test_mip_release_noise_and_half_need_the_noise_seed():
    D = np.random.default_rng(1).normal(size=(30, 2))
    kw = {"eta": 0.1, "sigma": 0.1, "train_on": "half", "random_state": 2}
    free = [mip_release(lambda d: d.mean(axis=0), D, **kw) for _ in range(2)]
    assert not np.array_equal(free[0].value, free[1].value)
    seeded = [mip_release(lambda d: d.mean(axis=0), D, noise_seed=4, **kw) for _ in range(2)]
    assert np.array_equal(seeded[0].value, seeded[1].value)
    assert free[0].certificate.noise_source == OS_ENTROPY and seeded[0].certificate.noise_source == SEEDED


def test_bad_noise_seed_is_refused():
    from mipkit import MipkitValueError

    with pytest.raises(MipkitValueError, match="noise_seed"):
        MIPNoise(LinearRegression(), sigma=0.1, noise_seed=-1).fit(*regression())


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    X, y = regression(60)
    df = pd.DataFrame(X, columns=["a", "b"])
    df["label"] = (y > 0).astype(int)
    path = tmp_path_factory.mktemp("noise") / "t.csv"
    df.to_csv(path, index=False)
    return path


def _protect(table, out, capsys, *extra) -> tuple[dict, np.ndarray]:
    args = ["protect", "--data", str(table), "--target", "label", "--model",
            "sklearn.linear_model.LogisticRegression", "--eta", "0.1", "--sigma", "0.1", "--seed", "3",
            "--out", str(out), *extra]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    return printed, joblib.load(out).released_


def test_protect_cli_noise_seed(table, tmp_path, capsys):
    printed, first = _protect(table, tmp_path / "a.joblib", capsys, "--json")
    _, second = _protect(table, tmp_path / "b.joblib", capsys, "--json")
    assert not np.array_equal(first, second)
    assert json.loads(printed)["noise_source"] == "os-entropy"
    printed, third = _protect(table, tmp_path / "c.joblib", capsys, "--noise-seed", "7")
    _, fourth = _protect(table, tmp_path / "d.joblib", capsys, "--noise-seed", "7", "--json")
    assert np.array_equal(third, fourth)
    assert "seeded: not private" in printed
