"""Record ids and subgroups of a model audit (issue 11, item 4): ids carried through ``dropna`` into every
per-record output, bad id columns refused, the id column never a feature, per-subgroup metrics equal to the
metrics computed on the subset independently, and intervals that cover."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score, roc_curve

from mipkit import MipkitValueError
from mipkit.cli import main
from mipkit.data.io import Dataset
from mipkit.metrics.slices import slice_summary
from mipkit.report.results import SCHEMA_VERSION
from mipkit.workflows.audit import AuditConfig, LabelledTable, audit

DOCS = Path(__file__).resolve().parents[2] / "docs" / "audit.md"
FOREST = {"model": "sklearn.ensemble.RandomForestClassifier", "params": {"n_estimators": 6}}


def _table(n: int = 120, seed: int = 2) -> pd.DataFrame:
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=seed)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(4)])
    df["label"] = np.where(y == 1, "yes", "no")
    df["pid"] = [f"P{1000 + 7 * i}" for i in range(n)]  # ids unrelated to the row number
    df["grp"] = np.where(np.arange(n) % 4 == 0, "a", "b")
    df.loc[[3, 17, 40], "x1"] = np.nan  # rows dropped by dropna
    return df


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("ids") / "t.csv"
    _table().to_csv(path, index=False)
    return path


def _args(data, out, *extra):
    return [
        "audit", "--data", str(data), "--target", "label", "--model", FOREST["model"],
        "--params", json.dumps(FOREST["params"]), "--models", "4", "--n-jobs", "1", "--attacks", "loss",
        "--n-boot", "200", "--out", str(out), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def cli_run(table, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    args = _args(table, out, "--dropna", "--id-column", "pid", "--slice-by", "grp", "--drop", "grp")
    assert main([*args, "--quiet", "--no-report"]) == 0
    return out


# ------------------------------------------------------------------------------------------------ ids


def test_ids_round_trip_through_dropna_into_scores(cli_run, table):
    df = pd.read_csv(table)
    kept = df[df.drop(columns=["pid", "grp"]).notna().all(axis=1)]
    scores = pd.read_parquet(cli_run / "scores.parquet")
    assert len(scores) == len(kept) == len(df) - 3
    assert scores["row"].tolist() == kept.index.tolist()  # positions in the file as read
    assert scores["pid"].tolist() == kept["pid"].tolist()
    assert (df.iloc[scores["row"]]["pid"].to_numpy() == scores["pid"].to_numpy()).all()
    assert not {3, 17, 40} & set(scores["row"])
    results = json.loads((cli_run / "results.json").read_text())
    rec = results["records"]
    assert rec["id_column"] == rec["id_field"] == "pid" and rec["row_field"] == "row"
    top = rec["most_exposed"]
    assert len(top) == 10
    for r in top:  # each named record traces back to its row of the file
        assert df.loc[r["row"], "pid"] == r["pid"]
        assert scores.loc[r["record"], "pid"] == r["pid"]


def test_report_names_ids_and_shows_subgroups(cli_run, monkeypatch):
    from mipkit.report import audit_report
    from mipkit.report.html import Figure

    for name in ("roc_figure", "precision_figure", "histogram_figure"):  # the figures are tested elsewhere
        monkeypatch.setattr(audit_report, name, lambda *a, **k: Figure("figure", b"", ""))
    assert main(["report", str(cli_run)]) == 0
    html = (cli_run / "report.html").read_text()
    top = json.loads((cli_run / "results.json").read_text())["records"]["most_exposed"]
    assert all(r["pid"] in html for r in top)
    assert "Subgroups" in html and "true class (the target)" in html and "grp" in html


def test_ids_follow_the_subsample(table, tmp_path):
    cfg = AuditConfig(
        **FOREST, attacks=("loss",), n_models=4, n_jobs=1, n_boot=100, dropna=True, max_records=60,
        drop=("grp",),
    )  # fmt: skip
    res = audit(LabelledTable(table, target="label", id_column="pid"), cfg, run_dir=tmp_path, report=False)
    df = pd.read_csv(table)
    assert len(res.scores) == 60
    assert (df.iloc[res.scores["row"]]["pid"].to_numpy() == res.scores["pid"].to_numpy()).all()
    assert res.scores["row"].is_monotonic_increasing


def test_without_id_column_rows_name_the_original_file_rows(table, tmp_path):
    cfg = AuditConfig(
        **FOREST, attacks=("loss",), n_models=4, n_jobs=1, n_boot=100, dropna=True, drop=("pid", "grp"),
    )  # fmt: skip
    res = audit(LabelledTable(table, target="label"), cfg, run_dir=tmp_path, report=False)
    assert "pid" not in res.scores
    df = pd.read_csv(table)
    assert (
        res.scores["row"].tolist() == df.index[df.drop(columns=["pid", "grp"]).notna().all(axis=1)].tolist()
    )
    assert res.to_dict()["records"]["id_column"] is None


@pytest.mark.parametrize(
    ("case", "expect"),
    [("duplicate", "repeats 1 value(s) such as 'P1007'"), ("missing", "has 1 missing value(s) (rows 5)")],
)
def test_bad_id_column_gives_one_line_and_exit_2(case, expect, tmp_path, capsys):
    df = _table()
    if case == "duplicate":
        df.loc[2, "pid"] = df.loc[1, "pid"]
    else:
        df.loc[5, "pid"] = np.nan
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    assert main(_args(path, tmp_path / "run", "--id-column", "pid", "--dropna", "--drop", "grp")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expect in err and "'pid'" in err
    assert not (tmp_path / "run" / "results.json").exists()


def test_id_column_is_not_a_feature(tmp_path):
    df = _table().drop(columns=["grp"])
    df["pid"] = np.arange(len(df)) * 3 + 11  # numeric ids: would be a feature if not left out
    common = {**FOREST, "attacks": ("loss",), "n_models": 4, "n_jobs": 1, "n_boot": 100}
    common["dropna"] = True
    records, with_ids = LabelledTable(df, target="label"), LabelledTable(df, target="label", id_column="pid")
    with_id = audit(with_ids, AuditConfig(**common), run_dir=tmp_path / "a", report=False)
    dropped = audit(records, AuditConfig(drop=("pid",), **common), run_dir=tmp_path / "b", report=False)
    plain = audit(records, AuditConfig(**common), run_dir=tmp_path / "c", report=False)
    assert with_id.setup["n_features"] == dropped.setup["n_features"] == plain.setup["n_features"] - 1 == 4
    assert with_id.provenance["data_sha256"] == dropped.provenance["data_sha256"]
    assert with_id.run_key == dropped.run_key and with_id.eta == dropped.eta
    assert with_id.scores["pid"].tolist() == df.dropna()["pid"].tolist()


def test_id_or_slice_columns_need_a_table(tmp_path):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    ds = Dataset(X=X, y=y, feature_names=["a", "b", "c"], classes=np.array([0, 1]))
    base = {**FOREST, "attacks": ("loss",), "n_models": 4, "n_jobs": 1, "n_boot": 100}
    with pytest.raises(MipkitValueError, match="arrays without columns"):
        audit(LabelledTable(ds, id_column="pid"), AuditConfig(**base), run_dir=tmp_path)
    with pytest.raises(MipkitValueError, match="arrays without columns"):
        audit(ds, AuditConfig(slice_by=("sex",), **base), run_dir=tmp_path)
    res = audit(ds, AuditConfig(slice_by=("label",), **base), run_dir=tmp_path, report=False)
    assert res.scores["row"].tolist() == list(range(60))
    assert list(res.slices.columns) == ["label"]  # the true class, always sliced
    frame = res.slices_frame()
    assert list(frame.index) == [("(all records)", "all"), ("label", "0"), ("label", "1")]
    assert frame["member_trials"].iloc[1:].sum() == frame["member_trials"].iloc[0] == res.setup["members"]
    assert frame.loc[("(all records)", "all"), "auc"] == pytest.approx(
        res.summaries[res.strongest_attack].auc
    )


# --------------------------------------------------------------------------------------------- slices


def _independent(s, lab, g, fprs):
    """AUC with scikit-learn, TPR at FPR from scikit-learn's full ROC, eta of the given guesses."""
    y, sc = lab.ravel().astype(int), s.ravel()
    fpr, tpr, _ = roc_curve(y, sc, drop_intermediate=False)
    return {
        "auc": roc_auc_score(y, sc),
        "tpr": {f"{f:g}": tpr[fpr <= f + 1e-12].max() for f in fprs},
        "eta": np.mean(g.ravel() == y) - 0.5,
    }


