"""The membership splits: LiRA's balanced design, the one source of random halves, and their tasks."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipkit._validation import MipkitValueError
from mipkit.engine import tasks_from_membership
from mipkit.game import (
    all_halves,
    balanced_membership,
    independent_halves,
    random_half,
    random_halves,
)
from mipkit.game import splits as splits_module
from mipkit.stats import clopper_pearson


@settings(max_examples=40, deadline=None)
@given(
    n_records=st.integers(1, 60),
    half=st.integers(1, 8),
    seed=st.integers(0, 2**31 - 2),
)
def test_every_record_is_in_for_exactly_half_of_the_models(n_records, half, seed):
    n_models = 2 * half
    mask = balanced_membership(n_records, n_models, random_state=seed)
    assert mask.shape == (n_models, n_records)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask.sum(axis=0), np.full(n_records, half))
    # the same seed gives the same matrix
    np.testing.assert_array_equal(mask, balanced_membership(n_records, n_models, random_state=seed))


def test_different_seeds_give_different_splits():
    a = balanced_membership(200, 8, random_state=0)
    b = balanced_membership(200, 8, random_state=1)
    assert not np.array_equal(a, b)


def test_membership_is_a_uniform_half_per_record():
    """Monte Carlo against the hypergeometric law of a uniform random half of K models.

    For K = 4 models, each record's IN set is a uniform 2-subset of {0,1,2,3}: P(model k IN) = 1/2 and
    P(models 0 and 1 both IN) = C(2,2)/C(4,2) = 1/6. Each record is an independent draw.
    """
    n = 6000
    mask = balanced_membership(n, 4, random_state=123)
    for k in range(4):
        lo, hi = clopper_pearson(int(mask[k].sum()), n, confidence=0.9999)
        assert lo <= 0.5 <= hi
    both = int((mask[0] & mask[1]).sum())
    lo, hi = clopper_pearson(both, n, confidence=0.9999)
    assert lo <= 1 / 6 <= hi
    # every subset of size 2 occurs: 6 patterns, each with probability 1/6
    patterns = {tuple(col) for col in mask.T}
    assert len(patterns) == 6


@pytest.mark.parametrize("n_models", [0, 1, 3, 7, 2.5, True])
def test_bad_number_of_models_is_refused(n_models):
    with pytest.raises(MipkitValueError, match="n_models"):
        balanced_membership(10, n_models, random_state=0)


def test_random_half_has_exactly_half():
    mask = random_half(11, random_state=3)
    assert mask.sum() == 5
    np.testing.assert_array_equal(mask, random_half(11, random_state=3))
    with pytest.raises(MipkitValueError):
        random_half(1, random_state=0)


@settings(max_examples=60, deadline=None)
@given(
    n_records=st.integers(2, 80),
    n_halves=st.integers(1, 30),
    k_frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31 - 2),
)
def test_every_half_has_exactly_k_members(n_records, n_halves, k_frac, seed):
    k = 1 + int(k_frac * (n_records - 2))  # 1 <= k <= n - 1
    halves = random_halves(n_records, n_halves, k=k, random_state=seed)
    assert halves.shape == (n_halves, n_records) and halves.dtype == bool
    np.testing.assert_array_equal(halves.sum(axis=1), np.full(n_halves, k))
    np.testing.assert_array_equal(halves, random_halves(n_records, n_halves, k=k, random_state=seed))
    default = random_halves(n_records, n_halves, random_state=seed)
    np.testing.assert_array_equal(default.sum(axis=1), np.full(n_halves, n_records // 2))


def test_random_halves_are_uniform_subsets():
    """Each of the C(4, 2) = 6 subsets of size 2 appears with probability 1/6.

    60,000 independent rows (seed 7): a chi-square goodness-of-fit test against the uniform law on the 6
    subsets (5 degrees of freedom) must not reject at level 1e-3, and every subset's frequency must lie in
    the 99.99% Clopper-Pearson interval of its count (about +-0.006 around 1/6).
    """
    rows = 60_000
    halves = random_halves(4, rows, k=2, random_state=7)
    subsets = list(combinations(range(4), 2))
    counts = np.array([np.sum(np.all(halves == _row(4, s), axis=1)) for s in subsets])
    assert counts.sum() == rows  # every row is one of the 6 subsets
    assert stats.chisquare(counts).pvalue > 1e-3
    for c in counts:
        lo, hi = clopper_pearson(int(c), rows, confidence=0.9999)
        assert lo <= 1 / 6 <= hi


def test_random_halves_is_one_permutation_per_row_from_one_generator():
    """The algorithm, computed independently: row r = first k entries of the r-th ``rng.permutation(n)``."""
    for n, n_halves, k, seed in [(11, 5, None, 0), (569, 7, 100, 3), (12, 400, 6, 5)]:
        rng = np.random.default_rng(seed)
        expected = np.zeros((n_halves, n), dtype=bool)
        for r in range(n_halves):
            expected[r, rng.permutation(n)[: n // 2 if k is None else k]] = True
        got_rng = np.random.default_rng(seed)
        np.testing.assert_array_equal(random_halves(n, n_halves, k=k, random_state=got_rng), expected)
        assert got_rng.random() == rng.random()  # the Generator advanced by exactly the same draws


def test_random_halves_do_not_depend_on_the_chunk_size(monkeypatch):
    whole = random_halves(50, 37, random_state=11)
    monkeypatch.setattr(splits_module, "_CHUNK_ENTRIES", 120)  # 2 rows per chunk
    np.testing.assert_array_equal(random_halves(50, 37, random_state=11), whole)


def test_random_half_and_independent_halves_are_random_halves():
    for seed in (0, 1, 2**31 - 2):
        np.testing.assert_array_equal(
            random_half(31, random_state=seed), random_halves(31, 3, random_state=seed)[0]
        )
        np.testing.assert_array_equal(
            independent_halves(31, 6, random_state=seed), random_halves(31, 6, random_state=seed)
        )
    # a shared Generator: consecutive calls continue one stream
    rng = np.random.default_rng(4)
    both = np.stack([random_half(9, random_state=rng), random_half(9, random_state=rng)])
    np.testing.assert_array_equal(both, random_halves(9, 2, random_state=4))


def test_independent_halves_keep_the_model_audit_draws():
    """The model audit's design before the halves were unified: one ``random_half`` per model, one Generator.

    Written out here (mask[rng.permutation(n)[: n // 2]] = True, model by model) so that a change of the
    algorithm, which would move the published audit figures, fails this test.
    """
    for n, n_models, seed in [(120, 4, 0), (569, 16, 3), (4000, 8, 0)]:
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[0])
        expected = np.zeros((n_models, n), dtype=bool)
        for m in range(n_models):
            expected[m, rng.permutation(n)[: n // 2]] = True
        got = independent_halves(
            n, n_models, random_state=np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[0])
        )
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", range(2, 9))
def test_all_halves_enumerates_every_subset_once(n):
    for k in range(1, n):
        halves = all_halves(n, k)
        assert halves.shape == (math.comb(n, k), n)
        assert np.all(halves.sum(axis=1) == k)
        assert len({row.tobytes() for row in halves}) == math.comb(n, k)  # distinct
        assert {tuple(np.flatnonzero(row)) for row in halves} == set(combinations(range(n), k))
    np.testing.assert_array_equal(all_halves(n), all_halves(n, n // 2))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: random_halves(1, 3, random_state=0), "n_records"),
        (lambda: random_halves(10, 0, random_state=0), "n_halves"),
        (lambda: random_halves(10, 3, k=10, random_state=0), "'k'"),
        (lambda: random_halves(10, 3, k=0, random_state=0), "'k'"),
        (lambda: random_half(6, k=6, random_state=0), "'k'"),
        (lambda: all_halves(5, 5), "'k'"),
        (lambda: all_halves(40), "too many"),
        (lambda: random_halves(10, 3, random_state=-1), "random_state"),
    ],
)
def test_bad_half_parameters_are_refused(call, match):
    with pytest.raises(MipkitValueError, match=match):
        call()


def _row(n: int, subset: tuple[int, ...]) -> np.ndarray:
    row = np.zeros(n, dtype=bool)
    row[list(subset)] = True
    return row


def test_tasks_from_membership_fixed_and_shuffled_order():
    mask = balanced_membership(50, 6, random_state=0)
    fixed = tasks_from_membership(mask, random_state=9)
    shuffled = tasks_from_membership(mask, random_state=9, shuffle=True)
    assert [t.index for t in fixed] == list(range(6))
    assert len({t.seed for t in fixed}) == 6
    for k, (f, s) in enumerate(zip(fixed, shuffled, strict=True)):
        np.testing.assert_array_equal(f.train_idx, np.flatnonzero(mask[k]))
        np.testing.assert_array_equal(np.sort(s.train_idx), f.train_idx)
        assert f.seed == s.seed  # the seeds are drawn first, whatever the order option
    assert any(not np.array_equal(f.train_idx, s.train_idx) for f, s in zip(fixed, shuffled, strict=True))
    unseeded = tasks_from_membership(mask, random_state=9, seeded=False)
    assert all(t.seed is None for t in unseeded)
    with pytest.raises(MipkitValueError, match="boolean"):
        tasks_from_membership(mask.astype(int), random_state=0)
