"""Exact mixed-distance search pruned by the category mismatches, a lower bound of the distance.

The mixed distance is ``c(a, b) + sum_j |a_j - b_j|`` with ``c`` the number of categorical columns that
differ (an integer) and a non-negative numeric part, so ``c <= d`` for every pair, in floating point too:
the float64 sum starts from the integer ``c`` and adds non-negative terms, and rounding to nearest is
monotone, so the computed ``d`` is never below ``c``. For a block of query rows:

1. ``C``: the mismatches of every pair (exact small integers), summed over groups of categorical columns:
   for each group, a table of each query row's mismatches with every combination of the group's levels,
   gathered by each reference row's combination (its key);
2. for each query row, the exact distances to the reference rows with the fewest mismatches (at least
   ``k`` of them); the ``k``-th smallest, ``U``, is at least the row's true ``k``-th nearest distance;
3. every reference row with ``C <= U`` is a candidate (any row closer than ``U``, or tied with it, has
   ``C <= d <= U``), and the candidates' exact distances are computed with the operations of
   :func:`~mipkit.data.neighbors.kernels.exact_candidates`, so each is the same number as on every path;
4. the ``k`` smallest of each row, ties broken by the smaller reference index (on integer data after the
   distances are put on their exact lattice, :func:`~mipkit.data.neighbors.kernels.snap_to_lattice`, so
   that ties are the exact ones).

On tables whose categories separate records (most rows differ from a query in several columns more than
its nearest neighbours do) step 3 keeps a small share of the pairs and the numeric part is summed for those
only; where it would keep more than :data:`MAX_CANDIDATE_SHARE` of a block's pairs the block is left to the
screened search (``None`` is returned).
"""

from __future__ import annotations

import numpy as np

from mipkit.data.neighbors.kernels import add_abs_columns, snap_to_lattice
from mipkit.data.tables import MixedArrays

MAX_CANDIDATE_SHARE = 1 / 4
"""A block whose candidate pairs exceed this share of its pairs goes to the screened search."""
_BLOCK_BYTES = 16 * 2**20  # the mismatch counts of one group of query rows (a few arrays of that size)
_MAX_KEYS = 4096  # level combinations of a column group (its table: query rows x keys)


