"""Mixed tables and neighbour search: blocked / tree search equals brute force; validation messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from mipkit._validation import MipkitValueError
from mipkit.data.neighbors import kneighbors, pairwise_distances
from mipkit.data.tables import check_tables, encode_euclidean, encode_mixed


def _mixed(n, rng):
    df = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "k": rng.integers(0, 4, n).astype(float),
            "c": rng.choice(["u", "v", "w"], n).astype(object),
            "d": rng.choice(["p", "q"], n),
        }
    )
    df.loc[rng.random(n) < 0.15, "k"] = np.nan
    df.loc[rng.random(n) < 0.15, "c"] = None
    return df


def _gower_by_hand(a: pd.Series, b: pd.Series, ranges: dict) -> float:
    total = 0.0
    for col in a.index:
        va, vb = a[col], b[col]
        if pd.isna(va) and pd.isna(vb):
            continue
        if pd.isna(va) or pd.isna(vb):
            total += 1
        elif col in ranges:
            total += abs(va - vb) / ranges[col]
        else:
            total += float(va != vb)
    return total


def test_mixed_distance_matches_definition():
    rng = np.random.default_rng(0)
    o, s = _mixed(40, rng), _mixed(30, rng)
    schema = check_tables(o, {"synthetic": s})
    D = pairwise_distances(encode_mixed(o, schema), encode_mixed(s, schema))
    ranges = {c: o[c].max() - o[c].min() for c in ("x", "k")}
    for i, j in [(0, 0), (3, 7), (11, 29), (39, 5)]:
        assert D[i, j] == pytest.approx(_gower_by_hand(o.iloc[i], s.iloc[j], ranges), abs=1e-12)


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_blocked_mixed_equals_brute_force(k, exclude_self):
    rng = np.random.default_rng(k)
    o = _mixed(150, rng)
    s = o if exclude_self else _mixed(97, rng)
    schema = check_tables(o, {"synthetic": s})
    A, B = encode_mixed(o, schema), encode_mixed(s, schema)
    D = pairwise_distances(A, B)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    want = np.sort(D, axis=1)[:, :k]
    for n_jobs in (1, 2):
        d, idx = kneighbors(A, B, k=k, exclude_self=exclude_self, max_block_bytes=20_000, n_jobs=n_jobs)
        np.testing.assert_array_equal(d, want)
        np.testing.assert_array_equal(D[np.arange(len(o))[:, None], idx], want)


@pytest.mark.parametrize("algorithm", ["blocked", "kdtree"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_numeric_search_equals_brute_force(algorithm, metric):
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(300, 6)), rng.normal(size=(211, 6))
    D = cdist(A, B, "euclidean" if metric == "euclidean" else "cityblock")
    d, idx = kneighbors(A, B, k=2, metric=metric, algorithm=algorithm, max_block_bytes=50_000)
    np.testing.assert_allclose(d, np.sort(D, axis=1)[:, :2], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(idx, np.argsort(D, axis=1)[:, :2])
    Dself = cdist(A, A, "euclidean" if metric == "euclidean" else "cityblock")
    np.fill_diagonal(Dself, np.inf)
    d, idx = kneighbors(A, A, k=2, metric=metric, algorithm=algorithm, exclude_self=True)
    np.testing.assert_allclose(d, np.sort(Dself, axis=1)[:, :2], rtol=1e-12, atol=1e-12)


def test_euclidean_encoding_onehot_and_missing():
    o = pd.DataFrame({"x": [0.0, 2.0, np.nan], "c": ["a", "b", None]})
    schema = check_tables(o)
    E = encode_euclidean(o, schema)
    # x standardised (mean 1, sd 1) with missing -> 0 and an indicator; c one-hot a, b, missing
    np.testing.assert_allclose(E, [[-1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [0, 1, 0, 0, 1]])


def test_validation_messages():
    o = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    with pytest.raises(MipkitValueError, match="lacks column.*'b'.*not in the original.*'z'"):
        check_tables(o, {"synthetic": pd.DataFrame({"a": [1.0], "z": ["x"]})})
    with pytest.raises(MipkitValueError, match="'b' of the synthetic table is entirely missing"):
        check_tables(o, {"synthetic": pd.DataFrame({"a": [1.0], "b": [None]})})
    with pytest.raises(MipkitValueError, match="'secret' not found"):
        check_tables(o, required=["secret"])
    with pytest.raises(MipkitValueError, match="synthetic table is empty"):
        check_tables(o, {"synthetic": o.iloc[:0]})
    with pytest.raises(MipkitValueError, match="numeric in the original table but not in the control"):
        check_tables(o, {"control": pd.DataFrame({"a": ["old"], "b": ["x"]})})
    with pytest.raises(MipkitValueError, match="'k'"):
        kneighbors(np.zeros((3, 2)), np.zeros((3, 2)), k=3, exclude_self=True, metric="euclidean")
