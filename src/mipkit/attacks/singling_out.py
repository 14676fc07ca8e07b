"""The singling-out attack on released synthetic data: predicates that isolate exactly one record.

Threat model (Article 29 Working Party, Opinion 05/2014; Cohen & Nissim, PNAS 117, 2020; Giomi et al.,
PoPETs 2023, the method of anonymeter's ``SinglingOutEvaluator``): from the synthetic table alone, the
attacker writes predicates on the columns and claims that each one isolates exactly one person of the
original (training) data. A predicate *singles out* a table when exactly one of the table's distinct rows
satisfies it.

Two ways to write predicates, both from the synthetic data only:

* ``"univariate"``: one condition on a rare or extreme value of the synthetic table: ``x == v`` for every
  value ``v`` that occurs in exactly one distinct synthetic row, ``x <= min`` and ``x >= max`` of each numeric
  column, ``x is missing`` where exactly one row misses ``x``;
* ``"multivariate"``: a random synthetic row and ``n_cols`` random columns; categorical conditions are
  ``x == value``, numeric ones point away from the synthetic median (``x >= value`` above it, ``x <= value``
  otherwise), a missing value gives ``x is missing``.

Only predicates that single out the synthetic table are kept (distinct ones, in the order drawn, up to the
number asked). Each is then evaluated on the original and on the control (non-member) table: the counts
of matching distinct rows are what :func:`mipkit.metrics.singling_out.measure_singling_out` scores
(``docs/theory.md`` section 6).

Evaluation is vectorised over predicates with bit sets: in each table, every column's rows are sorted once,
so that every condition selects an interval ``[lo, hi)`` of sorted positions; the rows at positions below
``p`` are a precomputed "prefix" bit mask (every ``step``-th position) plus fewer than ``step`` bits set
directly, a condition is ``prefix(hi) & ~prefix(lo)``, a predicate the AND of its conditions, and its count a
population count. A batch of ``B`` predicates costs ``O(B k n / 64)`` word operations for ``k`` conditions
and ``n`` rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.data.attack_records import EQ, GE, LE, MISSING, Predicates, SinglingOutCounts
from mipkit.data.tables import TableSchema, encode_mixed

__all__ = [
    "MODES",
    "PredicateIndex",
    "Predicates",
    "SinglingOutCounts",
    "encode_distinct",
    "singling_out_counts",
    "singling_out_predicates",
]

MODES = ("univariate", "multivariate")
_PREFIX_BYTES = 2 * 2**20  # memory of one column's prefix masks
_BATCH_WORDS = 2**21  # predicates x 64-bit words held per batch array


def encode_distinct(df: pd.DataFrame, schema: TableSchema) -> np.ndarray:
    """The distinct rows of ``df`` as one float matrix, columns in ``schema.columns`` order.

    Numeric columns keep their values (NaN where missing); categorical columns hold the schema's category
    codes (missing has a code of its own, the last), so that codes agree across the tables of an audit.
    Identical rows are kept once (first occurrence): a predicate singles out a *distinct* record.
    """
    num = df[list(schema.numeric)].to_numpy(dtype=float) if schema.numeric else np.empty((len(df), 0))
    codes = encode_mixed(df[list(schema.columns)], schema).codes.astype(float)
    values = np.hstack([num, codes])
    return pd.DataFrame(values).drop_duplicates().to_numpy()


class PredicateIndex:
    """Bit-set index of a table's distinct rows for counting the rows that satisfy predicates.

    Parameters
    ----------
    values : float array of shape (n, p)
        :func:`encode_distinct` output (NaN = missing numeric value).
    """

    def __init__(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=float)
        self.n, self.p = v.shape
        self.words = max(1, (self.n + 63) // 64)
        self.step = max(64, -(-self.n // max(1, _PREFIX_BYTES // (8 * self.words))))
        self.order, self.sorted, self.present, self.prefix = [], [], [], []
        pos = np.arange(self.n)
        for j in range(self.p):
            order = np.argsort(v[:, j], kind="stable")  # NaN last
            sv = v[order, j]
            present = int(np.count_nonzero(~np.isnan(sv)))
            t = pos // self.step + 1
            masks = np.zeros((-(-self.n // self.step) + 1, self.words), dtype=np.uint64)
            np.bitwise_or.at(
                masks, (t, order >> 6), np.left_shift(np.uint64(1), (order & 63).astype(np.uint64))
            )
            np.bitwise_or.accumulate(masks, axis=0, out=masks)
            self.order.append(order)
            self.sorted.append(sv[:present])
            self.present.append(present)
            self.prefix.append(masks)

    def _prefix(self, j: int, pos: np.ndarray) -> np.ndarray:
        """Bit masks of the rows at sorted positions ``< pos`` of column ``j`` (one row per entry)."""
        base = pos // self.step
        out = self.prefix[j][base]
        rem = pos - base * self.step
        width = int(rem.max()) if rem.size else 0
        if width:
            r = np.arange(width)
            valid = r[None, :] < rem[:, None]
            rows = self.order[j][np.minimum(base[:, None] * self.step + r[None, :], self.n - 1)]
            flat = (np.arange(pos.size)[:, None] * self.words + (rows >> 6))[valid]
            bits = np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64))[valid]
            np.bitwise_or.at(out.reshape(-1), flat, bits)
        return out

    def _interval(self, j: int, op: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted positions ``[lo, hi)`` of the rows of column ``j`` that satisfy each condition."""
        sv, present = self.sorted[j], self.present[j]
        left = np.searchsorted(sv, value, side="left")
        right = np.searchsorted(sv, value, side="right")
        lo = np.select([op == EQ, op == LE, op == GE], [left, 0, left], present)
        hi = np.select([op == EQ, op == LE, op == GE], [right, right, present], self.n)
        return lo, hi

    def count(self, predicates: Predicates) -> np.ndarray:
        """Number of rows that satisfy each predicate (int64 array of length ``len(predicates)``)."""
        m = len(predicates)
        out = np.empty(m, dtype=np.int64)
        if predicates.col.shape[1] == 1:  # one condition: the length of its interval of sorted positions
            for j in np.unique(predicates.col[:, 0]):
                sel = np.flatnonzero(predicates.col[:, 0] == j)
                lo, hi = self._interval(int(j), predicates.op[sel, 0], predicates.value[sel, 0])
                out[sel] = hi - lo
            return out
        batch = max(1, _BATCH_WORDS // self.words)
        for s in range(0, m, batch):
            pr = predicates.take(slice(s, s + batch))
            acc = np.full((len(pr), self.words), ~np.uint64(0), dtype=np.uint64)
            for slot in range(pr.col.shape[1]):
                for j in np.unique(pr.col[:, slot]):
                    sel = np.flatnonzero(pr.col[:, slot] == j)
                    lo, hi = self._interval(int(j), pr.op[sel, slot], pr.value[sel, slot])
                    mask = self._prefix(int(j), hi)
                    some = lo > 0
                    if some.any():
                        mask[some] &= ~self._prefix(int(j), lo[some])
                    acc[sel] &= mask
            out[s : s + len(pr)] = np.bitwise_count(acc).sum(axis=1, dtype=np.int64)
        return out


def _keys(p: Predicates) -> list[bytes]:
    return [r.tobytes() for r in np.hstack([p.col, p.op, p.value]).astype(np.float64)]


def _univariate_candidates(v: np.ndarray, n_numeric: int, rng: np.random.Generator) -> Predicates:
    col, op, val = [], [], []
    for j in range(v.shape[1]):
        x = v[:, j]
        nan = np.isnan(x)
        present = x[~nan]
        if j < n_numeric:
            if nan.sum() == 1:
                col.append(j), op.append(MISSING), val.append(0.0)
            if present.size:
                col += [j, j]
                op += [LE, GE]
                val += [float(present.min()), float(present.max())]
        levels, counts = np.unique(present, return_counts=True)
        rare = levels[counts == 1]
        col += [j] * rare.size
        op += [EQ] * rare.size
        val += rare.tolist()
    order = rng.permutation(len(col))
    as_col = lambda a, t: np.asarray(a, dtype=t).reshape(-1, 1)[order]  # noqa: E731
    return Predicates(as_col(col, np.int64), as_col(op, np.int8), as_col(val, float))


def _multivariate_candidates(
    v: np.ndarray, n_numeric: int, medians: np.ndarray, n_cols: int, size: int, rng: np.random.Generator
) -> Predicates:
    rows = rng.integers(0, v.shape[0], size=size)
    col = np.sort(np.argsort(rng.random((size, v.shape[1])), axis=1)[:, :n_cols], axis=1)
    val = v[rows[:, None], col]
    numeric = col < n_numeric
    missing = np.isnan(val)
    above = np.zeros_like(missing)
    np.greater(val, medians[col], out=above, where=~missing)
    op = np.where(~numeric, EQ, np.where(missing, MISSING, np.where(above, GE, LE))).astype(np.int8)
    return Predicates(col.astype(np.int64), op, np.where(missing, 0.0, val))


def singling_out_predicates(
    synthetic: np.ndarray,
    n_numeric: int,
    *,
    mode: str = "multivariate",
    n_predicates: int = 500,
    n_cols: int = 3,
    max_attempts: int | None = None,
    random_state: RandomState = None,
) -> tuple[Predicates, int]:
    """Distinct predicates that single out the (distinct) synthetic rows, in the order drawn.

    Parameters
    ----------
    synthetic : float array of shape (n, p)
        :func:`encode_distinct` of the synthetic table; its first ``n_numeric`` columns are numeric.
    mode : {"univariate", "multivariate"}
    n_predicates : int
        How many to return at most (fewer when the candidates run out).
    n_cols : int
        Conditions per multivariate predicate (at most the number of columns).
    max_attempts : int, optional
        Multivariate candidates drawn at most (default ``1000 * n_predicates``).
    random_state : int, Generator or None

    Returns
    -------
    (Predicates, int)
        The predicates and the number of candidates drawn.
    """
    check_choice("mode", mode, MODES, owner="singling_out_predicates")
    n_predicates = check_positive_int("n_predicates", n_predicates, owner="singling_out_predicates")
    v = np.asarray(synthetic, dtype=float)
    rng = check_random_state(random_state)
    index = PredicateIndex(v)
    if mode == "univariate":
        cand = _univariate_candidates(v, n_numeric, rng)
        return cand.take(_singling(index, cand, set(), n_predicates)), len(cand)
    n_cols = check_positive_int("n_cols", n_cols, owner="singling_out_predicates")
    if n_cols > v.shape[1]:
        raise MipkitValueError(
            f"The 'n_cols' parameter of singling_out_predicates must be at most {v.shape[1]} (the number of "
            f"columns). Got {n_cols} instead."
        )
    limit = 1000 * n_predicates if max_attempts is None else int(max_attempts)
    return _multivariate(v, n_numeric, n_cols, n_predicates, limit, rng, index)


def _singling(index: PredicateIndex, cand: Predicates, seen: set[bytes], room: int) -> np.ndarray:
    """Positions in ``cand`` of the predicates that single out one row of ``index``'s table and are not in
    ``seen`` (added to it), in order, at most ``room`` of them."""
    keep = np.flatnonzero(index.count(cand) == 1)
    new = []
    for i, key in zip(keep, _keys(cand.take(keep)), strict=True):
        if key not in seen and len(new) < room:
            seen.add(key)
            new.append(i)
    return np.asarray(new, dtype=np.int64)


def _multivariate(
    v: np.ndarray,
    n_numeric: int,
    n_cols: int,
    n_predicates: int,
    limit: int,
    rng: np.random.Generator,
    index: PredicateIndex,
) -> tuple[Predicates, int]:
    """Multivariate predicates drawn in batches until ``n_predicates`` single out a row or ``limit``
    candidates were drawn; the predicates and the number drawn."""
    with np.errstate(all="ignore"):
        medians = np.nanmedian(v[:, :n_numeric], axis=0) if n_numeric else np.empty(0)
    medians = np.concatenate([medians, np.full(v.shape[1] - n_numeric, np.nan)])
    seen: set[bytes] = set()
    found: list[Predicates] = []
    n_found = attempts = 0
    batch = int(min(4096, max(256, 4 * n_predicates)))
    while n_found < n_predicates and attempts < limit:
        cand = _multivariate_candidates(v, n_numeric, medians, n_cols, min(batch, limit - attempts), rng)
        attempts += len(cand)
        new = _singling(index, cand, seen, n_predicates - n_found)
        found.append(cand.take(new))
        n_found += len(new)
    if not found:
        k = n_cols
        return Predicates(np.empty((0, k), np.int64), np.empty((0, k), np.int8), np.empty((0, k))), 0
    return (
        Predicates(
            np.vstack([f.col for f in found]),
            np.vstack([f.op for f in found]),
            np.vstack([f.value for f in found]),
        ),
        attempts,
    )


def singling_out_counts(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    schema: TableSchema,
    control: pd.DataFrame | None = None,
    mode: str = "multivariate",
    n_predicates: int = 500,
    n_cols: int = 3,
    max_attempts: int | None = None,
    random_state: RandomState = None,
) -> SinglingOutCounts:
    """Predicates written from ``synthetic`` and their matches in ``original`` and ``control``.

    See :func:`singling_out_predicates` for the parameters; every table is reduced to its distinct rows.
    """
    syn = encode_distinct(synthetic, schema)
    n_num = len(schema.numeric)
    preds, attempts = singling_out_predicates(
        syn,
        n_num,
        mode=mode,
        n_predicates=n_predicates,
        n_cols=n_cols,
        max_attempts=max_attempts,
        random_state=random_state,
    )
    ori = encode_distinct(original, schema)
    ctl = encode_distinct(control, schema) if control is not None else None
    return SinglingOutCounts(
        mode=mode,
        n_requested=int(n_predicates),
        n_cols=1 if mode == "univariate" else int(n_cols),
        predicates=preds,
        attempts=attempts,
        counts_original=PredicateIndex(ori).count(preds),
        counts_control=None if ctl is None else PredicateIndex(ctl).count(preds),
        n_original=len(ori),
        n_control=None if ctl is None else len(ctl),
        n_synthetic=len(syn),
    )
