"""Screened search: float32 proxies pick candidates, exact float64 distances decide, with a proven margin.

A :class:`Screen` computes float32 proxies of the distance between blocks of query rows and chunks of
reference rows, and bounds their error ``b >= |proxy - exact|`` (float32 unit roundoff times the
dimension times the norms, :meth:`Screen.pair_bound`). The ``kk`` candidates of a row are its ``kk``
smallest proxies; their exact distances are recomputed (:func:`~.kernels.exact_candidates`). Every other
row has proxy >= the largest candidate proxy, hence exact distance >= that minus ``b``: when the ``k``-th
exact distance found lies below that, the ``k`` found are the ``k`` nearest (:func:`margin_holds`, the one
margin test of the package).

This module holds the per-block work; :mod:`mipkit.data.neighbors.search` runs the blocks, widens the
candidate sets of rows whose test fails and ends in brute force (:func:`exact_rows`).
"""

from __future__ import annotations

import threading

import numpy as np

from mipkit._progress import Tally
from mipkit.data.neighbors.kernels import (
    Kernel,
    Table,
    _n_rows,
    _take,
    add_abs_columns,
    exact_candidates,
    exact_matrix,
    make_kernel,
    snap_to_lattice,
)
from mipkit.data.neighbors.topk import (
    ColumnCandidates,
    chunk_candidates,
    first_k,
    keep_smallest,
    merge_rows_sparse,
)
from mipkit.data.tables import one_hot

_U32 = 2.0**-24  # unit roundoff of float32
_SCREEN_ROWS = 256  # query rows per block
_SCREEN_COLS = 16384  # reference rows per chunk (a 16 MB float32 block stays in cache)
_TILE = 256  # tile width of the two-stage selection inside a chunk


def chunk_bounds(n_ref: int) -> list[tuple[int, int]]:
    """Reference chunks ``(c0, c1)`` of ``_SCREEN_COLS`` rows, each split into whole tiles + remainder."""
    bounds = []
    for c0 in range(0, n_ref, _SCREEN_COLS):
        c1 = min(n_ref, c0 + _SCREEN_COLS)
        cut = c0 + (c1 - c0) // _TILE * _TILE
        bounds += [(c0, cut), (cut, c1)] if c0 < cut < c1 else [(c0, c1)]
    return bounds