class CategoricalBound:
    """The reference table's category keys by column group, for the mismatch blocks of :meth:`search`;
    ``lattice`` as :func:`~mipkit.data.neighbors.kernels.exact_lattice` gives it for the query and reference
    tables."""

    def __init__(self, reference: MixedArrays, lattice: int | None = None):
        self.reference = reference
        self.lattice = lattice  # distances put on it before the ties are ordered (exact ties, see kernels)
        self.n_cat = reference.codes.shape[1]
        self.count_dtype = np.uint8 if self.n_cat < 255 else np.uint32
        # the categorical columns in groups of at most _MAX_KEYS level combinations; each reference row's
        # combination in a group is one key, and each key's columns are in ``decode``
        self.groups = []
        for cols in _key_groups(reference.n_levels):
            sizes = [reference.n_levels[c] for c in cols]
            if int(np.prod(sizes)) > _MAX_KEYS:  # one column of many levels: compared directly
                self.groups.append((cols, np.ascontiguousarray(reference.codes[:, cols[0]]), None))
                continue
            keys = np.ravel_multi_index(tuple(reference.codes[:, c] for c in cols), sizes)
            decode = np.stack(np.unravel_index(np.arange(int(np.prod(sizes))), sizes), axis=1)
            self.groups.append((cols, keys, decode))

    def mismatches(self, q: MixedArrays) -> np.ndarray:
        """``(n_ref, len(q))`` counts of the categorical columns in which each pair differs (reference rows
        first: one row of counts per reference row, gathered from a small table per column group)."""
        out = None
        for cols, keys, decode in self.groups:
            if decode is None:
                part = (keys[:, None] != q.codes[None, :, cols[0]]).astype(self.count_dtype)
            else:  # per query row and key: how many of the group's columns differ; then gathered by key
                table = (q.codes[:, None, cols] != decode[None, :, :]).sum(axis=2, dtype=self.count_dtype)
                part = np.ascontiguousarray(table.T)[keys]
            out = part if out is None else np.add(out, part, out=out)
        return out

    def search(
        self, query: MixedArrays, rows: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(dist, idx)`` of the ``k`` nearest reference rows of the query rows ``rows`` (ascending, ties
        by index), or None when the bound prunes too little for some group of these rows."""
        n_ref = len(self.reference)
        mism_bytes = np.dtype(self.count_dtype).itemsize
        step = max(1, min(len(rows), _BLOCK_BYTES // (mism_bytes * max(n_ref, 1))))
        dist, idx = [], []
        for s in range(0, len(rows), step):
            found = self._search_group(query, rows[s : s + step], k, exclude_self)
            if found is None:
                return None
            dist.append(found[0])
            idx.append(found[1])
        return np.vstack(dist), np.vstack(idx)

    def _search_group(
        self, query: MixedArrays, rows: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        q = query.take(rows)
        b = len(rows)
        mism = self.mismatches(q)  # (n_ref, b)
        if exclude_self:
            mism[rows, np.arange(b)] = np.iinfo(mism.dtype).max  # never among the fewest: k < n_ref
        # the rows with the fewest mismatches (at least k per query row) give the upper bound: the k-th
        # smallest of their exact distances
        fewest = mism.min(axis=0).astype(np.int64)
        while k > 1 and np.any(short := (mism <= fewest[None, :]).sum(axis=0) < k):
            fewest[short] += 1
        if k == 1:  # per query row a minimum, not an order: two passes over the pairs, no sort
            qi, rj, d = self._candidates(q, rows, mism, fewest, exclude_self)
            upper = np.full(b, np.inf)
            np.minimum.at(upper, qi, d)
            qi, rj, d = self._candidates(q, rows, mism, upper, exclude_self)
            if qi.size > MAX_CANDIDATE_SHARE * mism.size:
                return None
            best = np.full(b, np.inf)
            np.minimum.at(best, qi, d)
            at_best = d == best[qi]
            idx = np.full(b, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(idx, qi[at_best], rj[at_best])  # ties: the smaller reference index
            return best[:, None], idx[:, None]
        qi, rj, d = _ordered(*self._candidates(q, rows, mism, fewest, exclude_self))
        upper = d[np.searchsorted(qi, np.arange(b)) + k - 1]
        qi, rj, d = self._candidates(q, rows, mism, upper, exclude_self)
        if qi.size > MAX_CANDIDATE_SHARE * mism.size:
            return None
        qi, rj, d = _ordered(qi, rj, d)
        starts = np.searchsorted(qi, np.arange(b))
        take = starts[:, None] + np.arange(k)[None, :]  # every row has at least k candidates
        return d[take], rj[take].astype(np.int64)

    def _candidates(
        self, q: MixedArrays, rows: np.ndarray, mism: np.ndarray, bound: np.ndarray, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs ``(query row, reference row)`` with at most ``bound`` mismatches (per query row) and
        their exact distances."""
        b = mism.shape[1]
        flat = np.flatnonzero(mism <= bound[None, :])  # (flatnonzero: fast on a flat mask)
        rj = flat // b
        qi = flat - rj * b
        if exclude_self:
            own = rj == rows[qi]
            qi, rj = qi[~own], rj[~own]
        return qi, rj, snap_to_lattice(exact_pairs(q, self.reference, qi, rj, mism[rj, qi]), self.lattice)


def _ordered(qi: np.ndarray, rj: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs by query row, then distance, then reference index."""
    order = np.lexsort((rj, d, qi))
    return qi[order], rj[order], d[order]


def _key_groups(n_levels: tuple[int, ...]) -> list[list[int]]:
    """Consecutive categorical columns grouped so that each group has at most :data:`_MAX_KEYS` level
    combinations (a column with more levels is a group of its own)."""
    groups: list[list[int]] = []
    size = 0
    for c, levels in enumerate(n_levels):
        if groups and size * levels <= _MAX_KEYS:
            groups[-1].append(c)
            size *= levels
        else:
            groups.append([c])
            size = levels
    return groups


def exact_pairs(
    q: MixedArrays, reference: MixedArrays, qi: np.ndarray, rj: np.ndarray, mismatches: np.ndarray
) -> np.ndarray:
    """Exact mixed distances of the pairs ``(q[qi], reference[rj])`` given their mismatch counts.

    The operations of :func:`~mipkit.data.neighbors.kernels.exact_candidates` in the same order (the
    integer count in float64, then ``+ |a_j - b_j|`` column by column with the missing-value rule), on a
    ``(pairs, 1)`` block, so each distance is the same float64 number.
    """
    d = mismatches.astype(np.float64)[:, None]
    q_num = q.numeric[qi]
    q_nan = np.isnan(q_num)

    def column(j: int) -> tuple[np.ndarray, np.ndarray]:
        values = reference.numeric[rj, j][:, None]
        return values, np.isnan(values)

    return add_abs_columns(d, np.where(q_nan, 0.0, q_num), column, q_nan)[:, 0]
