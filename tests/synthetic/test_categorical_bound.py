"""The search pruned by category mismatches equals brute force exactly: distances, ties (smallest index)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mipkit.data.neighbors.categorical_bound as categorical_bound
from mipkit.data.neighbors import kneighbors, pairwise_distances
from mipkit.data.neighbors.categorical_bound import CategoricalBound
from mipkit.data.neighbors.kernels import exact_lattice
from mipkit.data.tables import check_tables, encode_mixed


def _brute(D: np.ndarray, k: int, exclude_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest of each row, ties by the smaller column index (a stable sort)."""
    D = D.copy()
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, order, axis=1), order


@pytest.fixture
def always_pruned(monkeypatch):
    """The bound answers every block, however many candidates it keeps."""
    monkeypatch.setattr(categorical_bound, "MAX_CANDIDATE_SHARE", 1.0)


def _encoded(o: pd.DataFrame, s: pd.DataFrame):
    schema = check_tables(o, {"synthetic": s})
    return encode_mixed(o, schema), encode_mixed(s, schema)


@pytest.mark.parametrize("exclude_self", [False, True])
def test_pruned_search_equals_brute_force_with_ties(always_pruned, exclude_self, make_discrete_mixed_table):
    rng = np.random.default_rng(5)
    o = make_discrete_mixed_table(300, rng)
    s = o if exclude_self else make_discrete_mixed_table(211, rng)
    A, B = _encoded(o, s)
    D = pairwise_distances(A, B)  # exact lattice values: ties are exact
    for k in (1, 2, 4):
        for n_jobs in (1, 2):
            d, idx = kneighbors(A, B, k=k, exclude_self=exclude_self, n_jobs=n_jobs)
            want_d, want_i = _brute(D, k, exclude_self)
            np.testing.assert_array_equal(d, want_d)
            np.testing.assert_array_equal(idx, want_i)  # ties: the smallest index, as a stable sort


def test_duplicates_return_the_first_copy(always_pruned):
    o = pd.DataFrame({"x": [0.0, 10.0], "c": ["a", "b"]})
    s = pd.DataFrame({"x": [5.0, 0.0, 0.0, 10.0, 0.0], "c": ["a", "b", "a", "b", "a"]})
    A, B = _encoded(o, s)
    d, idx = kneighbors(A, B, k=2)
    np.testing.assert_array_equal(idx, [[2, 4], [3, 1]])
    np.testing.assert_array_equal(d[:, 0], [0.0, 0.0])


def test_block_with_too_many_candidates_is_refused(monkeypatch, make_discrete_mixed_table):
    rng = np.random.default_rng(2)
    A, B = _encoded(make_discrete_mixed_table(40, rng), make_discrete_mixed_table(60, rng))
    bound = CategoricalBound(B, exact_lattice(A, B))
    monkeypatch.setattr(categorical_bound, "MAX_CANDIDATE_SHARE", 0.0)
    assert bound.search(A, np.arange(40), 1, False) is None
    # the search falls back to the screened one, with the same exact distances
    d, _ = kneighbors(A, B, k=3)
    np.testing.assert_array_equal(d, _brute(pairwise_distances(A, B), 3, False)[0])


def test_mismatch_counts_are_those_of_the_codes(monkeypatch, make_discrete_mixed_table):
    rng = np.random.default_rng(4)
    A, B = _encoded(make_discrete_mixed_table(30, rng), make_discrete_mixed_table(50, rng))
    counts = CategoricalBound(B).mismatches(A).T  # (reference rows, query rows) -> (query, reference)
    want = (A.codes[:, None, :] != B.codes[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(counts, want)
    # a lower bound of the distance, in floating point too
    assert np.all(pairwise_distances(A, B) >= counts)
    # columns grouped by their level combinations, or compared one by one: the same counts
    monkeypatch.setattr(categorical_bound, "_MAX_KEYS", 1)
    np.testing.assert_array_equal(CategoricalBound(B).mismatches(A).T, want)
    monkeypatch.setattr(categorical_bound, "_MAX_KEYS", 10**6)
    assert len(CategoricalBound(B).groups) == 1
    np.testing.assert_array_equal(CategoricalBound(B).mismatches(A).T, want)


@settings(max_examples=40, deadline=None)
@given(
    n_a=st.integers(1, 25),
    n_b=st.integers(3, 30),
    levels=st.integers(1, 4),
    decimals=st.booleans(),
    k=st.integers(1, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_pruned_search_property(n_a, n_b, levels, decimals, k, seed):
    # random mixed tables, integer or continuous numerics, missing values on both sides
    rng = np.random.default_rng(seed)

    def table(n: int) -> pd.DataFrame:
        x = rng.integers(0, 5, n).astype(float)
        if decimals:
            x = x + rng.random(n)
        df = pd.DataFrame(
            {"x": x, "y": rng.integers(0, 3, n).astype(float), "c": rng.choice(list("abcd")[:levels], n)}
        )
        gone = rng.random((2, n)) < 0.15
        gone[:, 0] = False  # no column entirely missing (refused by check_tables)
        df.loc[gone[0], "x"] = np.nan
        df.loc[gone[1], "c"] = None
        return df

    A, B = _encoded(table(n_a), table(n_b))
    bound = CategoricalBound(B, exact_lattice(A, B))
    old = categorical_bound.MAX_CANDIDATE_SHARE
    categorical_bound.MAX_CANDIDATE_SHARE = 1.0
    try:
        d, idx = bound.search(A, np.arange(n_a), k, False)
    finally:
        categorical_bound.MAX_CANDIDATE_SHARE = old
    want_d, want_i = _brute(pairwise_distances(A, B), k, False)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(idx, want_i)


@pytest.mark.parametrize("n_cat", [3, 260])  # 260: counts above what uint8 holds
def test_categorical_only_tables(always_pruned, n_cat):
    # no numeric column: the mismatch count is the distance itself
    rng = np.random.default_rng(n_cat)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({f"c{j}": rng.choice(list("ab"), n) for j in range(n_cat)})

    A, B = _encoded(table(20), table(30))
    bound = CategoricalBound(B, exact_lattice(A, B))
    assert bound.count_dtype == (np.uint8 if n_cat < 255 else np.uint32)
    for k in (1, 2):
        d, idx = kneighbors(A, B, k=k)
        want_d, want_i = _brute(pairwise_distances(A, B), k, False)
        np.testing.assert_array_equal(d, want_d)
        np.testing.assert_array_equal(idx, want_i)