class Screen:
    """Float32 proxies of the distance to ``reference`` for candidate selection, with error bounds.

    ``prepare(q)`` encodes a block of query rows (with ``"bound"``, the bound of each row against every
    reference row); ``proxy(qp, c0, c1)`` is the float32 block against reference rows ``c0:c1``;
    ``full(p, qp)`` puts a proxy on the comparison scale of the exact distance (the squared distance for
    Euclidean); ``pair_bound(norm_q, norm_r)`` bounds ``|full(proxy) - exact|`` for rows of these norms.

    With ``symmetric=True`` the proxy needs no per-query-row term, so that it can be compared down a column
    (over query rows) as well as along a row: for Euclidean the squared norm of the query row is one more
    float32 column of the product (``[-2x, 1, |x|^2] . [r, |r|^2, 1]``), which the bound counts as one more
    dimension; the mixed and Manhattan proxies are symmetric already.

    ``lattice`` (:func:`~mipkit.data.neighbors.kernels.exact_lattice` of the query and reference tables): the
    exact distances are put on it (:meth:`exact`) before the ``k`` nearest are chosen, so that ties are the
    exact ones and go to the smaller reference index.
    """

    def __init__(self, reference: Table, metric: str, *, symmetric: bool = False, lattice: int | None = None):
        self.metric = metric
        self.lattice = lattice
        self.symmetric = symmetric
        self._kernel: Kernel | None = None
        self._lock = threading.Lock()
        if metric == "mixed":
            self.n_cat = reference.codes.shape[1]
            self.ref_oh_t = (
                np.ascontiguousarray(one_hot(reference.codes, reference.n_levels, dtype=np.float32).T)
                if self.n_cat
                else None
            )
            num = reference.numeric
            self.nan_cols = np.isnan(num).any(axis=0)
            self.ref_nan_t = np.ascontiguousarray(np.isnan(num).T)
            self.ref_num_t = np.ascontiguousarray(np.where(np.isnan(num), 0.0, num).T.astype(np.float32))
            self.p = num.shape[1]
            self.ref_norms = self.query_norms(reference)
        else:
            ref = np.asarray(reference, dtype=float)
            self.center = ref.mean(axis=0) if len(ref) else np.zeros(ref.shape[1])
            r = ref - self.center
            self.cnorm = float(np.sqrt(self.center @ self.center))
            self.c1norm = float(np.abs(self.center).sum())
            self.d = ref.shape[1]
            if metric == "euclidean":
                rn2 = np.einsum("ij,ij->i", r, r)
                cols = [r, rn2[:, None]] + ([np.ones((len(r), 1))] if symmetric else [])
                self.ref_aug_t = np.ascontiguousarray(np.hstack(cols).T.astype(np.float32))
                self.ref_norms = np.sqrt(rn2)
            else:
                self.ref_t = np.ascontiguousarray(r.T.astype(np.float32))
                self.ref_norms = np.abs(r).sum(axis=1)
        self.ref_norm_max = float(self.ref_norms.max()) if self.ref_norms.size else 0.0

    def exact_kernel(self, reference: Table) -> Kernel:
        """The exact blocked kernel (built once, on first use by the brute-force fallback)."""
        with self._lock:
            if self._kernel is None:
                self._kernel = make_kernel(reference, self.metric)
        return self._kernel

    def exact(self, query: Table, reference: Table, cand: np.ndarray) -> np.ndarray:
        """Exact distances of each query row to its candidates, on the lattice when there is one."""
        return snap_to_lattice(exact_candidates(query, reference, cand, self.metric), self.lattice)

    def query_norms(self, q: Table) -> np.ndarray:
        """The norm of each row that the error bound uses (L1 for mixed and Manhattan, L2 for Euclidean,
        numeric rows centred on the reference mean)."""
        if self.metric == "mixed":
            return np.abs(np.nan_to_num(q.numeric)).sum(axis=1) if self.p else np.zeros(len(q))
        x = np.asarray(q, dtype=float) - self.center
        return np.sqrt(np.einsum("ij,ij->i", x, x)) if self.metric == "euclidean" else np.abs(x).sum(axis=1)

    def pair_bound(self, norm_q: np.ndarray | float, norm_r: np.ndarray | float) -> np.ndarray | float:
        """Bound on ``|full(proxy) - exact|`` for rows of these norms (broadcasts).

        Mixed: ``2 (p + 4) u (|q|_1 + |r|_1 + p)``; Manhattan: ``2 (d + 4) (u + 2^-52) (|q|_1 + |r|_1 +
        |c|_1)``; Euclidean: ``4 (d + 4) (u s + 2^-52 (|c| + s)) s`` with ``s = |q| + |r|`` (``d + 5`` when
        symmetric), ``u = 2^-24`` and ``c`` the centre; the float64 rounding of centring is included.
        """
        if self.metric == "mixed":
            return 2.0 * (self.p + 4) * _U32 * (norm_q + norm_r + self.p) + 1e-300
        if self.metric == "manhattan":
            return 2.0 * (self.d + 4) * (_U32 + 2.0**-52) * (norm_q + norm_r + self.c1norm) + 1e-300
        s = norm_q + norm_r
        return 4.0 * (self.d + 4 + self.symmetric) * (_U32 * s + 2.0**-52 * (self.cnorm + s)) * s + 1e-300

    def prepare(self, q: Table) -> dict:
        """Encode a block of query rows for :meth:`proxy` (float32), with the bound of each row."""
        if self.metric == "mixed":
            num = q.numeric
            qnan = np.isnan(num)
            qp = {
                "num": np.where(qnan, 0.0, num).astype(np.float32),
                "nan": qnan,
                "oh": one_hot(q.codes, q.n_levels, dtype=np.float32) if self.n_cat else None,
            }
            norms = self.query_norms(q)
        elif self.metric == "euclidean":
            x = np.asarray(q, dtype=float) - self.center
            qn2 = np.einsum("ij,ij->i", x, x)
            cols = [-2.0 * x, np.ones((len(x), 1))] + ([qn2[:, None]] if self.symmetric else [])
            qp = {"aug": np.hstack(cols).astype(np.float32), "qn2": qn2}
            norms = np.sqrt(qn2)
        else:
            x = np.asarray(q, dtype=float) - self.center
            qp = {"x": x.astype(np.float32)}
            norms = np.abs(x).sum(axis=1)
        qp["bound"] = self.pair_bound(norms, self.ref_norm_max)
        return qp

    def proxy(self, qp: dict, c0: int, c1: int) -> np.ndarray:
        """Float32 proxies of the block ``qp`` against reference rows ``c0:c1``."""
        if self.metric == "euclidean":
            return qp["aug"] @ self.ref_aug_t[:, c0:c1]
        if self.metric == "manhattan":
            x = qp["x"]
            d = np.zeros((x.shape[0], c1 - c0), dtype=np.float32)
            return add_abs_columns(d, x, lambda j: (self.ref_t[j, None, c0:c1], None))
        num = qp["num"]
        if self.n_cat:
            d = qp["oh"] @ self.ref_oh_t[:, c0:c1]
            np.subtract(np.float32(self.n_cat), d, out=d)
        else:
            d = np.zeros((num.shape[0], c1 - c0), dtype=np.float32)

        def column(j: int) -> tuple[np.ndarray, np.ndarray | None]:
            return self.ref_num_t[j, None, c0:c1], (self.ref_nan_t[j, c0:c1] if self.nan_cols[j] else None)

        return add_abs_columns(d, num, column, qp["nan"])

    def full(self, p: np.ndarray, qp: dict | None = None) -> np.ndarray:
        """The proxy in float64 on the comparison scale (adds ``|x|^2`` for one-way Euclidean)."""
        p = p.astype(float)
        return p + qp["qn2"][:, None] if self.metric == "euclidean" and not self.symmetric else p


