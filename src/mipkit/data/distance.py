"""Distances between table rows and exact k-nearest-neighbour search that never holds an N x M matrix.

Two distances
-------------
``"mixed"`` (a Gower-like distance, as anonymeter uses), on :class:`~mipkit.data.tables.MixedArrays`::

    d(a, b) = sum_numeric |a_j - b_j| / range_j  +  sum_categorical [a_c != b_c]

with ``range_j`` the column's range in the original table; a missing value against a missing value counts
0, against a present value 1 (numeric and categorical alike). It is a sum, not a mean, over columns, so a
distance of 1 is "one category differs, or one number differs by the whole range".

``"euclidean"`` on a float matrix (e.g. :func:`~mipkit.data.tables.encode_euclidean`: standardised
numerics + one-hot), and ``"manhattan"`` (L1) on a float matrix.

Search
------
:func:`kneighbors` returns the ``k`` nearest reference rows of every query row, by

* ``"kdtree"``: scikit-learn's ``KDTree`` (Euclidean, or L1 via ``metric="manhattan"``; also the mixed
  distance when the table is numeric only and complete, where it equals L1 on the normalised numerics);
* ``"blocked"``: exact search over blocks of query rows against all reference rows, the block sized so
  that it stays under ``max_block_bytes`` (256 MB by default). For Euclidean, candidate neighbours come from
  ``|r|^2 - 2 q.r`` (one matrix product per block), and the distances of the best ``k + 2`` candidates
  are then recomputed exactly as ``sqrt(sum((q - r)^2))``; for the mixed distance the category mismatches
  of a block are one matrix product of one-hot codes (exact integers) and the numeric part is summed
  column by column. Blocks run on ``n_jobs`` threads (NumPy and BLAS release the GIL).
* ``"screened"`` (the default beyond the KD-tree's reach): blocks of query rows against cache-sized chunks
  of reference rows; float32 proxies of the distance select the ``k + 2`` best candidates of each row (per
  chunk: the minima of 256-wide tiles, then the entries of the best tiles), and the candidates' distances
  are recomputed in float64 with the same operations as :func:`pairwise_distances`. A bound ``b`` on
  ``|proxy - exact|`` (float32 unit roundoff times the dimension times the norms) proves the selection
  complete when the k-th exact distance is below ``max candidate proxy - b`` (every other row's exact
  distance is at least that); otherwise the row is searched again with 4x and 16x more candidates, then by
  brute force. The distances, ties included, are therefore exactly the definition's.

After the first chunk of a block has given each row ``k + 2`` candidates, a later chunk is merged by one
comparison per entry with the row's current largest candidate proxy (only the few entries below it are
sorted in).

:func:`kneighbors_both_ways` searches ``a`` in ``b`` and ``b`` in ``a`` in one pass over the ``a x b``
proxies (used by NNAA for ``T -> S`` and ``S -> T``): each block also updates the candidates of every ``b``
row down the column, with a running threshold per column, and both directions get the same exact re-check
and completeness test (rows that fail it go to the one-way search above).

``exclude_self=True`` (query set = reference set) leaves each row's own index out (leave-one-out); exact
duplicates of a row are other rows and do count.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.data.tables import MixedArrays, one_hot

METRICS = ("mixed", "euclidean", "manhattan")
ALGORITHMS = ("auto", "screened", "blocked", "kdtree")
DEFAULT_BLOCK_BYTES = 256 * 2**20

Table = MixedArrays | np.ndarray


def _check_pair(query: Table, reference: Table, metric: str) -> None:
    if metric == "mixed":
        if not isinstance(query, MixedArrays) or not isinstance(reference, MixedArrays):
            raise MipkitValueError(
                "The 'mixed' metric needs MixedArrays inputs (see mipkit.data.tables.encode_mixed)."
            )
        if (
            query.numeric.shape[1] != reference.numeric.shape[1]
            or query.codes.shape[1] != reference.codes.shape[1]
        ):
            raise MipkitValueError("Query and reference tables have different columns.")
        if tuple(query.n_levels) != tuple(reference.n_levels):
            raise MipkitValueError("Query and reference tables were encoded with different schemas.")
    else:
        for name, x in (("query", query), ("reference", reference)):
            if not isinstance(x, np.ndarray) or x.ndim != 2:
                raise MipkitValueError(f"The {name!r} table must be a 2-D float array for metric {metric!r}.")
            if not np.all(np.isfinite(x)):
                raise MipkitValueError(f"The {name!r} table has NaN or infinite values; encode them first.")
        if query.shape[1] != reference.shape[1]:
            raise MipkitValueError(
                f"Query and reference have different widths: {query.shape[1]} vs {reference.shape[1]}."
            )


def _n_rows(x: Table) -> int:
    return len(x) if isinstance(x, MixedArrays) else int(x.shape[0])


def _take(x: Table, sl) -> Table:
    return x.take(sl) if isinstance(x, MixedArrays) else x[sl]


# --------------------------------------------------------------------------------------------------
# block distance kernels (exact, deterministic)
# --------------------------------------------------------------------------------------------------
class _MixedKernel:
    """Exact mixed distances of a block of queries to all reference rows."""

    def __init__(self, reference: MixedArrays):
        self.ref = reference
        self.n_cat = reference.codes.shape[1]
        self.ref_onehot = one_hot(reference.codes, reference.n_levels) if self.n_cat else None
        self.ref_nan = np.isnan(reference.numeric)
        self.ref_num = np.where(self.ref_nan, 0.0, reference.numeric)
        self.nan_cols = self.ref_nan.any(axis=0)

    def block(self, q: MixedArrays) -> np.ndarray:
        nq = len(q)
        if self.n_cat:
            d = one_hot(q.codes, q.n_levels) @ self.ref_onehot.T  # matches (exact small integers)
            np.subtract(float(self.n_cat), d, out=d)
        else:
            d = np.zeros((nq, len(self.ref)))
        q_nan = np.isnan(q.numeric)
        q_num = np.where(q_nan, 0.0, q.numeric)
        tmp = np.empty_like(d)
        for j in range(q_num.shape[1]):
            np.subtract(q_num[:, j, None], self.ref_num[None, :, j], out=tmp)
            np.abs(tmp, out=tmp)
            if self.nan_cols[j] or q_nan[:, j].any():
                qn, rn = q_nan[:, j], self.ref_nan[:, j]
                tmp[:, rn] = 1.0
                tmp[qn, :] = 1.0
                if qn.any() and rn.any():
                    tmp[np.ix_(qn, rn)] = 0.0
            d += tmp
        return d


class _EuclideanKernel:
    """Squared-distance proxy ``|r|^2 - 2 q.r`` for candidates; exact distances for the candidates."""

    def __init__(self, reference: np.ndarray):
        self.ref = np.ascontiguousarray(reference, dtype=float)
        self.ref_sq = np.einsum("ij,ij->i", self.ref, self.ref)

    def block(self, q: np.ndarray) -> np.ndarray:
        d = q @ self.ref.T
        d *= -2.0
        d += self.ref_sq[None, :]
        return d

    def exact(self, q: np.ndarray, cand: np.ndarray) -> np.ndarray:
        diff = q[:, None, :] - self.ref[cand]
        return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))


class _ManhattanKernel:
    def __init__(self, reference: np.ndarray):
        self.ref = np.ascontiguousarray(reference, dtype=float)

    def block(self, q: np.ndarray) -> np.ndarray:
        d = np.zeros((q.shape[0], self.ref.shape[0]))
        tmp = np.empty_like(d)
        for j in range(q.shape[1]):
            np.subtract(q[:, j, None], self.ref[None, :, j], out=tmp)
            np.abs(tmp, out=tmp)
            d += tmp
        return d


def _kernel(reference: Table, metric: str):
    if metric == "mixed":
        return _MixedKernel(reference)
    if metric == "euclidean":
        return _EuclideanKernel(reference)
    return _ManhattanKernel(reference)


def pairwise_distances(a: Table, b: Table, *, metric: str = "mixed") -> np.ndarray:
    """The full distance matrix between the rows of ``a`` and ``b`` (for small tables and tests).

    Euclidean distances are computed exactly as ``sqrt(sum((a_i - b_j)^2))``, not by the matrix-product
    shortcut, so ties in discrete data stay ties.
    """
    check_choice("metric", metric, METRICS, owner="pairwise_distances")
    _check_pair(a, b, metric)
    if metric == "mixed":
        return _MixedKernel(b).block(a)
    diff = a[:, None, :] - b[None, :, :]
    if metric == "euclidean":
        return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return np.abs(diff).sum(axis=2)


def _smallest_k(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
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


def _search_block(kernel, metric: str, q: Table, start: int, k: int, exclude_self: bool):
    d = kernel.block(q)
    nq, m = d.shape
    rows = np.arange(nq)
    if exclude_self:
        d[rows, start + rows] = np.inf
    n_cand = min(k + 2, m) if metric == "euclidean" else min(k, m)
    cand, dist = _smallest_k(d, n_cand)
    if metric == "euclidean":  # the block held a proxy: recompute the candidates' distances exactly
        dist = kernel.exact(q, cand)
    if exclude_self:  # self can only be a candidate when there are too few other rows
        dist[cand == (start + rows)[:, None]] = np.inf
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(cand, order, axis=1)


def _rows_per_block(n_ref: int, max_block_bytes: int, n_jobs: int) -> int:
    per_row = 8 * max(n_ref, 1) * 3  # the block, a temporary and the one-hot / product buffers
    return int(max(1, min(4096, max_block_bytes // (per_row * max(n_jobs, 1)))))


# --------------------------------------------------------------------------------------------------
# screened search: float32 proxies pick candidates, exact float64 distances decide, with a proven margin
# --------------------------------------------------------------------------------------------------
_U32 = 2.0**-24  # unit roundoff of float32
_SCREEN_ROWS = 256  # query rows per block
_SCREEN_COLS = 16384  # reference rows per chunk (a 16 MB float32 block stays in cache)
_TILE = 256  # tile width of the two-stage selection inside a chunk


class _Screen:
    """Float32 proxies of the distance for candidate selection, with a bound on their error.

    ``proxy(qp, c0, c1)`` returns a float32 block; ``full(p, qp)`` turns a proxy into the distance's
    comparison scale (squared distance for Euclidean) and ``bound(qp)`` bounds ``|full(p) - exact|`` for
    every reference row (exact = the float64 reference formula ``exact(q_rows, cand)``).
    """

    def __init__(self, reference: Table, metric: str):
        self.metric = metric
        self._kernel = None
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
            absum = np.abs(np.nan_to_num(num)).sum(axis=1) if num.shape[1] else np.zeros(len(num))
            self.r1max = float(absum.max()) if absum.size else 0.0
            self.p = num.shape[1]
        else:
            ref = np.asarray(reference, dtype=float)
            self.center = ref.mean(axis=0) if len(ref) else np.zeros(ref.shape[1])
            r = ref - self.center
            self.cnorm = float(np.sqrt(self.center @ self.center))
            self.c1norm = float(np.abs(self.center).sum())
            self.d = ref.shape[1]
            if metric == "euclidean":
                rn2 = np.einsum("ij,ij->i", r, r)
                self.ref_aug_t = np.ascontiguousarray(np.hstack([r, rn2[:, None]]).T.astype(np.float32))
                self.rmax = float(np.sqrt(rn2.max())) if rn2.size else 0.0
            else:
                self.ref_t = np.ascontiguousarray(r.T.astype(np.float32))
                self.r1max = float(np.abs(r).sum(axis=1).max()) if len(r) else 0.0

    def exact_kernel(self, reference: Table):
        """The exact blocked kernel (built once, on first use by the fallback)."""
        with self._lock:
            if self._kernel is None:
                self._kernel = _kernel(reference, self.metric)
        return self._kernel

    def prepare(self, q: Table) -> dict:
        if self.metric == "mixed":
            num = q.numeric
            qnan = np.isnan(num)
            out = {
                "num": np.where(qnan, 0.0, num).astype(np.float32),
                "nan": qnan,
                "oh": one_hot(q.codes, q.n_levels, dtype=np.float32) if self.n_cat else None,
            }
            q1 = np.abs(np.nan_to_num(num)).sum(axis=1) if self.p else np.zeros(len(num))
            out["bound"] = 2.0 * (self.p + 4) * _U32 * (q1 + self.r1max + self.p) + 1e-300
            return out
        x = np.asarray(q, dtype=float) - self.center
        if self.metric == "euclidean":
            qn2 = np.einsum("ij,ij->i", x, x)
            aug = np.hstack([-2.0 * x, np.ones((len(x), 1))]).astype(np.float32)
            spread = np.sqrt(qn2) + self.rmax
            # float32 rounding of the proxy, plus the float64 rounding of centring far from the origin
            bound = 4.0 * (self.d + 4) * (_U32 * spread + 2.0**-52 * (self.cnorm + spread)) * spread + 1e-300
            return {"aug": aug, "qn2": qn2, "bound": bound}
        return {
            "x": x.astype(np.float32),
            "bound": 2.0
            * (self.d + 4)
            * (_U32 + 2.0**-52)
            * (np.abs(x).sum(axis=1) + self.r1max + self.c1norm)
            + 1e-300,
        }

    def proxy(self, qp: dict, c0: int, c1: int) -> np.ndarray:
        if self.metric == "euclidean":
            return qp["aug"] @ self.ref_aug_t[:, c0:c1]
        if self.metric == "manhattan":
            x = qp["x"]
            d = np.zeros((x.shape[0], c1 - c0), dtype=np.float32)
            tmp = np.empty_like(d)
            for j in range(x.shape[1]):
                np.subtract(x[:, j, None], self.ref_t[j, None, c0:c1], out=tmp)
                np.abs(tmp, out=tmp)
                d += tmp
            return d
        num = qp["num"]
        if self.n_cat:
            d = qp["oh"] @ self.ref_oh_t[:, c0:c1]
            np.subtract(np.float32(self.n_cat), d, out=d)
        else:
            d = np.zeros((num.shape[0], c1 - c0), dtype=np.float32)
        tmp = np.empty_like(d)
        for j in range(self.p):
            np.subtract(num[:, j, None], self.ref_num_t[j, None, c0:c1], out=tmp)
            np.abs(tmp, out=tmp)
            qn = qp["nan"][:, j]
            if self.nan_cols[j] or qn.any():
                rn = self.ref_nan_t[j, c0:c1]
                tmp[:, rn] = 1.0
                tmp[qn, :] = 1.0
                if qn.any() and rn.any():
                    tmp[np.ix_(qn, rn)] = 0.0
            d += tmp
        return d

    def full(self, p: np.ndarray, qp: dict) -> np.ndarray:
        p = p.astype(float)
        return p + qp["qn2"][:, None] if self.metric == "euclidean" else p


def _exact_candidates(query: Table, reference: Table, cand: np.ndarray, metric: str) -> np.ndarray:
    """Exact float64 distances of each query row to its candidate reference rows, with the same operations
    (in the same order) as :func:`pairwise_distances` and the blocked kernels."""
    if metric == "euclidean":
        diff = query[:, None, :] - reference[cand]
        return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    if metric == "manhattan":
        d = np.zeros(cand.shape)
        for j in range(query.shape[1]):
            d += np.abs(query[:, j, None] - reference[cand, j])
        return d
    n_cat = query.codes.shape[1]
    if n_cat:
        matches = (query.codes[:, None, :] == reference.codes[cand]).sum(axis=2)
        d = float(n_cat) - matches.astype(float)
    else:
        d = np.zeros(cand.shape)
    for j in range(query.numeric.shape[1]):
        a, b = query.numeric[:, j, None], reference.numeric[cand, j]
        tmp = np.abs(a - b)
        an, bn = np.isnan(a), np.isnan(b)
        tmp = np.where(an | bn, np.where(an & bn, 0.0, 1.0), tmp)
        d += tmp
    return d


def _topk_rows(d: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and values of the ``kk`` smallest entries of each row (any order), ``kk < width``."""
    nq, w = d.shape
    nt = w // _TILE
    if nt > kk and nt * _TILE == w:
        # the kk smallest entries lie in the kk tiles with the smallest minima
        tiles = d.reshape(nq, nt, _TILE)
        tsel = np.argpartition(tiles.min(axis=2), kk - 1, axis=1)[:, :kk]
        g = tiles[np.arange(nq)[:, None], tsel].reshape(nq, kk * _TILE)
        gi = np.argpartition(g, kk - 1, axis=1)[:, :kk]
        idx = np.take_along_axis(tsel, gi // _TILE, axis=1) * _TILE + gi % _TILE
        return idx, np.take_along_axis(g, gi, axis=1)
    idx = np.argpartition(d, kk - 1, axis=1)[:, :kk]
    return idx, np.take_along_axis(d, idx, axis=1)


def _screen_block(screen: _Screen, q: Table, n_ref: int, kk: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Candidates (the ``kk`` smallest proxies) of each query row over all reference rows."""
    qp = screen.prepare(q)
    nq = _n_rows(q)
    best_i = best_p = None
    bounds = []
    for c0 in range(0, n_ref, _SCREEN_COLS):
        c1 = min(n_ref, c0 + _SCREEN_COLS)
        cut = c0 + (c1 - c0) // _TILE * _TILE  # whole tiles, then a short remainder
        bounds += [(c0, cut), (cut, c1)] if c0 < cut < c1 else [(c0, c1)]
    tau = None
    for c0, c1 in bounds:
        p = screen.proxy(qp, c0, c1)
        if tau is not None:  # a full candidate set: merge only the entries below each row's kk-th proxy
            _merge_rows_sparse(best_i, best_p, tau, p, c0, kk)
            continue
        if c1 - c0 <= kk:
            idx, val = np.tile(np.arange(c1 - c0), (nq, 1)), p
        else:
            idx, val = _topk_rows(p, kk)
        idx = idx + c0
        if best_i is None:
            best_i, best_p = idx, val
        else:
            alli, allp = np.hstack([best_i, idx]), np.hstack([best_p, val])
            if alli.shape[1] > kk:
                o = np.argpartition(allp, kk - 1, axis=1)[:, :kk]
                alli, allp = np.take_along_axis(alli, o, axis=1), np.take_along_axis(allp, o, axis=1)
            best_i, best_p = alli, allp
        if best_i.shape[1] == kk:
            best_i, best_p = np.ascontiguousarray(best_i), np.ascontiguousarray(best_p)
            tau = best_p.max(axis=1)
    return best_i, best_p, qp


def _screened_rows(screen, query, reference, rows, k, metric, exclude_self, kk):
    """Search the query rows ``rows``: (dist, idx, ok), ``ok`` False where the margin test failed."""
    q = _take(query, rows)
    n_ref = _n_rows(reference)
    kk = min(kk, n_ref)
    cand, prox, qp = _screen_block(screen, q, n_ref, kk)
    exact = _exact_candidates(q, reference, cand, metric)
    if exclude_self:
        exact[cand == rows[:, None]] = np.inf
    order = np.argsort(exact, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(exact, order, axis=1)
    idx = np.take_along_axis(cand, order, axis=1)
    if kk >= n_ref:
        ok = np.ones(len(rows), dtype=bool)
    else:
        # any row outside the candidates has proxy >= the largest candidate proxy, hence an exact
        # distance >= that proxy - bound; the k found are the k nearest when that exceeds the k-th found
        edge = screen.full(prox, qp).max(axis=1) - qp["bound"]
        last = dist[:, -1] ** 2 * (1 + 1e-12) if metric == "euclidean" else dist[:, -1] * (1 + 1e-12)
        ok = last < edge
    return dist, idx, ok


def _exact_rows(kernel, query, reference, rows, k, metric, exclude_self):
    """Brute-force exact search (full distance rows) for a few query rows."""
    n_ref = _n_rows(reference)
    width = max(1, query.shape[1] if isinstance(query, np.ndarray) else 1)
    step = max(1, (64 * 2**20) // (8 * n_ref * width))
    dist, idx = [], []
    for s in range(0, len(rows), step):
        r = rows[s : s + step]
        if metric == "euclidean":
            d = pairwise_distances(query[r], reference, metric=metric)
        else:
            d = kernel.block(_take(query, r))
        if exclude_self:
            d[np.arange(len(r)), r] = np.inf
        o = np.argsort(d, axis=1, kind="stable")[:, :k]
        dist.append(np.take_along_axis(d, o, axis=1))
        idx.append(o)
    return np.vstack(dist), np.vstack(idx).astype(np.int64)


def _screened_search(query, reference, *, k, metric, exclude_self, n_jobs, progress):
    screen = _Screen(reference, metric)
    n_q = _n_rows(query)
    kk0 = k + (1 if exclude_self else 0) + 2
    starts = list(range(0, n_q, _SCREEN_ROWS))

    def run(start: int):
        rows = np.arange(start, min(n_q, start + _SCREEN_ROWS))
        dist, idx, ok = _screened_rows(screen, query, reference, rows, k, metric, exclude_self, kk0)
        kk = kk0
        while not ok.all() and kk < 64:  # ties or near-ties at the margin: more candidates
            kk *= 4
            bad = np.flatnonzero(~ok)
            d2, i2, ok2 = _screened_rows(screen, query, reference, rows[bad], k, metric, exclude_self, kk)
            dist[bad], idx[bad], ok[bad] = d2, i2, ok2
        if not ok.all():
            bad = np.flatnonzero(~ok)
            kernel = screen.exact_kernel(reference)
            dist[bad], idx[bad] = _exact_rows(kernel, query, reference, rows[bad], k, metric, exclude_self)
        if progress is not None:
            progress(len(rows))
        return dist, idx

    if n_jobs == 1 or len(starts) == 1:
        parts = [run(s) for s in starts]
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            parts = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(s) for s in starts)
    return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts]).astype(np.int64)


# --------------------------------------------------------------------------------------------------
# both directions at once: one pass over the A x B proxies serves A -> B and B -> A
# --------------------------------------------------------------------------------------------------
class _SymmetricScreen(_Screen):
    """A :class:`_Screen` whose proxy is the comparison-scale distance itself (no per-query-row term), so
    that it can be compared down a column (over query rows) as well as along a row.

    For Euclidean the squared norm of the query row is one more float32 column of the product
    (``[-2x, 1, |x|^2] . [r, |r|^2, 1]``); the mixed and Manhattan proxies are already symmetric. The error
    bound of a pair is a function of the two rows' norms, ``pair_bound(norm_q, norm_r)``, with the same form
    as the one-way bound (the dimension counts the extra column).
    """

    def __init__(self, reference: Table, metric: str):
        super().__init__(reference, metric)
        if metric == "euclidean":
            ref = np.asarray(reference, dtype=float) - self.center
            rn2 = np.einsum("ij,ij->i", ref, ref)
            self.ref_aug_t = np.ascontiguousarray(
                np.hstack([ref, rn2[:, None], np.ones((len(ref), 1))]).T.astype(np.float32)
            )
            self.ref_norms = np.sqrt(rn2)
        elif metric == "manhattan":
            self.ref_norms = np.abs(np.asarray(reference, dtype=float) - self.center).sum(axis=1)
        else:
            num = reference.numeric
            self.ref_norms = np.abs(np.nan_to_num(num)).sum(axis=1) if self.p else np.zeros(len(num))
        self.ref_norm_max = float(self.ref_norms.max()) if self.ref_norms.size else 0.0

    def query_norms(self, q: Table) -> np.ndarray:
        if self.metric == "mixed":
            return np.abs(np.nan_to_num(q.numeric)).sum(axis=1) if self.p else np.zeros(len(q))
        x = np.asarray(q, dtype=float) - self.center
        return np.sqrt(np.einsum("ij,ij->i", x, x)) if self.metric == "euclidean" else np.abs(x).sum(axis=1)

    def pair_bound(self, norm_q, norm_r):
        """Bound on ``|proxy - exact|`` (comparison scale) for rows of these norms (broadcasts)."""
        if self.metric == "mixed":
            return 2.0 * (self.p + 4) * _U32 * (norm_q + norm_r + self.p) + 1e-300
        if self.metric == "manhattan":
            return 2.0 * (self.d + 4) * (_U32 + 2.0**-52) * (norm_q + norm_r + self.c1norm) + 1e-300
        s = norm_q + norm_r
        return 4.0 * (self.d + 5) * (_U32 * s + 2.0**-52 * (self.cnorm + s)) * s + 1e-300

    def prepare(self, q: Table) -> dict:
        if self.metric != "euclidean":
            qp = super().prepare(q)
        else:
            x = np.asarray(q, dtype=float) - self.center
            qn2 = np.einsum("ij,ij->i", x, x)
            qp = {"aug": np.hstack([-2.0 * x, np.ones((len(x), 1)), qn2[:, None]]).astype(np.float32)}
        qp["bound"] = self.pair_bound(self.query_norms(q), self.ref_norm_max)
        return qp

    def full(self, p: np.ndarray, qp: dict | None = None) -> np.ndarray:
        return p.astype(float)


def _chunk_bounds(n_ref: int) -> list[tuple[int, int]]:
    bounds = []
    for c0 in range(0, n_ref, _SCREEN_COLS):
        c1 = min(n_ref, c0 + _SCREEN_COLS)
        cut = c0 + (c1 - c0) // _TILE * _TILE  # whole tiles, then a short remainder
        bounds += [(c0, cut), (cut, c1)] if c0 < cut < c1 else [(c0, c1)]
    return bounds


def _merge_columns_dense(col_i, col_p, tau, p, rows, c0, c1, kk):
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


def _merge_hits(state_i, state_p, tau, groups, vals, ids, kk):
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


class _ColumnCandidates:
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
        self.blocks += 1
        if self.blocks & (self.blocks - 1) == 0:
            self.compact()

    def compact(self) -> None:
        if self.buffer:
            cols, vals, ids = (np.concatenate(x) for x in zip(*self.buffer, strict=True))
            _merge_hits(self.idx, self.prox, self.tau, cols, vals, ids, self.kk)
        self.buffer, self.buffered = [], 0


def _merge_rows_sparse(row_i, row_p, tau, p, c0, kk):
    """Row-wise merge of the entries below each row's current ``kk``-th candidate proxy ``tau``."""
    flat = np.flatnonzero(p < tau[:, None])
    if flat.size:
        ri, cj = np.divmod(flat, p.shape[1])
        _merge_hits(row_i, row_p, tau, ri, p.ravel()[flat], cj + c0, kk)


def _both_ways_part(screen, A, B, r0, r1, k, metric, kk_row, kk_col, progress):
    """Rows ``r0:r1`` of ``A`` against all of ``B``: exact results for these rows (with an ``ok`` flag) and
    the column candidates (the ``kk_col`` smallest proxies of each ``B`` row over these ``A`` rows)."""
    n_b = _n_rows(B)
    bounds = _chunk_bounds(n_b)
    columns = _ColumnCandidates(n_b, kk_col)
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
                if c1 - c0 <= kk_row:
                    idx, val = np.tile(np.arange(c1 - c0), (len(rows), 1)), p
                else:
                    idx, val = _topk_rows(p, kk_row)
                alli, allp = np.hstack([best_i, idx + c0]), np.hstack([best_p, val])
                o = np.argpartition(allp, kk_row - 1, axis=1)[:, :kk_row]
                best_i, best_p = np.take_along_axis(alli, o, axis=1), np.take_along_axis(allp, o, axis=1)
                row_tau = best_p.max(axis=1)
            else:
                _merge_rows_sparse(best_i, best_p, row_tau, p, c0, kk_row)
        exact = _exact_candidates(q, B, best_i, metric)
        order = np.argsort(exact, axis=1, kind="stable")[:, :k]
        dist = np.take_along_axis(exact, order, axis=1)
        if kk_row >= n_b:
            ok = np.ones(len(rows), dtype=bool)
        else:
            edge = screen.full(best_p).max(axis=1) - qp["bound"]
            last = dist[:, -1] ** 2 * (1 + 1e-12) if metric == "euclidean" else dist[:, -1] * (1 + 1e-12)
            ok = last < edge
        dists.append(dist)
        idxs.append(np.take_along_axis(best_i, order, axis=1))
        oks.append(ok)
        columns.end_block()
        if progress is not None:
            progress(len(rows))
    columns.compact()
    return np.vstack(dists), np.vstack(idxs), np.concatenate(oks), columns.idx, columns.prox


def _both_ways_screened(A, B, *, k, metric, n_jobs, progress):
    screen = _SymmetricScreen(B, metric)
    n_a, n_b = _n_rows(A), _n_rows(B)
    kk_row, kk_col = min(k + 2, n_b), min(k + 2, n_a)
    n_parts = max(1, min(n_jobs, -(-n_a // _SCREEN_ROWS)))
    per = -(-n_a // n_parts)
    parts_at = [(r0, min(n_a, r0 + per)) for r0 in range(0, n_a, per)]

    def run(r0, r1):
        return _both_ways_part(screen, A, B, r0, r1, k, metric, kk_row, kk_col, progress)

    if len(parts_at) == 1:
        parts = [run(*parts_at[0])]
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            parts = Parallel(n_jobs=len(parts_at), prefer="threads")(delayed(run)(*r) for r in parts_at)
    dist_ab = np.vstack([p[0] for p in parts])
    idx_ab = np.vstack([p[1] for p in parts]).astype(np.int64)
    ok_ab = np.concatenate([p[2] for p in parts])
    col_i = np.hstack([p[3] for p in parts])
    col_p = np.hstack([p[4] for p in parts])
    if col_i.shape[1] > kk_col:
        o = np.argpartition(col_p, kk_col - 1, axis=1)[:, :kk_col]
        col_i, col_p = np.take_along_axis(col_i, o, axis=1), np.take_along_axis(col_p, o, axis=1)
    # B -> A: exact distances of each B row to its candidate A rows, and the margin test per B row
    a_norm_max = float(screen.query_norms(A).max())
    col_bound = screen.pair_bound(a_norm_max, screen.ref_norms)
    step = 4096
    dist_ba = np.empty((n_b, k))
    idx_ba = np.empty((n_b, k), dtype=np.int64)
    ok_ba = np.ones(n_b, dtype=bool)
    for s in range(0, n_b, step):
        sl = slice(s, min(n_b, s + step))
        exact = _exact_candidates(_take(B, sl), A, col_i[sl], metric)
        order = np.argsort(exact, axis=1, kind="stable")[:, :k]
        dist_ba[sl] = np.take_along_axis(exact, order, axis=1)
        idx_ba[sl] = np.take_along_axis(col_i[sl], order, axis=1)
        if kk_col < n_a:
            edge = screen.full(col_p[sl]).max(axis=1) - col_bound[sl]
            last = dist_ba[sl, -1]
            last = last**2 * (1 + 1e-12) if metric == "euclidean" else last * (1 + 1e-12)
            ok_ba[sl] = last < edge
    # rows whose margin test failed (ties or near-ties): the one-way screened search, which widens the
    # candidate set and ends in brute force
    for ok, q, r, d, i in ((ok_ab, A, B, dist_ab, idx_ab), (ok_ba, B, A, dist_ba, idx_ba)):
        bad = np.flatnonzero(~ok)
        if bad.size:
            d[bad], i[bad] = _screened_search(
                _take(q, bad), r, k=k, metric=metric, exclude_self=False, n_jobs=n_jobs, progress=None
            )
    return (dist_ab, idx_ab), (dist_ba, idx_ba)


def kneighbors_both_ways(
    a: Table,
    b: Table,
    *,
    k: int = 1,
    metric: str = "mixed",
    algorithm: str = "auto",
    n_jobs: int = 2,
    progress: Callable[[int], None] | None = None,
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
        ``"auto"`` and ``"screened"`` use the shared pass where :func:`kneighbors` would screen; a KD-tree
        (``"auto"`` on few complete numeric columns, or ``"kdtree"``) and ``"blocked"`` run the two
        directions separately.
    n_jobs : int
        Threads (the rows of ``a`` are split into ``n_jobs`` contiguous parts).
    progress : callable, optional
        Called with the number of ``a`` rows finished after each block.

    Returns
    -------
    (dist_ab, idx_ab), (dist_ba, idx_ba) : ndarrays of shapes (len(a), k) and (len(b), k)
        Ascending distances and int64 row indices into ``b`` and ``a`` respectively.
    """
    check_choice("metric", metric, METRICS, owner="kneighbors_both_ways")
    check_choice("algorithm", algorithm, ALGORITHMS, owner="kneighbors_both_ways")
    k = check_positive_int("k", k, owner="kneighbors_both_ways")
    n_jobs = check_positive_int("n_jobs", n_jobs, owner="kneighbors_both_ways")
    _check_pair(a, b, metric)
    n_a, n_b = _n_rows(a), _n_rows(b)
    if k > min(n_a, n_b):
        raise MipkitValueError(
            f"The 'k' parameter of kneighbors_both_ways must be at most {min(n_a, n_b)} (rows of the smaller "
            f"table). Got {k} instead."
        )
    if metric == "mixed":
        tree_ok = a.codes.shape[1] == 0 and not (np.isnan(a.numeric).any() or np.isnan(b.numeric).any())
        n_feat = a.numeric.shape[1]
    else:
        tree_ok, n_feat = True, a.shape[1]
    one_way = algorithm in ("kdtree", "blocked") or (algorithm == "auto" and tree_ok and n_feat <= 10)
    if one_way or n_a == 0 or n_b == 0:
        kw = {"k": k, "metric": metric, "algorithm": algorithm, "n_jobs": n_jobs}
        return kneighbors(a, b, progress=progress, **kw), kneighbors(b, a, **kw)
    return _both_ways_screened(a, b, k=k, metric=metric, n_jobs=n_jobs, progress=progress)


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
    progress: Callable[[int], None] | None = None,
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
        ``"auto"`` uses a KD-tree for numeric data of at most 10 columns without missing values, else the
        screened search (float32 candidates, exact float64 decision, see the module docstring);
        ``"blocked"`` is the plain exact blocked search.
    max_block_bytes : int
        Memory budget of the distance blocks held at once (all threads together).
    n_jobs : int
        Threads for the blocked search.
    progress : callable, optional
        Called with the number of query rows finished after each block.

    Returns
    -------
    distances : ndarray of shape (n_query, k), ascending in each row
    indices : ndarray of shape (n_query, k), int64 reference row indices
    """
    check_choice("metric", metric, METRICS, owner="kneighbors")
    check_choice("algorithm", algorithm, ALGORITHMS, owner="kneighbors")
    k = check_positive_int("k", k, owner="kneighbors")
    n_jobs = check_positive_int("n_jobs", n_jobs, owner="kneighbors")
    _check_pair(query, reference, metric)
    n_q, n_r = _n_rows(query), _n_rows(reference)
    if exclude_self and n_q != n_r:
        raise MipkitValueError("exclude_self=True needs the query to be the reference (same number of rows).")
    available = n_r - (1 if exclude_self else 0)
    if k > available:
        raise MipkitValueError(
            f"The 'k' parameter of kneighbors must be at most {available} (reference rows"
            f"{' minus self' if exclude_self else ''}). Got {k} instead."
        )
    if n_q == 0:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)

    # a tree where it pays: few numeric columns, no missing values
    if metric == "mixed":
        tree_ok = query.codes.shape[1] == 0 and not (
            np.isnan(query.numeric).any() or np.isnan(reference.numeric).any()
        )
        n_feat = query.numeric.shape[1]
    else:
        tree_ok, n_feat = True, query.shape[1]
    use_tree = algorithm == "kdtree" or (algorithm == "auto" and tree_ok and n_feat <= 10)
    if use_tree:
        if not tree_ok:
            raise MipkitValueError("algorithm='kdtree' needs numeric data without missing values.")
        return _tree_search(
            query, reference, k=k, metric=metric, exclude_self=exclude_self, progress=progress
        )

    if algorithm in ("auto", "screened"):
        return _screened_search(
            query, reference, k=k, metric=metric, exclude_self=exclude_self, n_jobs=n_jobs, progress=progress
        )
    kernel = _kernel(reference, metric)
    rows = _rows_per_block(n_r, max_block_bytes, n_jobs)
    starts = list(range(0, n_q, rows))

    def run(start: int):
        out = _search_block(kernel, metric, _take(query, slice(start, start + rows)), start, k, exclude_self)
        if progress is not None:
            progress(min(rows, n_q - start))
        return out

    if n_jobs == 1 or len(starts) == 1:
        parts = [run(s) for s in starts]
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            parts = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(s) for s in starts)
    dist = np.vstack([p[0] for p in parts])
    idx = np.vstack([p[1] for p in parts])
    return dist, idx


def _tree_search(query, reference, *, k, metric, exclude_self, progress):
    from sklearn.neighbors import KDTree

    q = query.numeric if isinstance(query, MixedArrays) else query
    r = reference.numeric if isinstance(reference, MixedArrays) else reference
    tree_metric = "euclidean" if metric == "euclidean" else "manhattan"
    tree = KDTree(r, metric=tree_metric)
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
    if progress is not None:
        progress(len(q))
    return dist, idx.astype(np.int64)
