"""Tied scores (a vendor's probabilities rounded to 2 decimals): the subgroup table's "all records" row is the
main table's figures, and the most exposed members are ranked as ties."""

from __future__ import annotations

import numpy as np
import pytest

from mipkit.report.fitted_report import most_exposed_line
from mipkit.workflows.audit_scores import AuditScoresConfig, ModelOutputs, Predictions, audit_scores


def _rounded(n: int = 800, n_refs: int = 0, seed: int = 3) -> Predictions:
    """Outputs that leak membership, rounded to 2 decimals: many records share each score."""
    rng = np.random.default_rng(seed)
    member = rng.integers(0, 2, n)
    label = rng.integers(0, 2, n)

    def proba(m: np.ndarray) -> np.ndarray:
        logit = (2 * label - 1) * (1.0 + 0.8 * m) + rng.normal(0, 1.5, n)
        p = np.round(1 / (1 + np.exp(-logit)), 2)
        return np.column_stack([1 - p, p])

    refs = []
    for _ in range(n_refs):
        m = rng.integers(0, 2, n)
        refs.append(ModelOutputs(proba=proba(m), member=m))
    return Predictions(label, member, ModelOutputs(proba=proba(member)), reference=refs, classes=("0", "1"))


@pytest.mark.parametrize("n_refs", [0, 4])
def test_the_all_records_row_is_the_main_table_one_computation(n_refs):
    result = audit_scores(_rounded(n_refs=n_refs), AuditScoresConfig(n_boot=200, fprs=(0.01, 0.1)))
    best = result.slices.attack
    summary = result.summaries[best]
    overall = result.slices.overall
    for point in summary.tpr_at_fpr:
        key = f"{point.target_fpr:g}"
        assert overall["tpr_at_fpr"][key] == pytest.approx(point.tpr, abs=1e-12)
        assert point.tpr > 0  # the ties make a deterministic threshold rule flag no member at FPR 1%
    headline = result.headline
    assert overall["eta"] == pytest.approx(summary.eta.eta, abs=1e-12)
    assert overall["eta_ci"] == pytest.approx(headline["headline"]["eta_ci"], abs=1e-12)
    assert overall["auc"] == pytest.approx(summary.auc, abs=1e-12)


def test_subgroups_use_the_same_randomised_rule_at_ties():
    """A subgroup that is every record gets the main table's TPR, not the deterministic rule's 0."""
    from mipkit.metrics.attack_summary import threshold_at_fpr
    from mipkit.metrics.slices import slice_summary

    rng = np.random.default_rng(0)
    member = rng.integers(0, 2, 600).astype(bool)
    scores = np.round(rng.normal(size=600) + 0.6 * member, 0)
    out = slice_summary(
        scores, member, {"all": np.array(["x"] * 600)}, n_boot=100, fprs=(0.01,), random_state=0
    )
    expected = threshold_at_fpr(scores, member.astype(int), 0.01)
    assert expected.tied_share > 0
    assert out.rows[0]["tpr_at_fpr"]["0.01"] == pytest.approx(
        (expected.member_flags(scores, member)).sum() / member.sum(), abs=1e-12
    )
    assert out.rows[0]["tpr_at_fpr"]["0.01"] > 0


def test_most_exposed_members_are_ranked_as_ties_and_ten_are_named():
    result = audit_scores(_rounded(), AuditScoresConfig(n_boot=200))
    top = result.most_exposed()
    assert len(top) == 10
    ranks = result.scores[f"{result.strongest_attack}_rank"]
    assert list(top["tied"]) == [int((ranks == r).sum()) for r in top["rank"]]
    line = most_exposed_line(result.to_dict())
    first = top.iloc[0]
    assert first["tied"] > 1 and f"rank 1, tied with {first['tied'] - 1} other" in line
    assert f"{first['tied']} records (members and non-members) share the top score" in line
    assert line.count("(rank ") == 10


def _records(ranks: list[int], tied: list[int], eta_ci: list[float]) -> dict:
    top = [{"rank": r, "tied": t, "pid": f"P{i}"} for i, (r, t) in enumerate(zip(ranks, tied, strict=True))]
    return {"eta_ci": eta_ci, "design": {"n_records": 400},
            "records": {"id_field": "pid", "most_exposed_attack": "loss", "most_exposed": top}}  # fmt: skip


def test_with_no_leak_the_most_exposed_line_says_it_ranks_by_score():
    """No leak measured (eta interval reaching 0): the named ids are the attack's highest scores, not exposed
    people; where every listed member shares the top score, no one is named."""
    line = most_exposed_line(_records(list(range(1, 11)), [1] * 10, [-0.03, 0.001]))
    assert "no leak was measured; these are the records the attack scores highest" in line
    assert line.count("(rank ") == 10
    leak = most_exposed_line(_records(list(range(1, 11)), [1] * 10, [0.01, 0.05]))
    assert "no leak" not in leak and leak.count("(rank ") == 10
    tied = most_exposed_line(_records([1] * 10, [16] * 10, [-0.03, 0.001]))
    assert "none named" in tied and "16 highest-scoring records" in tied and "P0" not in tied
