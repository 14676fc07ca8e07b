"""Searches in blocks of queries x references (mipkit.data.neighbors.grid) equal the whole search, ties too.

The reference is the definition: the ``k`` smallest exact distances of each row, ties by the smaller
reference index (a lexicographic sort of the full distance matrix). Small integer tables make many ties.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mipkit.data.neighbors import kneighbors, kneighbors_both_ways, pairwise_distances
from mipkit.data.neighbors.blocks import BlockPlan, current_blocks, in_blocks, task_bytes
from mipkit.data.neighbors.grid import block_specs
from mipkit.data.tables import check_tables, encode_mixed


def _definition(query, reference, k, exclude_self, metric="mixed"):
    """The k nearest by the definition: exact distances, ascending, ties by the smaller index."""
    d = pairwise_distances(query, reference, metric=metric)
    if exclude_self:
        np.fill_diagonal(d, np.inf)
    index = np.broadcast_to(np.arange(d.shape[1]), d.shape)
    order = np.lexsort((index, d), axis=-1)[:, :k]
    return np.take_along_axis(d, order, axis=1), order


def _tables(seed: int, n_a: int, n_b: int, numeric: bool):
    rng = np.random.default_rng(seed)
    n = n_a + n_b
    cols = {"a": rng.integers(0, 4, n), "c": rng.choice(list("xyz"), n), "e": rng.choice(list("pq"), n)}
    if numeric:
        cols["b"] = rng.integers(0, 3, n).astype(float)
    df = pd.DataFrame(cols)
    schema = check_tables(df, {})
    return encode_mixed(df.iloc[:n_a], schema), encode_mixed(df.iloc[n_a:], schema)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    n_a=st.integers(2, 40),
    n_b=st.integers(2, 40),
    k=st.integers(1, 3),
    block_rows=st.integers(1, 45),
    exclude_self=st.booleans(),
    algorithm=st.sampled_from(["auto", "screened", "blocked"]),
    numeric=st.booleans(),
)
def test_blocked_search_is_the_whole_search_and_the_definition(
    seed, n_a, n_b, k, block_rows, exclude_self, algorithm, numeric
):
    a, b = _tables(seed, n_a, n_b, numeric)
    query, reference = (a, a) if exclude_self else (a, b)
    k = min(k, len(reference) - int(exclude_self))
    whole = kneighbors(query, reference, k=k, exclude_self=exclude_self, algorithm=algorithm)
    plan = BlockPlan(block_rows=block_rows)
    with in_blocks(plan):
        blocked = kneighbors(query, reference, k=k, exclude_self=exclude_self, algorithm=algorithm)
    want = _definition(query, reference, k, exclude_self)
    for got in (whole, blocked):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert plan.totals()["searches"] == 1
    assert plan.totals()["blocks"] == len(
        block_specs(len(query), len(reference), k, exclude_self, block_rows)
    )


def test_ties_go_to_the_smaller_index_on_the_screened_path():
    """The screened search (no categorical column to prune by) on a numeric table of many ties: the
    definition's neighbours, not the candidates' order."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (300, 12)).astype(float)
    for k in (1, 2, 4):
        got = kneighbors(x, x[:200], k=k, metric="manhattan", algorithm="screened")
        want = _definition(x, x[:200], k, False, metric="manhattan")
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])


def test_both_ways_in_blocks_equals_the_shared_pass():
    a, b = _tables(5, 70, 50, numeric=True)
    whole = kneighbors_both_ways(a, b, k=3, algorithm="screened")
    with in_blocks(BlockPlan(block_rows=16)):
        blocked = kneighbors_both_ways(a, b, k=3, algorithm="screened")
    for w, g in zip((*whole[0], *whole[1]), (*blocked[0], *blocked[1]), strict=True):
        np.testing.assert_array_equal(w, g)


def test_block_specs_cover_every_pair_once_and_the_diagonal_leaves_self_out():
    specs = block_specs(10, 7, 2, False, 4)
    covered = np.zeros((10, 7), dtype=int)
    for q0, q1, r0, r1, kk, self_block in specs:
        covered[q0:q1, r0:r1] += 1
        assert kk == min(2, r1 - r0) and not self_block
    assert (covered == 1).all()
    diagonal = [s for s in block_specs(9, 9, 3, True, 4) if s[5]]
    # the last diagonal block has one row: without itself it has no neighbour to give, so it is no task
    assert [(s[0], s[2]) for s in diagonal] == [(0, 0), (4, 4)]
    assert all(s[4] == 3 for s in diagonal)


def test_the_plan_is_only_active_inside_its_block_and_states_the_task_memory():
    a, b = _tables(1, 30, 30, numeric=True)
    plan = BlockPlan(block_rows=8)
    assert current_blocks() is None
    with in_blocks(plan):
        assert current_blocks() is plan
        kneighbors(a, b, k=1)
    assert current_blocks() is None
    totals = plan.totals()
    assert totals == {
        "block_rows": 8,
        "searches": 1,
        "blocks": 16,
        "peak_task_bytes": task_bytes(a, b, 8, 8, 1),
    }
    assert task_bytes(a, b, 8, 8, 1) < task_bytes(a, b, 80, 80, 1)


def test_a_mapper_sees_the_whole_tables_once_and_small_specs():
    a, b = _tables(2, 25, 20, numeric=True)
    seen = []

    def mapper(work, tables, specs):
        seen.append((tables, specs))
        return [work(*tables, *s) for s in specs]

    with in_blocks(BlockPlan(block_rows=10, mapper=mapper)):
        got = kneighbors(a, b, k=2)
    np.testing.assert_array_equal(got[1], kneighbors(a, b, k=2)[1])
    ((tables, specs),) = seen
    assert tables[0] is a and tables[1] is b
    assert all(not isinstance(v, np.ndarray) for s in specs for v in s)


@pytest.mark.parametrize("block_rows", [1, 3])
def test_kdtree_searches_are_one_block(block_rows):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    plan = BlockPlan(block_rows=block_rows)
    with in_blocks(plan):
        got = kneighbors(x, x, k=2, exclude_self=True, metric="euclidean")
    want = kneighbors(x, x, k=2, exclude_self=True, metric="euclidean")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert plan.totals()["blocks"] == 1
