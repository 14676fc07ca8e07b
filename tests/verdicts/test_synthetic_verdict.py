"""The synthetic audit's verdict: pass / finding / inconclusive against the stated policy, every skipped check
and every "n/a" with its reason, the date and the data fingerprints; nothing about the records' values."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.report.results import read_results
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
from mipkit.workflows.audit_synthetic.inputs import table_fingerprint
from mipkit.workflows.audit_synthetic.verdict import synthetic_checks, synthetic_verdict


def _res(pl=None, ci=None, auc=None, auc_ci=None):
    nnaa = (
        {
            "privacy_loss": pl,
            "n": 100,
            "intervals": {"privacy_loss_ci": ci, "confidence": 0.95, "method": "jackknife"},
        }
        if pl is not None
        else {"privacy_loss": None, "note": "no holdout or control"}
    )
    dcr = (
        {"auc": auc, "auc_ci": auc_ci, "n_members": 10, "n_nonmembers": 10}
        if auc is not None
        else {"auc": None}
    )
    return {
        "inputs": {"nonmember_set": "holdout" if pl is not None else None},
        "nnaa": nnaa,
        "dcr": dcr,
        "inference": {},
    }


@pytest.mark.parametrize(
    "ci,threshold,status",
    [
        ([0.03, 0.09], 0.02, "finding"),  # whole interval above
        ([0.03, 0.09], 0.09, "pass"),  # at or below: the upper end equals the threshold
        ([-0.01, 0.04], 0.02, "inconclusive"),  # straddles
        ([-0.01, 0.04], 0.0, "inconclusive"),
        ([-0.05, -0.01], 0.0, "pass"),
    ],
)
def test_privacy_loss_policy(ci, threshold, status):
    v = synthetic_verdict(_res(pl=sum(ci) / 2, ci=ci), metric="privacy_loss", fail_above=threshold)
    assert v["status"] == status
    assert v["interval"] == ci and v["fail_above"] == threshold
    assert f"{threshold:g}" in v["reason"] and f"[{ci[0]:.4f}, {ci[1]:.4f}]" in v["reason"]


def test_no_policy_and_missing_metric_say_why():
    v = synthetic_verdict(_res(pl=0.01, ci=[-0.01, 0.03]), metric="privacy_loss", fail_above=None)
    assert v["status"] == "no policy" and "no threshold" in v["reason"]
    v = synthetic_verdict(_res(), metric="privacy_loss", fail_above=0.0)
    assert v["status"] == "inconclusive" and "no holdout or control" in v["reason"]
    v = synthetic_verdict(_res(), metric="inference_pi", fail_above=0.0, inference_family=[])
    assert v["status"] == "inconclusive" and "no secret column" in v["reason"]
    v = synthetic_verdict(_res(auc=0.7, auc_ci=[0.6, 0.8]), metric="dcr_auc", fail_above=0.55)
    assert v["status"] == "finding"


def test_inference_policy_uses_the_corrected_family():
    family = [
        {"secret": "a", "attack": "nearest", "value": 0.30, "ci_corrected": [0.05, 0.5], "level": 0.9875},
        {"secret": "a", "attack": "model", "value": 0.01, "ci_corrected": [-0.1, 0.1], "level": 0.9875},
    ]
    v = synthetic_verdict(_res(), metric="inference_pi", fail_above=0.0, inference_family=family)
    assert v["status"] == "finding" and v["interval"] == [0.05, 0.5] and v["value"] == 0.30
    assert v["confidence"] == 0.9875 and "Bonferroni" in v["detail"]
    v = synthetic_verdict(_res(), metric="inference_pi", fail_above=0.5, inference_family=family)
    assert v["status"] == "pass"  # every corrected upper end at or below 0.5
    v = synthetic_verdict(_res(), metric="inference_pi", fail_above=0.2, inference_family=family)
    assert v["status"] == "inconclusive"


def test_checks_name_every_skip_with_its_reason():
    res = _res()
    res["inputs"].update({"n_control": None, "exact_ties": {"exact": False, "why": "Euclidean"}})
    res["dcr"] = {"auc": None, "tpr_at_fpr_unresolved": {"0.001": "below 1/500"}}
    checks = {c["name"]: c for c in synthetic_checks(res, metric_name="euclidean")}
    for name in ("NNAA privacy loss", "DCR membership attack", "DCR overfitting protection"):
        assert checks[name]["status"] == "skipped" and "no holdout or control" in checks[name]["why"]
    assert "mixed distance only" in checks["DCR baseline protection"]["why"]
    assert checks["attribute inference"]["why"] == "no secret column was given"
    assert checks["anonymeter control-set risk"]["why"] == "no control table"
    assert checks["TPR at FPR 0.001"]["status"] == "n/a" and checks["exact ties"]["status"] == "note"


def _table(n, rng):
    age = rng.integers(18, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "hours": rng.integers(10, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(["a", "b", "c"], n),
        }
    )


def test_audit_writes_verdict_date_fingerprints_and_no_real_values(tmp_path):
    rng = np.random.default_rng(0)
    orig, hold = _table(200, rng), _table(200, rng)
    syn = pd.concat([orig.iloc[:150], _table(250, rng)], ignore_index=True)  # 150 copies
    res = audit_synthetic(
        SyntheticRelease(orig, syn, holdout=hold),
        AuditSyntheticConfig(
            secrets=["sex"], n_attacks=60, fail_above=0.6, fail_metric="dcr_auc", random_state=0, n_jobs=1
        ),
    )
    assert res.verdict["status"] == "finding" and res.exit_code == 1
    assert res.verdict["interval"][0] > 0.6 and res.verdict["metric"] == "dcr_auc"
    run = res.write(tmp_path / "run")
    saved = read_results(run)
    assert saved["verdict"]["status"] == "finding" and saved["policy"]["fail_above"] == 0.6
    assert saved["created"][:4].isdigit()  # the date of the audit
    fp = saved["inputs"]["fingerprints"]
    assert fp == {
        "original": table_fingerprint(orig),
        "synthetic": table_fingerprint(syn),
        "holdout": table_fingerprint(hold),
    }
    assert table_fingerprint(orig) != table_fingerprint(orig.iloc[::-1])
    # no minimum, range or tolerance in units of the data: nothing that is a value of a real record
    text = json.dumps(saved)
    assert "numeric_min" not in text and "numeric_range" not in text
    inf = saved["inference"]["sex"]
    assert "tolerance" not in inf and inf["tolerance_share"] is None  # categorical; numeric: a share
    assert saved["inputs"]["tolerance"] == 0.05
    cols = saved["inputs"]["columns"]
    assert set(cols) == {"numeric", "categorical", "n_levels"}
    page = (run / "report.html").read_text()
    assert "FINDING" in page and fp["original"] in page and saved["created"] in page
    # asked for: the data summary is there
    res2 = audit_synthetic(
        SyntheticRelease(orig, syn, holdout=hold),
        AuditSyntheticConfig(include_data_summary=True, random_state=0, n_jobs=1),
    )
    cols2 = res2.to_dict()["inputs"]["columns"]
    assert cols2["numeric_min"] == [float(orig["age"].min()), float(orig["hours"].min())]
    assert res2.verdict["status"] == "no policy" and res2.exit_code == 0


def test_pass_on_fresh_data_with_a_lenient_policy():
    rng = np.random.default_rng(1)
    orig, hold, syn = _table(400, rng), _table(400, rng), _table(800, rng)
    res = audit_synthetic(
        SyntheticRelease(orig, syn, holdout=hold),
        AuditSyntheticConfig(fail_above=0.25, random_state=0, n_jobs=1),
    )
    assert res.verdict["status"] == "pass" and res.exit_code == 0
    lo, hi = res.verdict["interval"]
    assert hi <= 0.25 and lo < res.verdict["value"] < hi
