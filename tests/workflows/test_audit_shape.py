"""The audit verb's shape: AuditConfig refuses each bad setting when built (and again on replace), the
records are a LabelledTable (or arrays), and the result's summary, to_dict, to_frame and write agree."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

import mipkit
from mipkit import MipkitValueError
from mipkit.data.io import Dataset
from mipkit.report import read_results
from mipkit.workflows.audit import AuditConfig, AuditResult, LabelledTable, audit

BAD_SETTINGS = [
    ({"model": ""}, "'model' parameter of audit"),
    ({"params": [1]}, "'params' parameter of audit"),
    ({"attacks": ("loss", "shadow")}, "subset of loss, lira, rmia, ltu"),
    ({"attacks": ()}, "Got nothing"),
    ({"n_models": 5}, "even integer >= 4"),
    ({"n_models": 2}, "even integer >= 4"),
    ({"n_models": True}, "even integer >= 4"),
    ({"n_targets": 0}, "'n_targets' parameter"),
    ({"n_models": 4, "n_targets": 6}, "[1, n_models=4]"),
    ({"backend": "spark"}, "'backend' parameter"),
    ({"encode": "ordinal"}, "'encode' parameter"),
    ({"ltu_strategy": "guess"}, "'ltu_strategy' parameter"),
    ({"max_records": 7}, "'max_records' parameter"),
    ({"ltu_rounds": 0}, "'ltu_rounds' parameter"),
    ({"n_jobs": 0}, "'n_jobs' parameter"),
    ({"seed": -1}, "'seed' parameter"),
    ({"fprs": ()}, "at least one FPR"),
    ({"fprs": (0.01, 1.5)}, "'fprs' parameter"),
    ({"base_rates": (0.0,)}, "'base_rates' parameter"),
    ({"confidence": 1.0}, "'confidence' parameter"),
    ({"n_boot": 50}, "'n_boot' parameter"),
    ({"certified_eta": 0.6}, "'certified_eta' parameter"),
    ({"fail_above": float("nan")}, "finite number"),
    ({"fail_above": 0.7}, "[0, 0.5] for metric eta"),
    ({"fail_above": 0.1, "fail_metric": "tpr@0.05"}, "does not measure"),
    ({"fail_above": 0.1, "fail_metric": "recall"}, "'fail_metric' parameter"),
]


@pytest.mark.parametrize(("change", "words"), BAD_SETTINGS, ids=[str(c) for c, _ in BAD_SETTINGS])
def test_each_bad_setting_is_refused_when_built_and_on_replace(change, words):
    with pytest.raises(MipkitValueError, match=None) as built:
        AuditConfig(**change)
    assert words in str(built.value) and "\n" not in str(built.value)
    with pytest.raises(MipkitValueError) as replaced:
        AuditConfig().replace(**change)
    assert str(replaced.value) == str(built.value)


def test_settings_are_normalised_and_the_default_targets_follow_the_models():
    config = AuditConfig(attacks=("RMIA", "loss", "loss"), slice_by="sex, age", drop=["pid"], fprs=[0.1])
    assert config.attacks == ("loss", "rmia")  # the registry's order, no duplicates
    assert config.slice_by == ("sex", "age") and config.drop == ("pid",) and config.fprs == (0.1,)
    assert config.n_targets is None and config.n_targets_used == 8
    assert config.replace(n_models=4).n_targets_used == 4  # None follows K; a fixed T would not fit
    assert AuditConfig(fail_above=0.1, fail_metric="TPR@0.010").fail_metric == "tpr@0.01"
    assert json.loads(json.dumps(config.to_dict()))["attacks"] == ["loss", "rmia"]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"table": None}, "'data' parameter is required"),
        ({"table": "", "target": "y"}, "'data' parameter is required"),
        ({"table": [[1, 2]], "target": "y"}, "Got list instead"),
        ({"table": "t.csv"}, "'target' parameter is required"),
        ({"table": "t.csv", "target": "y", "id_column": "y"}, "names the target column"),
        ({"table": "arrays", "id_column": "pid"}, "arrays without columns"),
    ],
)
def test_the_records_are_checked_when_built(kwargs, words):
    if kwargs["table"] == "arrays":
        kwargs = {**kwargs, "table": _arrays()}
    with pytest.raises(MipkitValueError, match=words):
        LabelledTable(**kwargs)


def test_the_verb_refuses_data_and_config_of_another_kind():
    with pytest.raises(MipkitValueError, match="LabelledTable"):
        audit(pd.DataFrame({"x": [1.0], "y": [0]}), AuditConfig())
    with pytest.raises(MipkitValueError, match="must be an AuditConfig"):
        audit(_arrays(), {"model": "sklearn.linear_model.LogisticRegression"})


def _arrays(n: int = 80) -> Dataset:
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=5)
    return Dataset(X=X, y=y, feature_names=[f"x{i}" for i in range(4)], classes=np.array(["no", "yes"]))


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> tuple[pd.DataFrame, AuditResult]:
    ds = _arrays()
    df = pd.DataFrame(ds.X, columns=ds.feature_names).assign(pid=[f"P{3 * i}" for i in range(80)])
    df["label"] = ds.classes[ds.y]
    path = tmp_path_factory.mktemp("table") / "records.csv"
    df.to_csv(path, index=False)
    config = AuditConfig(
        model="sklearn.ensemble.RandomForestClassifier",
        params={"n_estimators": 5},
        attacks=("loss", "rmia"),
        n_models=4,
        n_jobs=1,
        n_boot=100,
        fprs=(0.1,),
    )
    return df, mipkit.audit(LabelledTable(path, target="label", id_column="pid"), config)


def test_without_a_run_folder_nothing_is_written_and_write_makes_one(result, tmp_path):
    _, res = result
    assert res.run_dir is None
    folder = res.write(tmp_path / "run", report=False)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "results.json", "scores.parquet"]
    stored = read_results(folder)
    assert {k: v for k, v in stored.items() if k in res.to_dict()} == json.loads(json.dumps(res.to_dict()))
    config = json.loads((folder / "config.json").read_text())
    assert config["data"].endswith("records.csv") and config["target"] == "label"
    assert config["id_column"] == "pid" and config["n_models"] == 4 and config["run_key"] == res.run_key
    assert stored["config"] == {k: v for k, v in config.items() if k not in ("run_key", "data_sha256_16")}


def test_summary_frame_and_dict_tell_the_same_numbers(result):
    _, res = result
    d, frame = res.to_dict(), res.to_frame()
    best = d["strongest_attack"]
    assert list(frame.index) == list(d["attacks"])
    for name, row in d["attacks"].items():
        assert frame.loc[name, "eta"] == pytest.approx(row["eta"])
        assert frame.loc[name, "auc"] == pytest.approx(row["auc"])
        assert frame.loc[name, "tpr@0.1"] == pytest.approx(row["tpr_at_fpr"]["0.1"])
    text = res.summary()
    assert text.startswith("Audited: the training procedure RandomForestClassifier on ") and "\n" not in text
    assert f"({best})" in text and "records.csv" in text and "Premise:" in text
    assert d["records"]["id_column"] == "pid" and set(res.scores["pid"]) <= {f"P{3 * i}" for i in range(80)}


def test_a_dataframe_and_its_arrays_give_the_same_audit(result):
    df, res = result
    from_frame = audit(LabelledTable(df, target="label", id_column="pid"), res.config)
    from_arrays = audit(_arrays(), res.config)
    assert from_frame.run_key == from_arrays.run_key  # the id column is no feature: same arrays, same fits
    assert from_frame.eta == from_arrays.eta and from_frame.setup == from_arrays.setup == res.setup
    assert from_frame.config_dict()["data"] is None and res.config_dict()["data"].endswith("records.csv")
    assert from_arrays.id_column is None and "pid" in from_frame.scores
