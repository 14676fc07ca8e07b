"""kneighbors_both_ways equals brute force in both directions exactly, ties included, at tiny block sizes."""

from __future__ import annotations

import numpy as np
import pytest

from mipkit.data.neighbors import kneighbors_both_ways, pairwise_distances
from mipkit.data.tables import check_tables, encode_mixed
from mipkit.metrics.nnaa import adversarial_accuracy, adversarial_accuracy_naive


def _brute(D: np.ndarray, k: int) -> np.ndarray:
    return np.sort(D, axis=1)[:, :k]


SCREEN_ROWS = 7  # query-block height of the "many_chunks" configuration (conftest)


def _manhattan(A, B):
    D = np.zeros((len(A), len(B)))
    for j in range(A.shape[1]):  # the kernels sum column by column; the same order here
        D += np.abs(A[:, j, None] - B[None, :, j])
    return D


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("discrete", [False, True])
def test_both_ways_numeric_equals_brute_force(chunking, metric, discrete):
    rng = np.random.default_rng(5)
    width = 13
    if discrete:  # many exact ties and duplicates: margin failures go to the one-way fallback
        A = rng.integers(0, 2, size=(241, width)).astype(float) * 0.1
        B = np.vstack([A[:40], rng.integers(0, 2, size=(170, width)).astype(float) * 0.1])
    else:
        A = rng.normal(size=(241, width)) * 1e3 + 5e3  # far from the origin: the bounds must hold there
        B = rng.normal(size=(210, width)) * 1e3 + 5e3
    D = pairwise_distances(A, B, metric=metric) if metric == "euclidean" else _manhattan(A, B)
    DT = pairwise_distances(B, A, metric=metric) if metric == "euclidean" else _manhattan(B, A)
    for k in (1, 2, 5):
        for n_jobs in (1, 2):
            (d_ab, i_ab), (d_ba, i_ba) = kneighbors_both_ways(
                A, B, k=k, metric=metric, algorithm="screened", n_jobs=n_jobs
            )
            np.testing.assert_array_equal(d_ab, _brute(D, k))
            np.testing.assert_array_equal(D[np.arange(len(A))[:, None], i_ab], d_ab)
            np.testing.assert_array_equal(d_ba, _brute(DT, k))
            np.testing.assert_array_equal(DT[np.arange(len(B))[:, None], i_ba], d_ba)


def test_both_ways_mixed_equals_brute_force(chunking, make_discrete_mixed_table):
    rng = np.random.default_rng(4)
    o, s = make_discrete_mixed_table(230, rng), make_discrete_mixed_table(190, rng)
    schema = check_tables(o, {"synthetic": s})
    A, B = encode_mixed(o, schema), encode_mixed(s, schema)
    D, DT = pairwise_distances(A, B), pairwise_distances(B, A)
    for k in (1, 2, 4):
        (d_ab, i_ab), (d_ba, i_ba) = kneighbors_both_ways(A, B, k=k, algorithm="screened")
        np.testing.assert_array_equal(d_ab, _brute(D, k))
        np.testing.assert_array_equal(D[np.arange(len(A))[:, None], i_ab], d_ab)
        np.testing.assert_array_equal(d_ba, _brute(DT, k))
        np.testing.assert_array_equal(DT[np.arange(len(B))[:, None], i_ba], d_ba)


def test_both_ways_small_and_one_way_paths():
    """k equal to the smaller table (every row a candidate) and the KD-tree path give brute force too."""
    rng = np.random.default_rng(9)
    A, B = rng.normal(size=(30, 12)), rng.normal(size=(4, 12))
    D = pairwise_distances(A, B, metric="euclidean")
    (d_ab, _), (d_ba, _) = kneighbors_both_ways(A, B, k=4, metric="euclidean", algorithm="screened")
    np.testing.assert_array_equal(d_ab, _brute(D, 4))
    np.testing.assert_array_equal(d_ba, _brute(D.T, 4))
    A3, B3 = A[:, :3], B[:, :3]
    D3 = pairwise_distances(A3, B3, metric="euclidean")
    (d_ab, _), (d_ba, _) = kneighbors_both_ways(A3, B3, k=2, metric="euclidean")
    np.testing.assert_allclose(d_ab, _brute(D3, 2), rtol=1e-12)
    np.testing.assert_allclose(d_ba, _brute(D3.T, 2), rtol=1e-12)
    with pytest.raises(ValueError, match="at most 4"):
        kneighbors_both_ways(A, B, k=5, metric="euclidean")


def test_nnaa_with_shared_pass_equals_naive_definition(chunking):
    """NNAA (now T<->S in one pass) still equals the O(n^3) definition exactly, ties included; its
    stored T -> S distances are the DCR of T."""
    rng = np.random.default_rng(12)
    T = rng.integers(0, 3, size=(60, 12)).astype(float)
    S = np.vstack([T[:10], rng.integers(0, 3, size=(50, 12)).astype(float)])
    aa = adversarial_accuracy(T, S, metric="manhattan")
    want = adversarial_accuracy_naive(_manhattan(T, T), _manhattan(T, S), _manhattan(S, S))
    assert aa.term_t == want.term_t and aa.term_s == want.term_s
    np.testing.assert_array_equal(aa.distances_t_to_s[:, 0], _manhattan(T, S).min(axis=1))
    np.testing.assert_array_equal(aa.distances_s_to_t[:, 0], _manhattan(S, T).min(axis=1))
