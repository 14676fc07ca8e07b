"""The default synthetic verdict is a family of tests: a table of copies is a finding, with or without a
holdout, the plain summary agrees with the copy count, and a table is never passed while a test it could
fail was not judged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit.metrics.copies import copy_rates, excess_interval
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic


def _population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    age = rng.integers(18, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "income": rng.integers(0, 100_000, n),
            "sex": rng.choice(["F", "M"], n),
            "marital": np.where(age < 30, rng.choice(["s", "m"], n, p=[0.8, 0.2]), rng.choice(["s", "m"], n)),
        }
    )


def _tables(n: int, copies: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    train, holdout = _population(n, rng), _population(n, rng)
    k = int(copies * n)
    syn = pd.concat([train.iloc[rng.choice(n, k, replace=False)], _population(n - k, rng)], ignore_index=True)
    return train, holdout, syn


def test_thirty_percent_copies_are_a_finding_and_the_summary_says_so():
    """The DCR attack finds 30% verbatim copies; the NNAA privacy loss alone leaves it inconclusive at this
    size, the family does not."""
    train, holdout, syn = _tables(300, 0.3)
    res = audit_synthetic(
        SyntheticRelease(train, syn, holdout=holdout),
        AuditSyntheticConfig(secrets=["marital"], fail_above=0.05, random_state=0, n_jobs=1),
    )
    v = res.verdict
    assert v["status"] == "finding" and res.exit_code == 1 and v["metric"] == "headline"
    found = {m["name"] for m in v["members"] if m["status"] == "finding"}
    assert "exact_copies" in found
    exact = next(m for m in v["members"] if m["name"] == "exact_copies")
    assert exact["interval"][0] > 0.05 and exact["value"] == pytest.approx(0.3, abs=0.02)
    assert res.dcr_attack.protection["exact_match_share"] == pytest.approx(0.3, abs=0.02)
    text = " ".join(res.sentences())
    assert "no measurable sign that the synthetic data copies" not in text
    assert "the synthetic data copies about 30.0% of its training records" in text
    # the NNAA privacy loss alone does not decide it: a policy on it alone would have exited 0
    alone = audit_synthetic(
        SyntheticRelease(train, syn, holdout=holdout),
        AuditSyntheticConfig(fail_above=0.05, fail_metric="privacy_loss", random_state=0, n_jobs=1),
    )
    assert alone.verdict["status"] != "finding"


def test_identical_table_without_holdout_is_a_finding():
    """``--synthetic T --original T`` and no holdout: the copy rate against the training records' own twins
    and attribute inference are judged, and both exceed the policy."""
    rng = np.random.default_rng(1)
    t = _population(300, rng)
    res = audit_synthetic(
        SyntheticRelease(t, t.copy()),
        AuditSyntheticConfig(secrets=["marital"], fail_above=0.1, random_state=0, n_jobs=1),
    )
    v = res.verdict
    assert v["status"] == "finding"
    names = {m["name"]: m for m in v["members"]}
    assert names["exact_copies"]["status"] == "finding" and names["exact_copies"]["value"] > 0.9
    assert set(names) == {"exact_copies", "inference_pi"}
    assert any("NNAA" in why for why in v["not_judged"])
    text = " ".join(res.sentences())
    assert "with a twin among the other training records (no unseen records)" in text
    assert "the synthetic data copies about 99.7% of its training records" in text  # n - 1 of n compared


def test_no_holdout_never_passes():
    """Fresh synthetic data, a lenient policy, no holdout: NNAA and near copies cannot be judged, so the
    verdict is inconclusive (with a holdout, the same policy passes)."""
    train, holdout, syn = _tables(300, 0.0, seed=2)
    res = audit_synthetic(
        SyntheticRelease(train, syn), AuditSyntheticConfig(fail_above=0.6, random_state=0, n_jobs=1)
    )
    assert (
        res.verdict["status"] == "inconclusive" and "not every test could be judged" in res.verdict["reason"]
    )
    assert all(m["status"] == "pass" for m in res.verdict["members"])
    full = audit_synthetic(
        SyntheticRelease(train, syn, holdout=holdout),
        AuditSyntheticConfig(fail_above=0.6, random_state=0, n_jobs=1),
    )
    assert full.verdict["status"] == "pass" and not full.verdict["not_judged"]


def test_copy_rates_count_excess_over_unseen_records():
    m = np.r_[np.zeros(30), np.full(70, 0.5)]
    h = np.r_[np.zeros(5), np.linspace(0.01, 1, 95)]
    r = copy_rates(m, h)
    assert r["exact"]["share"] == 0.3 and r["exact"]["reference_share"] == 0.05
    assert r["exact"]["excess"] == pytest.approx(0.25)
    lo, hi = excess_interval(r["exact"], 0.95)
    assert 0.1 < lo < 0.25 < hi < 0.4
    # near: below the unseen records' 5th percentile (here 0, so exact copies only)
    assert r["near"]["radius"] == pytest.approx(np.quantile(h, 0.05))
    # zero counts on both sides: the interval still has width and contains 0
    z = copy_rates(np.full(50, 1.0), np.full(50, 1.0))
    lo, hi = excess_interval(z["exact"], 0.95)
    assert lo < 0 < hi


def test_copy_rates_without_holdout_compare_with_twins_in_the_training_data():
    """A population of few distinct records: training records have twins among themselves as often as in
    fresh synthetic draws, so a fresh table shows no excess while a copied one does."""
    rng = np.random.default_rng(3)
    pool = rng.integers(0, 40, size=(400, 1)).astype(float)  # 40 distinct values: many twins
    fresh = rng.integers(0, 40, size=(400, 1)).astype(float)
    r = copy_rates(np.ones(400), None, original=pool, synthetic=fresh, random_state=0)
    assert r["exact"]["share"] > 0.9 and abs(r["exact"]["excess"]) < 0.05
    unique = rng.permutation(10_000)[:400, None].astype(float)
    r = copy_rates(np.ones(400), None, original=unique, synthetic=unique.copy(), random_state=0)
    assert r["exact"]["reference_share"] == 0 and r["exact"]["excess"] > 0.99


def test_copy_interval_without_holdout_counts_identical_records_as_one_cluster():
    """Fresh tables of 512 possible rows, 2,000 each: training records share their copy and twin indicators
    with their identical records, so intervals that treat records as independent fire on a fresh table far
    beyond their one-sided 2.5% (25 of 200 here); the clustered standard error brings that to 10."""
    rng = np.random.default_rng(7)
    fired = 0
    for _ in range(200):
        train, syn = (rng.integers(0, 8, size=(2000, 3)).astype(float) for _ in range(2))
        r = copy_rates(np.zeros(2000), original=train, synthetic=syn, random_state=rng)["exact"]
        fired += excess_interval(r, 0.95)[0] > 0
    assert fired <= 17