def test_slice_metrics_equal_the_metrics_of_the_subset():
    rng = np.random.default_rng(4)
    T, n = 6, 300
    lab = rng.random((T, n)) < 0.5
    grp = rng.choice(["a", "b", "c"], size=n, p=[0.2, 0.3, 0.5])
    age = rng.integers(18, 90, size=n)
    s = rng.normal(size=(T, n)) + lab * np.where(grp == "a", 1.0, 0.3)[None, :]
    s[:, :40] = np.round(s[:, :40], 1)  # ties
    g = (s > 0.4).astype(int)
    fprs = (0.01, 0.05, 0.2)
    res = slice_summary(s, lab, {"grp": grp, "age": age}, guesses=g, fprs=fprs, n_boot=100, random_state=0)
    ref = _independent(s, lab, g, fprs)
    assert res.overall["auc"] == pytest.approx(ref["auc"], abs=1e-12)
    assert res.overall["eta"] == pytest.approx(ref["eta"], abs=1e-12)
    assert res.columns["age"]["binning"].startswith("4 quantile bins")
    assert [r["group"] for r in res.rows if r["column"] == "grp"] == ["a", "b", "c"]
    for r in res.rows:
        if r["column"] == "grp":
            keep = grp == r["group"]
        else:
            label = r["group"]  # "< b", "[a, b)" or ">= a": no label names the real minimum or maximum
            if label.startswith("<"):
                keep = age < float(label[2:])
            elif label.startswith(">="):
                keep = age >= float(label[3:])
            else:
                lo, hi = (float(v) for v in label.strip("[)").split(", "))
                keep = (age >= lo) & (age < hi)
        assert r["n_records"] == keep.sum() and r["member_trials"] == lab[:, keep].sum()
        ref = _independent(s[:, keep], lab[:, keep], g[:, keep], fprs)
        assert r["auc"] == pytest.approx(ref["auc"], abs=1e-12)
        assert r["eta"] == pytest.approx(ref["eta"], abs=1e-12)
        for k, v in ref["tpr"].items():
            assert r["tpr_at_fpr"][k] == pytest.approx(v, abs=1e-12)
        assert r["auc_ci"][0] <= r["auc"] <= r["auc_ci"][1] and r["eta_ci"][0] <= r["eta"] <= r["eta_ci"][1]
    frame = res.to_frame()
    row_a = next(r for r in res.rows if (r["column"], r["group"]) == ("grp", "a"))
    assert frame.loc[("grp", "a"), "auc"] == row_a["auc"]
    assert frame.loc[("grp", "a"), "eta_low"] == row_a["eta_ci"][0]
    assert list(frame.index[:1]) == [("(all records)", "all")] and "tpr@0.05_low" in frame


