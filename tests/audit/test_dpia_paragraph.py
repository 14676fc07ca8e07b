"""Every audit's answer starts with one paragraph a privacy officer can paste into a DPIA: what was audited,
the headline risk in plain words, what it means and the premise, on one line before the tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from mipkit.cli import main
from mipkit.game.model_files import save_model_file

PARTS = ("Headline risk:", "What it means:", "Premise:")


def _first_block(out: str) -> str:
    block = out.split("\n\n", 1)[0]
    assert "\n" not in block.strip(), "the first block is one paragraph (one line, pasteable)"
    assert out.split("\n\n", 1)[1].strip(), "tables and details follow the paragraph"
    return block


def _check(block: str, start: str) -> None:
    assert block.startswith(start)
    positions = [block.index(p) for p in PARTS]
    assert positions == sorted(positions)  # audited, headline, meaning, premise: in this order
    assert "|" not in block and "━" not in block  # no table inside the paragraph


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("dpia")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = (X[:, 0] + rng.normal(size=160) > 0).astype(int)
    df.insert(0, "pid", [f"P{7 * i}" for i in range(160)])
    df.to_csv(d / "all.csv", index=False)
    df[:80].to_csv(d / "train.csv", index=False)
    df[80:].to_csv(d / "holdout.csv", index=False)
    model = LogisticRegression(C=1e4, max_iter=2000).fit(df[:80][["a", "b", "c"]], df[:80]["label"])
    save_model_file(model, d / "model.skops")
    p = model.predict_proba(df[["a", "b", "c"]])[:, 1]
    pd.DataFrame(
        {"pid": df["pid"], "y": df["label"], "trained": np.r_[["yes"] * 80, ["no"] * 80], "risk": p}
    ).to_csv(d / "vendor.csv", index=False)
    return d


def test_audit_starts_with_the_paragraph(table, capsys):
    args = ["audit", "--data", str(table / "all.csv"), "--target", "label", "--id-column", "pid",
            "--model", "sklearn.linear_model.LogisticRegression", "--models", "4", "--n-jobs", "1",
            "--n-boot", "100", "--no-report", "--out", str(table / "run-audit")]  # fmt: skip
    assert main(args) in (0, 1)
    block = _first_block(capsys.readouterr().out)
    _check(block, "Audited: the training procedure LogisticRegression")
    assert "4 models" in block and "160 records" in block and "averaged over training sets" in block


def test_audit_fitted_starts_with_the_paragraph(table, capsys):
    args = ["audit-fitted", "--model-file", str(table / "model.skops"), "--members", str(table / "train.csv"),
            "--non-members", str(table / "holdout.csv"), "--target", "label", "--id-column", "pid",
            "--reference-models", "0", "--attacks", "loss", "--n-boot", "100", "--fail-above", "0.49",
            "--no-report", "--out", str(table / "run-fitted")]  # fmt: skip
    assert main(args) == 0
    block = _first_block(capsys.readouterr().out)
    _check(block, "Audited: the released model (LogisticRegression) as it is")
    assert "80 of its training records and 80 records it did not see" in block
    assert "within the stated limit (eta <= 0.49)" in block and "about this model" in block


def test_audit_scores_starts_with_the_paragraph(table, capsys):
    args = ["audit-scores", "--predictions", str(table / "vendor.csv"), "--id-column", "pid",
            "--label-column", "y", "--member-column", "trained", "--member-value", "yes",
            "--score-column", "risk", "--n-boot", "100", "--no-report",
            "--out", str(table / "run-scores")]  # fmt: skip
    assert main(args) in (0, 1)
    block = _first_block(capsys.readouterr().out)
    _check(block, "Audited: the model behind the predictions file vendor.csv")
    assert "told whether a given record was in the training data" in block


def test_train_private_starts_with_the_paragraph(table, capsys):
    pytest.importorskip("torch")
    args = ["train-private", "--data", str(table / "all.csv"), "--target", "label", "--drop", "pid",
            "--noise-multiplier", "1.0", "--epochs", "1", "--batch-size", "32", "--hidden", "0",
            "--noise-seed", "1", "--audit", "--out", str(table / "run-tp")]  # fmt: skip
    assert main(args) == 0
    block = _first_block(capsys.readouterr().out)
    _check(block, "Released: a model trained with DP-SGD on 128 records")
    assert "differential privacy" in block and "Checked on the released model: LOSS found" in block
    assert "a test run, not a release" in block  # --noise-seed


def test_audit_one_run_starts_with_the_paragraph(table, capsys):
    args = ["audit-one-run", "--data", str(table / "all.csv"), "--target", "label", "--drop", "pid",
            "--model", "sklearn.tree.DecisionTreeClassifier", "--canaries", "60", "--k-plus", "0.25,0.5",
            "--seed", "1", "--fail-above", "100"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    block = _first_block(out)
    _check(block, "Audited: one training run of DecisionTreeClassifier on ")
    assert "60 records each put into the training data with probability 1/2" in block
    assert "no better than (epsilon = " in block
    assert "the bound is within the stated limit (epsilon <= 100)" in block
    assert "the trainer states no certificate" in block and "coin flip" in block
    assert out.split("\n\n", 1)[1].startswith("One-run audit: epsilon >= ")  # the figures follow


def _fitted_results(tprs: dict[str, float], strongest: str) -> dict:
    """An audit-fitted results dict: five attacks' eta and TPR at 1% false alarms; lira-offline strongest."""
    attacks = {
        name: {"eta": 0.028 if name == strongest else 0.01, "eta_ci": [0.01, 0.04],
               "tpr_at_fpr": {"0.001": 0.001, "0.01": t, "0.1": 0.12}}
        for name, t in tprs.items()
    }  # fmt: skip
    return {"strongest_attack": strongest, "eta_ci": [0.006, 0.049], "attacks": attacks,
            "question": {"answered": "this fitted model"},
            "design": {"members": 100, "nonmembers": 100}}  # fmt: skip


def test_headline_quotes_the_attack_that_finds_most_at_1_percent():
    """The strongest attack by eta found 0.7% at 1% false alarms (below chance) while rmia-online found 2%:
    the headline quotes rmia-online's 2%, as the summary's bullet does, not the below-chance 0.7%."""
    from mipkit.report.audit_report import plain_summary
    from mipkit.report.dpia import audit_paragraph

    res = _fitted_results({"loss": 0.017, "lira-offline": 0.007, "rmia-online": 0.02}, "lira-offline")
    text = audit_paragraph(res)
    assert "(lira-offline)" in text and "0.7%" not in text
    assert "the best attack there (rmia-online) found 2% of the members" in text
    for a in res["attacks"].values():
        a["roc"] = [[0, 0], [1, 1]]
        a["precision_at_base_rate"] = {}
    bullet = next(x for x in plain_summary(res) if x.startswith("At a false-alarm rate of 1%"))
    assert "rmia-online found 2.0%" in bullet


def test_headline_says_plainly_when_no_attack_beats_chance_at_1_percent():
    from mipkit.report.dpia import audit_paragraph

    text = audit_paragraph(_fitted_results({"loss": 0.009, "lira-offline": 0.007}, "lira-offline"))
    assert "no attack found more of the members than chance would (best: loss, 0.9%)" in text
    assert "it found 0.7%" not in text
