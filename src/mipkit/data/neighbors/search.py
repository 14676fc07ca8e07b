"""The public searches: :func:`kneighbors`, :func:`kneighbors_both_ways`, :func:`pairwise_distances`.

Each search splits its query rows into blocks and runs them on threads with :func:`run_blocks` (NumPy and
BLAS release the GIL); the per-block work lives in :mod:`~mipkit.data.neighbors.kernels` (exact blocked
search) and :mod:`~mipkit.data.neighbors.screening` (screened search).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from mipkit._progress import Progress, Tally
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.data.neighbors import screening
from mipkit.data.neighbors.blocks import current_blocks
from mipkit.data.neighbors.categorical_bound import CategoricalBound
from mipkit.data.neighbors.grid import grid_kneighbors
from mipkit.data.neighbors.kernels import (
    Table,
    _n_rows,
    _take,
    check_pair,
    exact_lattice,
    exact_matrix,
    make_kernel,
    snap_to_lattice,
)
from mipkit.data.neighbors.topk import first_k, smallest_k
from mipkit.data.tables import MixedArrays

METRICS = ("mixed", "euclidean", "manhattan")
ALGORITHMS = ("auto", "screened", "blocked", "kdtree")
DEFAULT_BLOCK_BYTES = 256 * 2**20
#: The stage name the searches report to ``progress`` (units: query rows).
STAGE = "nearest neighbours"
_SILENT = Tally(None, STAGE, 0)
_MAX_TREE_COLUMNS = 10  # "auto" uses a KD-tree up to this many numeric columns


def run_blocks(work: Callable[..., Any], blocks: Sequence[tuple], n_jobs: int) -> list:
    """``[work(*b) for b in blocks]``, on up to ``n_jobs`` threads with single-threaded BLAS inside.

    A plain thread pool (results in block order, the first error raised): lighter than joblib's thread
    backend, whose set-up every call paid."""
    if n_jobs == 1 or len(blocks) <= 1:
        return [work(*b) for b in blocks]
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(min(n_jobs, len(blocks))) as pool:
        return list(pool.map(lambda b: work(*b), blocks))


def pairwise_distances(a: Table, b: Table, *, metric: str = "mixed") -> np.ndarray:
    """The full distance matrix between the rows of ``a`` and ``b`` (for small tables and tests).

    Euclidean distances are computed exactly as ``sqrt(sum((a_i - b_j)^2))``, not by the matrix-product
    shortcut, so ties in discrete data stay ties; mixed distances on integer data are rounded to their exact
    lattice (:func:`~mipkit.data.neighbors.kernels.exact_lattice`).
    """
    check_choice("metric", metric, METRICS, owner="pairwise_distances")
    check_pair(a, b, metric)
    d = exact_matrix(a, b, metric)
    return snap_to_lattice(d, exact_lattice(a, b)) if metric == "mixed" else d


def _check_search(
    owner: str, query: Table, reference: Table, metric: str, algorithm: str, k: int, n_jobs: int
) -> tuple[int, int]:
    """Validate the arguments shared by the searches; returns ``k`` and ``n_jobs`` as ints."""
    check_choice("metric", metric, METRICS, owner=owner)
    check_choice("algorithm", algorithm, ALGORITHMS, owner=owner)
    k = check_positive_int("k", k, owner=owner)
    n_jobs = check_positive_int("n_jobs", n_jobs, owner=owner)
    check_pair(query, reference, metric)
    return k, n_jobs


def _tree_eligible(query: Table, reference: Table, metric: str) -> tuple[bool, int]:
    """Whether a KD-tree can search these tables (numeric, complete), and the number of columns."""
    if metric == "mixed":
        ok = query.codes.shape[1] == 0 and not (
            np.isnan(query.numeric).any() or np.isnan(reference.numeric).any()
        )
        return ok, query.numeric.shape[1]
    return True, query.shape[1]


def kneighbors(
    query: Table,
    reference: Table,
    *,
    k: int = 1,
    metric: str = "mixed",
    exclude_self: bool = False,
    algorithm: str = "auto",
    max_block_bytes: int = DEFAULT_BLOCK_BYTES,
    n_jobs: int = 2,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest neighbours of each query row among the reference rows.

    Parameters
    ----------
    query, reference : MixedArrays or ndarray
        ``MixedArrays`` for ``metric="mixed"``, 2-D float arrays otherwise.
    k : int
        Number of neighbours (at most the number of reference rows, minus one with ``exclude_self``).
    metric : {"mixed", "euclidean", "manhattan"}
    exclude_self : bool
        ``query`` is ``reference``: leave each row's own index out (leave-one-out).
    algorithm : {"auto", "screened", "blocked", "kdtree"}
        ``"auto"`` uses a KD-tree for numeric data of at most 10 columns without missing values; for the
        mixed distance with categorical columns, the search pruned by the category mismatches
        (:mod:`~mipkit.data.neighbors.categorical_bound`; ties by the smaller reference index), with the
        screened search for blocks it prunes too little; else the screened search (float32 candidates,
        exact float64 decision, see :mod:`mipkit.data.neighbors`). ``"screened"`` never prunes;
        ``"blocked"`` is the plain exact blocked search.
    max_block_bytes : int
        Memory budget of the distance blocks held at once (all threads together).
    n_jobs : int
        Threads for the blocked search.
    progress : Progress, optional
        ``progress("nearest neighbours", done, total)`` in query rows, after each block.

    Returns
    -------
    distances : ndarray of shape (n_query, k), ascending in each row
        Mixed distances on integer data are the exact values ``k / L`` (ties exact), see
        :func:`~mipkit.data.neighbors.kernels.exact_lattice`.
    indices : ndarray of shape (n_query, k), int64 reference row indices
    """
    k, n_jobs = _check_search("kneighbors", query, reference, metric, algorithm, k, n_jobs)
    lattice = exact_lattice(query, reference) if metric == "mixed" else None
    tally = Tally(progress, STAGE, _n_rows(query))
    plan = current_blocks()
    if plan is not None:  # in blocks of query x reference rows, mapped by the plan's mapper
        _check_k(k, _n_rows(query), _n_rows(reference), exclude_self)
        mode = search_mode(query, reference, metric, algorithm)
        return grid_kneighbors(
            search_block, query, reference, k, metric, exclude_self, mode, lattice, plan, tally
        )
    d, i = _kneighbors(
        query, reference, k, metric, exclude_self, algorithm, max_block_bytes, n_jobs, tally, lattice
    )
    return snap_to_lattice(d, lattice), i


