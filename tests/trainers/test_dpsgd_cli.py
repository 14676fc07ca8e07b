"""``mipkit train-private`` (JSON contract, run folder, bad input: one line, exit 2) and ``mipkit audit`` with
DP-SGD models: the trainer carries its certificate into the audit, and the measurement stays under it."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main

pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("tp")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 4)) * [1, 10, 100, 1]  # scales that need standardising
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["colour"] = rng.choice(["red", "blue"], size=240)
    df["label"] = np.where(X[:, 0] + X[:, 1] / 10 > 0, "yes", "no")
    df.to_csv(d / "t.csv", index=False)
    domain = {c: {"type": "numeric", "min": -1e4, "max": 1e4} for c in "abcd"}
    domain["colour"] = {"type": "categorical", "categories": ["red", "green", "blue"]}
    (d / "domain.json").write_text(json.dumps(domain))
    return d / "t.csv"


def _args(table, out, *extra):
    return ["train-private", "--data", str(table), "--target", "label", "--domain",
            str(table.parent / "domain.json"), "--epochs", "2", "--batch-size", "24", "--hidden", "0",
            "--neighbours", "add_remove", "--out", str(out), *extra]  # fmt: skip


def test_json_contract_and_run_folder(table, tmp_path, capsys):
    args = _args(table, tmp_path, "--target-risk", "tpr-at-fpr", "--value", "0.05", "--fpr", "0.01", "--json")
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["held_out"]["rows"] == 48 and d["n_train"] == 192  # 20% of each class held out
    assert d["sample_rate"] == pytest.approx(24 / 192) and d["steps"] == 2 * 8
    assert set(d["certified"]) >= {"eta", "advantage", "tpr_at_fpr", "epsilon"}
    assert d["certified"]["tpr_at_fpr"]["0.01"] <= 0.05 and d["target"]["fpr"] == 0.01
    assert d["noise_multiplier"] > 0.0 and d["test_accuracy"] > d["majority_rate"]
    assert (
        json.loads((tmp_path / "certificate.json").read_text())["noise_multiplier"] == d["noise_multiplier"]
    )
    assert json.loads((tmp_path / "results.json").read_text())["kind"] == "train-private"
    assert "Held-out accuracy" in (tmp_path / "report.md").read_text()
    with open(tmp_path / "model.joblib", "rb") as f:
        import joblib

        model = joblib.load(f)
    raw = pd.read_csv(table)
    # the encoding is the domain's: every level ("green" is held by no row and is still an input: 4 + 3)
    assert model["dpsgd"].n_features_in_ == 7 and d["domain"]["source"] == "public file"
    assert model.predict(raw[[*"abcd", "colour"]]).shape == (240,)  # the pipeline encodes the raw columns
    assert pickle.loads(pickle.dumps(model))["dpsgd"].certificate_.noise_multiplier == d["noise_multiplier"]


def test_noise_multiplier_given_directly(table, tmp_path, capsys):
    assert main(_args(table, tmp_path, "--noise-multiplier", "1.5")) == 0
    out = capsys.readouterr().out
    assert "Noise multiplier" in out and "1.5" in out and "Certified epsilon" in out


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--noise-multiplier", "0"], "noise_multiplier"),
        (["--noise-multiplier", "-2"], "noise_multiplier"),
        (["--noise-multiplier", "1", "--batch-size", "500"], "at most the number of training rows"),
        (["--target-risk", "tpr-at-fpr", "--value", "0.005", "--fpr", "0.01"], "unreachable"),
        (["--target-risk", "advantage", "--value", "0.999"], "met by any noise multiplier"),
        (["--target-risk", "tpr-at-fpr", "--value", "0.05"], "needs --fpr"),
        (["--target-risk", "eta", "--value", "0.1", "--noise-multiplier", "1"], "either"),
        ([], "either"),
        (["--noise-multiplier", "1", "--fpr", "0.01"], "--fpr applies only"),
        (["--noise-multiplier", "1", "--hidden", "a"], "--hidden"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(table, tmp_path, capsys, extra, words):
    assert main(_args(table, tmp_path, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mipkit: error:") and words in err


def test_non_numeric_column_without_a_domain_is_refused(table, tmp_path, capsys):
    args = _args(table, tmp_path, "--noise-multiplier", "1")
    del args[args.index("--domain") : args.index("--domain") + 2]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Non-numeric" in err and "colour" in err


def test_audit_of_dp_sgd_models_carries_the_certificate(tmp_path, capsys):
    """``mipkit audit --model mipkit.trainers.DPSGDClassifier``: the certificate reaches results.json, and
    a strong noise keeps every attack's measured TPR at 10% FPR near its certified bound or below."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(160, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = (X[:, 0] > 0).astype(int)
    df.to_csv(tmp_path / "d.csv", index=False)
    params = {"hidden_layer_sizes": [], "epochs": 1, "batch_size": 16, "noise_multiplier": 2.0}
    args = ["audit", "--data", str(tmp_path / "d.csv"), "--target", "label", "--model",
            "mipkit.trainers.DPSGDClassifier", "--params", json.dumps(params), "--models", "4", "--attacks",
            "loss", "--n-jobs", "1", "--no-report", "--out", str(tmp_path / "run"), "--json"]  # fmt: skip
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    cert = payload["certificate"]
    assert cert is not None and cert["source"] == "DPSGDClassifier"
    assert 0 < cert["eta"] < 0.5
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["certificate"]["eta"] == cert["eta"]
    # `certified` (the shape of train-private's; for the game's replace-one relation, the default) and a
    # verdict per attack against the certified TPR
    assert cert["relation"] == "replace_one"
    assert payload["certified"] == saved["certified"] == cert["certified"]
    assert set(payload["certified"]) >= {"eta", "advantage", "tpr_at_fpr", "epsilon"}
    by_attack = payload["verdict"]["certificate_by_attack"]
    assert set(by_attack) == {"loss"} and by_attack["loss"]["verdict"] == "below the certificate"
    row = by_attack["loss"]["tpr_at_fpr"]["0.1"]
    assert row["certified_tpr"] == pytest.approx(payload["certified"]["tpr_at_fpr"]["0.1"], rel=1e-6)
    assert row["lower_end"] <= row["certified_tpr"]


def test_a_measurement_above_the_certificate_is_a_violation():
    """Judged on the lower end of the measured interval, FPR by FPR."""
    from mipkit.workflows.audit.certified import certificate_by_attack

    stats = {"attacks": {
        "lira": {"tpr_at_fpr": {"0.01": {"tpr": 0.08, "tpr_ci_simultaneous": [0.06, 0.10]},
                                "0.1": {"tpr": 0.2, "tpr_ci_simultaneous": [0.15, 0.25]}}},
        "loss": {"tpr_at_fpr": {"0.01": {"tpr": 0.06, "tpr_ci_simultaneous": [0.04, 0.08]}}},
    }}  # fmt: skip
    cert = {"tpr_bound": {"0.01": 0.05, "0.1": 0.3}}
    out = certificate_by_attack(stats, cert)
    assert (
        out["lira"]["verdict"] == "violation" and out["lira"]["tpr_at_fpr"]["0.1"]["verdict"] != "violation"
    )
    assert out["loss"]["verdict"] == "below the certificate"  # point estimate above, lower end below
    assert certificate_by_attack(stats, None) is None
