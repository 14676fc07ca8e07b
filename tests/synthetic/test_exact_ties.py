"""Exact ties on integer data: the mixed distance's range normalisation no longer splits distances that are
equal in exact arithmetic; NNAA equals its definition evaluated with exact rationals (fractions.Fraction)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipkit.data.neighbors import kneighbors, kneighbors_both_ways, pairwise_distances
from mipkit.data.neighbors.kernels import exact_lattice
from mipkit.data.tables import check_tables, encode_mixed
from mipkit.metrics.nnaa import adversarial_accuracy


def _exact_distance(a: pd.Series, b: pd.Series, schema) -> Fraction:
    """The mixed distance of two rows in exact rational arithmetic (docs/theory.md section 6)."""
    d = Fraction(0)
    for j, c in enumerate(schema.numeric):
        x, y = a[c], b[c]
        if pd.isna(x) and pd.isna(y):
            continue
        if pd.isna(x) or pd.isna(y):
            d += 1
            continue
        d += Fraction(abs(int(x) - int(y)), int(schema.num_range[j]))
    for c in schema.categorical:
        x, y = a[c], b[c]
        if pd.isna(x) and pd.isna(y):
            continue
        d += 0 if (not pd.isna(x) and not pd.isna(y) and str(x) == str(y)) else 1
    return d


def _exact_g(own: list[list[Fraction]], other: list[list[Fraction]]) -> list[Fraction]:
    """Pedersen's definition (4.1)/(4.5) per point, by brute force over every left-out other point."""
    out = []
    for i, row in enumerate(other):
        s = min(v for j, v in enumerate(own[i]) if j != i)
        m = len(row)
        strict = nonstrict = 0
        for k in range(m):
            o = min(v for j, v in enumerate(row) if j != k)
            strict += o > s
            nonstrict += o >= s
        out.append(Fraction(strict + nonstrict, 2 * m))
    return out


def _exact_nnaa(t: pd.DataFrame, s: pd.DataFrame, schema) -> tuple[list[Fraction], list[Fraction]]:
    tt = [[_exact_distance(a, b, schema) for _, b in t.iterrows()] for _, a in t.iterrows()]
    ss = [[_exact_distance(a, b, schema) for _, b in s.iterrows()] for _, a in s.iterrows()]
    ts = [[_exact_distance(a, b, schema) for _, b in s.iterrows()] for _, a in t.iterrows()]
    st_ = [list(col) for col in zip(*ts, strict=True)]
    return _exact_g(tt, ts), _exact_g(ss, st_)


def test_the_issue_example():
    # train x = [0, 6, 3], synthetic x = [4, 5, 5]: |5 - 4|/6 = |5 - 6|/6 exactly; term_S is 8/9
    t, s = pd.DataFrame({"x": [0, 6, 3]}), pd.DataFrame({"x": [4, 5, 5]})
    schema = check_tables(t, {"synthetic": s})
    T, S = encode_mixed(t, schema), encode_mixed(s, schema)
    assert schema.lattice == 6 and exact_lattice(T, S) == 6
    aa = adversarial_accuracy(T, S, n_jobs=1)
    assert aa.term_s == float(Fraction(8, 9))
    g_t, g_s = _exact_nnaa(t, s, schema)
    assert aa.term_t == float(sum(g_t) / 3) and aa.term_s == float(sum(g_s) / 3)
    # the float path (no lattice) splits the tie: what mipkit reported before
    raw = [type(X)(X.numeric, X.codes, X.n_levels, None) for X in (T, S)]
    assert adversarial_accuracy(*raw, n_jobs=1).term_s == pytest.approx(7 / 9)


def _integer_table(n: int, rng: np.random.Generator, with_missing: bool) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 27, n).astype(float),  # range 6 or so
            "kids": rng.integers(0, 4, n).astype(float),
            "c": rng.choice(["a", "b"], n),
        }
    )
    if with_missing:
        df.loc[rng.random(n) < 0.15, "kids"] = np.nan
        df.loc[rng.random(n) < 0.15, "c"] = None
        df.loc[0, "kids"], df.loc[0, "c"] = 1.0, "a"  # never a wholly missing column (refused by design)
    return df


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    n_t=st.integers(3, 9),
    n_s=st.integers(3, 9),
    with_missing=st.booleans(),
)
def test_nnaa_equals_exact_rational_brute_force(seed, n_t, n_s, with_missing):
    rng = np.random.default_rng(seed)
    t, s = _integer_table(n_t, rng, with_missing), _integer_table(n_s, rng, with_missing)
    schema = check_tables(t, {"synthetic": s})
    T, S = encode_mixed(t, schema), encode_mixed(s, schema)
    assert exact_lattice(T, S) == schema.lattice
    aa = adversarial_accuracy(T, S, n_jobs=1)
    g_t, g_s = _exact_nnaa(t, s, schema)
    # each record's share g(i)/m is exactly the rational one (rounded once to a double)
    assert aa.per_record_t.tolist() == [float(g) for g in g_t]
    assert aa.per_record_s.tolist() == [float(g) for g in g_s]
    assert aa.term_t == pytest.approx(float(sum(g_t) / n_t), abs=1e-15)
    assert aa.term_s == pytest.approx(float(sum(g_s) / n_s), abs=1e-15)


@pytest.mark.parametrize("algorithm", ["auto", "screened", "blocked", "kdtree"])
def test_searches_return_exact_lattice_values(algorithm):
    rng = np.random.default_rng(3)
    t = pd.DataFrame({"a": rng.integers(0, 7, 60), "b": rng.integers(-3, 10, 60)})
    s = pd.DataFrame({"a": rng.integers(0, 7, 50), "b": rng.integers(-3, 10, 50)})
    schema = check_tables(t, {"synthetic": s})
    T, S = encode_mixed(t, schema), encode_mixed(s, schema)
    L = schema.lattice
    assert np.lcm(int(schema.num_range[0]), int(schema.num_range[1])) == L
    exact = np.array(
        [[float(_exact_distance(a, b, schema)) for _, b in s.iterrows()] for _, a in t.iterrows()]
    )
    np.testing.assert_array_equal(pairwise_distances(T, S), exact)
    d, _ = kneighbors(T, S, k=3, algorithm=algorithm, n_jobs=1)
    np.testing.assert_array_equal(d, np.sort(exact, axis=1)[:, :3])
    if algorithm in ("auto", "screened"):
        (d_ab, _), (d_ba, _) = kneighbors_both_ways(T, S, k=2, algorithm=algorithm, n_jobs=1)
        np.testing.assert_array_equal(d_ab, np.sort(exact, axis=1)[:, :2])
        np.testing.assert_array_equal(d_ba, np.sort(exact.T, axis=1)[:, :2])


def test_no_lattice_for_non_integer_or_too_fine_data():
    t = pd.DataFrame({"x": [0.5, 1.0, 2.0]})
    assert check_tables(t).lattice is None
    # integer columns whose ranges have an lcm too large for the float64 rounding argument
    big = pd.DataFrame({"x": [0, 2**40 + 1], "y": [0, 2**40 - 1], "z": [0, 2**39 + 3]})
    schema = check_tables(big)
    B = encode_mixed(big, schema)
    assert schema.lattice is not None and exact_lattice(B, B) is None
    np.testing.assert_allclose(pairwise_distances(B, B), [[0, 3], [3, 0]])
    # a table the schema was not checked against, with a non-integer value: no lattice for it
    small = pd.DataFrame({"x": [0, 6, 3]})
    sch = check_tables(small)
    assert encode_mixed(pd.DataFrame({"x": [0.5]}), sch).lattice is None