def _check_k(k: int, n_q: int, n_r: int, exclude_self: bool) -> None:
    """``k`` at most the reference rows (minus self), and ``exclude_self`` only for one table."""
    if exclude_self and n_q != n_r:
        raise MipkitValueError("exclude_self=True needs the query to be the reference (same number of rows).")
    available = n_r - (1 if exclude_self else 0)
    if k > available:
        raise MipkitValueError(
            f"The 'k' parameter of kneighbors must be at most {available} (reference rows"
            f"{' minus self' if exclude_self else ''}). Got {k} instead."
        )


def search_mode(query: Table, reference: Table, metric: str, algorithm: str) -> str:
    """The search :func:`kneighbors` runs on these tables: ``"kdtree"``, ``"pruned"`` (the screened search
    with the category-mismatch bound first), ``"screened"`` or ``"blocked"``."""
    tree_ok, n_feat = _tree_eligible(query, reference, metric)
    if algorithm == "kdtree" or (algorithm == "auto" and tree_ok and n_feat <= _MAX_TREE_COLUMNS):
        if not tree_ok:
            raise MipkitValueError("algorithm='kdtree' needs numeric data without missing values.")
        return "kdtree"
    if algorithm in ("auto", "screened"):
        prune = algorithm == "auto" and metric == "mixed" and reference.codes.shape[1] > 0
        return "pruned" if prune else "screened"
    return "blocked"


