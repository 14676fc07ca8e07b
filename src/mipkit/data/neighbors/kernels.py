"""Exact distance kernels: the mixed (Gower-like), Euclidean and Manhattan distances, in float64.

Every exact distance of the package is computed here, with one summation order per metric:

* mixed: ``sum_c [a_c != b_c]`` (an exact integer), then ``+ |a_j - b_j|`` column by column with the
  missing-value rule of :func:`apply_missing_rule`;
* Manhattan: ``+ |a_j - b_j|`` column by column (:func:`add_abs_columns`);
* Euclidean: ``sqrt(sum_j (a_j - b_j)^2)`` over the difference vector (:func:`euclidean_of_differences`);
  blocks of the blocked search first rank candidates by the proxy ``|r|^2 - 2 q.r``.

The float32 proxies of :mod:`mipkit.data.neighbors.screening` use :func:`add_abs_columns` too, so the
missing-value rule is written once. The distances are defined in ``docs/theory.md`` section 6.

Exact ties on integer data (:func:`exact_lattice`, :func:`snap_to_lattice`): range normalisation in floating
point splits distances that are equal in exact arithmetic (``|5/6 - 4/6|`` and ``|6/6 - 5/6|`` differ in the
last bit). When every numeric column holds integers, each exact mixed distance is a multiple of ``1/L``
(``L`` the lcm of the ranges) and a computed one is within ``(p + 4) u L D`` of ``L`` times it after scaling
(``u = 2^-53``, ``p`` numeric columns, ``D`` a bound on every distance: the categorical columns plus ``p``
plus the largest L1 norms of the two tables' normalised rows). When that is below 1/2 (checked with a factor
2 to spare), rounding ``L d`` to the nearest integer recovers the exact numerator, so the searches return
``k / L`` for the exact ``k``: equal exact distances are equal numbers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.data.tables import MixedArrays, one_hot

Table = MixedArrays | np.ndarray
#: ``column(j) -> (values, missing)``: reference column ``j`` broadcastable against the block, and its
#: missing-value mask (``None`` when the column has no missing value).
ColumnReader = Callable[[int], tuple[np.ndarray, np.ndarray | None]]


def _n_rows(x: Table) -> int:
    """Number of rows of a table (``MixedArrays`` or 2-D array)."""
    return len(x) if isinstance(x, MixedArrays) else int(x.shape[0])


def _take(x: Table, sl) -> Table:
    """The rows ``sl`` (slice, integer array or mask) of a table."""
    return x.take(sl) if isinstance(x, MixedArrays) else x[sl]


_U64 = 2.0**-53  # unit roundoff of float64


def _max_l1(x: MixedArrays) -> float:
    """The largest L1 norm of a table's normalised numeric rows (missing values count 0)."""
    if len(x) == 0 or x.numeric.shape[1] == 0:
        return 0.0
    return float(np.nansum(np.abs(x.numeric), axis=1).max())


def exact_lattice(query: Table, reference: Table) -> int | None:
    """``L`` when every mixed distance between the two tables can be rounded to its exact value ``k / L``.

    Both tables carry the same :attr:`~mipkit.data.tables.MixedArrays.lattice` (integer data, one schema)
    and ``2 (p + 4) u L D < 1/2`` with ``D = n_cat + p + max|q|_1 + max|r|_1`` (see the module docstring);
    otherwise None (the distances are then the float64 values, exact up to rounding).
    """
    if not (isinstance(query, MixedArrays) and isinstance(reference, MixedArrays)):
        return None
    lattice = query.lattice
    if lattice is None or reference.lattice != lattice or lattice > 2**52:
        return None
    p, n_cat = query.numeric.shape[1], query.codes.shape[1]
    bound = n_cat + p + _max_l1(query) + _max_l1(reference)
    if 2.0 * (p + 4) * _U64 * float(lattice) * bound >= 0.5:
        return None
    return int(lattice)


def snap_to_lattice(d: np.ndarray, lattice: int | None) -> np.ndarray:
    """``round(L d) / L``: the exact distances ``k / L`` (ties exact) when :func:`exact_lattice` allowed
    ``L``; ``d`` unchanged when ``lattice`` is None. Infinite entries stay infinite."""
    if lattice is None or lattice == 0:
        return d
    scale = float(lattice)
    with np.errstate(invalid="ignore"):
        return np.rint(d * scale) / scale


def check_pair(query: Table, reference: Table, metric: str) -> None:
    """Raise :class:`~mipkit._validation.MipkitValueError` unless the two tables suit ``metric``."""
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


def apply_missing_rule(diff: np.ndarray, q_missing: np.ndarray, r_missing: np.ndarray | None) -> None:
    """The mixed distance's rule for missing values, in place on one column's ``|a_j - b_j|`` block.

    A missing value against a present one counts 1, a missing value against a missing one counts 0::

        term_j(a, b) = |a_j - b_j|  if both present,  1  if exactly one is missing,  0  if both are.

    Parameters
    ----------
    diff : ndarray of shape (n_query, m)
        ``|a_j - b_j|`` of the block (any value where a side is missing), float32 or float64.
    q_missing : ndarray of bool, shape (n_query,)
        Which query rows miss column ``j``.
    r_missing : ndarray of bool broadcastable to ``diff`` (``(m,)`` or ``(n_query, m)``), or None
        Which reference entries miss column ``j`` (``None``: none does).
    """
    if r_missing is not None:
        np.copyto(diff, 1.0, where=r_missing)
    if q_missing.any():
        if r_missing is None:
            diff[q_missing] = 1.0
        else:
            diff[q_missing] = ~np.broadcast_to(r_missing, diff.shape)[q_missing]


