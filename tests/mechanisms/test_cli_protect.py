"""``mipkit protect`` and ``mipkit audit-noise``: exit codes, JSON keys, the saved model."""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer

from mipkit.cli import main


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    rows = rng.choice(len(X), 120, replace=False)
    df = pd.DataFrame(X[rows][:, :4], columns=["a", "b", "c", "d"])
    df = (df - df.mean()) / df.std()
    df["label"] = y[rows]
    path = tmp_path_factory.mktemp("protect") / "bc.csv"
    df.to_csv(path, index=False)
    return path


def base_args(table, *extra):
    return [
        "--data",
        str(table),
        "--target",
        "label",
        "--model",
        "sklearn.linear_model.LogisticRegression",
        *extra,
    ]


def test_protect_json_certificate_and_saved_model(table, tmp_path, capsys):
    out = tmp_path / "m.joblib"
    code = main(
        [
            "protect",
            *base_args(
                table,
                "--eta",
                "0.1",
                "--n-estimates",
                "10",
                "--seed",
                "3",
                "--sensitivity",
                "2.0",
                "--out",
                str(out),
                "--json",
                "--include-estimates",
            ),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    cert = json.loads(captured.out)
    for key in ("eta", "calibration", "sigma", "exact", "noise_scale", "noise_std", "sigma_source", "seed"):
        assert key in cert
    assert cert["eta"] == 0.1 and cert["calibration"] == "mipkit-gaussian" and cert["exact"] is False
    assert cert["sigma_source"].startswith("estimated: 10 fits")
    assert len(cert["noise_std"]) == 5 and cert["seed"] == 3
    assert {a["name"] for a in cert["dp_alternatives"]} == {"gaussian-gdp", "exp-norm-l2-thm4"}
    model = joblib.load(out)
    df = pd.read_csv(table)
    pred = model.predict(df[["a", "b", "c", "d"]].to_numpy())
    assert pred.shape == (120,)
    assert np.allclose(np.r_[model.estimator_.coef_.ravel(), model.estimator_.intercept_], model.released_)


def test_protect_a_priori_sigma_izzo_and_human_output(table, tmp_path, capsys):
    out = tmp_path / "m.joblib"
    code = main(
        [
            "protect",
            *base_args(
                table, "--eta", "0.05", "--calibration", "izzo2024", "--sigma", "0.1", "--out", str(out)
            ),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "MIP certificate" in captured.out and "a-priori" in captured.out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--eta", "0.7"], "eta"),
        (["--eta", "0.1", "--calibration", "bogus"], "calibration"),
        (["--eta", "0.1", "--calibration", "izzo2024", "--moment", "1"], "moment"),
        (["--eta", "0.1", "--n-estimates", "1"], "n_estimates"),
        (["--eta", "0.1", "--choose", "smallest"], "sensitivity"),
        (["--eta", "0.1", "--params", "{bad"], "params"),
        (["--eta", "0.1", "--sigma", "x"], "sigma"),
    ],
)
def test_protect_bad_input_exits_2(table, tmp_path, capsys, extra, match):
    code = main(["protect", *base_args(table, *extra, "--out", str(tmp_path / "m.joblib"))])
    err = capsys.readouterr().err
    assert code == 2
    assert match in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "path", ["sklearn.linear_model.NoSuchModel", "nosuchpkg.Model", "numpy.pi", "json.JSONDecoder"]
)
def test_protect_unknown_model_exits_2(table, tmp_path, capsys, path):
    args = [
        "protect",
        "--data",
        str(table),
        "--target",
        "label",
        "--model",
        path,
        "--eta",
        "0.1",
        "--out",
        str(tmp_path / "m.joblib"),
    ]
    assert main(args) == 2
    assert "model" in capsys.readouterr().err.lower()


def test_protect_missing_file_exits_2(tmp_path, capsys):
    args = [
        "protect",
        "--data",
        str(tmp_path / "nope.csv"),
        "--target",
        "y",
        "--model",
        "sklearn.linear_model.LogisticRegression",
        "--eta",
        "0.1",
        "--out",
        str(tmp_path / "m.joblib"),
    ]
    assert main(args) == 2


def test_audit_noise_json(table, capsys):
    code = main(
        [
            "audit-noise",
            *base_args(
                table,
                "--eta",
                "0.2",
                "--n-reference",
                "30",
                "--n-releases",
                "20",
                "--n-targets",
                "3",
                "--seed",
                "0",
                "--json",
            ),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    game = out["game"]
    assert game["trials"] == 60 and game["accuracy_bound"] == pytest.approx(0.7)
    assert len(game["per_target"]) == 3 and out["certificate"]["eta"] == 0.2
    assert 0.0 <= game["ci"][0] <= game["accuracy"] <= game["ci"][1] <= 1.0


def test_audit_noise_bad_input(table, capsys):
    assert main(["audit-noise", *base_args(table, "--eta", "0.2", "--n-releases", "0")]) == 2
    assert main(["audit-noise", *base_args(table, "--eta", "1.2")]) == 2
