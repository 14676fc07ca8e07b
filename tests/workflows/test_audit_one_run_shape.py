"""The audit_one_run verb's shape: AuditOneRunConfig refuses each bad setting when built (and again on
replace), and the result's summary, to_dict, to_frame and write agree; the summary names the bound, what it
means against the certificate, and its premises."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit import MipkitValueError
from mipkit.data.io import Dataset
from mipkit.report import read_results
from mipkit.report.dpia import one_run_paragraph
from mipkit.workflows.audit_one_run import AuditOneRunConfig, LabelledTable, audit_one_run

BAD_SETTINGS = [
    ({"seed": -1}, "'seed' parameter"),
    ({"model": ""}, "'model' parameter"),
    ({"params": [1]}, "'params' parameter"),
    ({"canaries": 0}, "'canaries' parameter"),
    ({"canary_kind": "odd"}, "'canary_kind' parameter"),
    ({"encode": "ordinal"}, "'encode' parameter"),
    ({"k_plus": ()}, "at least one count"),
    ({"k_minus": (-0.1,)}, "'k_minus' parameter"),
    ({"canaries": 10, "k_plus": (20,)}, "'k_plus' parameter"),
    ({"k_plus": (2.5,)}, "fractions of the canaries"),
    ({"delta": 1.0}, "'delta' parameter"),
    ({"confidence": 0.0}, "'confidence' parameter"),
    ({"fail_above": float("nan")}, "finite number"),
    ({"fail_above": True}, "finite number"),
]


@pytest.mark.parametrize(("change", "words"), BAD_SETTINGS, ids=[str(c) for c, _ in BAD_SETTINGS])
def test_each_bad_setting_is_refused_when_built_and_on_replace(change, words):
    with pytest.raises(MipkitValueError) as built:
        AuditOneRunConfig(**change)
    assert words in str(built.value) and "\n" not in str(built.value)
    with pytest.raises(MipkitValueError) as replaced:
        AuditOneRunConfig().replace(**change)
    assert str(replaced.value) == str(built.value)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)  # noise-free labels: a mislabeled canary stands out
    return Dataset(X=X, y=y, feature_names=["a", "b", "c"], classes=np.array(["no", "yes"]))


@pytest.fixture(scope="module")
def result(dataset):
    config = AuditOneRunConfig(
        model="sklearn.tree.DecisionTreeClassifier", canaries=80, k_plus=(0.25, 0.5), seed=1, fail_above=0.2
    )
    return audit_one_run(dataset, config)


def test_summary_names_the_bound_and_its_premises(result):
    d, text = result.to_dict(), result.summary()
    assert d["epsilon_lower"] > 0.2  # a tree memorises the included mislabeled canaries
    assert text.startswith("Audited: one training run of DecisionTreeClassifier,") and "\n" not in text
    assert f"{d['correct']} of {d['guesses']} guesses were right" in text
    assert f"(epsilon = {d['epsilon_lower']:.3g}, delta = 1e-05)" in text
    assert "the bound is above the stated limit (epsilon <= 0.2)" in text
    premise = text[text.index("Premise:") :]
    assert "80 of the records" in premise and "label changed" in premise and "coin flip" in premise
    assert "lower bound" in premise and "never shows that the training is private" in premise
    assert result.finding(limit="fail_above") == (
        f"the measured lower bound {d['epsilon_lower']:.4g} exceeds fail_above 0.2."
    )


def test_frame_dict_and_written_results_agree(result, tmp_path):
    d, frame = result.to_dict(), result.to_frame()
    assert frame.index.name == "quantity"
    for key in ("epsilon_lower", "delta", "canaries", "canaries_included", "guesses", "correct", "n_train"):
        assert frame.loc[key, "value"] == d[key]
    folder = result.write(tmp_path / "run")
    stored = read_results(folder)
    assert stored["kind"] == "audit-one-run"
    assert {k: stored[k] for k in d} == json.loads(json.dumps(d))
    assert stored["config"]["data"] is None and stored["config"]["canaries"] == 80


def test_a_table_with_ids_gives_the_arrays_result(dataset, result, tmp_path):
    df = pd.DataFrame(dataset.X, columns=dataset.feature_names).assign(pid=np.arange(400) * 7 + 3)
    df["y"] = dataset.classes[dataset.y]
    table = LabelledTable(df, target="y", id_column="pid")  # numeric ids: no feature all the same
    again = audit_one_run(table, result.config, run_dir=tmp_path)
    assert again.bound == result.bound and again.n_train == result.n_train
    assert read_results(tmp_path)["config"]["id_column"] == "pid"


def _paragraph(epsilon: float, certified: float | None) -> str:
    d = {"epsilon_lower": epsilon, "delta": 1e-5, "confidence": 0.95, "certified_epsilon": certified,
         "canaries": 1000, "canaries_included": 503, "guesses": 50, "correct": 40, "n_train": 9000,
         "model": "mipkit.trainers.DPSGDClassifier", "config": {"data": "adult.csv"}}  # fmt: skip
    return one_run_paragraph(d)


def test_the_paragraph_weighs_the_bound_against_the_certificate():
    above = _paragraph(2.5, 1.0)
    assert "Audited: one training run of DPSGDClassifier on adult.csv" in above
    assert "ABOVE the certified epsilon 1" in above and "accounting is wrong" in above
    below = _paragraph(0.4, 3.0)
    assert "below the certified epsilon 3" in below and "found nothing against the certificate" in below
    none = _paragraph(0.0, None)
    assert "the lower bound on epsilon is 0" in none and "no leak it could tell apart from chance" in none
