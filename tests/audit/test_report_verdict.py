"""The audit report states its verdict first, its certificate honestly, and labels only on request."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from mipkit.data.io import Dataset
from mipkit.report.audit_report import plain_summary, roc_figure, top_records
from mipkit.report.audit_verdict_report import certificate_sentences, verdict_section
from mipkit.workflows.audit import AuditConfig, audit


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    X, y = make_classification(120, 6, n_informative=4, random_state=0)
    ds = Dataset(X=X * 100, y=y, feature_names=tuple(f"x{i}" for i in range(6)), classes=np.array(["a", "b"]))
    base = {
        "model": "sklearn.linear_model.LogisticRegression",
        "params": {"C": 1000, "max_iter": 2000},
        "attacks": ("loss",),
        "n_models": 4,
        "n_jobs": 1,
        "n_boot": 200,
        "certified_eta": 0.1,
    }
    out = {}
    for name, extra in {
        "plain": {},
        "labels": {"include_labels": True, "scale": True, "fail_above": 0.4},
    }.items():
        folder = tmp_path_factory.mktemp(name)
        out[name] = (folder, audit(ds, AuditConfig(**base, **extra), run_dir=folder))
    return out


def test_labels_only_on_request(runs):
    plain_dir, plain = runs["plain"]
    labels_dir, labelled = runs["labels"]
    assert "label" not in pd.read_parquet(plain_dir / "scores.parquet")
    assert set(pd.read_parquet(labels_dir / "scores.parquet")["label"]) <= {"a", "b"}
    assert "label" not in top_records(plain.scores, "loss")
    html = (plain_dir / "report.html").read_text()
    assert "<th>label</th>" not in html
    assert "<th>label</th>" in (labels_dir / "report.html").read_text()


def test_verdict_box_first_with_fingerprints(runs):
    folder, res = runs["labels"]
    html = (folder / "report.html").read_text()
    assert html.index('class="verdict"') < html.index("<h2>Attacks</h2>")
    assert res.provenance["data_sha256"] in html and res.provenance["date"][:10] in html
    assert res.verdict["policy"] == {"metric": "eta", "fail_above": 0.4}
    assert res.verdict["status"] in ("pass", "inconclusive")  # eta is far below 0.4
    assert res.trainer["preprocessing"].startswith("StandardScaler")
    _, plain = runs["plain"]
    assert plain.verdict["status"] == "no policy"
    box = verdict_section(plain.to_dict())
    assert box.title == "Verdict" and "no policy stated" in box.tables[0].to_string()


def test_certificate_is_not_oversold(runs):
    _, res = runs["plain"]
    d = res.to_dict()
    cert = d["certificate"]
    assert cert["tpr_bound"]["0.01"] == pytest.approx(0.21)
    text = " ".join(certificate_sentences(cert))
    assert "up to 20% of the members with no false alarm" in text and "random half of a pool" in text
    assert "not stated" in cert["exactness"]
    fig = roc_figure({}, certificate={"eta": 0.1, "exact": False})
    assert "approximate" in fig.caption and "No attack can lie above" not in fig.caption
    exact = roc_figure({}, certificate={"eta": 0.1, "exact": True})
    assert "exact certificate" in exact.caption


def test_unscaled_models_that_do_not_learn_are_flagged():
    """Features at a scale of 1e6 stop an unscaled MLP from learning: the summary warns; scaled, it learns."""
    X, y = make_classification(160, 5, n_informative=3, weights=[0.75], random_state=1)
    ds = Dataset(X=X * 1e6, y=y, feature_names=tuple(f"x{i}" for i in range(5)), classes=np.array([0, 1]))
    cfg = {
        "model": "sklearn.neural_network.MLPClassifier",
        "params": {"hidden_layer_sizes": [8], "max_iter": 300},
        "attacks": ("loss",),
        "n_models": 4,
        "n_jobs": 1,
        "n_boot": 200,
    }
    import tempfile

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        raw = audit(ds, AuditConfig(**cfg), run_dir=a, report=False)
        scaled = audit(ds, AuditConfig(**cfg, scale=True), run_dir=b, report=False)
    u, s = raw.utility, scaled.utility
    assert not u["learns"] and "did not learn" in u["warning"]
    assert any(line.startswith("WARNING") for line in plain_summary(raw.to_dict()))
    assert s["learns"] and s["accuracy_nonmembers"] > s["majority_class_rate"] + 0.05


def test_certificate_row_says_when_there_is_no_certificate():
    """No certificate given: the verdict box says so, never "no violation" (a check that never ran)."""
    v = {"status": "no policy", "policy": None, "measured": {}, "certificate_violations": [], "text": "x"}
    rows = dict(verdict_section({"verdict": v}).tables[0].to_numpy().tolist())
    assert rows["certificate"] == "no certificate given"
    with_cert = {"verdict": {**v, "certificate_by_attack": {"loss": {}}}, "certificate": {"eta": 0.1}}
    assert dict(verdict_section(with_cert).tables[0].to_numpy().tolist())["certificate"] == "no violation"
    broken = {"verdict": {**v, "certificate_violations": ["loss above the certified TPR"]}}
    assert dict(verdict_section(broken).tables[0].to_numpy().tolist())["certificate"].startswith("loss above")
