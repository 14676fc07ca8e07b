"""audit-synthetic's sentences name the figure behind each claim: which measured value lies above its
certified bound, and which attack the inference headline quotes beside its own baseline."""

from __future__ import annotations

from mipkit.report.synthetic_report import summary_sentences
from mipkit.synthesizers.audit_bounds import certified_lines


def _row(measured: float, bound: float, above: bool = False) -> dict:
    return {"measured": measured, "certified": bound, "above_bound": above, "violation": False}


def test_a_point_above_its_bound_within_sampling_error_is_named():
    """Only the ROC's point nearest its bound is above it: the line names that figure, not a bare count."""
    bounds = {
        "certified": True, "method": "mst", "violations": [],
        "dcr": {"tpr_at_fpr": {"0.01": _row(0.013, 0.027)},
                "roc": {"at_fpr": 0.0005, "points": 4000, "tpr": 0.002, "certified_tpr": 0.00137,
                        "above_bound": True, "violation": False}},
        "inference": {"income": {"precision": 0.666, "baseline_precision": 0.776, "certified_success": 0.918,
                                 "above_bound": False, "violation": False}},
    }  # fmt: skip
    last = certified_lines(bounds)[-1]
    assert last.startswith("No measured risk is above its certified bound beyond sampling error")
    assert "ROC curve at FPR 0.0005" in last and "0.0020 > 0.0014" in last
    assert "point estimate(s)" not in last and "income" not in last and "FPR 0.01" not in last
    bounds["dcr"]["roc"]["above_bound"] = False
    assert certified_lines(bounds)[-1].endswith("beyond sampling error.")


def test_the_inference_headline_is_the_better_attack_beside_its_baseline():
    """The quoted attack is right 66.6% against a baseline of 77.6%: it is the better of the attacks run, not
    a 'strongest' attack, and its baseline is given with it."""
    inference = {"secret": "income", "attack": "nearest", "attacks": ["nearest", "model"], "precision": 0.666,
                 "baseline_precision": 0.776, "baseline": "nearest", "precision_improvement": -0.491,
                 "precision_improvement_ci": [-0.839, -0.227]}  # fmt: skip
    line = next(s for s in summary_sentences({"inference": {"income": inference}}) if "income" in s)
    assert "the better of the two attacks (nearest" in line and "strongest" not in line
    assert "is right 66.6% of the time (its baseline: 77.6%" in line
    one = next(
        s
        for s in summary_sentences({"inference": {"income": {**inference, "attacks": ["nearest"]}}})
        if "income" in s
    )
    assert "the only attack (nearest)" in one