def add_abs_columns(
    d: np.ndarray, q: np.ndarray, column: ColumnReader, q_missing: np.ndarray | None = None
) -> np.ndarray:
    """``d += sum_j |q_j - r_j|``, one column ``j`` at a time (the summation order of every L1 kernel).

    ``column(j)`` gives the reference values of column ``j`` broadcastable against ``d`` (a row ``(1, m)``
    of a block, or the ``(n_query, k)`` candidates of each query row) and their missing mask. With
    ``q_missing`` (the mixed distance), :func:`apply_missing_rule` sets each column's missing terms.
    Works in the dtype of ``d`` (float32 proxies, float64 exact distances). Returns ``d``.
    """
    tmp = np.empty_like(d)
    for j in range(q.shape[1]):
        values, r_missing = column(j)
        np.subtract(q[:, j, None], values, out=tmp)
        np.abs(tmp, out=tmp)
        if q_missing is not None:
            apply_missing_rule(tmp, q_missing[:, j], r_missing)
        d += tmp
    return d


def euclidean_of_differences(diff: np.ndarray) -> np.ndarray:
    """``sqrt(sum_k diff[i, j, k]^2)``: the exact Euclidean distances from the difference vectors."""
    return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))


class MixedKernel:
    """Exact mixed distances of a block of queries to all reference rows."""

    def __init__(self, reference: MixedArrays):
        self.ref = reference
        self.n_cat = reference.codes.shape[1]
        self.ref_onehot = one_hot(reference.codes, reference.n_levels) if self.n_cat else None
        self.ref_nan = np.isnan(reference.numeric)
        self.ref_num = np.where(self.ref_nan, 0.0, reference.numeric)
        self.nan_cols = self.ref_nan.any(axis=0)

    def _column(self, j: int) -> tuple[np.ndarray, np.ndarray | None]:
        return self.ref_num[None, :, j], (self.ref_nan[:, j] if self.nan_cols[j] else None)

    def block(self, q: MixedArrays) -> np.ndarray:
        if self.n_cat:
            d = one_hot(q.codes, q.n_levels) @ self.ref_onehot.T  # matches (exact small integers)
            np.subtract(float(self.n_cat), d, out=d)
        else:
            d = np.zeros((len(q), len(self.ref)))
        q_nan = np.isnan(q.numeric)
        return add_abs_columns(d, np.where(q_nan, 0.0, q.numeric), self._column, q_nan)


class EuclideanKernel:
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
        return exact_candidates(q, self.ref, cand, "euclidean")


class ManhattanKernel:
    """Exact L1 distances of a block of queries to all reference rows."""

    def __init__(self, reference: np.ndarray):
        self.ref = np.ascontiguousarray(reference, dtype=float)

    def _column(self, j: int) -> tuple[np.ndarray, None]:
        return self.ref[None, :, j], None

    def block(self, q: np.ndarray) -> np.ndarray:
        return add_abs_columns(np.zeros((q.shape[0], self.ref.shape[0])), q, self._column)


Kernel = MixedKernel | EuclideanKernel | ManhattanKernel


def make_kernel(reference: Table, metric: str) -> Kernel:
    """The blocked kernel of ``metric`` over ``reference``."""
    if metric == "mixed":
        return MixedKernel(reference)
    if metric == "euclidean":
        return EuclideanKernel(reference)
    return ManhattanKernel(reference)


def exact_candidates(query: Table, reference: Table, cand: np.ndarray, metric: str) -> np.ndarray:
    """Exact float64 distances of each query row to its candidate reference rows ``cand`` (n_query, k).

    The same operations, in the same order, as :func:`mipkit.data.neighbors.pairwise_distances` (Euclidean)
    and the blocked kernels (mixed, Manhattan), so that a distance is the same number on every path.
    """
    if metric == "euclidean":
        return euclidean_of_differences(query[:, None, :] - reference[cand])
    if metric == "manhattan":
        return add_abs_columns(np.zeros(cand.shape), query, lambda j: (reference[cand, j], None))
    n_cat = query.codes.shape[1]
    if n_cat:
        matches = (query.codes[:, None, :] == reference.codes[cand]).sum(axis=2)
        d = float(n_cat) - matches.astype(float)
    else:
        d = np.zeros(cand.shape)

    def column(j: int) -> tuple[np.ndarray, np.ndarray]:
        values = reference.numeric[cand, j]
        return values, np.isnan(values)

    q_nan = np.isnan(query.numeric)
    return add_abs_columns(d, np.where(q_nan, 0.0, query.numeric), column, q_nan)


def exact_matrix(a: Table, b: Table, metric: str) -> np.ndarray:
    """The full exact distance matrix between the rows of ``a`` and ``b`` (no validation).

    Euclidean distances are ``sqrt(sum((a_i - b_j)^2))``, not the matrix-product shortcut, so that ties in
    discrete data stay ties; Manhattan sums ``|a_i - b_j|`` over the difference vector.
    """
    if metric == "mixed":
        return MixedKernel(b).block(a)
    diff = a[:, None, :] - b[None, :, :]
    if metric == "euclidean":
        return euclidean_of_differences(diff)
    return np.abs(diff).sum(axis=2)
