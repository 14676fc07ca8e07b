"""The model a hospital releases, audited as it is: a Pipeline that one-hot encodes its own text columns,
attacked by LiRA and RMIA through the command line with its records named by id, and a vendor's predictions
file read without renaming a column."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import mipkit
import mipkit.cli as cli
from mipkit._validation import MipkitValueError
from mipkit.game.model_files import save_model_file
from mipkit.workflows.audit_fitted import FittedRelease
from mipkit.workflows.audit_scores.attacks import balanced_trials

ALL_ROWS = {"loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"}


def _patients(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "patient": [f"P{10_000 + 37 * i}" for i in range(n)],  # ids unrelated to the row
            "age": rng.integers(20, 90, n),
            "ward": rng.choice(["cardio", "onco", "ortho", "neuro"], n),
            "sex": rng.choice(["F", "M"], n),
            "notes": rng.choice(["seen", "follow-up"], n),  # a column the model does not read
        }
    )
    risk = 0.02 * (df["age"] - 55) + (df["ward"] == "onco") + rng.normal(size=n)
    df["outcome"] = np.where(risk > 0.3, "died", "survived")
    return df


def _pipeline() -> object:
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["ward", "sex"]), (StandardScaler(), ["age"])
    )
    return make_pipeline(encode, LogisticRegression(C=100.0, max_iter=2000))


@pytest.fixture(scope="module")
def hospital(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hospital")
    df = _patients()
    members, holdout = df.iloc[:120], df.iloc[120:]
    model = _pipeline().fit(members[["age", "ward", "sex"]], members["outcome"])
    save_model_file(model, folder / "model.skops")
    members.to_csv(folder / "train.csv", index=False)
    holdout.to_csv(folder / "holdout.csv", index=False)
    return folder, model


def _args(folder, *extra):
    return [
        "audit-fitted", "--model-file", str(folder / "model.skops"), "--members", str(folder / "train.csv"),
        "--non-members", str(folder / "holdout.csv"), "--target", "outcome", "--id-column", "patient",
        "--slice-by", "sex", "--n-jobs", "1", "--n-boot", "200", "--out", str(folder / "run"), *extra,
    ]  # fmt: skip


def test_onehot_pipeline_gets_lira_and_rmia_from_the_cli_with_records_named_by_id(hospital, capsys):
    folder, model = hospital
    assert cli.main([*_args(folder), "--json"]) in (0, 1)  # default --reference-models: no flag needed
    view = json.loads(capsys.readouterr().out)
    assert set(view["attacks"]) == ALL_ROWS and not view["skipped"]
    design = view["design"]
    assert design["n_reference_models"] == 16 and design["reference_models_in"] == 16
    assert design["columns_used"] == ["age", "ward", "sex"] and design["columns_ignored"] == ["notes"]
    # the released model's own outputs: LOSS equals scikit-learn's AUC on the log-probability of the label
    train, holdout = pd.read_csv(folder / "train.csv"), pd.read_csv(folder / "holdout.csv")
    audited = pd.concat([train, holdout], ignore_index=True)
    proba = model.predict_proba(audited[["age", "ward", "sex"]])
    p_true = proba[np.arange(len(audited)), np.searchsorted(model.classes_, audited["outcome"])]
    member = np.r_[np.ones(len(train)), np.zeros(len(holdout))]
    assert view["attacks"]["loss"]["auc"] == pytest.approx(roc_auc_score(member, np.log(p_true)), abs=1e-12)
    # records named by id: the most exposed are members, ranked by the strongest attack's score
    rec = view["records"]
    assert rec["id_column"] == rec["id_field"] == "patient"
    scores = pd.read_parquet(folder / "run" / "scores.parquet")
    assert scores["patient"].tolist() == audited["patient"].tolist()
    best = rec["most_exposed_attack"]
    assert best == view["strongest_attack"]
    top = rec["most_exposed"]
    assert len(top) == 10 and [r["rank"] for r in top] == sorted(r["rank"] for r in top)
    s = scores[f"{best}_score"].to_numpy()
    for r in top:
        row = scores.loc[scores["patient"] == r["patient"]].iloc[0]
        assert row["member"] == 1 and train.loc[r["row"], "patient"] == r["patient"]
        assert r["score"] == pytest.approx(row[f"{best}_score"])
        assert r["rank"] == 1 + int(np.sum(s > r["score"]))  # rank among all 240 records, 1 = highest
    ranked_members = scores[scores["member"] == 1].sort_values(f"{best}_rank")
    assert [r["patient"] for r in top] == ranked_members["patient"].head(10).tolist()
    # subgroups: the true class and sex, sex a feature of the model
    groups = {(g["column"], g["group"]) for g in view["slices"]["groups"]}
    assert {("sex", "F"), ("sex", "M"), ("outcome", "died"), ("outcome", "survived")} <= groups
    assert view["slices"]["columns"]["sex"]["is_feature"] is True
    # the plain output lists the ignored columns and names the most exposed patients (a re-run resumes)
    assert cli.main([*_args(folder), "--no-report"]) in (0, 1)
    out = capsys.readouterr().out
    assert "Columns the model does not read (ignored): notes." in out
    assert f"{top[0]['patient']} (rank {top[0]['rank']})" in out and "sex = F" in out


def test_reference_models_are_clones_trained_on_the_raw_columns_the_model_reads():
    df = _patients(n=160, seed=1)
    members, holdout = df.iloc[:80], df.iloc[80:]
    model = _pipeline().fit(members[["age", "ward", "sex"]], members["outcome"])
    seen = []

    def train(X, y, random_state):  # runs in process with n_jobs=1
        seen.append(X)
        return clone(model).fit(X, y)

    result = mipkit.audit_fitted(
        FittedRelease(model, members, holdout, reference_trainer=train),
        mipkit.AuditFittedConfig(target="outcome", n_reference=2, n_jobs=1, n_boot=200, id_column="patient"),
    )
    assert set(result.summaries) == ALL_ROWS
    assert len(seen) == 2
    for X in seen:  # the table as read: the model's columns only, text as text, numbers as numbers
        assert list(X.columns) == ["age", "ward", "sex"] and len(X) == 80
        assert set(X["ward"]) <= {"cardio", "onco", "ortho", "neuro"} and X["age"].dtype == df["age"].dtype
        key = X.astype(str).agg("|".join, axis=1)
        pool = df[["age", "ward", "sex"]].astype(str).agg("|".join, axis=1)
        assert key.isin(pool).all()
    assert result.setup["columns_ignored"] == ["notes"]


def test_id_column_refusals_are_one_line(hospital):
    df = _patients(n=80)
    model = _pipeline().fit(df[["age", "ward", "sex"]][:40], df["outcome"][:40])
    shared = df.copy()
    shared.loc[50, "patient"] = shared.loc[3, "patient"]  # a member's id again among the non-members
    release = FittedRelease(model, df[:40], df[40:])
    config = mipkit.AuditFittedConfig(target="outcome")
    with pytest.raises(MipkitValueError, match="repeats 1 value"):
        mipkit.audit_fitted(
            FittedRelease(model, shared[:40], shared[40:]), config.replace(id_column="patient")
        )
    with pytest.raises(MipkitValueError, match="not a column of the members"):
        mipkit.audit_fitted(release, config.replace(id_column="pid"))
    with pytest.raises(MipkitValueError, match="one of the features"):
        mipkit.audit_fitted(release, config.replace(id_column="ward"))
    with pytest.raises(MipkitValueError, match="slice-by column 'postcode'"):
        mipkit.audit_fitted(release, config.replace(slice_by=["postcode"]))


# ------------------------------------------------------------------------------------------ vendor file


@pytest.fixture(scope="module")
def vendor(tmp_path_factory):
    """A vendor's file: patient, outcome, in_training (yes/no), risk_score (P(outcome = 1))."""
    folder = tmp_path_factory.mktemp("vendor")
    rng = np.random.default_rng(3)
    n = 200
    outcome = rng.integers(0, 2, n)
    in_training = rng.random(n) < 0.5
    # the model is more confident on its training records: LOSS separates them
    logit = (2 * outcome - 1) * (0.5 + 1.5 * in_training) + rng.normal(size=n)
    risk = 1 / (1 + np.exp(-logit))
    df = pd.DataFrame(
        {
            "patient": [f"MRN-{7 * i + 3}" for i in range(n)],
            "outcome": outcome,
            "in_training": np.where(in_training, "yes", "no"),
            "risk_score": risk.round(6),
            "site": rng.choice(["north", "south"], n),
        }
    )
    df.to_csv(folder / "vendor.csv", index=False)
    return folder, df


