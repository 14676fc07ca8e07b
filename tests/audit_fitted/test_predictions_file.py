"""``mipkit audit-scores``: a predictions file written without mipkit gives the in-process numbers (#11)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import mipkit.cli as cli
from mipkit.game.model_files import PickleLoadWarning, load_model_file
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted
from mipkit.workflows.audit_scores import AuditScoresConfig, ModelOutputs, Predictions, audit_scores

WRITER = textwrap.dedent(
    """
    # plain numpy / pandas / scikit-learn: no mipkit code
    import joblib, numpy as np, pandas as pd
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(7)
    X = rng.normal(size=(240, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=240) > 0, "yes", "no")
    df = pd.DataFrame(X, columns=list("abcde")).assign(target=y)
    members, non_members = df.iloc[:120], df.iloc[120:]
    model = LogisticRegression(C=1e4, max_iter=2000).fit(members.drop(columns="target"), members["target"])
    joblib.dump(model, "model.joblib")
    members.to_csv("members.csv", index=False)
    non_members.to_csv("non_members.csv", index=False)
    audited = pd.concat([members, non_members])
    p = model.predict_proba(audited.drop(columns="target"))
    out = pd.DataFrame({"id": [f"rec{i}" for i in range(len(audited))], "label": audited["target"].to_numpy(),
                        "member": np.r_[np.ones(120, int), np.zeros(120, int)]})
    for j, c in enumerate(model.classes_):
        out[f"p_{c}"] = p[:, j]
    for k in range(4):  # reference models on random halves of the audited records, with their memberships
        inn = rng.random(len(audited)) < 0.5
        feats = audited.drop(columns="target")
        ref = LogisticRegression(C=1e4, max_iter=2000).fit(feats[inn], audited["target"][inn])
        r = ref.predict_proba(audited.drop(columns="target"))
        for j, c in enumerate(ref.classes_):
            out[f"ref{k}_p_{c}"] = r[:, j]
        out[f"ref{k}_member"] = inn.astype(int)
    out.to_csv("predictions.csv", index=False)
    out[["id", "label", "member", "p_no", "p_yes"]].to_csv("predictions_target_only.csv", index=False)
    """
)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("writer")
    (folder / "writer.py").write_text(WRITER)
    subprocess.run([sys.executable, "writer.py"], cwd=folder, check=True, capture_output=True)
    return folder


def _json(capsys, args):
    code = cli.main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_csv_gives_the_numbers_of_the_in_process_audit(written, capsys):
    view = _json(
        capsys,
        [
            "audit-scores",
            "--predictions",
            str(written / "predictions_target_only.csv"),
            "--json",
            "--n-boot",
            "200",
            "--out",
            str(written / "run_csv"),
        ],
    )
    for key in ("auc", "tpr_at_fpr", "eta", "eta_ci"):
        assert key in view
    assert view["question"] == "this fitted model"
    assert set(view["skipped"]) == {"lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    with pytest.warns(PickleLoadWarning):  # written by the test's own writer: trusted
        model = load_model_file(written / "model.joblib", trust_pickle=True)
    members = pd.read_csv(written / "members.csv")
    non_members = pd.read_csv(written / "non_members.csv")
    release = FittedRelease(model, members, non_members)
    result = audit_fitted(release, AuditFittedConfig(target="target", n_boot=200, n_reference=0))
    d = result.to_dict()
    assert view["auc"] == pytest.approx(d["auc"], abs=1e-12)
    assert view["eta"] == pytest.approx(d["eta"], abs=1e-12)
    assert view["eta_ci"] == pytest.approx(d["eta_ci"], abs=1e-12)
    assert view["tpr_at_fpr"] == pytest.approx(d["tpr_at_fpr"], abs=1e-12)
    # LOSS's AUC is scikit-learn's on -loss, computed here from the file alone
    pred = pd.read_csv(written / "predictions_target_only.csv")
    p_true = np.where(pred["label"] == "yes", pred["p_yes"], pred["p_no"])
    assert view["attacks"]["loss"]["auc"] == pytest.approx(
        roc_auc_score(pred["member"], np.log(p_true)), abs=1e-12
    )


def test_reference_columns_run_lira_and_rmia_like_the_python_api(written, capsys):
    view = _json(
        capsys,
        [
            "audit-scores",
            "--predictions",
            str(written / "predictions.csv"),
            "--json",
            "--n-boot",
            "200",
            "--out",
            str(written / "run_refs"),
        ],
    )
    assert set(view["attacks"]) == {"loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    assert not view["skipped"]
    pred = pd.read_csv(written / "predictions.csv")
    y = (pred["label"] == "yes").to_numpy().astype(int)
    refs = [
        ModelOutputs(
            proba=pred[[f"ref{k}_p_no", f"ref{k}_p_yes"]].to_numpy(), member=pred[f"ref{k}_member"].to_numpy()
        )
        for k in range(4)
    ]
    outputs = ModelOutputs(proba=pred[["p_no", "p_yes"]].to_numpy())
    result = audit_scores(
        Predictions(y, pred["member"].to_numpy(), outputs, reference=refs), AuditScoresConfig(n_boot=200)
    )
    for name, row in view["attacks"].items():
        assert row["auc"] == pytest.approx(result.summaries[name].auc, abs=1e-12)
    assert (written / "run_refs" / "report.html").is_file()
    scores = pd.read_parquet(written / "run_refs" / "scores.parquet")
    assert list(scores["id"]) == list(pred["id"])


def test_a_loss_column_is_audited_as_cross_entropy(written):
    pred = pd.read_csv(written / "predictions_target_only.csv")
    p_true = np.where(pred["label"] == "yes", pred["p_yes"], pred["p_no"])
    frame = pred[["id", "member"]].assign(loss=-np.log(p_true))
    result = audit_scores(frame, AuditScoresConfig(n_boot=200))
    assert result.summaries["loss"].auc == pytest.approx(
        roc_auc_score(pred["member"], np.log(p_true)), abs=1e-12
    )
    assert "mean_loss_members" in result.utility


def _bad(frame: pd.DataFrame, case: str) -> pd.DataFrame:
    d = frame.copy()
    if case == "outside":
        d.loc[3, ["p_no", "p_yes"]] = [1.3, -0.3]
    elif case == "sum":
        d.loc[3, ["p_no", "p_yes"]] = [0.9, 0.3]
    elif case == "duplicate-id":
        d.loc[5, "id"] = d.loc[4, "id"]
    elif case == "missing-id":
        d.loc[5, "id"] = None
    elif case == "member":
        d.loc[5, "member"] = 2
    elif case == "nan":
        d.loc[5, "p_yes"] = np.nan
    elif case == "no-member-column":
        d = d.drop(columns="member")
    elif case == "no-outputs":
        d = d.drop(columns=["p_no", "p_yes"])
    elif case == "unknown-label":
        d.loc[2, "label"] = "maybe"
    return d


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("outside", "[0, 1]"),
        ("sum", "sum to 1"),
        ("duplicate-id", "duplicates"),
        ("missing-id", "missing"),
        ("member", "0 or 1"),
        ("nan", "missing or non-numeric"),
        ("no-member-column", "lacks the column"),
        ("no-outputs", "no output columns"),
        ("unknown-label", "no output column"),
    ],
)
def test_bad_predictions_exit_2_with_one_line(written, tmp_path, capsys, case, words):
    path = tmp_path / "bad.csv"
    _bad(pd.read_csv(written / "predictions_target_only.csv"), case).to_csv(path, index=False)
    code = cli.main(["audit-scores", "--predictions", str(path), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mipkit: error:")
    assert words in err
    assert "Traceback" not in err


def test_logit_columns_and_offline_references(written):
    pred = pd.read_csv(written / "predictions.csv")
    frame = pred[["id", "label", "member"]].copy()
    for c in ("no", "yes"):
        frame[f"logit_{c}"] = np.log(pred[f"p_{c}"]) + 3.0  # softmax is unchanged by a shift
        for k in range(4):
            frame[f"ref{k}_logit_{c}"] = np.log(pred[f"ref{k}_p_{c}"])
    result = audit_scores(frame, AuditScoresConfig(n_boot=200))  # no ref<k>_member: offline reference models
    p_true = np.where(pred["label"] == "yes", pred["p_yes"], pred["p_no"])
    assert result.summaries["loss"].auc == pytest.approx(
        roc_auc_score(pred["member"], np.log(p_true)), abs=1e-9
    )
    assert set(result.summaries) == {"loss", "lira-offline", "rmia-offline"}
    assert set(result.skipped) == {"lira-online", "rmia-online"}
    assert "offline" in result.skipped["lira-online"]
    assert result.to_dict()["skipped"] == result.skipped


def test_unequal_members_and_non_members_are_measured_at_the_mip_prior():
    """Eta is accuracy - 1/2 in a game where a record is a member with probability 1/2. On an 80/20 mix the
    cross-fitted guesses' accuracy is not that game's: the metrics are measured on every non-member and as
    many members drawn at random (seeded), and the per-record scores still cover every record. Over 40
    audits of outputs that ignore membership, eta stays near 0 (measured on all 500 trials its standard
    deviation was 0.125: a threshold that calls everyone a member is right 80% of the time)."""
    from mipkit.workflows.audit_scores.attacks import balanced_trials

    member = np.r_[np.ones(400, bool), np.zeros(100, bool)]
    game = balanced_trials(member, seed=3)
    assert game.size == 200 and member[game].sum() == 100 and np.array_equal(game, np.sort(game))
    assert np.array_equal(balanced_trials(member, seed=3), game)  # seeded
    assert np.array_equal(balanced_trials(np.r_[np.ones(5, bool), np.zeros(5, bool)], 0), np.arange(10))
    etas = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 2, 500)
        p = rng.uniform(0.05, 0.95, 500)  # the model's output: independent of membership
        outputs = ModelOutputs(proba=np.c_[1 - p, p])
        result = audit_scores(
            Predictions(y, member, outputs), AuditScoresConfig(attacks=("loss",), seed=seed)
        )
        summary = result.summaries["loss"]
        assert summary.members == summary.nonmembers == 100
        assert len(result.scores) == 500 and result.setup["game_records"] == 200
        etas.append(summary.eta.eta)
    # 40 null audits of 200 trials: eta's sd is about 0.035, the mean's standard error 0.0056
    assert abs(np.mean(etas)) < 0.02 and np.std(etas) < 0.06


def test_any_subset_of_the_offered_attacks_runs_and_reports_only_those(written, capsys):
    """``--attacks lira,rmia`` (as the help offers) runs without LOSS and reports LiRA and RMIA alone."""
    args = ["audit-scores", "--predictions", str(written / "predictions.csv"), "--json", "--n-boot", "200"]
    view = _json(capsys, [*args, "--attacks", "lira,rmia", "--out", str(written / "run_no_loss")])
    assert set(view["attacks"]) == {"lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    assert not view["skipped"]


@pytest.mark.parametrize(
    ("file", "attacks", "words"),
    [
        ("predictions.csv", "loss,ltu", "one or more of loss, lira, rmia"),
        ("predictions_target_only.csv", "lira,rmia", "at least 2 reference models (got 0)"),
    ],
)
def test_attacks_that_cannot_run_are_refused_naming_only_the_offered_ones(
    written, tmp_path, capsys, file, attacks, words
):
    run = tmp_path / "run"
    args = ["--predictions", str(written / file), "--attacks", attacks, "--out", str(run)]
    code = cli.main(["audit-scores", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and words in err, err
    assert "ltu" not in err.split("Got")[0] and not run.exists()


def test_audit_fitted_refuses_lira_alone_without_reference_models_in_flag_words(tmp_path, capsys):
    args = ["--model-file", "m.skops", "--members", "a.csv", "--non-members", "b.csv", "--target", "y"]
    code = cli.main(["audit-fitted", *args, "--attacks", "lira", "--reference-models", "0"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "--reference-models is 0" in err and "add loss to --attacks" in err and "ltu" not in err
