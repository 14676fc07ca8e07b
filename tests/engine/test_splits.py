"""The membership splits: LiRA's balanced design and the tasks built from it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipkit._validation import MipkitValueError
from mipkit.engine import tasks_from_membership
from mipkit.game import balanced_membership, random_half
from mipkit.metrics import clopper_pearson


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