def test_more_exposed_subgroup_is_flagged_and_small_ones_are_not_measured():
    rng = np.random.default_rng(1)
    T, n = 8, 400
    lab = rng.random((T, n)) < 0.5
    grp = np.where(np.arange(n) < 100, "exposed", "rest")
    grp[:3] = "tiny"
    s = rng.normal(size=(T, n)) + lab * np.where(grp == "rest", 0.1, 1.2)[None, :]
    res = slice_summary(s, lab, {"grp": grp}, n_boot=300, random_state=0)
    rows = {r["group"]: r for r in res.rows}
    assert rows["exposed"]["more_exposed"] and rows["exposed"]["more_exposed_by"] == ["eta", "auc"]
    assert rows["exposed"]["auc_excess_ci"][0] > 0
    assert rows["rest"]["more_exposed"] is False
    assert "tiny" not in rows  # a value held by fewer than min_records records is pooled, not named
    assert rows["(rarer values)"]["n_records"] == 3
    assert rows["(rarer values)"]["auc"] is None and rows["(rarer values)"]["note"].startswith("too few")
    assert [r["group"] for r in res.most_exposed] == ["exposed"]
    # no subgroup differs: nothing flagged
    flat = rng.normal(size=(T, n)) + lab * 0.5
    assert not slice_summary(flat, lab, {"grp": grp}, n_boot=300, random_state=0).most_exposed


