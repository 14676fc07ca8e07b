"""One-run auditing end to end: the canary design, the bound against the certificate (DP-SGD) and against a
model that memorises (a deep tree), and the command line's JSON and exit codes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main
from mipkit.data.io import Dataset
from mipkit.metrics.dp_lower_bounds import one_run_lower_bound
from mipkit.workflows.audit_one_run import AuditOneRunConfig, audit_one_run


@pytest.fixture(scope="module")
def dataset():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] > 0).astype(int)  # noise-free labels: a mislabeled canary stands out
    return Dataset(X=X, y=y, feature_names=[f"x{i}" for i in range(4)], classes=np.array(["no", "yes"]))


@pytest.fixture(scope="module")
def table(dataset, tmp_path_factory):
    path = tmp_path_factory.mktemp("one_run") / "t.csv"
    df = pd.DataFrame(dataset.X, columns=dataset.feature_names)
    df["label"] = dataset.classes[dataset.y]
    df.to_csv(path, index=False)
    return path


def test_a_memorising_model_gives_a_large_bound(dataset, tmp_path):
    cfg = AuditOneRunConfig(
        model="sklearn.tree.DecisionTreeClassifier", canaries=100, k_plus=(0.2, 0.4), seed=1
    )
    res = audit_one_run(dataset, cfg, run_dir=tmp_path)
    d = res.to_dict()
    assert d["certified_epsilon"] is None and d["verdict"] == "no certificate"
    assert d["canaries"] == 100 and 30 < d["canaries_included"] < 70
    assert d["n_train"] == 500 + d["canaries_included"]
    # a tree fits the included mislabeled canaries: its top guesses are mostly right. With r guesses the
    # bound cannot exceed log(q / (1 - q)), q = 0.05^(1/r): 2.0 for r = 24, so m = 100 measures ~1.
    assert d["correct"] >= 0.85 * d["guesses"] and d["epsilon_lower"] > 0.5
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["kind"] == "audit-one-run" and saved["epsilon_lower"] == d["epsilon_lower"]


def test_dp_sgd_stays_below_its_add_remove_certificate(dataset):
    pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")
    params = {"hidden_layer_sizes": [], "epochs": 2, "batch_size": 50, "noise_multiplier": 0.8,
              "neighbours": "add_remove", "learning_rate": 0.5}  # fmt: skip
    cfg = AuditOneRunConfig(params=params, canaries=200, seed=2)
    res = audit_one_run(dataset, cfg)
    d = res.to_dict()
    cert = d["certificate"]
    # the public size n_rest + m fixes q and T, whoever was included
    assert cert["dataset_size"] == 600 and cert["sample_rate"] == pytest.approx(50 / 600)
    assert cert["steps"] == 2 * 12 and cert["n_train"] == d["n_train"]
    assert d["certified_epsilon"] == pytest.approx(cert["certified"]["epsilon"])
    assert not res.violation and d["epsilon_lower"] <= d["certified_epsilon"]
    assert d["verdict"] == "below the certificate" and 0 <= d["ratio"] <= 1


def test_the_bound_is_the_metric_on_the_canary_scores(dataset):
    """The workflow's number is one_run_lower_bound on its own canaries' log-probabilities."""
    from sklearn.tree import DecisionTreeClassifier

    cfg = AuditOneRunConfig(model="sklearn.tree.DecisionTreeClassifier", params={"max_depth": 4},
                            canaries=100, k_plus=(0.1, 0.3), k_minus=(0, 0.2), seed=3,
                            scale=False)  # fmt: skip
    res = audit_one_run(dataset, cfg)
    rng = np.random.default_rng(np.random.SeedSequence([3, 0x0E1]))
    rows = np.sort(rng.choice(600, size=100, replace=False))
    labels = (dataset.y[rows] + rng.integers(1, 2, size=100)) % 2
    included = rng.random(100) < 0.5
    rest = np.setdiff1d(np.arange(600), rows)
    tree = DecisionTreeClassifier(max_depth=4, random_state=int(rng.integers(2**31 - 1)))
    tree.fit(
        np.vstack([dataset.X[rest], dataset.X[rows[included]]]), np.r_[dataset.y[rest], labels[included]]
    )
    p = tree.predict_proba(dataset.X[rows])[np.arange(100), labels]
    ref = one_run_lower_bound(np.log(np.clip(p, 1e-300, None)), included, delta=1e-5, k_plus=(0.1, 0.3),
                              k_minus=(0, 0.2))  # fmt: skip
    assert res.bound == ref


def test_cli_json_and_exit_codes(table, tmp_path, capsys):
    args = ["audit-one-run", "--data", str(table), "--target", "label", "--model",
            "sklearn.tree.DecisionTreeClassifier", "--canaries", "100", "--k-plus", "0.2,0.4", "--seed", "1",
            "--out", str(tmp_path), "--json"]  # fmt: skip
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["epsilon_lower"] > 0.5 and d["guesses"] in (20, 40)
    assert main([*args, "--fail-above", "0.1"]) == 1
    assert "exceeds --fail-above" in capsys.readouterr().err
    for bad, words in [(["--canaries", "400"], "at most half"), (["--canary-kind", "odd"], "canary_kind"),
                       (["--k-plus", "x"], "--k-plus"), (["--params", "{"], "--params")]:  # fmt: skip
        assert main([*args, *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err