def margin_holds(
    screen: Screen, dist: np.ndarray, prox: np.ndarray, bound: np.ndarray, qp: dict | None = None
) -> np.ndarray:
    """The completeness test of a candidate set, per row.

    Every non-candidate has proxy >= the largest candidate proxy ``max(prox)``, hence an exact distance
    (comparison scale) >= ``full(max(prox)) - bound``; the ``k`` nearest found (``dist``, ascending) are the
    ``k`` nearest of all when the ``k``-th lies below that (with a relative slack of 1e-12).
    """
    edge = screen.full(prox, qp).max(axis=1) - bound
    last = dist[:, -1]
    last = last**2 * (1 + 1e-12) if screen.metric == "euclidean" else last * (1 + 1e-12)
    return last < edge


def decide_rows(
    screen: Screen, query: Table, reference: Table, rows: np.ndarray, k: int, exclude_self: bool, kk: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-way screened search of the query rows ``rows`` with ``kk`` candidates each: ``(dist, idx, ok)``,
    ``ok`` False where the margin test failed (those rows need more candidates)."""
    q = _take(query, rows)
    n_ref = _n_rows(reference)
    kk = min(kk, n_ref)
    qp = screen.prepare(q)
    best_i = best_p = tau = None
    for c0, c1 in chunk_bounds(n_ref):
        p = screen.proxy(qp, c0, c1)
        if tau is not None:  # a full candidate set: merge only the entries below each row's kk-th proxy
            merge_rows_sparse(best_i, best_p, tau, p, c0, kk)
            continue
        idx, val = chunk_candidates(p, kk, c0, _TILE)
        best_i, best_p = (idx, val) if best_i is None else keep_smallest(best_i, best_p, idx, val, kk)
        if best_i.shape[1] == kk:
            best_i, best_p = np.ascontiguousarray(best_i), np.ascontiguousarray(best_p)
            tau = best_p.max(axis=1)
    exact = screen.exact(q, reference, best_i)
    if exclude_self:
        exact[best_i == rows[:, None]] = np.inf
    dist, idx = first_k(exact, best_i, k)
    if kk >= n_ref:
        return dist, idx, np.ones(len(rows), dtype=bool)
    return dist, idx, margin_holds(screen, dist, best_p, qp["bound"], qp)


def exact_rows(
    screen: Screen, query: Table, reference: Table, rows: np.ndarray, k: int, exclude_self: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force exact search (full distance rows) for a few query rows."""
    metric, kernel = screen.metric, screen.exact_kernel(reference)
    n_ref = _n_rows(reference)
    width = max(1, query.shape[1] if isinstance(query, np.ndarray) else 1)
    step = max(1, (64 * 2**20) // (8 * n_ref * width))
    dist, idx = [], []
    for s in range(0, len(rows), step):
        r = rows[s : s + step]
        if metric == "euclidean":
            d = exact_matrix(query[r], reference, metric)
        else:
            d = snap_to_lattice(kernel.block(_take(query, r)), screen.lattice)
        if exclude_self:
            d[np.arange(len(r)), r] = np.inf
        dd, ii = first_k(d, np.broadcast_to(np.arange(n_ref), d.shape), k)
        dist.append(dd)
        idx.append(ii)
    return np.vstack(dist), np.vstack(idx).astype(np.int64)


def both_ways_part(
    screen: Screen,
    A: Table,
    B: Table,
    r0: int,
    r1: int,
    k: int,
    metric: str,
    kk_row: int,
    kk_col: int,
    tally: Tally,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``r0:r1`` of ``A`` against all of ``B`` with a symmetric screen: exact results for these rows
    (with an ``ok`` flag) and the column candidates (the ``kk_col`` smallest proxies of each ``B`` row over
    these ``A`` rows)."""
    n_b = _n_rows(B)
    bounds = chunk_bounds(n_b)
    columns = ColumnCandidates(n_b, kk_col)
    dists, idxs, oks = [], [], []
    for s in range(r0, r1, _SCREEN_ROWS):
        rows = np.arange(s, min(r1, s + _SCREEN_ROWS))
        q = _take(A, rows)
        qp = screen.prepare(q)
        best_i = np.full((len(rows), kk_row), -1, dtype=np.int64)
        best_p = np.full((len(rows), kk_row), np.inf, dtype=np.float32)
        row_tau = np.full(len(rows), np.inf, dtype=np.float32)
        for c0, c1 in bounds:
            p = screen.proxy(qp, c0, c1)
            columns.add(p, rows, c0, c1)
            if np.isinf(row_tau).any():  # no full candidate set yet: the chunk's own kk best, merged
                idx, val = chunk_candidates(p, kk_row, c0, _TILE)
                best_i, best_p = keep_smallest(best_i, best_p, idx, val, kk_row)
                row_tau = best_p.max(axis=1)
            else:
                merge_rows_sparse(best_i, best_p, row_tau, p, c0, kk_row)
        dist, idx = first_k(screen.exact(q, B, best_i), best_i, k)
        if kk_row >= n_b:
            oks.append(np.ones(len(rows), dtype=bool))
        else:
            oks.append(margin_holds(screen, dist, best_p, qp["bound"]))
        dists.append(dist)
        idxs.append(idx)
        columns.end_block()
        tally.add(len(rows))
    columns.compact()
    return np.vstack(dists), np.vstack(idxs), np.concatenate(oks), columns.idx, columns.prox


def decide_columns(
    screen: Screen, A: Table, B: Table, col_i: np.ndarray, col_p: np.ndarray, k: int, metric: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``B -> A`` from the column candidates ``col_i`` (proxies ``col_p``) of a symmetric screen over
    ``B``: exact distances of each ``B`` row to its candidate ``A`` rows and the margin test per row."""
    n_a, n_b = _n_rows(A), _n_rows(B)
    col_bound = screen.pair_bound(float(screen.query_norms(A).max()), screen.ref_norms)
    step = 4096
    dist = np.empty((n_b, k))
    idx = np.empty((n_b, k), dtype=np.int64)
    ok = np.ones(n_b, dtype=bool)
    for s in range(0, n_b, step):
        sl = slice(s, min(n_b, s + step))
        dist[sl], idx[sl] = first_k(screen.exact(_take(B, sl), A, col_i[sl]), col_i[sl], k)
        if col_i.shape[1] < n_a:
            ok[sl] = margin_holds(screen, dist[sl], col_p[sl], col_bound[sl])
    return dist, idx, ok
