"""Unbiased NNAA: efficient form == direct definition; E[AA] = 1/2; Yale's form is biased."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from mipkit.data.neighbors import kneighbors
from mipkit.metrics.nnaa import (
    adversarial_accuracy,
    adversarial_accuracy_naive,
    privacy_loss,
    yale_adversarial_accuracy,
)
from mipkit.stats import wilson


def _naive(T, S, ties, metric="euclidean"):
    m = "cityblock" if metric == "manhattan" else "euclidean"
    return adversarial_accuracy_naive(cdist(T, T, m), cdist(T, S, m), cdist(S, S, m), ties=ties)


@pytest.mark.parametrize("ties", ["average", "strict", "nonstrict"])
@pytest.mark.parametrize("n_t,n_s", [(12, 12), (9, 15)])
def test_efficient_equals_naive_continuous(ties, n_t, n_s):
    rng = np.random.default_rng(n_t * 100 + n_s)
    T, S = rng.normal(size=(n_t, 3)), rng.normal(size=(n_s, 3)) + 0.3
    fast = adversarial_accuracy(T, S, metric="euclidean", ties=ties, n_jobs=1)
    slow = _naive(T, S, ties)
    assert fast.term_t == slow.term_t
    assert fast.term_s == slow.term_s
    np.testing.assert_array_equal(fast.per_record_t, slow.per_record_t)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_t=st.integers(2, 12),
    n_s=st.integers(2, 12),
    levels=st.integers(1, 3),
    metric=st.sampled_from(["euclidean", "manhattan"]),
    ties=st.sampled_from(["average", "strict", "nonstrict"]),
)
def test_efficient_equals_naive_discrete_with_ties(seed, n_t, n_s, levels, metric, ties):
    # small integer grids: many exact ties and duplicates, all distances exact in floating point
    rng = np.random.default_rng(seed)
    T = rng.integers(0, levels + 1, size=(n_t, 2)).astype(float)
    S = rng.integers(0, levels + 1, size=(n_s, 2)).astype(float)
    fast = adversarial_accuracy(T, S, metric=metric, ties=ties, n_jobs=1)
    slow = _naive(T, S, ties, metric)
    assert fast.term_t == pytest.approx(slow.term_t, abs=1e-15)
    assert fast.term_s == pytest.approx(slow.term_s, abs=1e-15)
    np.testing.assert_allclose(fast.per_record_t, slow.per_record_t, rtol=0, atol=1e-15)
    np.testing.assert_allclose(fast.per_record_s, slow.per_record_s, rtol=0, atol=1e-15)


def test_efficient_equals_naive_mixed_table():
    import pandas as pd

    from mipkit.data.neighbors import pairwise_distances
    from mipkit.data.tables import check_tables, encode_mixed

    rng = np.random.default_rng(3)

    def table(n):
        return pd.DataFrame(
            {
                "age": rng.integers(20, 24, n).astype(float),
                "sex": rng.choice(["F", "M"], n),
                "job": rng.choice(["a", "b", None], n),
            }
        )

    t, s = table(14), table(11)
    schema = check_tables(t, {"synthetic": s})
    T, S = encode_mixed(t, schema), encode_mixed(s, schema)
    fast = adversarial_accuracy(T, S, metric="mixed", n_jobs=1)
    slow = adversarial_accuracy_naive(
        pairwise_distances(T, T), pairwise_distances(T, S), pairwise_distances(S, S)
    )
    assert fast.term_t == pytest.approx(slow.term_t, abs=1e-15)
    assert fast.term_s == pytest.approx(slow.term_s, abs=1e-15)


def test_unbiased_expectation_is_one_half_and_yale_is_biased():
    # two samples of one distribution, n = 6: the unbiased terms average 1/2, Yale's (n-1)/(2n-1) = 5/11
    rng = np.random.default_rng(7)
    n, reps = 6, 400
    unbiased, yale = [], []
    for _ in range(reps):
        T, S = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
        unbiased.append(adversarial_accuracy(T, S, metric="euclidean", n_jobs=1).value)
        yale.append(yale_adversarial_accuracy(T, S, metric="euclidean", n_jobs=1).value)
    unbiased, yale = np.array(unbiased), np.array(yale)
    # 99.9% normal interval of the replicate mean
    half_u = 3.29 * unbiased.std(ddof=1) / np.sqrt(reps)
    assert abs(unbiased.mean() - 0.5) < half_u
    half_y = 3.29 * yale.std(ddof=1) / np.sqrt(reps)
    assert abs(yale.mean() - 5 / 11) < half_y
    assert yale.mean() + half_y < 0.5  # measurably below 1/2


def test_unbiased_term_is_exact_half_in_distribution():
    # each point's correct-classification indicator is Bernoulli(1/2) for continuous same-distribution data:
    # pool the strict term of many independent replicates of n=3 and check against a Wilson interval
    rng = np.random.default_rng(11)
    hits = trials = 0
    for _ in range(600):
        T, S = rng.uniform(size=(3, 1)), rng.uniform(size=(3, 1))
        aa = adversarial_accuracy(T, S, metric="euclidean", ties="strict", n_jobs=1)
        hits += (
            aa.per_record_t[0] * 3
        )  # g_T(0) in {0, 1, 3}: count of leave-one-out versions classified right
        trials += 3
    lo, hi = wilson(int(round(hits)), trials, 0.999)
    assert lo < 0.5 < hi


def test_privacy_loss_detects_copies_and_is_reproducible():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(300, 4)), rng.normal(size=(300, 4))
    leaky = train + 0.01 * rng.normal(size=train.shape)  # near copies of the training data
    pl = privacy_loss(train, test, leaky, metric="euclidean", random_state=1, n_jobs=1)
    assert pl.train.value < 0.35  # half the sampled training rows have a copy in synthetic_1
    assert pl.value > 0.2
    assert pl.intervals["method"] == "jackknife"
    assert pl.intervals["privacy_loss_ci"][0] > 0
    fresh = rng.normal(size=(300, 4))
    pl0 = privacy_loss(train, test, fresh, metric="euclidean", random_state=1, n_jobs=1)
    lo, hi = pl0.intervals["privacy_loss_ci"]
    assert lo < 0 < hi
    again = privacy_loss(train, test, fresh, metric="euclidean", random_state=1, n_jobs=1)
    assert again.to_dict() == pl0.to_dict()
    # the record bootstrap (for comparisons) is reported in the same field, with its method named
    rb = privacy_loss(
        train, test, leaky, metric="euclidean", random_state=1, interval="record-bootstrap", n_bootstrap=200
    )
    assert rb.to_dict()["intervals"]["method"] == "record-bootstrap"
    assert rb.to_dict()["intervals"]["privacy_loss_ci"][0] > 0
    assert rb.value == pl.value


def test_kneighbors_self_exclusion_keeps_duplicates():
    X = np.array([[0.0], [0.0], [1.0]])
    d, i = kneighbors(X, X, k=1, exclude_self=True, metric="euclidean", algorithm="blocked")
    assert d[:, 0].tolist() == [0.0, 0.0, 1.0]
    assert i[:2, 0].tolist() == [1, 0]


@settings(max_examples=12, deadline=None, derandomize=True)  # a statistical check: fixed examples
@given(
    n=st.integers(4, 12),
    dim=st.integers(1, 4),
    law=st.sampled_from(["normal", "uniform", "exponential"]),
    seed=st.integers(0, 2**31 - 1),
)
def test_property_unbiased_aa_is_one_half_for_any_common_distribution(n, dim, law, seed):
    """E[AA] = 1/2 whenever T and S are samples of one continuous distribution (Pedersen, eq. 4.1)."""
    rng = np.random.default_rng(seed)
    draw = {"normal": rng.normal, "uniform": rng.uniform, "exponential": rng.exponential}[law]
    values = np.array(
        [
            adversarial_accuracy(draw(size=(n, dim)), draw(size=(n, dim)), metric="euclidean", n_jobs=1).value
            for _ in range(150)
        ]
    )
    half = 3.89 * values.std(ddof=1) / np.sqrt(values.size)  # 99.99% normal interval of the mean
    assert abs(values.mean() - 0.5) <= half
