"""audit_scores in the one shape: ``audit_scores(data, AuditScoresConfig(...)) -> AuditScoresResult``, a
config checked when built, a result whose summary, dict, frame and run folder agree."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import mipkit
from mipkit._validation import MipkitValueError
from mipkit.workflows.audit_scores import AuditScoresConfig, ModelOutputs, Predictions, audit_scores

BAD = [
    ({"seed": -1}, "'seed' parameter of audit_scores"),
    ({"fprs": ()}, "at least one FPR"),
    ({"fprs": (0.01, 1.5)}, "'fprs'"),
    ({"base_rates": (0.0,)}, "'base_rates'"),
    ({"confidence": 1.0}, "'confidence'"),
    ({"n_boot": 10}, "'n_boot'"),
    ({"attacks": ()}, "must be one or more of loss, lira, rmia\\. Got nothing"),
    ({"attacks": ("loss", "ltu")}, "must be one or more of loss, lira, rmia\\."),
    ({"fail_above": float("nan")}, "finite number"),
    ({"fail_above": 0.1, "fail_metric": "accuracy"}, "'fail_metric'"),
    ({"fail_above": 0.1, "fail_metric": "tpr@0.05"}, "does not measure"),
    ({"id_column": " "}, "'id_column' parameter of audit_scores"),
    ({"member_column": None}, "'member_column'"),
    ({"score_column": "risk", "proba_columns": ("p_no", "p_yes")}, "not both"),
]


@pytest.mark.parametrize(("changes", "words"), BAD, ids=[str(c) for c, _ in BAD])
def test_each_rule_of_the_config_refuses_a_bad_value(changes, words):
    with pytest.raises(MipkitValueError, match=words.replace("(", r"\(")):
        AuditScoresConfig(**changes)


def test_the_config_is_normalised_and_replace_checks_again():
    config = AuditScoresConfig(attacks="LOSS, rmia", proba_columns="no=p_no,p_yes", slice_by=["site"])
    assert config.attacks == ("loss", "rmia")
    assert config.proba_columns == ("no=p_no", "p_yes") and config.slice_by == ("site",)
    assert config.replace(n_boot=200).n_boot == 200
    with pytest.raises(MipkitValueError, match="'n_boot'"):
        config.replace(n_boot=5)
    assert json.loads(json.dumps(config.to_dict()))["attacks"] == ["loss", "rmia"]


def _predictions(n: int = 200, seed: int = 0) -> tuple[Predictions, pd.DataFrame]:
    """A model more confident on its members (LOSS separates them), as arrays and as a vendor's table."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    member = np.r_[np.ones(n // 2, bool), np.zeros(n - n // 2, bool)]
    logit = (2 * y - 1) * (0.5 + 1.5 * member) + rng.normal(size=n)
    p = 1 / (1 + np.exp(-logit))
    table = pd.DataFrame(
        {"person": [f"P{3 * i}" for i in range(n)], "outcome": y, "trained": member.astype(int), "risk": p}
    )
    return Predictions(y, member, ModelOutputs(proba=np.c_[1 - p, p])), table


def test_the_verb_on_arrays_gives_a_result_whose_views_agree(tmp_path):
    data, _ = _predictions()
    result = mipkit.audit_scores(data, mipkit.AuditScoresConfig(n_boot=200))
    assert isinstance(result, mipkit.AuditScoresResult)
    d = result.to_dict()
    assert d["question"]["answered"] == "this fitted model"
    assert set(d["skipped"]) == {"lira-online", "lira-offline", "rmia-online", "rmia-offline"}
    frame = result.to_frame()
    assert list(frame.index) == list(d["attacks"])
    for name, row in d["attacks"].items():
        assert frame.loc[name, "eta"] == pytest.approx(row["eta"])
        assert frame.loc[name, "auc"] == pytest.approx(row["auc"])
    assert frame["auc"].max() == pytest.approx(d["auc"])
    assert d["settings"] == result.config.measure_settings()
    text = result.summary()
    assert text.startswith("Audited: the released model (fitted model) as it is")
    assert "same population" in text and "\n" not in text
    folder = result.write(tmp_path / "run")
    assert {"config.json", "results.json", "scores.parquet", "report.html"} <= {
        p.name for p in folder.iterdir()
    }
    written = json.loads((folder / "results.json").read_text())
    assert written["eta"] == pytest.approx(d["eta"]) and written["eta_ci"] == pytest.approx(d["eta_ci"])
    assert json.loads((folder / "config.json").read_text())["n_boot"] == 200
    assert len(pd.read_parquet(folder / "scores.parquet")) == 200


def test_a_vendor_table_named_by_the_config_gives_the_numbers_of_the_arrays():
    data, table = _predictions(seed=1)
    columns = {"id_column": "person", "label_column": "outcome", "member_column": "trained"}
    config = AuditScoresConfig(n_boot=200, score_column="risk", **columns)
    from_table = audit_scores(table, config)
    from_arrays = audit_scores(data, config)
    assert from_table.to_dict()["eta"] == pytest.approx(from_arrays.to_dict()["eta"], abs=1e-12)
    assert from_table.to_dict()["auc"] == pytest.approx(from_arrays.to_dict()["auc"], abs=1e-12)
    assert from_table.scores["person"].tolist() == table["person"].tolist()
    assert from_table.setup["source"] == "predictions table"
    with pytest.raises(MipkitValueError, match="no score column 'score'"):
        audit_scores(table, config.replace(score_column="score"))


def test_non_members_from_another_population_look_like_a_leak():
    """The premise the summary states first, with the audit that breaks it: the model's outputs do not depend
    on membership, but the non-members come from a shifted population on which the model is less sure.
    LOSS then 'finds' a leak that is only the difference between the two sets."""
    rng = np.random.default_rng(5)
    n = 400
    member = np.r_[np.ones(n // 2, bool), np.zeros(n // 2, bool)]
    y = rng.integers(0, 2, n)
    margin = np.where(member, 2.0, 0.5) + rng.normal(scale=0.5, size=n)  # easier records among the members
    p = 1 / (1 + np.exp(-(2 * y - 1) * margin))
    shifted = audit_scores(
        Predictions(y, member, ModelOutputs(proba=np.c_[1 - p, p])), AuditScoresConfig(attacks=("loss",))
    )
    assert shifted.eta_ci[0] > 0.1  # a "leak" measured: the two sets differ
    assert "the non-members come from the same population" in shifted.summary()