def _vendor_args(folder, *extra):
    return [
        "audit-scores", "--predictions", str(folder / "vendor.csv"), "--id-column", "patient",
        "--label-column", "outcome", "--member-column", "in_training", "--member-value", "yes",
        "--score-column", "risk_score", "--n-boot", "200", "--out", str(folder / "run"), *extra,
    ]  # fmt: skip


def test_vendor_file_audited_as_it_is(vendor, capsys):
    folder, df = vendor
    assert cli.main([*_vendor_args(folder, "--slice-by", "site"), "--json"]) in (0, 1)
    view = json.loads(capsys.readouterr().out)
    member = (df["in_training"] == "yes").to_numpy()
    p_true = np.where(df["outcome"] == 1, df["risk_score"], 1 - df["risk_score"])
    game = balanced_trials(member, 0)  # the metrics' game: the MIP prior 1/2
    want = roc_auc_score(member[game], np.log(p_true)[game])
    assert view["attacks"]["loss"]["auc"] == pytest.approx(want, abs=1e-9)
    assert view["attacks"]["loss"]["auc"] > 0.6  # the leak the vendor's model has
    assert view["design"]["members"] == int(member.sum())
    rec = view["records"]
    assert rec["id_field"] == "patient"
    assert all(df.loc[r["row"], "patient"] == r["patient"] for r in rec["most_exposed"])
    assert all(df.loc[r["row"], "in_training"] == "yes" for r in rec["most_exposed"])
    groups = {(g["column"], g["group"]) for g in view["slices"]["groups"]}
    assert {("site", "north"), ("site", "south"), ("outcome", "0"), ("outcome", "1")} <= groups
    scores = pd.read_parquet(folder / "run" / "scores.parquet")
    assert scores["patient"].tolist() == df["patient"].tolist()


