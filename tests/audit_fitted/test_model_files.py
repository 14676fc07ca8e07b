"""Loading a model file is loading code: pickles only when trusted, skops checked (#11)."""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mipkit.cli as cli
import mipkit.game.trainers as trainers
from mipkit._validation import MipkitValueError
from mipkit.game.model_files import (
    PickleLoadWarning,
    UntrustedModelFileError,
    load_model_file,
    save_model_file,
)
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted

pytest.importorskip("skops")


class Wrapped(ClassifierMixin, BaseEstimator):
    """A class of the user's own: not trusted by skops by default."""

    def __init__(self, C: float = 1.0):
        self.C = C

    def fit(self, X, y):
        self.inner_ = LogisticRegression(C=self.C).fit(X, y)
        self.classes_ = self.inner_.classes_
        return self

    def predict_proba(self, X):
        return self.inner_.predict_proba(X)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(t=(X[:, 0] > 0).astype(int))
    df.iloc[:40].to_csv(tmp_path / "members.csv", index=False)
    df.iloc[40:].to_csv(tmp_path / "non_members.csv", index=False)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        df.iloc[:40][["a", "b", "c"]], df.iloc[:40]["t"]
    )
    joblib.dump(pipe, tmp_path / "model.joblib")
    save_model_file(pipe, tmp_path / "model.skops")
    save_model_file(Wrapped().fit(X[:40], df["t"][:40]), tmp_path / "own.skops")
    return tmp_path, pipe, df


def test_pickle_refused_without_the_flag(files, capsys):
    folder, _, _ = files
    with pytest.raises(UntrustedModelFileError, match="runs code"):
        load_model_file(folder / "model.joblib")
    base = [
        "audit-fitted",
        "--members",
        str(folder / "members.csv"),
        "--non-members",
        str(folder / "non_members.csv"),
    ]
    args = [*base, "--target", "t", "--model-file", str(folder / "model.joblib"), "--out", str(folder / "r")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trust-pickle" in err
    assert cli.main([*args, "--trust-pickle", "--n-boot", "100", "--no-report", "--quiet"]) == 0
    assert "warning" in capsys.readouterr().err


def test_pickle_with_trust_warns(files):
    folder, pipe, _ = files
    with pytest.warns(PickleLoadWarning):
        model = load_model_file(folder / "model.joblib", trust_pickle=True)
    assert type(model) is type(pipe)


def test_skops_round_trip(files, capsys):
    folder, pipe, df = files
    model = load_model_file(folder / "model.skops")
    X = df[["a", "b", "c"]]
    np.testing.assert_array_equal(model.predict_proba(X), pipe.predict_proba(X))
    tables = ["--members", str(folder / "members.csv"), "--non-members", str(folder / "non_members.csv")]
    flags = ["--target", "t", "--json", "--n-boot", "100", "--no-report", "--out", str(folder / "r3")]
    code = cli.main(["audit-fitted", "--model-file", str(folder / "model.skops"), *tables, *flags])
    out = capsys.readouterr().out
    assert code == 0
    view = json.loads(out)
    result = audit_fitted(
        FittedRelease(pipe, df.iloc[:40], df.iloc[40:]), AuditFittedConfig(target="t", n_boot=100)
    )
    assert view["question"] == "this fitted model"
    assert view["eta"] == pytest.approx(result.eta, abs=1e-12)
    assert view["eta_ci"] == pytest.approx(result.eta_ci, abs=1e-12)
    assert view["auc"] == pytest.approx(result.auc, abs=1e-12)


def test_skops_with_an_untrusted_type_is_refused_until_trusted(files, capsys):
    folder, _, _ = files
    with pytest.raises(UntrustedModelFileError) as info:
        load_model_file(folder / "own.skops")
    assert any(t.endswith("Wrapped") for t in info.value.untrusted)
    model = load_model_file(folder / "own.skops", trusted=info.value.untrusted)
    assert type(model).__name__ == "Wrapped"
    code = cli.main(
        [
            "audit-fitted",
            "--model-file",
            str(folder / "own.skops"),
            "--members",
            str(folder / "members.csv"),
            "--non-members",
            str(folder / "non_members.csv"),
            "--target",
            "t",
            "--out",
            str(folder / "r2"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--trusted-type" in err and err.count("\n") == 1


def test_unknown_suffix_and_missing_file(tmp_path):
    (tmp_path / "m.txt").write_text("x")
    with pytest.raises(MipkitValueError, match="suffix"):
        load_model_file(tmp_path / "m.txt")
    with pytest.raises(MipkitValueError, match="No such model file"):
        load_model_file(tmp_path / "nope.skops")


def test_a_module_not_found_says_how_to_make_it_importable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trainers.allow_trainers(["mipkit_missing_module_q.MyModel"])
    with pytest.raises(MipkitValueError) as info:
        trainers.trainer_class("mipkit_missing_module_q.MyModel")
    text = str(info.value)
    assert "PYTHONPATH" in text and "mipkit_missing_module_q.py" in text
    assert "install the package" not in text


def test_a_forest_is_refused_first_with_the_exact_trusted_type_flags(files, tmp_path, capsys):
    """The skops check comes before any other work: before the flags' values, the tables, the run folder."""
    from sklearn.ensemble import RandomForestClassifier

    folder, _, df = files
    forest = RandomForestClassifier(n_estimators=2, random_state=0).fit(df[["a", "b", "c"]], df["t"])
    save_model_file(forest, tmp_path / "forest.skops")
    args = ["--model-file", str(tmp_path / "forest.skops"), "--members", "no.csv", "--non-members", "x.csv"]
    code = cli.main(["audit-fitted", *args, "--target", "t", "--n-boot", "5", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.endswith("add: --trusted-type sklearn.tree._tree.Tree"), err
    assert not (tmp_path / "r").exists()
