"""Singling out: bit-set counts against a naive loop, the predicates' definition, the control's size
correction against brute-force subsets, a known leak, the null (false alarms) and determinism."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

import mipkit.attacks.singling_out as so
from mipkit.attacks.singling_out import (
    EQ,
    GE,
    LE,
    MISSING,
    PredicateIndex,
    Predicates,
    encode_distinct,
    singling_out_counts,
    singling_out_predicates,
)
from mipkit.data.tables import check_tables
from mipkit.metrics.singling_out import measure_singling_out, subsample_success, training_size_bounds


def _table(n: int, rng: np.random.Generator, *, missing: bool = True) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 40, n).astype(float),
            "score": rng.normal(0, 1, n).round(1),
            "city": rng.choice(list("abcdefgh"), n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    if missing:
        df.loc[rng.random(n) < 0.05, "age"] = np.nan
        df.loc[rng.random(n) < 0.05, "city"] = None
    return df


def _naive_count(values: np.ndarray, col, op, val) -> int:
    """Rows satisfying every condition, one condition at a time (plain NumPy comparisons)."""
    ok = np.ones(len(values), dtype=bool)
    for j, o, v in zip(col, op, val, strict=True):
        x = values[:, j]
        with np.errstate(invalid="ignore"):
            ok &= np.isnan(x) if o == MISSING else (x == v) if o == EQ else (x <= v) if o == LE else (x >= v)
    return int(ok.sum())


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("n_rows", [1, 63, 64, 65, 300])
def test_counts_match_a_naive_loop(n_rows, k, monkeypatch):
    monkeypatch.setattr(so, "_PREFIX_BYTES", 64)  # many prefix masks and remainders, even on small tables
    rng = np.random.default_rng(n_rows)
    df = _table(n_rows, rng)
    schema = check_tables(df)
    v = encode_distinct(df, schema)
    m = 400
    col = rng.integers(0, v.shape[1], (m, k))
    n_num = len(schema.numeric)
    op = np.where(col < n_num, rng.integers(0, 4, (m, k)), EQ).astype(np.int8)
    src = v[rng.integers(0, len(v), (m, k)), col]  # values that occur, and some that do not
    val = np.where(rng.random((m, k)) < 0.2, np.round(rng.normal(0, 20, (m, k))), src)
    val = np.where((op == MISSING) | np.isnan(val), 0.0, val)
    preds = Predicates(col, op, val)
    counts = PredicateIndex(v).count(preds)
    naive = [_naive_count(v, col[i], op[i], val[i]) for i in range(m)]
    np.testing.assert_array_equal(counts, naive)


def test_distinct_rows():
    df = pd.DataFrame({"a": [1.0, 1.0, np.nan, np.nan, 2.0], "b": ["x", "x", None, None, "y"]})
    assert len(encode_distinct(df, check_tables(df))) == 3


@pytest.mark.parametrize("mode", ["univariate", "multivariate"])
def test_predicates_single_out_the_synthetic_rows(mode):
    rng = np.random.default_rng(1)
    syn = _table(200, rng)
    schema = check_tables(syn)
    v = encode_distinct(syn, schema)
    preds, attempts = singling_out_predicates(
        v, len(schema.numeric), mode=mode, n_predicates=40, n_cols=2, random_state=0
    )
    assert 0 < len(preds) <= 40 and attempts >= len(preds)
    keys = {tuple(np.r_[preds.col[i], preds.op[i], preds.value[i]]) for i in range(len(preds))}
    assert len(keys) == len(preds)  # distinct
    for i in range(len(preds)):
        assert _naive_count(v, preds.col[i], preds.op[i], preds.value[i]) == 1
    if mode == "multivariate":  # numeric conditions point away from the synthetic median
        med = np.nanmedian(v[:, : len(schema.numeric)], axis=0)
        for i in range(len(preds)):
            for j, o, x in zip(preds.col[i], preds.op[i], preds.value[i], strict=True):
                if j < len(schema.numeric) and o != MISSING:
                    assert o == (GE if x > med[j] else LE)


def test_univariate_predicates_are_every_rare_or_extreme_value():
    rng = np.random.default_rng(2)
    syn = _table(80, rng)
    schema = check_tables(syn)
    v = encode_distinct(syn, schema)
    preds, _ = singling_out_predicates(v, len(schema.numeric), mode="univariate", n_predicates=10_000)
    got = {(int(preds.col[i, 0]), int(preds.op[i, 0]), float(preds.value[i, 0])) for i in range(len(preds))}
    expected = set()
    for j in range(v.shape[1]):
        x = v[:, j]
        cands = [(j, EQ, float(a)) for a in x[~np.isnan(x)]]
        if j < len(schema.numeric):
            present = x[~np.isnan(x)]
            cands += [(j, LE, float(present.min())), (j, GE, float(present.max())), (j, MISSING, 0.0)]
        for c in cands:
            if _naive_count(v, [c[0]], [c[1]], [c[2]]) == 1:
                expected.add(c)
    assert got == expected


def test_subsample_success_is_the_mean_over_all_subsets():
    counts_rows = np.array([[1, 0, 0, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 1]], bool)
    n, size = counts_rows.shape[1], 3
    subsets = list(combinations(range(n), size))
    brute = np.mean([[counts_rows[i, list(s)].sum() == 1 for s in subsets] for i in range(3)])
    assert subsample_success(counts_rows.sum(axis=1), n, size) == pytest.approx(brute)
    # a control at least as large as the training table gives its success there exactly: both bounds
    assert training_size_bounds(counts_rows.sum(axis=1), n, size) == pytest.approx((brute, brute))
    assert training_size_bounds(counts_rows.sum(axis=1), n, n) == pytest.approx((1 / 3, 1 / 3))


def _risk(original, synthetic, control, *, mode="multivariate", seed=0, n=60):
    schema = check_tables(original, {"s": synthetic, "c": control})
    counts = singling_out_counts(
        original, synthetic, schema=schema, control=control, mode=mode, n_predicates=n, n_cols=3,
        random_state=seed,
    )  # fmt: skip
    return measure_singling_out(counts)


def test_copying_the_members_is_a_high_risk():
    rng = np.random.default_rng(3)
    members, control = _table(300, rng), _table(300, rng)
    r = _risk(members, members.copy(), control)
    assert r.attack.value == 1.0  # every predicate that isolates a synthetic row isolates its member copy
    assert r.risk["ci"][0] > 0.5
    # at the training size too, with a control a third as large (its success there only bounded)
    small = _risk(members, members.copy(), control.iloc[:100]).training_size
    assert not small["exact"] and small["risk"]["ci"][0] > 0.3


def _encoded(n: int, rng: np.random.Generator) -> np.ndarray:
    """Distinct rows of two numeric and two categorical (coded) columns, as ``encode_distinct`` gives."""
    v = np.column_stack(
        [rng.integers(18, 40, n), rng.normal(0, 1, n).round(1), rng.integers(0, 8, n), rng.integers(0, 2, n)]
    ).astype(float)
    return pd.DataFrame(v).drop_duplicates().to_numpy()


@pytest.mark.parametrize(("n_members", "n_control"), [(200, 200), (320, 120)])
def test_null_synthetic_data_has_no_risk_and_few_false_alarms(n_members, n_control):
    rng = np.random.default_rng(4)
    excluded = 0
    for rep in range(20):
        members, control, syn = _encoded(n_members, rng), _encoded(n_control, rng), _encoded(200, rng)
        preds, attempts = singling_out_predicates(syn, 2, n_predicates=40, n_cols=3, random_state=rep)
        counts = so.SinglingOutCounts(
            "multivariate", 40, 3, preds, attempts, PredicateIndex(members).count(preds),
            PredicateIndex(control).count(preds), len(members), len(control), len(syn),
        )  # fmt: skip
        r = measure_singling_out(counts)
        lo, hi = r.risk["ci"]
        excluded += not (lo <= 0.0 <= hi)
        assert r.equal_size["size"] == min(len(members), len(control))
    # P(Binomial(20, 0.05) >= 4) = 1.6%; anonymeter's interval ignores the predicates' shared draw, which
    # makes it wider, not narrower, here
    assert excluded <= 3


def test_seeded_runs_repeat():
    rng = np.random.default_rng(5)
    members, control, syn = _table(200, rng), _table(150, rng), _table(200, rng)
    a = _risk(members, syn, control, seed=7).to_dict()
    b = _risk(members, syn, control, seed=7).to_dict()
    c = _risk(members, syn, control, seed=8).to_dict()
    assert a == b and a != c
    # a smaller control: the training records are subsampled exactly to its size for the headline ...
    eq = a["equal_size"]
    assert eq["size"] == a["distinct_rows"]["control"] and eq["subsampled"] == "training"
    assert eq["control_success"] == a["control_success_raw"]["value"]
    counts = singling_out_counts(members, syn, schema=check_tables(members, {"s": syn, "c": control}),
                                 control=control, n_predicates=60, random_state=7)  # fmt: skip
    want = subsample_success(counts.counts_original, counts.n_original, counts.n_control)
    assert eq["attack_success"] == pytest.approx(want)
    # ... and at the training table's size, the control's success is bounded, not extrapolated
    ts = a["training_size"]
    assert ts["size"] == a["distinct_rows"]["original"] and not ts["exact"]
    assert ts["attack_success"] == a["attack_success"]["value"]
    lo, hi = ts["control_success_bounds"]
    assert 0 <= lo <= hi <= 1 and ts["risk"]["ci"][0] <= ts["risk"]["bounds"][0] <= ts["risk"]["bounds"][1]


def test_no_predicate_found():
    df = pd.DataFrame({"a": [1.0, 1.0, 2.0, 2.0], "b": ["x", "x", "y", "y"]})
    # distinct rows (1, x), (2, y): every value occurs once, so univariate predicates exist; multivariate
    # with both columns does too. A one-row synthetic table with two equal rows after dedup: 1 row.
    r = _risk(df, df.iloc[[0, 1]], df, mode="univariate", n=5)
    assert r.n_predicates >= 1
    empty = measure_singling_out(
        so.SinglingOutCounts(
            "multivariate",
            5,
            3,
            Predicates(*(np.empty((0, 3)),) * 3),
            10,
            np.empty(0, int),
            np.empty(0, int),
            4,
            4,
            4,
        )  # fmt: skip
    )
    assert empty.risk is None and empty.to_dict()["note"]


def test_training_size_bounds_hold_the_expected_success_of_a_population_sample():
    # Monte Carlo check: predicates with known match probabilities, control counts drawn from them; the
    # expected success of an N-row sample, mean_i N p_i (1 - p_i)^(N - 1), lies within the bounds (each at
    # 97.5%) in all but a few of 40 draws, and a plug-in p_i = C_i / N_c would sit far below it
    rng = np.random.default_rng(0)
    n, n_c = 2000, 500
    p = rng.choice([0.2 / n, 1.0 / n, 3.0 / n, 0.02], size=300)
    truth = float(np.mean(n * p * (1 - p) ** (n - 1)))
    inside = 0
    for _ in range(40):
        c = rng.binomial(n_c, p)
        lo, hi = training_size_bounds(c, n_c, n)
        inside += lo <= truth <= hi
        assert np.mean(n * (c / n_c) * (1 - c / n_c) ** (n - 1)) < truth / 2
    assert inside >= 37


def test_training_size_risk_is_valid_on_null_tables():
    # null: training, control and synthetic records from one population; the interval of the risk at the
    # training table's size (control a quarter of it) excludes 0 at most 3 times in 20 (P = 1.6% at a 5% rate)
    rng = np.random.default_rng(21)
    alarms = 0
    for rep in range(20):
        members, control, syn = _table(400, rng), _table(100, rng), _table(400, rng)
        ts = _risk(members, syn, control, seed=rep).training_size
        alarms += ts["risk"]["ci"][0] > 0 or ts["risk"]["ci"][1] < 0
    assert alarms <= 3
