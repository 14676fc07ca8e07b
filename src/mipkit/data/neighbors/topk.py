"""Top-k selection: the ``k`` smallest entries of each row (or column) of distance and proxy blocks.

Candidate sets are unordered (``argpartition``); the final order is always :func:`first_k`: ascending exact
distance, ties by the smaller reference index (the one tie rule of every search, so that searches split in
any way give the same answer).
"""

from __future__ import annotations

import numpy as np


def first_k(dist: np.ndarray, cand: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest ``dist`` of each row, ascending, ties by the smaller ``cand`` entry (the reference
    index), with their ``cand`` entries."""
    order = np.lexsort((np.broadcast_to(cand, dist.shape), dist), axis=-1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(cand, order, axis=1)


def smallest_k(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and values of the ``k`` smallest entries of each row (any order); ``d`` is modified."""
    m = d.shape[1]
    rows = np.arange(d.shape[0])
    if k >= m:
        idx = np.tile(np.arange(m), (d.shape[0], 1))
        return idx, d.copy()
    if k <= 3:
        idx = np.empty((d.shape[0], k), dtype=np.int64)
        val = np.empty((d.shape[0], k))
        for t in range(k):
            j = np.argmin(d, axis=1)
            idx[:, t] = j
            val[:, t] = d[rows, j]
            d[rows, j] = np.inf
        return idx, val
    idx = np.argpartition(d, k - 1, axis=1)[:, :k]
    return idx, np.take_along_axis(d, idx, axis=1)


def _topk_rows(d: np.ndarray, kk: int, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and values of the ``kk`` smallest entries of each row (any order), ``kk < width``.

    When the width is a whole number ``nt > kk`` of ``tile``-wide tiles, the ``kk`` smallest entries lie in
    the ``kk`` tiles with the smallest minima: only those tiles are searched.
    """
    nq, w = d.shape
    nt = w // tile
    if nt > kk and nt * tile == w:
        tiles = d.reshape(nq, nt, tile)
        tsel = np.argpartition(tiles.min(axis=2), kk - 1, axis=1)[:, :kk]
        g = tiles[np.arange(nq)[:, None], tsel].reshape(nq, kk * tile)
        gi = np.argpartition(g, kk - 1, axis=1)[:, :kk]
        idx = np.take_along_axis(tsel, gi // tile, axis=1) * tile + gi % tile
        return idx, np.take_along_axis(g, gi, axis=1)
    idx = np.argpartition(d, kk - 1, axis=1)[:, :kk]
    return idx, np.take_along_axis(d, idx, axis=1)


def chunk_candidates(p: np.ndarray, kk: int, c0: int, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """The (at most) ``kk`` smallest proxies of each row of a chunk starting at reference row ``c0``."""
    if p.shape[1] <= kk:
        idx, val = np.tile(np.arange(p.shape[1]), (p.shape[0], 1)), p
    else:
        idx, val = _topk_rows(p, kk, tile)
    return idx + c0, val


def keep_smallest(
    best_i: np.ndarray, best_p: np.ndarray, idx: np.ndarray, val: np.ndarray, kk: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``kk`` smallest of each row of the candidates ``(best_i, best_p)`` and the new ``(idx, val)``."""
    alli, allp = np.hstack([best_i, idx]), np.hstack([best_p, val])
    if alli.shape[1] > kk:
        o = np.argpartition(allp, kk - 1, axis=1)[:, :kk]
        alli, allp = np.take_along_axis(alli, o, axis=1), np.take_along_axis(allp, o, axis=1)
    return alli, allp


def merge_hits(
    state_i: np.ndarray,
    state_p: np.ndarray,
    tau: np.ndarray,
    groups: np.ndarray,
    vals: np.ndarray,
    ids: np.ndarray,
    kk: int,
) -> None:
    """Merge new entries ``(group, proxy, id)`` into the ``kk`` smallest-proxy candidates of each group
    (rows of ``state_i`` / ``state_p``) and update each touched group's threshold ``tau`` (its ``kk``-th
    candidate proxy)."""
    ug = np.unique(groups)
    all_g = np.concatenate([np.repeat(ug, kk), groups])
    all_p = np.concatenate([state_p[ug].ravel(), vals])
    all_i = np.concatenate([state_i[ug].ravel(), ids])
    order = np.lexsort((all_p, all_g))
    all_g, all_p, all_i = all_g[order], all_p[order], all_i[order]
    first = np.searchsorted(all_g, ug)
    counts = np.diff(np.append(first, all_g.size))
    keep = (np.arange(all_g.size) - np.repeat(first, counts)) < kk
    state_i[ug] = all_i[keep].reshape(ug.size, kk)
    state_p[ug] = all_p[keep].reshape(ug.size, kk)
    tau[ug] = state_p[ug, -1]


def merge_rows_sparse(
    row_i: np.ndarray, row_p: np.ndarray, tau: np.ndarray, p: np.ndarray, c0: int, kk: int
) -> None:
    """Row-wise merge of the entries below each row's current ``kk``-th candidate proxy ``tau``."""
    flat = np.flatnonzero(p < tau[:, None])
    if flat.size:
        ri, cj = np.divmod(flat, p.shape[1])
        merge_hits(row_i, row_p, tau, ri, p.ravel()[flat], cj + c0, kk)


def _merge_columns_dense(
    col_i: np.ndarray,
    col_p: np.ndarray,
    tau: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    c0: int,
    c1: int,
    kk: int,
) -> None:
    """Column-wise: the ``kk`` smallest of (current candidates, this block's column entries)."""
    nq = p.shape[0]
    if nq > kk:
        ci = np.argpartition(p, kk - 1, axis=0)[:kk]
    else:
        ci = np.tile(np.arange(nq)[:, None], (1, c1 - c0))
    alli = np.vstack([col_i[c0:c1].T, rows[ci]])
    allp = np.vstack([col_p[c0:c1].T, np.take_along_axis(p, ci, axis=0)])
    o = np.argpartition(allp, kk - 1, axis=0)[:kk]
    col_i[c0:c1] = np.take_along_axis(alli, o, axis=0).T
    col_p[c0:c1] = np.take_along_axis(allp, o, axis=0).T
    tau[c0:c1] = col_p[c0:c1].max(axis=1)


class ColumnCandidates:
    """The ``kk`` smallest-proxy candidates of every column (a ``B`` row) over the ``A`` rows seen so far.

    Entries below a column's threshold ``tau`` (its ``kk``-th candidate proxy at the last compaction) are
    buffered, and the buffer is merged in after blocks 1, 2, 4, 8, ... (and at the end), so the sort runs
    a logarithmic number of times. An entry never buffered had proxy >= its column's ``tau`` then, which is
    >= the final ``kk``-th candidate proxy (thresholds only decrease); an entry dropped at a merge was >= the
    ``kk`` kept then. So every non-candidate has proxy >= the largest final candidate proxy.
    """

    def __init__(self, n_cols: int, kk: int):
        self.kk = kk
        self.idx = np.full((n_cols, kk), -1, dtype=np.int64)
        self.prox = np.full((n_cols, kk), np.inf, dtype=np.float32)
        self.tau = np.full(n_cols, np.inf, dtype=np.float32)
        self.buffer: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.buffered = 0
        self.blocks = 0

    def add(self, p: np.ndarray, rows: np.ndarray, c0: int, c1: int) -> None:
        """Offer the proxies ``p`` of the ``A`` rows ``rows`` to the columns ``c0:c1``."""
        if np.isinf(self.tau[c0:c1]).any():
            _merge_columns_dense(self.idx, self.prox, self.tau, p, rows, c0, c1, self.kk)
            return
        flat = np.flatnonzero(p < self.tau[None, c0:c1])  # few entries once the candidates have settled
        if flat.size:
            ri, cj = np.divmod(flat, p.shape[1])
            self.buffer.append((cj + c0, p.ravel()[flat], rows[ri]))
            self.buffered += flat.size
            if self.buffered > 8 * self.idx.size:
                self.compact()

    def end_block(self) -> None:
        """A block of ``A`` rows is done: compact after blocks 1, 2, 4, 8, ..."""
        self.blocks += 1
        if self.blocks & (self.blocks - 1) == 0:
            self.compact()

    def compact(self) -> None:
        """Merge the buffered entries into the candidates."""
        if self.buffer:
            cols, vals, ids = (np.concatenate(x) for x in zip(*self.buffer, strict=True))
            merge_hits(self.idx, self.prox, self.tau, cols, vals, ids, self.kk)
        self.buffer, self.buffered = [], 0