def _kneighbors(
    query: Table,
    reference: Table,
    k: int,
    metric: str,
    exclude_self: bool,
    algorithm: str,
    max_block_bytes: int,
    n_jobs: int,
    tally: Tally,
    lattice: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kneighbors` after the argument checks, before the distances are put on their lattice
    (the screened and blocked searches choose among distances already on it)."""
    n_q = _n_rows(query)
    _check_k(k, n_q, _n_rows(reference), exclude_self)
    if n_q == 0:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)
    mode = search_mode(query, reference, metric, algorithm)
    if mode == "kdtree":
        return _tree_search(query, reference, k=k, metric=metric, exclude_self=exclude_self, tally=tally)
    if mode in ("pruned", "screened"):
        return _screened_search(
            query, reference, k=k, metric=metric, exclude_self=exclude_self, n_jobs=n_jobs, tally=tally,
            prune=mode == "pruned", lattice=lattice,
        )  # fmt: skip
    return _blocked_search(query, reference, k, metric, exclude_self, max_block_bytes, n_jobs, tally, lattice)


def _stack(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """Stack the (distances, indices) of consecutive blocks."""
    return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts]).astype(np.int64)


def _blocked_search(
    query: Table,
    reference: Table,
    k: int,
    metric: str,
    exclude_self: bool,
    max_block_bytes: int,
    n_jobs: int,
    tally: Tally,
    lattice: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact search over blocks of query rows against all reference rows, each block under budget.

    Euclidean blocks hold the proxy ``|r|^2 - 2 q.r``: the best ``k + 2`` candidates are recomputed
    exactly; mixed and Manhattan blocks hold exact distances (on ``lattice`` when given), of which the
    ``k`` smallest are taken, ties by the smaller reference index.
    """
    kernel = make_kernel(reference, metric)
    n_q, n_r = _n_rows(query), _n_rows(reference)
    per_row = 8 * max(n_r, 1) * 3  # the block, a temporary and the one-hot / product buffers
    rows = int(max(1, min(4096, max_block_bytes // (per_row * max(n_jobs, 1)))))

    def run(start: int):
        q = _take(query, slice(start, start + rows))
        d = kernel.block(q)
        own = start + np.arange(d.shape[0])
        if exclude_self:
            d[np.arange(d.shape[0]), own] = np.inf
        if metric == "euclidean":  # the block held a proxy: recompute the candidates' distances exactly
            cand, _ = smallest_k(d, min(k + 2, d.shape[1]))
            dist = kernel.exact(q, cand)
        else:  # exact distances: the k smallest, ties by index (a stable sort of each row)
            d = snap_to_lattice(d, lattice)
            cand = np.argsort(d, axis=1, kind="stable")[:, :k]
            dist = np.take_along_axis(d, cand, axis=1)
        if exclude_self:  # self can only be a candidate when there are too few other rows
            dist[cand == own[:, None]] = np.inf
        tally.add(min(rows, n_q - start))
        return first_k(dist, cand, k)

    return _stack(run_blocks(run, [(s,) for s in range(0, n_q, rows)], n_jobs))


def _screened_search(
    query: Table,
    reference: Table,
    *,
    k: int,
    metric: str,
    exclude_self: bool,
    n_jobs: int,
    tally: Tally,
    prune: bool = False,
    lattice: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Screened search (:mod:`~mipkit.data.neighbors.screening`) of every query row: ``k + 2`` candidates,
    then 4x and 16x more for rows whose margin test fails, then brute force. With ``prune`` (mixed distance
    with categorical columns) a block is first searched with the category-mismatch bound
    (:class:`~mipkit.data.neighbors.categorical_bound.CategoricalBound`), which answers it unless it would
    keep too many candidates."""
    n_q = _n_rows(query)
    kk0 = k + (1 if exclude_self else 0) + 2
    block = screening._SCREEN_ROWS
    pruned = CategoricalBound(reference, lattice) if prune else None
    lock = threading.Lock()
    screens: list[screening.Screen] = []  # built by the first block that needs it

    def run(start: int):
        rows = np.arange(start, min(n_q, start + block))
        found = None if pruned is None else pruned.search(query, rows, k, exclude_self)
        if found is not None:  # the category mismatches pruned the block: exact, ties by index
            tally.add(len(rows))
            return found
        with lock:
            if not screens:
                screens.append(screening.Screen(reference, metric, lattice=lattice))
        screen = screens[0]
        dist, idx, ok = screening.decide_rows(screen, query, reference, rows, k, exclude_self, kk0)
        kk = kk0
        while not ok.all() and kk < 64:  # ties or near-ties at the margin: more candidates
            kk *= 4
            bad = np.flatnonzero(~ok)
            d2, i2, ok2 = screening.decide_rows(screen, query, reference, rows[bad], k, exclude_self, kk)
            dist[bad], idx[bad], ok[bad] = d2, i2, ok2
        if not ok.all():
            bad = np.flatnonzero(~ok)
            dist[bad], idx[bad] = screening.exact_rows(screen, query, reference, rows[bad], k, exclude_self)
        tally.add(len(rows))
        return dist, idx

    return _stack(run_blocks(run, [(s,) for s in range(0, n_q, block)], n_jobs))


def _tree_search(
    query: Table, reference: Table, *, k: int, metric: str, exclude_self: bool, tally: Tally
) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's ``KDTree`` (Euclidean or L1) on complete numeric data; ``exclude_self`` drops each
    row's own index (or, where a duplicate took its place, the last of the ``k + 1`` found)."""
    from sklearn.neighbors import KDTree

    q = query.numeric if isinstance(query, MixedArrays) else query
    r = reference.numeric if isinstance(reference, MixedArrays) else reference
    tree = KDTree(r, metric="euclidean" if metric == "euclidean" else "manhattan")
    kk = k + 1 if exclude_self else k
    dist, idx = tree.query(q, k=kk)
    if exclude_self:
        own = idx == np.arange(len(q))[:, None]
        # drop own index where found, otherwise the last (a duplicate at the same distance took its place)
        drop = np.where(own.any(axis=1), own.argmax(axis=1), kk - 1)
        keep = np.ones_like(own)
        keep[np.arange(len(q)), drop] = False
        dist = dist[keep].reshape(len(q), k)
        idx = idx[keep].reshape(len(q), k)
    tally.add(len(q))
    return dist, idx.astype(np.int64)


def kneighbors_both_ways(
    a: Table,
    b: Table,
    *,
    k: int = 1,
    metric: str = "mixed",
    algorithm: str = "auto",
    n_jobs: int = 2,
    progress: Progress | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Exact ``k`` nearest neighbours of the rows of ``a`` in ``b`` AND of the rows of ``b`` in ``a``.

    Equal to ``(kneighbors(a, b, k=k), kneighbors(b, a, k=k))`` (distances exactly, ties included) but with
    one pass over the ``a x b`` float32 proxies instead of two: each block of proxies updates both the
    candidates of its ``a`` rows (the ``k + 2`` smallest along the row) and those of its ``b`` rows (the
    ``k + 2`` smallest down the column, kept with a running threshold so that a block costs one comparison
    per entry once the candidates have settled). Both directions are then decided exactly in float64 and
    proved complete as in :func:`kneighbors` (non-candidates have proxy >= the largest candidate proxy,
    hence exact distance >= that minus the error bound of the pair); rows of either side whose test fails
    are searched again by the one-way screened search (more candidates, then brute force).

    Parameters
    ----------
    a, b : MixedArrays or ndarray
    k : int
        Number of neighbours in each direction (at most ``min(len(a), len(b))``).
    metric : {"mixed", "euclidean", "manhattan"}
    algorithm : {"auto", "screened", "blocked", "kdtree"}
        ``"auto"`` runs the two searches pruned by category mismatches for the mixed distance with
        categorical columns (:func:`kneighbors`), else the shared pass where :func:`kneighbors` would screen;
        ``"screened"`` always uses the shared pass there; a KD-tree
        (``"auto"`` on few complete numeric columns, or ``"kdtree"``) and ``"blocked"`` run the two
        directions separately.
    n_jobs : int
        Threads (the rows of ``a`` are split into ``n_jobs`` contiguous parts).
    progress : Progress, optional
        ``progress("nearest neighbours", done, total)`` in rows of ``a``, after each block.

    Returns
    -------
    (dist_ab, idx_ab), (dist_ba, idx_ba) : ndarrays of shapes (len(a), k) and (len(b), k)
        Ascending distances and int64 row indices into ``b`` and ``a`` respectively.
    """
    k, n_jobs = _check_search("kneighbors_both_ways", a, b, metric, algorithm, k, n_jobs)
    n_a, n_b = _n_rows(a), _n_rows(b)
    if k > min(n_a, n_b):
        raise MipkitValueError(
            f"The 'k' parameter of kneighbors_both_ways must be at most {min(n_a, n_b)} (rows of the smaller "
            f"table). Got {k} instead."
        )
    if current_blocks() is not None:  # two searches in blocks (kneighbors)
        kw = {"k": k, "metric": metric, "algorithm": algorithm, "n_jobs": n_jobs}
        return kneighbors(a, b, progress=progress, **kw), kneighbors(b, a, **kw)
    tree_ok, n_feat = _tree_eligible(a, b, metric)
    one_way = algorithm in ("kdtree", "blocked") or (
        algorithm == "auto" and tree_ok and n_feat <= _MAX_TREE_COLUMNS
    )
    # the mixed distance with categorical columns: two searches pruned by the category mismatches cost about
    # half the shared pass (benchmarks/neighbors_pruned_adult.py)
    pruned = algorithm == "auto" and metric == "mixed" and a.codes.shape[1] > 0
    if one_way or pruned or n_a == 0 or n_b == 0:
        kw = {"k": k, "metric": metric, "algorithm": algorithm, "n_jobs": n_jobs}
        return kneighbors(a, b, progress=progress, **kw), kneighbors(b, a, **kw)
    lattice = exact_lattice(a, b) if metric == "mixed" else None
    (d_ab, i_ab), (d_ba, i_ba) = _both_ways_screened(
        a, b, k=k, metric=metric, n_jobs=n_jobs, tally=Tally(progress, STAGE, n_a), lattice=lattice
    )
    return (snap_to_lattice(d_ab, lattice), i_ab), (snap_to_lattice(d_ba, lattice), i_ba)


def _both_ways_screened(
    A: Table, B: Table, *, k: int, metric: str, n_jobs: int, tally: Tally, lattice: int | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """One pass over the ``A x B`` proxies of a symmetric screen serves ``A -> B`` and ``B -> A``."""
    screen = screening.Screen(B, metric, symmetric=True, lattice=lattice)
    n_a, n_b = _n_rows(A), _n_rows(B)
    kk_row, kk_col = min(k + 2, n_b), min(k + 2, n_a)
    n_parts = max(1, min(n_jobs, -(-n_a // screening._SCREEN_ROWS)))
    per = -(-n_a // n_parts)

    def run(r0: int, r1: int):
        return screening.both_ways_part(screen, A, B, r0, r1, k, metric, kk_row, kk_col, tally)

    parts = run_blocks(run, [(r0, min(n_a, r0 + per)) for r0 in range(0, n_a, per)], n_jobs)
    dist_ab, idx_ab = _stack(parts)
    ok_ab = np.concatenate([p[2] for p in parts])
    col_i = np.hstack([p[3] for p in parts])
    col_p = np.hstack([p[4] for p in parts])
    if col_i.shape[1] > kk_col:
        o = np.argpartition(col_p, kk_col - 1, axis=1)[:, :kk_col]
        col_i, col_p = np.take_along_axis(col_i, o, axis=1), np.take_along_axis(col_p, o, axis=1)
    dist_ba, idx_ba, ok_ba = screening.decide_columns(screen, A, B, col_i, col_p, k, metric)
    # rows whose margin test failed (ties or near-ties): the one-way screened search, which widens the
    # candidate set and ends in brute force
    for ok, q, r, d, i in ((ok_ab, A, B, dist_ab, idx_ab), (ok_ba, B, A, dist_ba, idx_ba)):
        bad = np.flatnonzero(~ok)
        if bad.size:
            d[bad], i[bad] = _screened_search(
                _take(q, bad),
                r,
                k=k,
                metric=metric,
                exclude_self=False,
                n_jobs=n_jobs,
                tally=_SILENT,
                lattice=lattice,
            )
    return (dist_ab, idx_ab), (dist_ba, idx_ba)


def search_block(
    query: Table,
    reference: Table,
    q0: int,
    q1: int,
    r0: int,
    r1: int,
    k: int,
    self_block: bool,
    metric: str,
    mode: str,
    lattice: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of the query rows ``q0:q1`` among the reference rows ``r0:r1`` (a pure function
    of its arguments: a block task may run twice). Distances on ``lattice``, indices into ``reference``."""
    q, r = _take(query, slice(q0, q1)), _take(reference, slice(r0, r1))
    if mode == "kdtree":
        d, i = _tree_search(q, r, k=k, metric=metric, exclude_self=self_block, tally=_SILENT)
    elif mode == "blocked":
        d, i = _blocked_search(q, r, k, metric, self_block, DEFAULT_BLOCK_BYTES, 1, _SILENT, lattice)
    else:
        d, i = _screened_search(
            q, r, k=k, metric=metric, exclude_self=self_block, n_jobs=1, tally=_SILENT,
            prune=mode == "pruned", lattice=lattice,
        )  # fmt: skip
    return snap_to_lattice(d, lattice), i + r0
