"""Exact neighbour search in blocks of query rows x reference rows, merged exactly.

Under a :class:`~mipkit.data.neighbors.blocks.BlockPlan`, :func:`~mipkit.data.neighbors.kneighbors` splits
the query rows and the reference rows into ranges of at most ``block_rows`` rows. Each pair of ranges is
one block: ``work`` (:func:`mipkit.data.neighbors.search.search_block`) runs the search that
:func:`~mipkit.data.neighbors.kneighbors` runs on the whole tables (the same ``mode``, the distances on the
whole tables' lattice) on the block's rows and returns the block's ``k`` nearest (fewer when the block has
fewer reference rows), with reference indices of the whole table. The blocks of one query range are merged
by :func:`~mipkit.data.neighbors.topk.first_k` over their candidates (ascending distance, ties by the
smaller reference index: the tie rule of every search), so the merged result equals the search on the whole
tables, distances and indices alike.

With ``exclude_self`` (the query is the reference) the ranges of both sides are the same and a diagonal
block leaves each row's own index out. The KD-tree search (few complete numeric columns) is one block: its
distances are scikit-learn's, not the kernels', so it is not split.

A block reads only its rows (slices of the two tables, which a cluster mapper holds in its object store)
and holds at most :func:`~mipkit.data.neighbors.blocks.task_bytes`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mipkit._progress import Tally
from mipkit.data.neighbors.blocks import BlockPlan, task_bytes
from mipkit.data.neighbors.kernels import Table, _n_rows
from mipkit.data.neighbors.topk import first_k

__all__ = ["block_specs", "grid_kneighbors"]


def _ranges(n: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(n, s + size)) for s in range(0, n, size)] if n else []


def block_specs(
    n_query: int, n_reference: int, k: int, exclude_self: bool, block_rows: int
) -> list[tuple[int, int, int, int, int, bool]]:
    """``(q0, q1, r0, r1, k_block, self_block)`` of every block with at least one neighbour to give,
    by query range, then reference range."""
    specs = []
    for q0, q1 in _ranges(n_query, block_rows):
        for r0, r1 in _ranges(n_reference, block_rows):
            self_block = exclude_self and (q0, q1) == (r0, r1)
            kk = min(k, (r1 - r0) - int(self_block))
            if kk > 0:
                specs.append((q0, q1, r0, r1, kk, self_block))
    return specs


def grid_kneighbors(
    work: Callable[..., tuple[np.ndarray, np.ndarray]],
    query: Table,
    reference: Table,
    k: int,
    metric: str,
    exclude_self: bool,
    mode: str,
    lattice: int | None,
    plan: BlockPlan,
    tally: Tally,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~mipkit.data.neighbors.kneighbors` (after its checks) in blocks mapped by ``plan.mapper``:
    ``work(query, reference, q0, q1, r0, r1, k_block, self_block, metric, mode, lattice)`` per block."""
    n_q, n_r = _n_rows(query), _n_rows(reference)
    if n_q == 0:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)
    rows = max(n_q, n_r) if mode == "kdtree" else plan.block_rows
    specs = block_specs(n_q, n_r, k, exclude_self, rows)
    found = plan.mapper(work, (query, reference), [(*s, metric, mode, lattice) for s in specs])
    plan.record(n_q, n_r, len(specs), task_bytes(query, reference, min(rows, n_q), min(rows, n_r), k))
    dist, idx = [], []
    start = 0
    while start < len(specs):  # the blocks of one query range, in reference order
        q0 = specs[start][0]
        end = start
        while end < len(specs) and specs[end][0] == q0:
            end += 1
        d = np.hstack([np.asarray(found[j][0], dtype=float) for j in range(start, end)])
        i = np.hstack([np.asarray(found[j][1], dtype=np.int64) for j in range(start, end)])
        d, i = first_k(d, i, k)
        dist.append(d)
        idx.append(i)
        tally.add(specs[start][1] - q0)
        start = end
    return np.vstack(dist), np.vstack(idx)