def test_vendor_probability_columns_give_the_same_audit(vendor, tmp_path, capsys):
    folder, df = vendor
    wide = df.assign(p_died=1 - df["risk_score"], p_alive=df["risk_score"]).drop(columns="risk_score")
    wide["outcome"] = np.where(df["outcome"] == 1, "alive", "died")
    wide.to_csv(tmp_path / "vendor.csv", index=False)
    args = _vendor_args(tmp_path, "--json")
    args[args.index("--score-column") : args.index("--score-column") + 2] = [
        "--proba-columns", "died=p_died,p_alive"
    ]  # fmt: skip
    assert cli.main(args) in (0, 1)
    wide_view = json.loads(capsys.readouterr().out)
    assert cli.main(_vendor_args(folder, "--json")) in (0, 1)
    view = json.loads(capsys.readouterr().out)
    assert wide_view["attacks"]["loss"]["auc"] == pytest.approx(view["attacks"]["loss"]["auc"], abs=1e-12)


@pytest.mark.parametrize(
    ("change", "flags", "words"),
    [
        ({"in_training": "maybe"}, [], "must hold 'yes' for members and one other value"),
        ({"risk_score": 7.5}, [], "must hold the probability of the positive class, in [0, 1]"),
        ({"outcome": "2"}, [], "holds 3 values"),
        ({}, ["--positive-class", "7"], "positive class '7' is not a value"),
        ({}, ["--slice-by", "postcode"], "'postcode' are not columns"),
        ({}, ["--proba-columns", "p_x,p_y"], "not both"),
    ],
)
def test_bad_vendor_input_exits_2_with_one_line(vendor, tmp_path, capsys, change, flags, words):
    _, df = vendor
    bad = df.copy()
    for col, value in change.items():
        bad[col] = bad[col].astype(object)
        bad.loc[5, col] = value
    bad.to_csv(tmp_path / "vendor.csv", index=False)
    assert cli.main([*_vendor_args(tmp_path), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err
    assert not (tmp_path / "run").exists()


def test_score_of_labels_without_a_known_positive_class_needs_the_flag(vendor, tmp_path, capsys):
    _, df = vendor
    words = df.assign(outcome=np.where(df["outcome"] == 1, "died", "home"))
    words.to_csv(tmp_path / "vendor.csv", index=False)
    assert cli.main(_vendor_args(tmp_path)) == 2
    assert "name the positive class" in capsys.readouterr().err
    assert cli.main([*_vendor_args(tmp_path, "--json"), "--positive-class", "died"]) in (0, 1)
    view = json.loads(capsys.readouterr().out)
    assert set(view["attacks"]) == {"loss"}
