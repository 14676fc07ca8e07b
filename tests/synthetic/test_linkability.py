"""Linkability: links against a naive O(n^2) search, a known leak, the null (false alarms), determinism,
precision at base rates and bad column subsets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.attacks.linkability import check_aux_columns, linkability_guesses, linked
from mipkit.data.tables import check_tables, encode_mixed
from mipkit.metrics.linkability import measure_linkability

A, B = ("x1", "c1"), ("x2", "x3", "c2")


def _table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Continuous numeric columns (no tied distances) and two categorical ones."""
    return pd.DataFrame(
        {
            "x1": rng.normal(0, 1, n),
            "x2": rng.normal(0, 1, n),
            "x3": rng.uniform(0, 5, n),
            "c1": rng.choice(list("abc"), n),
            "c2": rng.choice(list("pq"), n),
        }
    )


def _naive_links(q: pd.DataFrame, s: pd.DataFrame, schema, k: int) -> np.ndarray:
    """For each query row: the k nearest synthetic rows on each half by a double loop, then a set test."""
    rng_of = dict(zip(schema.numeric, schema.num_range, strict=True))

    def dist(a, b, cols):
        return sum(
            abs(a[c] - b[c]) / rng_of[c] if c in rng_of else float(a[c] != b[c]) for c in cols
        )  # the mixed distance, docs/theory.md section 6

    out, syn_rows = [], s.to_dict("records")
    for row in q.to_dict("records"):
        near = []
        for cols in (A, B):
            d = [dist(row, srow, cols) for srow in syn_rows]
            near.append(set(np.argsort(d, kind="stable")[:k].tolist()))
        out.append(bool(near[0] & near[1]))
    return np.array(out)


@pytest.mark.parametrize("k", [1, 3])
def test_links_match_a_naive_search(k):
    rng = np.random.default_rng(k)
    syn = _table(60, rng)
    q = pd.concat([syn.iloc[:10], _table(15, rng)], ignore_index=True)  # some exact copies
    schema = check_tables(syn, {"q": q})
    eq, es = encode_mixed(q, schema), encode_mixed(syn, schema)

    def half(e, cols):
        return e.columns(
            [i for i, c in enumerate(schema.numeric) if c in cols],
            [i for i, c in enumerate(schema.categorical) if c in cols],
        )

    order = np.random.default_rng(0).permutation(len(syn))
    got, tied = linked(half(eq, A), half(eq, B), half(es, A), half(es, B), n_neighbors=k, order=order)
    np.testing.assert_array_equal(got, _naive_links(q, syn, schema, k))
    assert not tied.any()
    assert got[:10].all()  # an exact copy links its own halves


def _result(members, syn, control, *, seed=0, n=150, k=1):
    schema = check_tables(members, {"s": syn, "c": control})
    g = linkability_guesses(
        members, syn, schema=schema, aux_cols=(A, B), control=control, n_attacks=n, n_neighbors=k,
        random_state=seed,
    )  # fmt: skip
    return measure_linkability(g)


def test_copying_the_members_is_a_high_risk():
    rng = np.random.default_rng(3)
    members, control = _table(300, rng), _table(300, rng)
    r = _result(members, members.copy(), control)
    assert r.attack.value == 1.0
    assert r.risk()["ci"][0] > 0.8


def test_null_synthetic_data_has_no_risk_and_few_false_alarms():
    rng = np.random.default_rng(4)
    excluded = 0
    for rep in range(20):
        members, control, syn = _table(120, rng), _table(120, rng), _table(120, rng)
        lo, hi = _result(members, syn, control, seed=rep, n=80, k=3).risk()["ci"]
        excluded += not (lo <= 0.0 <= hi)
    assert excluded <= 3  # P(Binomial(20, 0.05) >= 4) = 1.6%


def test_seeded_runs_repeat_and_precision_at_base_rates():
    rng = np.random.default_rng(5)
    members, control = _table(200, rng), _table(200, rng)
    syn = pd.concat([members.iloc[:60], _table(140, rng)], ignore_index=True)  # a partial leak
    a, b, c = (_result(members, syn, control, seed=s).to_dict() for s in (7, 7, 8))
    assert a == b and a != c
    tpr, fpr = a["attack_success"]["value"], a["control_success"]["value"]
    p = a["precision_at_base_rate"]["1:10"]
    assert p["value"] == pytest.approx(tpr / (tpr + 10 * fpr))
    assert p["ci"][0] <= p["value"] <= p["ci"][1]


@pytest.mark.parametrize(
    ("aux", "match"),
    [
        ((("x1",), ("nope",)), "not found"),
        (((), ("x1",)), "at least one column"),
        ((("x1", "c1"), ("c1",)), "share"),
        ((("x1",),), "exactly two"),
    ],
)
def test_bad_column_subsets(aux, match):
    with pytest.raises(MipkitValueError, match=match):
        check_aux_columns(aux, ["x1", "x2", "c1"])


@pytest.mark.parametrize("k", [1, 4])
def test_nearest_records_with_ties_are_a_valid_k_nearest_set(k, make_discrete_mixed_table):
    from mipkit.attacks.linkability import _k_nearest_records
    from mipkit.data.neighbors import pairwise_distances

    rng = np.random.default_rng(10 + k)
    syn, q = make_discrete_mixed_table(80, rng), make_discrete_mixed_table(30, rng)
    schema = check_tables(syn, {"q": q})
    es, eq = encode_mixed(syn, schema), encode_mixed(q, schema)
    idx, tied = _k_nearest_records(eq, es, k, 1)
    d = pairwise_distances(eq, es)
    srt = np.sort(d, axis=1)
    got = np.sort(np.take_along_axis(d, idx, axis=1), axis=1)
    np.testing.assert_array_equal(got, srt[:, :k])  # the k smallest distances, ties included
    assert all(len(set(row)) == k for row in idx)  # k different records
    np.testing.assert_array_equal(tied, srt[:, k - 1] == srt[:, k])
    # identical synthetic rows are taken in table order: the first of a set of copies comes first
    dup = pd.concat([syn.iloc[:5]] * 3, ignore_index=True)
    e = encode_mixed(dup, schema)
    i1, _ = _k_nearest_records(encode_mixed(syn.iloc[:5], schema), e, 1, 1)
    np.testing.assert_array_equal(i1[:, 0], np.arange(5))
