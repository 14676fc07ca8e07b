"""AuditSyntheticResult: to_dict is results.json, to_frame / repr / _repr_html_ show the same numbers."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from mipkit.report.results import read_results
from mipkit.stats import wilson
from mipkit.workflows.audit_synthetic import (
    AuditSyntheticConfig,
    AuditSyntheticResult,
    SyntheticRelease,
    audit_synthetic,
)


def _table(n, rng):
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(1)
    orig = _table(160, rng)
    syn = pd.concat([orig.sample(80, random_state=1), _table(80, rng)], ignore_index=True)
    return orig, syn, _table(90, rng)


@pytest.fixture(scope="module")
def result(tables):
    orig, syn, ctl = tables
    return audit_synthetic(
        SyntheticRelease(orig, syn, control=ctl),
        AuditSyntheticConfig(secrets=["sex", "age"], n_attacks=40, n_bootstrap=50, random_state=2, n_jobs=1),
    )


def _auc(scores, labels):
    pos, neg = scores[labels == 1], scores[labels == 0]
    return np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :])


def test_to_dict_is_json_and_written_results(result, tmp_path):
    d = result.to_dict()
    assert list(d) == [
        "inputs",
        "nnaa",
        "dcr",
        "inference",
        "inference_family",
        "timings_s",
        "samples",
        "backend",
        "copies",
        "policy",
        "verdict",
        "checks",
    ]
    json.dumps(d, allow_nan=False)  # plain JSON types only
    run = result.write(tmp_path / "run")
    saved = read_results(run)
    assert saved["kind"] == "audit-synthetic"
    assert {k: saved[k] for k in d} == d
    pd.testing.assert_frame_equal(pd.read_parquet(run / "scores.parquet"), result.scores)
    targets = pd.read_parquet(run / "inference.parquet")  # whether each guess was right tells the secret
    assert not [c for c in targets.columns if c.endswith("_correct")]
    pd.testing.assert_frame_equal(targets, result.inference_targets[list(targets.columns)])
    assert (run / "report.html").is_file()
    result.write(run, target_outcomes=True)  # asked for: the whole table
    pd.testing.assert_frame_equal(pd.read_parquet(run / "inference.parquet"), result.inference_targets)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.inference = {}


def test_to_frame_rows_match_independent_numbers(result):
    f = result.to_frame()
    assert list(f.columns) == ["section", "secret", "attack", "measure", "value", "ci_low", "ci_high"]
    assert not f.duplicated(["section", "secret", "attack", "measure"]).any()

    def one(section, secret, attack, measure):
        hit = f[
            (f["section"] == section)
            & (f["measure"] == measure)
            & (f["secret"].fillna("-") == (secret or "-"))
            & (f["attack"].fillna("-") == (attack or "-"))
        ]
        assert len(hit) == 1, (section, secret, attack, measure)
        return hit.iloc[0]

    pl = one("nnaa", None, "nnaa", "privacy_loss")
    assert pl["value"] == pytest.approx(result.nnaa.test.value - result.nnaa.train.value)
    assert [pl["ci_low"], pl["ci_high"]] == result.nnaa.intervals["privacy_loss_ci"]
    sc = result.scores
    auc = one("dcr", None, "dcr", "auc")
    assert auc["value"] == pytest.approx(_auc(-sc["dcr"].to_numpy(), sc["member"].to_numpy()))
    assert auc["ci_low"] < auc["value"] < auc["ci_high"]  # DeLong
    copies = one("dcr", None, "dcr", "exact_match_share")
    assert copies["value"] == pytest.approx(np.mean(sc.loc[sc["member"] == 1, "dcr"] == 0))
    for secret in ("sex", "age"):
        tgt = result.inference_targets[result.inference_targets["secret"] == secret]
        k, n = int(tgt["attack_nearest_correct"].sum()), len(tgt)
        p = one("inference", secret, "nearest", "precision")
        assert p["value"] == pytest.approx(k / n)
        assert (p["ci_low"], p["ci_high"]) == pytest.approx(wilson(k, n))
        base = one("inference", secret, "baseline:most_frequent", "precision")
        assert base["value"] == pytest.approx(tgt["baseline_most_frequent_correct"].mean())
        # like for like: the nearest-neighbour attack against the nearest-neighbour baseline
        same = tgt["baseline_nearest_correct"].mean()
        pi = one("inference", secret, "nearest", "precision_improvement")
        assert pi["value"] == pytest.approx((k / n - same) / (1 - same))
        assert pi["ci_low"] <= pi["value"] <= pi["ci_high"]
        k_m = int(tgt["attack_model_correct"].sum())
        same_m = tgt["baseline_model_correct"].mean()
        pi_m = one("inference", secret, "model", "precision_improvement")["value"]
        assert pi_m == pytest.approx((k_m / n - same_m) / (1 - same_m))
        headline = result.inference[secret]
        assert headline.precision_improvement == pytest.approx(max(pi["value"], pi_m))
        # anonymeter's control-set risk is given for the headline attack of the secret
        risk = one("inference", secret, result.to_dict()["inference"][secret]["attack"], "control_risk")
        assert risk["ci_low"] <= risk["value"] <= risk["ci_high"]


def test_repr_and_html_show_the_numbers(result):
    text = repr(result)
    assert text.startswith(
        "AuditSyntheticResult(160 original and 160 synthetic records, non-members: control (90)"
    )
    assert f"{result.nnaa.value:.3f}" in text and f"{result.dcr_attack.auc:.3f}" in text
    for secret in ("sex", "age"):
        assert f"inference {secret}: precision/baseline/gain" in text
    page = result._repr_html_()
    assert page.startswith("<div>") and "<table" in page and page.count("<li>") == len(result.sentences())
    assert "Inferring &#x27;sex&#x27;" in page  # the sentences are escaped
    assert f"{result.inference['age'].precision:.4g}" in page


def test_without_nonmembers(tables):
    orig, syn, _ = tables
    res = audit_synthetic(SyntheticRelease(orig, syn), AuditSyntheticConfig(random_state=0, n_jobs=1))
    assert isinstance(res, AuditSyntheticResult)
    assert res.nnaa is None and res.dcr_attack is None and res.inference == {}
    d = res.to_dict()
    assert d["nnaa"]["privacy_loss"] is None and d["dcr"]["auc"] is None
    f = res.to_frame()
    assert set(f["section"]) == {"dcr"}
    med = f.loc[f["measure"] == "dcr_median_members", "value"].item()
    assert med == pytest.approx(np.median(res.scores["dcr"]))
    assert "n/a" in repr(res) and "no non-member records" in repr(res)
    assert "<table" in res._repr_html_()
