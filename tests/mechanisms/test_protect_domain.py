"""``mipkit protect --domain`` and ``mipkit audit-noise --domain``: the MIP-noise release's shape does not
depend on who the members are.

The attack: one row alone holds a level. One-hot levels read from the table give the released parameter
vector a coordinate for it exactly when that row is in the data, whatever the noise; with a public domain the
release with the row and the release without it have the same parameters and the same JSON keys.
"""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main
from mipkit.data.io import features_target

RARE = "Holand-Netherlands"
DOMAIN = {
    "a": {"type": "numeric", "min": -10, "max": 10},
    "country": {"type": "categorical", "categories": ["United-States", "Mexico", RARE]},
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("protect-domain")
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.normal(size=80), "country": rng.choice(["United-States", "Mexico"], size=80)})
    df["label"] = (df["a"] + rng.normal(scale=0.5, size=80) > 0).astype(int)
    df.loc[11, "country"] = RARE
    df.to_csv(d / "with.csv", index=False)
    df.drop(index=11).to_csv(d / "without.csv", index=False)
    (d / "domain.json").write_text(json.dumps(DOMAIN))
    return d


def _protect(tables, name, out, *extra):
    return ["protect", "--data", str(tables / f"{name}.csv"), "--target", "label", "--model",
            "sklearn.linear_model.LogisticRegression", "--eta", "0.1", "--sigma", "0.5", "--seed", "0",
            "--out", str(out), "--json", *extra]  # fmt: skip


def test_protect_with_a_domain_releases_the_same_shape_with_and_without_the_row(
    tables, tmp_path, capsys, skeleton
):
    # the attack: levels read from the table add a released coordinate exactly when the row is in it
    widths = [
        features_target(pd.read_csv(tables / f"{n}.csv"), "label", encode="onehot").X.shape[1]
        for n in ("with", "without")
    ]
    assert widths[0] == widths[1] + 1
    certs, models = {}, {}
    for name in ("with", "without"):
        out = tmp_path / f"{name}.joblib"
        args = _protect(tables, name, out, "--encode", "onehot", "--domain", str(tables / "domain.json"))
        assert main(args) == 0, capsys.readouterr().err
        certs[name] = json.loads(capsys.readouterr().out)
        models[name] = joblib.load(out)
    assert skeleton(certs["with"]) == skeleton(certs["without"])
    assert certs["with"]["dim"] == certs["without"]["dim"] == 4 + 1  # a, three levels, the intercept
    assert [m.n_features_in_ for m in models.values()] == [4, 4]
    assert [np.size(m.released_) for m in models.values()] == [5, 5]
    want = {"source": "public file", "path": str(tables / "domain.json"), "columns": 2}
    assert certs["with"]["domain"] == certs["without"]["domain"] == want


def test_without_a_domain_protect_and_audit_noise_refuse_a_text_feature(tables, tmp_path, capsys):
    audit = ["audit-noise", "--data", str(tables / "with.csv"), "--target", "label", "--model",
             "sklearn.linear_model.LogisticRegression", "--eta", "0.2", "--sigma", "0.5",
             "--n-reference", "4", "--n-releases", "4", "--n-targets", "2", "--seed", "0",
             "--json"]  # fmt: skip
    for args in (
        _protect(tables, "with", tmp_path / "m.joblib", "--encode", "onehot"),
        [*audit, "--encode", "onehot"],
    ):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "'country'" in err
        assert "would reveal them" in err and "--domain" in err and "mipkit domain" in err
    assert not (tmp_path / "m.joblib").exists()
    assert main([*audit, "--domain", str(tables / "domain.json")]) == 0, capsys.readouterr().err
    payload = json.loads(capsys.readouterr().out)
    assert payload["domain"]["source"] == "public file" and payload["game"]["trials"] == 8


def test_protect_on_numeric_features_says_no_domain_was_needed(tables, tmp_path, capsys):
    df = pd.read_csv(tables / "with.csv").drop(columns=["country"])
    df.to_csv(tmp_path / "numeric.csv", index=False)
    args = _protect(tables, "with", tmp_path / "m.joblib")
    args[2] = str(tmp_path / "numeric.csv")
    assert main(args) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["domain"] == {
        "source": "none needed: every feature is numeric"
    }
