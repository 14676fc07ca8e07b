"""``mipkit.train_private(TrainingTable, TrainPrivateConfig) -> TrainPrivateResult``: the config and the
table refuse each bad value when built, the privacy given in parts is exactly one of a target and a noise
multiplier, and the result's paragraph, dict, frame and files agree without holding who trained the model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit import MipkitValueError
from mipkit.workflows.train_private import (
    TrainingTable,
    TrainPrivateConfig,
    TrainPrivateResult,
    train_private,
)
from mipkit.workflows.train_private.config import DEFAULT_RISK_TARGET, privacy_from_parts


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"seed": -1}, "'seed'"),
        ({"noise_seed": -1}, "'noise_seed'"),
        ({"test_size": 0.0}, "'test_size'"),
        ({"neighbours": "swap"}, "'neighbours'"),
        ({"encode": "ordinal"}, "'encode'"),
        ({"epochs": 0}, "'epochs'"),
        ({"batch_size": 0}, "'batch_size'"),
        ({"learning_rate": 0.0}, "'learning_rate'"),
        ({"learning_rate": float("inf")}, "'learning_rate'"),
        ({"hidden": (0,)}, "'hidden'"),
        ({"hidden": (8,) * 33}, "at most 32 layers"),
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"noise_multiplier": 1.0, "risk_target": {"name": "eta", "value": 0.1}}, "exactly one"),
        ({"risk_target": {"name": "eta", "value": 0.7}}, "eta"),
        ({"max_grad_norm": -1.0}, "max_grad_norm"),
        ({"delta": 1.0}, "delta"),
        ({"fprs": (0.0,)}, "certify_fprs"),
    ],
)
def test_config_refuses_each_bad_setting_when_built_and_replaced(changes, words):
    with pytest.raises(MipkitValueError, match=words):
        TrainPrivateConfig(**changes)
    with pytest.raises(MipkitValueError, match=words):
        TrainPrivateConfig().replace(**changes)


def test_a_config_without_privacy_settings_trains_to_the_default_target():
    config = TrainPrivateConfig()
    assert config.classifier().risk_target == DEFAULT_RISK_TARGET
    noisy = config.replace(noise_multiplier=1.5)  # a noise multiplier alone replaces the default target
    assert noisy.classifier().risk_target is None and noisy.classifier().noise_multiplier == 1.5


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"table": None, "target": "y"}, "'table'"),
        ({"table": "t.csv", "target": ""}, "'target'"),
        ({"table": "t.csv", "target": "y", "id_column": "y"}, "label column"),
    ],
)
def test_table_refuses_each_bad_field_when_built(fields, words):
    with pytest.raises(MipkitValueError, match=words):
        TrainingTable(**fields)


FLAGS = {"target": "--target-risk", "value": "--value", "noise_multiplier": "--noise-multiplier",
         "fpr": "--fpr"}  # fmt: skip
NONE = {"fpr": None, "baseline": None, "base_rate": None, "recall": None}


@pytest.mark.parametrize(
    ("target", "value", "params", "noise", "words"),
    [
        (None, None, NONE, None, "got neither"),
        ("eta", 0.1, NONE, 1.0, "got both"),
        (None, None, {**NONE, "fpr": 0.01}, 1.0, "--fpr applies only to --target-risk tpr-at-fpr"),
        (None, 0.1, NONE, 1.0, "--value applies only with --target-risk"),
        ("tpr-at-fpr", 0.05, NONE, None, "--target-risk tpr-at-fpr needs --fpr"),
        ("eta", None, NONE, None, "needs --value"),
        ("fun", 0.1, NONE, None, "must be one of"),
    ],
)
def test_privacy_in_parts_is_one_target_or_one_noise_multiplier(target, value, params, noise, words):
    with pytest.raises(MipkitValueError, match=words):
        privacy_from_parts(target, value, params, noise, delta=1e-5, names=FLAGS)


def test_privacy_in_parts_builds_the_target():
    assert privacy_from_parts("epsilon", 2.0, NONE, None, delta=1e-6) == {
        "name": "epsilon", "delta": 1e-6, "value": 2.0
    }  # fmt: skip
    assert privacy_from_parts(None, None, NONE, 1.2, delta=1e-5) is None


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(2)
    n = 240
    df = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    df["label"] = np.where(df.a + rng.normal(size=n) > 0, "yes", "no")
    df.insert(0, "pid", [f"ID{i:05d}" for i in range(n)])
    return df


def test_train_private_agrees_across_summary_dict_frame_and_files_and_keeps_the_split_in(frame, tmp_path):
    """The attack: whoever reads what the run reports (its paragraph, dict, frame, results.json, report.md)
    learns which records trained the model if any of them names a record. Only split.parquet, written when
    asked, does."""
    pytest.importorskip("torch")
    config = TrainPrivateConfig(noise_multiplier=2.0, epochs=1, batch_size=32, hidden=(), noise_seed=1,
                                record_split=True)  # fmt: skip
    result = train_private(TrainingTable(frame, "label", id_column="pid"), config)
    assert isinstance(result, TrainPrivateResult) and result.run_dir is None
    d = result.to_dict()
    figures = result.to_frame().set_index("quantity")["value"]
    assert figures["noise_multiplier"] == d["noise_multiplier"] == 2.0
    assert figures["certified_eta"] == d["certified"]["eta"]
    assert figures["certified_tpr_at_fpr_0.01"] == d["certified"]["tpr_at_fpr"]["0.01"]
    assert figures["test_accuracy"] == d["test_accuracy"]
    assert result.summary().startswith(f"Released: a model trained with DP-SGD on {d['n_train']} records")
    folder = result.write(tmp_path / "run")
    assert {p.name for p in folder.iterdir()} == {
        "model.joblib", "certificate.json", "split.parquet", "results.json", "report.md", "report.html"
    }  # fmt: skip
    saved = json.loads((folder / "results.json").read_text())
    assert saved["test_accuracy"] == d["test_accuracy"] and saved["run_dir"] == str(folder)
    assert saved["config"]["data"] is None and saved["config"]["id_column"] == "pid"  # a DataFrame: no path
    assert "a table given as a DataFrame" in (folder / "report.md").read_text()
    split = pd.read_parquet(folder / "split.parquet")
    assert split["member"].sum() == d["n_train"] and set(split["id"]) == set(frame["pid"])
    files = [(folder / name).read_text() for name in ("results.json", "report.md")]
    tables = [" ".join(map(str, t.rows)) for t in result.tables()]
    told = [json.dumps(d), result.summary(), result.to_frame().to_csv(), *files, *tables]
    for text in told:
        assert not any(pid in text for pid in frame["pid"])
