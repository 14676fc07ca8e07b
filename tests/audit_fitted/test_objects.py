"""Python objects audited as fitted models: a Pipeline, a torch MLP, a Ridge regressor (issue 11)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mipkit
from mipkit._validation import MipkitValueError
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted
from mipkit.workflows.audit_scores.attacks import balanced_trials


def _table(n: int = 360, seed: int = 0, regression: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * [1, 10, 100, 1, 1]  # unscaled features: the Pipeline scales them
    signal = X[:, 0] + X[:, 1] / 10 + rng.normal(size=n)
    df = pd.DataFrame(X, columns=list("abcde"))
    df["target"] = signal if regression else (signal > 0).astype(int)
    return df


def test_pipeline_with_reference_models_through_the_engine(tmp_path):
    df = _table()
    members, non_members, population = df.iloc[:80], df.iloc[80:160], df.iloc[160:]
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=1e4, max_iter=3000))
    pipe.fit(members.drop(columns="target"), members["target"])
    release = FittedRelease(pipe, members, non_members, population=population)
    config = mipkit.AuditFittedConfig(target="target", n_reference=4, n_jobs=1, n_boot=200)
    result = mipkit.audit_fitted(release, config, run_dir=tmp_path / "run")
    assert set(result.summaries) == {"loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    assert result.question == "this fitted model"
    assert result.to_dict()["question"]["answered"] == "this fitted model"
    assert (tmp_path / "run" / "ledger.sqlite").is_file()
    feats = pd.concat([members, non_members]).drop(columns="target")
    p = pipe.predict_proba(feats)[np.arange(160), pd.concat([members, non_members])["target"].to_numpy()]
    member = np.r_[np.ones(80), np.zeros(80)]
    assert result.summaries["loss"].auc == pytest.approx(roc_auc_score(member, np.log(p)), abs=1e-12)
    # re-running the same audit resumes from the ledger and gives the same numbers
    again = mipkit.audit_fitted(release, config, run_dir=tmp_path / "run")
    assert (
        again.to_dict()["attacks"]["lira-offline"]["auc"]
        == result.to_dict()["attacks"]["lira-offline"]["auc"]
    )


def test_a_callable_reference_trainer():
    df = _table(seed=1)
    members, non_members, population = df.iloc[:60], df.iloc[60:120], df.iloc[120:240]
    model = LogisticRegression(C=10).fit(members.drop(columns="target").to_numpy(), members["target"])

    def train(X, y, random_state):
        return LogisticRegression(C=10).fit(X, y)

    result = audit_fitted(
        FittedRelease(model, members, non_members, population=population, reference_trainer=train),
        AuditFittedConfig(target="target", n_reference=2, n_jobs=1, n_boot=200, attacks=("loss", "lira")),
    )
    assert set(result.summaries) == {"loss", "lira-online", "lira-offline"}
    assert "2 trained by" in result.setup["reference_models"]


def test_ridge_regressor_through_its_squared_error():
    df = _table(regression=True, seed=2)
    members, non_members = df.iloc[:30], df.iloc[30:90]
    ridge = Ridge(alpha=1e-3).fit(members.drop(columns="target"), members["target"])
    release = FittedRelease(ridge, members, non_members)
    result = audit_fitted(release, AuditFittedConfig(target="target", n_boot=200, n_reference=0))
    audited = pd.concat([members, non_members])
    err = (audited["target"] - ridge.predict(audited.drop(columns="target"))) ** 2
    member = np.r_[np.ones(30), np.zeros(60)]
    game = balanced_trials(member.astype(bool), 0)  # 30 members, 30 of the 60 non-members: prior 1/2
    assert game.size == 60
    assert result.summaries["loss"].auc == pytest.approx(roc_auc_score(member[game], -err.to_numpy()[game]))
    assert result.trainer["kind"] == "regressor"
    assert set(result.skipped) == {"lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    # by default, reference models (copies of the regressor on random halves of the audited records) run
    # every attack
    full = audit_fitted(release, AuditFittedConfig(target="target", n_boot=200, n_jobs=1))
    assert not full.skipped and full.setup["n_reference_models"] == 16
    assert full.summaries["loss"].auc == result.summaries["loss"].auc


@pytest.fixture
def torch_one_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: more threads only contend
    yield torch
    torch.set_num_threads(before)


def test_torch_mlp_module(torch_one_thread):
    torch = torch_one_thread
    df = _table(seed=3)
    members, non_members = df.iloc[:100], df.iloc[100:200]
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    X = torch.tensor(members.drop(columns="target").to_numpy() / [1, 10, 100, 1, 1], dtype=torch.float32)
    y = torch.tensor(members["target"].to_numpy())
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for _ in range(150):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(X), y).backward()
        opt.step()
    scaled = [
        m.assign(**{c: m[c] / s for c, s in zip("bc", (10, 100), strict=True)})
        for m in (members, non_members)
    ]
    result = audit_fitted(FittedRelease(net, *scaled), AuditFittedConfig(target="target", n_boot=200))
    audited = pd.concat(scaled)
    with torch.no_grad():
        logits = net(torch.tensor(audited.drop(columns="target").to_numpy(), dtype=torch.float32)).double()
    loss = torch.nn.functional.cross_entropy(
        logits, torch.tensor(audited["target"].to_numpy()), reduction="none"
    )
    member = np.r_[np.ones(100), np.zeros(100)]
    assert result.summaries["loss"].auc == pytest.approx(roc_auc_score(member, -loss.numpy()), abs=1e-12)
    assert result.summaries["loss"].auc > 0.55  # 200 steps on 100 records: it memorises


def test_members_and_non_members_that_overlap_are_refused():
    df = _table(n=60)
    model = LogisticRegression().fit(df.drop(columns="target"), df["target"])
    with pytest.raises(MipkitValueError, match="overlap: 5 non-member"):
        FittedRelease(model, df.iloc[:30], pd.concat([df.iloc[25:30], df.iloc[30:]]))


def test_audit_accepts_a_dataframe(tmp_path):
    from mipkit.workflows.audit import AuditConfig, LabelledTable, audit

    df = _table(n=80, seed=4)
    config = AuditConfig(
        model="sklearn.linear_model.LogisticRegression",
        n_models=4,
        n_jobs=1,
        n_boot=100,
        attacks=("loss",),
    )
    result = audit(LabelledTable(df, target="target"), config, run_dir=tmp_path / "run", report=False)
    assert result.setup["n_records"] == 80
    assert result.setup["n_features"] == 5


def test_text_columns_for_a_model_without_column_names_are_one_line():
    """A model trained on encoded arrays, given raw tables with a text column: a refusal naming the column
    (not an internal error converting the text to float)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"age": rng.normal(50, 10, 80), "city": rng.choice(["a", "b"], 80), "label": rng.integers(0, 2, 80)}
    )
    model = LogisticRegression().fit(rng.normal(size=(40, 3)), df["label"][:40])
    with pytest.raises(MipkitValueError, match="column\\(s\\) 'city' hold text"):
        mipkit.audit_fitted(FittedRelease(model, df[:40], df[40:]), mipkit.AuditFittedConfig(target="label"))
