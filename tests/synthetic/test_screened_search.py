"""Screened search (float32 candidates, exact float64 decision) equals brute force exactly, ties included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mipkit.data.neighbors.screening as screening
from mipkit.data.neighbors import kneighbors, pairwise_distances
from mipkit.data.tables import check_tables, encode_mixed


def _brute(D: np.ndarray, k: int, exclude_self: bool) -> np.ndarray:
    D = D.copy()
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    return np.sort(D, axis=1)[:, :k]


SCREEN_ROWS = 37  # query-block height of the "many_chunks" configuration (conftest)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("discrete", [False, True])
def test_screened_numeric_equals_brute_force(chunking, metric, exclude_self, discrete):
    rng = np.random.default_rng(11)
    width = 14  # above the KD-tree limit, so "auto" screens too
    if discrete:  # many exact ties and duplicates: the margin test fails and more candidates are taken
        A = rng.integers(0, 2, size=(260, width)).astype(float) * 0.1
        B = A if exclude_self else rng.integers(0, 2, size=(233, width)).astype(float) * 0.1
    else:
        A = rng.normal(size=(260, width)) * 1e3 + 5e3  # far from the origin: the bound must hold there too
        B = A if exclude_self else rng.normal(size=(233, width)) * 1e3 + 5e3
    D = pairwise_distances(A, B, metric=metric)
    if metric == "manhattan":  # the kernels sum column by column; the same order here
        D = np.zeros((len(A), len(B)))
        for j in range(width):
            D += np.abs(A[:, j, None] - B[None, :, j])
    for k in (1, 2, 5):
        for n_jobs in (1, 2):
            d, idx = kneighbors(
                A, B, k=k, metric=metric, exclude_self=exclude_self, algorithm="screened", n_jobs=n_jobs
            )
            want = _brute(D, k, exclude_self)
            np.testing.assert_array_equal(d, want)
            np.testing.assert_array_equal(D[np.arange(len(A))[:, None], idx], want)
            if exclude_self:
                assert not np.any(idx == np.arange(len(A))[:, None])


@pytest.mark.parametrize("exclude_self", [False, True])
def test_screened_mixed_equals_brute_force(chunking, exclude_self, make_discrete_mixed_table):
    rng = np.random.default_rng(3)
    o = make_discrete_mixed_table(300, rng)
    s = o if exclude_self else make_discrete_mixed_table(211, rng)
    schema = check_tables(o, {"synthetic": s})
    A, B = encode_mixed(o, schema), encode_mixed(s, schema)
    D = pairwise_distances(A, B)
    for k in (1, 2, 4):
        d, idx = kneighbors(A, B, k=k, exclude_self=exclude_self, algorithm="screened")
        want = _brute(D, k, exclude_self)
        np.testing.assert_array_equal(d, want)
        np.testing.assert_array_equal(D[np.arange(len(A))[:, None], idx], want)


def test_screened_equals_blocked_on_continuous_mixed():
    rng = np.random.default_rng(8)
    o = pd.DataFrame(
        {"x": rng.normal(size=400), "y": rng.gamma(2.0, size=400), "c": rng.choice(list("abcd"), 400)}
    )
    s = pd.DataFrame(
        {"x": rng.normal(size=350), "y": rng.gamma(2.0, size=350), "c": rng.choice(list("abcd"), 350)}
    )
    o.loc[rng.random(400) < 0.05, "y"] = np.nan
    schema = check_tables(o, {"synthetic": s})
    A, B = encode_mixed(o, schema), encode_mixed(s, schema)
    d1, i1 = kneighbors(A, B, k=3, algorithm="screened")
    d2, i2 = kneighbors(A, B, k=3, algorithm="blocked")
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(i1, i2)  # no ties in continuous data: the same neighbours


def test_screened_falls_back_to_exact_search_on_massive_ties(monkeypatch):
    """Two distinct rows, each ~100 times: no candidate set short of the whole table passes the margin."""
    calls = []
    exact_rows = screening.exact_rows
    monkeypatch.setattr(screening, "exact_rows", lambda *a, **kw: calls.append(1) or exact_rows(*a, **kw))
    rng = np.random.default_rng(2)
    A = np.zeros((200, 12))
    A[rng.random(200) < 0.5, 0] = 0.3
    for metric in ("euclidean", "manhattan"):
        D = pairwise_distances(A, A, metric=metric)
        d, idx = kneighbors(A, A, k=3, metric=metric, exclude_self=True, algorithm="screened")
        np.testing.assert_array_equal(d, _brute(D, 3, True))
        assert not np.any(idx == np.arange(len(A))[:, None])
    assert calls
