"""``mipkit train-private``'s run folder names who trained the model (split.parquet, by row and id, no record
values), writes report.html, and ``--audit`` audits the released model against its certificate: a model
that leaks past a certificate is caught, a DP-SGD model stays within its own."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main

pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["label"] = np.where(df.a + rng.normal(size=n) > 0, "yes", "no")
    df.insert(0, "patient", [f"P{i:04d}" for i in range(n)])
    df.loc[[5, 17], "b"] = np.nan  # dropped by --dropna: the rows after them keep their positions
    path = tmp_path_factory.mktemp("tpr") / "t.csv"
    df.to_csv(path, index=False)
    return path


def test_split_names_rows_and_ids_and_the_audit_stays_within_the_certificate(table, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train-private", "--data", str(table), "--target", "label", "--id-column", "patient", "--dropna",
            "--noise-multiplier", "2", "--epochs", "2", "--batch-size", "32", "--hidden", "0", "--audit",
            "--record-split", "--out", str(out), "--json"]  # fmt: skip
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    split = pd.read_parquet(out / "split.parquet")
    assert list(split.columns) == ["row", "id", "member"]  # no feature, no label
    source = pd.read_csv(table)
    assert 5 not in set(split.row) and 17 not in set(split.row) and len(split) == len(source) - 2
    assert (split.id.to_numpy() == source.patient.to_numpy()[split.row]).all()
    assert split.member.sum() == d["n_train"] and (~split.member).sum() == d["held_out"]["rows"]
    audit = d["audit"]
    assert (
        audit["members"] == d["n_train"] and audit["non_members"] + audit["left_out"] == d["held_out"]["rows"]
    )
    assert "held-out rows stood in for non-members" in audit["note"]
    assert set(audit["tpr_at_fpr"]) == {"0.01", "0.1"} and audit["unmeasurable_fprs"] == [
        "0.001"
    ]  # under 1000 held out
    for key, r in audit["tpr_at_fpr"].items():
        assert r["certified"] == d["certified"]["tpr_at_fpr"][key] and not r["violation"]
    assert audit["holds"]
    html = (out / "report.html").read_text()
    assert (
        "Certified trade-off curve" in html
        and "stood in for non-members" in html
        and "data:image/png" in html
    )
    assert json.loads((out / "audit" / "results.json").read_text())["kind"] == "audit-fitted"


def test_the_audit_catches_a_model_that_leaks_past_a_certificate():
    """The attack that breaks the rule: a memorising model against a tight certificate is a violation."""
    from sklearn.ensemble import RandomForestClassifier

    from mipkit.workflows.train_private.records import audit_against_certificate

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = rng.integers(0, 2, 600)  # labels without signal: only memorising fits them
    train, test = np.arange(300), np.arange(300, 600)
    model = RandomForestClassifier(50, random_state=0).fit(X[train], y[train])
    tight = {"eta": 0.01, "tpr_at_fpr": {"0.01": 0.02, "0.1": 0.12}}
    audit = audit_against_certificate(model, X, y, train, test, tight)
    assert audit["tpr_at_fpr"]["0.1"]["violation"] and not audit["holds"]
    assert audit["measured_eta"] > tight["eta"]


def test_the_split_is_secret_and_written_only_when_asked(table, tmp_path, capsys):
    """The attack: with a seeded split, anyone holding the table and the seed in results.json recomputes which
    rows trained the model. The split comes from OS entropy (from --noise-seed when given), and
    split.parquet, the membership itself, is written only with --record-split."""

    def run(out, *extra):
        args = ["train-private", "--data", str(table), "--target", "label", "--id-column", "patient",
                "--dropna", "--noise-multiplier", "2", "--epochs", "1", "--batch-size", "32", "--hidden", "0",
                "--seed", "0", "--out", str(out), "--json", *extra]  # fmt: skip
        assert main(args) == 0
        capsys.readouterr()
        return out

    plain = run(tmp_path / "plain", "--audit")
    assert not (plain / "split.parquet").exists()
    assert not (plain / "audit").exists()  # its per-record scores would match each table row's loss
    assert "split.parquet" not in (plain / "results.json").read_text()
    members = [
        set(pd.read_parquet(run(tmp_path / f"r{i}", "--record-split") / "split.parquet").query("member").row)
        for i in range(2)
    ]
    assert members[0] != members[1]  # the same --seed, another split
    seeded = [
        set(pd.read_parquet(run(tmp_path / f"s{i}", "--record-split", "--noise-seed", "3") / "split.parquet")
            .query("member").row)
        for i in range(2)
    ]  # fmt: skip
    assert seeded[0] == seeded[1]


def test_the_released_model_reads_the_raw_table_and_audit_fitted_runs_lira_on_it(tmp_path, capsys):
    """model.joblib is a Pipeline over the table's raw columns (text and missing cells encoded from the
    public domain): audit-fitted takes it as it is, with reference models for LiRA and RMIA."""
    rng = np.random.default_rng(5)
    n = 240
    df = pd.DataFrame(
        {"age": rng.integers(20, 70, n).astype(float), "site": rng.choice(["north", "south"], n)}
    )
    df.loc[[3, 8, 40], "site"] = np.nan  # the domain allows a missing site
    df["label"] = np.where(df.age + 10 * (df.site == "north") + rng.normal(0, 8, n) > 50, "yes", "no")
    df.insert(0, "pid", [f"P{i}" for i in range(n)])
    domain = {
        "age": {"type": "numeric", "min": 0, "max": 120, "integer": True, "missing": False},
        "site": {"type": "categorical", "categories": ["north", "south"], "missing": True},
    }
    (tmp_path / "domain.json").write_text(json.dumps(domain))
    df.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "run"
    args = ["train-private", "--data", str(tmp_path / "t.csv"), "--target", "label", "--id-column", "pid",
            "--domain", str(tmp_path / "domain.json"), "--noise-multiplier", "2", "--epochs", "1",
            "--batch-size", "32", "--hidden", "0", "--record-split", "--out", str(out), "--json"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    split = pd.read_parquet(out / "split.parquet")
    members = df.iloc[split.row[split.member]]
    members.to_csv(tmp_path / "members.csv", index=False)
    df.iloc[split.row[~split.member]].to_csv(tmp_path / "held.csv", index=False)
    assert members.site.isna().any() or df.iloc[split.row[~split.member]].site.isna().any()
    audit = ["audit-fitted", "--model-file", str(out / "model.joblib"), "--trust-pickle", "--members",
             str(tmp_path / "members.csv"), "--non-members", str(tmp_path / "held.csv"), "--target", "label",
             "--id-column", "pid", "--reference-models", "2", "--n-boot", "100", "--json", "--no-report",
             "--out", str(tmp_path / "audit")]  # fmt: skip
    code = main(audit)
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    view = json.loads(captured.out)
    assert {"loss", "lira-offline", "rmia-offline"} <= set(view["attacks"])


def test_the_audit_table_shows_the_interval_and_the_note_says_how_the_split_was_drawn():
    from mipkit.workflows.train_private.records import HELD_OUT_NOTE
    from mipkit.workflows.train_private.report import _audit_table

    row = {
        "measured": 0.01,
        "lower": 0.002,
        "upper": 0.03,
        "certified": 0.05,
        "within": True,
        "violation": False,
    }
    audit = {
        "tpr_at_fpr": {"0.01": row},
        "attack": "loss",
        "members": 400,
        "non_members": 100,
        "note": HELD_OUT_NOTE,
    }
    table = _audit_table(audit, ())
    assert table.rows[0][1] == "0.01 [0.002, 0.03]"
    assert "seeded" not in HELD_OUT_NOTE and "secret random split" in HELD_OUT_NOTE


def test_quiet_silences_the_progress_not_the_answer(table, tmp_path, capsys):
    args = ["train-private", "--data", str(table), "--target", "label", "--id-column", "patient", "--dropna",
            "--noise-multiplier", "2", "--epochs", "1", "--batch-size", "32", "--hidden", "0"]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "loud")]) == 0
    loud = capsys.readouterr()
    assert loud.err.strip()  # the bar and the stage lines go to stderr
    assert main([*args, "--out", str(tmp_path / "quiet"), "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    for out in (loud.out, quiet.out):  # the answer is printed all the same (the split is random)
        assert out.startswith("Released:") and "Headline risk:" in out and "Run folder:" in out
