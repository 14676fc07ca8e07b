"""``protect(data, config) -> ProtectResult``: every rule of the config, the result's four views agreeing,
and the paragraph for a DPIA (what was released, eta in words, the premises, data-dependent ones first)."""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from mipkit._validation import MipkitValueError
from mipkit.workflows.protect import ProtectConfig, ProtectData, ProtectResult, protect


def _rows(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] + rng.normal(size=n) > 0).astype(int)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"eta": 0.7}, "eta"),
        ({"eta": 0.0}, "eta"),
        ({"calibration": "bogus"}, "calibration"),
        ({"sigma": "wide"}, "sigma"),
        ({"sigma": ","}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": (0.0, 0.0)}, "sigma"),
        ({"n_estimates": 1}, "n_estimates"),
        ({"confidence": 1.0}, "confidence"),
        ({"moment": 1.0}, "moment"),
        ({"norm_order": 0.5}, "norm_order"),
        ({"train_on": "some"}, "train_on"),
        ({"sensitivity": -1.0}, "sensitivity"),
        ({"sensitivity_norm": "l3"}, "sensitivity_norm"),
        ({"choose": "largest"}, "choose"),
        ({"choose": "smallest"}, "sensitivity"),
        ({"attributes": " , "}, "attributes"),
        ({"attributes": (1, 2)}, "attributes"),
        ({"seed": -1}, "seed"),
        ({"noise_seed": -1}, "noise_seed"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"include_estimates": "yes"}, "include_estimates"),
        ({"model": "nosuchpkg.Model"}, "nosuchpkg"),
        ({"model": "sklearn.linear_model.LogisticRegression", "params": {"nope": 1}}, "parameters"),
        ({"model": object()}, "model"),
        ({"model": LinearRegression(), "params": {"fit_intercept": False}}, "params"),
    ],
)
def test_each_rule_of_the_config_refuses_a_bad_value(changes, match):
    with pytest.raises(MipkitValueError, match=match):
        ProtectConfig(**changes)


def test_the_config_normalises_and_replace_checks_again():
    config = ProtectConfig(sigma="0.5, 0.25", attributes="coef_, intercept_", n_estimates=10.0)
    assert config.sigma == (0.5, 0.25) and config.attributes == ("coef_", "intercept_")
    assert config.n_estimates == 10 and isinstance(config.n_estimates, int)
    assert ProtectConfig(sigma="0.5").sigma == 0.5
    with pytest.raises(MipkitValueError, match="eta"):
        config.replace(eta=0.6)
    assert json.dumps(ProtectConfig(model=LinearRegression()).to_dict())


def test_data_is_checked():
    X, y = _rows()
    with pytest.raises(MipkitValueError, match="one label per row"):
        ProtectData(X, y[:-1])
    with pytest.raises(MipkitValueError, match="ProtectData"):
        protect(X, ProtectConfig(sigma=1.0))


def test_the_views_agree_and_write_saves_the_release(tmp_path):
    X, y = _rows()
    config = ProtectConfig(eta=0.1, n_estimates=6, seed=1, noise_seed=2)
    result = protect((X, y), config)
    assert isinstance(result, ProtectResult)
    d = result.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["summary"] == result.summary() and d["n_records"] == 60
    assert d["estimates_withheld"] is True and d["sigma"] is None  # estimated sigma: withheld by default
    frame = result.to_frame()
    scalar = frame[frame["index"].isna()].set_index("field")["value"]
    for key in ("eta", "accuracy_bound", "exact", "dim", "calibration", "n_fits", "noise_source"):
        assert scalar[key] == d[key], key
    path = result.write(tmp_path / "m.joblib")
    loaded = joblib.load(path)
    np.testing.assert_array_equal(loaded.predict(X), result.model.predict(X))
    assert not hasattr(loaded, "half_outputs_") and not hasattr(loaded, "train_indices_")

    kept = protect((X, y), config.replace(include_estimates=True)).to_frame()
    sigma = kept[kept["field"] == "sigma"]
    assert len(sigma) == 4 and (sigma["value"] > 0).all()  # one row per coordinate


def test_the_paragraph_says_what_was_released_and_the_estimated_sigma_first():
    X, y = _rows()
    text = protect((X, y), ProtectConfig(eta=0.1, n_estimates=6, seed=1)).summary()
    assert text.startswith("Released: a LogisticRegression model trained on 60 records")
    assert text.index("Released:") < text.index("Headline risk:") < text.index("Premise:")
    assert "right at most 60% of the time (1/2 + eta, eta = 0.1), against 50% by guessing" in text
    premise = text.split("Premise: ", 1)[1]
    assert premise.startswith("sigma, the spread of the parameters that the noise is calibrated to, was")
    first = premise.split("; ")[:2]
    assert "estimated from 6 fits on the private data" in first[0]
    assert "a heuristic, not a guarantee" in first[1]
    assert "operating system's entropy" in premise


def test_the_paragraph_of_an_a_priori_sigma_on_an_odd_pool_with_a_seeded_noise():
    X, y = _rows(n=9)
    config = ProtectConfig(model=LinearRegression(), eta=0.1, sigma=1.0, train_on="half", noise_seed=3)
    text = protect((X, y.astype(float)), config).summary()
    assert "trained on a random half of 9 records" in text
    assert "right at most 65.6% of the time (max(k/n, 1 - k/n) + eta, eta = 0.1)" in text
    assert "against 55.6% by always guessing 'out'" in text
    premise = text.split("Premise: ", 1)[1]
    assert premise.startswith("sigma, given a priori, bounds the spread")
    assert "secret random half" in premise and "not a release" in premise


def test_the_command_prints_the_paragraph_first(tmp_path, capsys):
    from mipkit.cli import main

    X, y = _rows()
    table = tmp_path / "t.csv"
    pd.DataFrame(X, columns=list("abc")).assign(label=y).to_csv(table, index=False)
    args = ["protect", "--data", str(table), "--target", "label", "--eta", "0.1", "--sigma", "0.5"]
    args += ["--model", "sklearn.linear_model.LogisticRegression", "--out", str(tmp_path / "m.joblib")]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Released: a LogisticRegression model trained on 60 records")
    assert out.index("Premise:") < out.index("MIP certificate")
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"].startswith("Released:")
