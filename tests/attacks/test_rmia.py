"""RMIA: the sorted / searchsorted implementation equals the brute-force N x M definition exactly."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipkit._validation import MipkitValueError
from mipkit.attacks import rmia_from_ratios, rmia_reference_probability, rmia_scores, tune_rmia_a
from mipkit.metrics import roc_auc

# multiples of 1/8: every mean of up to 4 of them, and every offline map with a in {0, 0.5, 1}, is exact
# in binary floating point, so ties (LR exactly equal to gamma) really occur and both sides see them
EIGHTHS = [1 / 8, 2 / 8, 3 / 8, 4 / 8, 5 / 8, 6 / 8, 7 / 8, 1.0]


def _brute_force(target_p, ref_p, ref_in, pop_target_p, pop_ref_p, a, gamma, online):
    """The definition, one (x, z) pair at a time, in plain Python."""
    k, n = len(ref_p), len(target_p)
    m = len(pop_target_p)

    def p_ref(values, outs):
        if online:
            return sum(values) / len(values)
        kept = [v for v, out in zip(values, outs, strict=True) if out] or list(values)
        p_out = sum(kept) / len(kept)
        return ((1 + a) * p_out + (1 - a)) / 2

    scores = []
    for i in range(n):
        p_x = p_ref([ref_p[j][i] for j in range(k)], [not ref_in[j][i] for j in range(k)])
        count = 0
        for z in range(m):
            p_z = p_ref([pop_ref_p[j][z] for j in range(k)], [True] * k)
            if (target_p[i] / p_x) / (pop_target_p[z] / p_z) > gamma:
                count += 1
        scores.append(count / m)
    return np.array(scores)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0, 3.0, 1.5]), min_size=1, max_size=30),
    st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0, 0.75]), min_size=1, max_size=30),
    st.sampled_from([0.5, 1.0, 2.0, 1.5, 4.0, 0.3]),
)
def test_from_ratios_equals_the_matrix_definition_with_ties(r_x, r_z, gamma):
    r_x, r_z = np.array(r_x), np.array(r_z)
    expected = np.mean(r_x[:, None] / r_z[None, :] > gamma, axis=1)
    np.testing.assert_array_equal(rmia_from_ratios(r_x, r_z, gamma=gamma), expected)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**31 - 1),
    st.integers(min_value=1, max_value=40),
    st.integers(min_value=1, max_value=40),
    st.floats(min_value=0.01, max_value=100.0),
)
def test_from_ratios_equals_the_matrix_definition_on_continuous_values(seed, n, m, gamma):
    rng = np.random.default_rng(seed)
    r_x = np.exp(rng.normal(size=n) * 3)
    r_z = np.exp(rng.normal(size=m) * 3)
    r_x[: n // 3] = r_z[0] * gamma  # exact boundary cases where representable
    expected = np.mean(r_x[:, None] / r_z[None, :] > gamma, axis=1)
    np.testing.assert_array_equal(rmia_from_ratios(r_x, r_z, gamma=gamma), expected)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**31 - 1),
    st.sampled_from([1, 2, 4]),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=12),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([0.5, 1.0, 2.0, 1.25]),
    st.booleans(),
)
def test_scores_equal_the_brute_force_definition(seed, k, n, m, a, gamma, online):
    rng = np.random.default_rng(seed)
    target_p = rng.choice(EIGHTHS, size=n)
    ref_p = rng.choice(EIGHTHS, size=(k, n))
    ref_in = rng.random((k, n)) < 0.5
    pop_target_p = rng.choice(EIGHTHS, size=m)
    pop_ref_p = rng.choice(EIGHTHS, size=(k, m))
    got = rmia_scores(target_p, ref_p, ref_in, pop_target_p, pop_ref_p, a=a, gamma=gamma, online=online)
    expected = _brute_force(
        target_p.tolist(),
        ref_p.tolist(),
        ref_in.tolist(),
        pop_target_p.tolist(),
        pop_ref_p.tolist(),
        a,
        gamma,
        online,
    )
    np.testing.assert_array_equal(got, expected)


def test_reference_probability_by_hand():
    ref_p = np.array([[0.2, 0.4], [0.6, 0.8], [1.0, 0.0]])
    ref_in = np.array([[True, False], [False, False], [False, True]])
    np.testing.assert_allclose(rmia_reference_probability(ref_p, online=True), [0.6, 0.4])
    # OUT means: record 0 -> (0.6 + 1.0)/2 = 0.8; record 1 -> (0.4 + 0.8)/2 = 0.6
    np.testing.assert_allclose(
        rmia_reference_probability(ref_p, ref_in, a=0.3),
        [(1.3 * 0.8 + 0.7) / 2, (1.3 * 0.6 + 0.7) / 2],
    )
    # a = 1 and everything OUT: offline p(x) is the plain mean, i.e. the online one
    np.testing.assert_allclose(
        rmia_reference_probability(ref_p, np.zeros_like(ref_in), a=1.0),
        rmia_reference_probability(ref_p, online=True),
    )


def test_memory_is_linear_not_quadratic():
    """20,000 targets x 20,000 population points: the N x M float matrix would take 3.2 GB; the sorted
    implementation must stay within a few MB of working memory beyond the inputs."""
    rng = np.random.default_rng(0)
    n = m = 20_000
    k = 4
    target_p, pop_target_p = rng.random(n), rng.random(m)
    ref_p, pop_ref_p = rng.random((k, n)), rng.random((k, m))
    ref_in = rng.random((k, n)) < 0.5
    tracemalloc.start()
    try:
        rmia_scores(target_p, ref_p, ref_in, pop_target_p, pop_ref_p, a=0.3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    inputs = sum(x.nbytes for x in (target_p, pop_target_p, ref_p, pop_ref_p, ref_in))
    assert peak < 2 * inputs + 8 * 8 * (n + m)  # O(N + M): a handful of length-N / length-M vectors
    assert peak < (n * m * 8) / 100


def test_tune_a_picks_the_best_auc_on_the_grid():
    """With every reference model used once as the target, the chosen a maximises the summed AUC."""
    rng = np.random.default_rng(5)
    k, n, m = 4, 300, 200
    hardness = rng.beta(2, 2, size=n)  # per-record OUT probability
    ref_in = np.zeros((k, n), dtype=bool)
    for i in range(n):
        ref_in[rng.choice(k, size=k // 2, replace=False), i] = True
    boost = 1 - 0.6 * (1 - hardness)  # IN models push the probability towards 1
    ref_p = np.clip(np.where(ref_in, boost, hardness) + rng.normal(0, 0.05, size=(k, n)), 0.01, 1)
    pop_ref_p = np.clip(rng.beta(2, 2, size=m) + rng.normal(0, 0.05, size=(k, m)), 0.01, 1)
    grid = np.linspace(0, 1, 11)
    chosen = tune_rmia_a(ref_p, ref_in, pop_ref_p, grid=grid, n_targets=k, random_state=0)
    totals = []
    for a in grid:
        total = 0.0
        for t in range(k):
            others = np.arange(k) != t
            s = rmia_scores(ref_p[t], ref_p[others], ref_in[others], pop_ref_p[t], pop_ref_p[others], a=a)
            total += roc_auc(s, ref_in[t].astype(int))
        totals.append(total)
    assert chosen == grid[int(np.argmax(totals))]
    assert 0.0 <= chosen <= 1.0


def test_bad_inputs():
    with pytest.raises(MipkitValueError):
        rmia_from_ratios(np.array([1.0]), np.array([0.0]))
    with pytest.raises(MipkitValueError):
        rmia_from_ratios(np.array([1.0]), np.array([1.0]), gamma=0)
    with pytest.raises(MipkitValueError):
        rmia_scores(np.ones(3), np.ones((2, 3)), np.zeros((2, 3)), np.ones(4), np.ones((3, 4)))
    with pytest.raises(MipkitValueError):
        rmia_scores(np.ones(3) * 2, np.ones((2, 3)), np.zeros((2, 3)), np.ones(4), np.ones((2, 4)))
    with pytest.raises(MipkitValueError):
        rmia_scores(np.ones(3), np.ones((2, 3)), np.zeros((2, 3)), np.ones(4), np.ones((2, 4)), a=1.5)
    with pytest.raises(MipkitValueError):
        tune_rmia_a(np.ones((1, 3)), np.zeros((1, 3)), np.ones((1, 4)))
