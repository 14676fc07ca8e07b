"""audit_fitted in the one shape: ``audit_fitted(FittedRelease(...), AuditFittedConfig(...)) ->
AuditFittedResult``, a config checked when built, a release refused when it cannot be audited, and a result
whose summary, dict, frame and run folder agree."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression

import mipkit
from mipkit._validation import MipkitValueError
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted

BAD = [
    ({"seed": 1.5}, "'seed' parameter of audit_fitted"),
    ({"fprs": (0.0,)}, "'fprs'"),
    ({"n_boot": 10**6}, "'n_boot'"),
    ({"attacks": ("rmia", "ltu")}, "must be one or more of loss, lira, rmia\\. Got rmia, ltu"),
    ({"fail_above": 0.1, "fail_metric": "tpr@0.5"}, "does not measure"),
    ({"n_reference": 0, "attacks": ("lira", "rmia")}, "LiRA and RMIA need reference models"),
    ({"n_reference": 1}, "0 \\(none\\) or an integer >= 2"),
    ({"n_reference": -2}, "0 \\(none\\) or an integer >= 2"),
    ({"n_reference": True}, "0 \\(none\\) or an integer >= 2"),
    ({"backend": "spark"}, "'backend'"),
    ({"n_jobs": 0}, "'n_jobs'"),
    ({"target": "pid", "id_column": "pid"}, "names the target column"),
]


@pytest.mark.parametrize(("changes", "words"), BAD, ids=[str(c) for c, _ in BAD])
def test_each_rule_of_the_config_refuses_a_bad_value(changes, words):
    with pytest.raises(MipkitValueError, match=words):
        AuditFittedConfig(**changes)


def test_the_config_is_normalised_and_replace_checks_again():
    config = AuditFittedConfig(target="label", slice_by="sex, ward", id_column=" pid ", attacks=["loss"])
    assert config.slice_by == ("sex", "ward") and config.id_column == "pid" and config.attacks == ("loss",)
    assert config.n_reference == mipkit.workflows.audit_fitted.DEFAULT_N_REFERENCE
    with pytest.raises(MipkitValueError, match="n_reference"):
        config.replace(n_reference=1)


def _table(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    df = pd.DataFrame(X, columns=list("abcd"))
    df["label"] = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return df


def test_a_release_that_cannot_be_audited_is_refused_when_built():
    df = _table()
    model = LogisticRegression().fit(df[list("abcd")], df["label"])
    with pytest.raises(MipkitValueError, match="overlap: 10 non-member"):
        FittedRelease(model, df[:60], df[50:])
    X, y = df[list("abcd")].to_numpy(), df["label"].to_numpy()
    with pytest.raises(MipkitValueError, match="overlap"):
        FittedRelease(model, (X[:60], y[:60]), (X[55:], y[55:]))
    with pytest.raises(MipkitValueError, match="neither a classifier"):
        FittedRelease(KMeans(n_clusters=2, n_init=1).fit(X), df[:60], df[60:])
    release = FittedRelease(model, df[:40], df[40:80], population=df[80:])
    with pytest.raises(MipkitValueError, match="trains none"):
        audit_fitted(release, AuditFittedConfig(target="label", n_reference=0))
    with pytest.raises(MipkitValueError, match="FittedRelease"):
        audit_fitted(df, AuditFittedConfig(target="label"))


def test_the_verb_gives_a_result_whose_views_agree(tmp_path):
    df = _table()
    members, non_members = df[:60], df[60:]
    model = LogisticRegression(C=1e4, max_iter=2000).fit(members[list("abcd")], members["label"])
    config = mipkit.AuditFittedConfig(target="label", n_reference=2, n_jobs=1, n_boot=200)
    result = mipkit.audit_fitted(FittedRelease(model, members, non_members), config, run_dir=tmp_path / "run")
    assert isinstance(result, mipkit.AuditFittedResult) and result.config is config
    assert (tmp_path / "run" / "ledger.sqlite").is_file() and result.run_key
    d = result.to_dict()
    assert set(d["attacks"]) == {"loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    assert d["design"]["n_reference_models"] == 2 and d["design"]["columns_used"] == list("abcd")
    frame = result.to_frame()
    for name, row in d["attacks"].items():
        assert frame.loc[name, "eta"] == pytest.approx(row["eta"])
        assert frame.loc[name, "auc"] == pytest.approx(row["auc"])
    text = result.summary()
    assert text.startswith("Audited: the released model (LogisticRegression) as it is")
    assert "60 of its training records and 60 records it did not see, with 2 reference models" in text
    premise = text[text.index("Premise:") :]
    assert premise.index("same population") < premise.index("lower bound")  # the data's premise first
    folder = result.write(tmp_path / "run", report=False)
    written = json.loads((folder / "results.json").read_text())
    assert written["eta"] == pytest.approx(d["eta"]) and written["design"] == d["design"]
    config_json = json.loads((folder / "config.json").read_text())
    assert config_json["run_key"] == result.run_key and config_json["attacks"] == ["loss", "lira", "rmia"]
    assert not (folder / "report.html").exists()