def test_slice_intervals_cover_with_record_effects():
    """Scores share a record effect across target models (the trials are dependent). The cluster-bootstrap
    intervals of a subgroup's AUC and eta cover the true values (normal model: AUC = Phi(mu / sqrt(2)) for
    scores of unit noise, eta = Phi(mu / 2) - 1/2 for the guess "score >= mu / 2")."""
    rng = np.random.default_rng(11)
    T, n, mu, reps = 4, 120, 1.0, 20
    grp = np.where(np.arange(n) < 60, "a", "b")
    true_auc = stats.norm.cdf(mu / np.sqrt(2 * 2.0))  # record effect and noise both of variance 1
    true_eta = stats.norm.cdf(mu / 2 / np.sqrt(2.0)) - 0.5
    hits = np.zeros(2)
    for _ in range(reps):
        lab = rng.random((T, n)) < 0.5
        s = rng.normal(size=(1, n)) + rng.normal(size=(T, n)) + mu * lab
        res = slice_summary(s, lab, {"g": grp}, guesses=s >= mu / 2, n_boot=100, random_state=rng)
        a = next(r for r in res.rows if r["group"] == "a")
        hits += [a["auc_ci"][0] <= true_auc <= a["auc_ci"][1], a["eta_ci"][0] <= true_eta <= a["eta_ci"][1]]
    assert (hits / reps >= 0.75).all(), hits / reps  # nominal 0.95; P(< 15 of 20 | 0.95) < 0.1%


def test_slice_summary_refuses_bad_input():
    with pytest.raises(MipkitValueError, match="same shape"):
        slice_summary(np.zeros((2, 5)), np.zeros((2, 4)), np.zeros(5))
    with pytest.raises(MipkitValueError, match="one value per record"):
        slice_summary(np.zeros((2, 5)), np.zeros((2, 5)), {"g": np.zeros(4)})


# --------------------------------------------------------------------------------- outputs and schema


def test_slices_in_results_frame_report_and_cli(cli_run, table, capsys):
    results = json.loads((cli_run / "results.json").read_text())
    assert results["schema_version"] == SCHEMA_VERSION == "1.2"
    sl = results["slices"]
    assert sl["attack"] == results["strongest_attack"]
    assert sl["columns"]["label"] == {
        "is_feature": False,
        "kind": "true class",
        "binning": None,
        "n_groups": 2,
    }
    assert sl["columns"]["grp"]["is_feature"] is False  # --drop grp: sliced but not a feature
    groups = {(r["column"], r["group"]) for r in sl["groups"]}
    assert groups == {("label", "no"), ("label", "yes"), ("grp", "a"), ("grp", "b")}
    assert sl["overall"]["auc"] == pytest.approx(results["attacks"][sl["attack"]]["auc"], abs=1e-12)
    assert sl["overall"]["eta"] == pytest.approx(results["attacks"][sl["attack"]]["eta"], abs=1e-12)
    # the command prints the table (a rerun resumes from the ledger: nothing is refitted)
    args = _args(table, cli_run, "--dropna", "--id-column", "pid", "--slice-by", "grp", "--drop", "grp")
    assert main([*args, "--quiet", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "Subgroups (" in out and "grp = a" in out and "label = yes" in out


def test_results_schema_of_slices_and_records_is_documented(cli_run):
    results = json.loads((cli_run / "results.json").read_text())
    doc = DOCS.read_text()
    keys = set(results["slices"]) | set(results["slices"]["groups"][0]) | set(results["records"])
    missing = sorted(k for k in keys if f"`{k}`" not in doc)
    assert not missing, missing
    assert "schema 1.2" in doc


def test_a_subgroup_without_a_leak_of_its_own_is_not_called_more_exposed():
    """The attack's hard guesses are coin flips (eta 0 everywhere: the audit finds no leak) while the scores
    of subgroup "a" separate members: its AUC excess over all records is significant, but a privacy officer
    reads "more exposed: yes" as a finding, so it needs the subgroup's own eta interval above 0 as well."""
    rng = np.random.default_rng(2)
    T, n = 8, 400
    lab = rng.random((T, n)) < 0.5
    grp = np.where(np.arange(n) < 150, "a", "rest")
    s = rng.normal(size=(T, n)) + lab * np.where(grp == "a", 0.8, 0.0)[None, :]
    res = slice_summary(s, lab, {"grp": grp}, guesses=rng.random((T, n)) < 0.5, n_boot=300, random_state=0)
    a = next(r for r in res.rows if r["group"] == "a")
    assert a["auc_excess_ci"][0] > 0 and a["eta_ci"][0] <= 0  # the case: a difference, no leak of its own
    assert a["more_exposed"] is False and a["more_exposed_by"] == [] and not res.most_exposed
    assert "own eta interval lies above 0" in res.rule
