"""Distances between table rows and exact k-nearest-neighbour search that never holds an N x M matrix.

Two distances
-------------
``"mixed"`` (a Gower-like distance, as anonymeter uses), on :class:`~mipkit.data.tables.MixedArrays`::

    d(a, b) = sum_numeric |a_j - b_j| / range_j  +  sum_categorical [a_c != b_c]

with ``range_j`` the column's range in the original table; a missing value against a missing value counts
0, against a present value 1 (numeric and categorical alike). It is a sum, not a mean, over columns, so a
distance of 1 is "one category differs, or one number differs by the whole range".

``"euclidean"`` on a float matrix (e.g. :func:`~mipkit.data.tables.encode_euclidean`: standardised
numerics + one-hot), and ``"manhattan"`` (L1) on a float matrix. See ``docs/theory.md`` section 6.

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

* the mixed distance with categorical columns, under ``"auto"``: first the search pruned by the category
  mismatches (:mod:`~mipkit.data.neighbors.categorical_bound`): the mismatch count is a lower bound of the
  distance, so once ``k`` rows with few mismatches give an upper bound ``U`` on the ``k``-th distance, only
  the rows with at most ``U`` mismatches are candidates; their exact distances decide, ties by the smaller
  reference index. A block where the bound would keep more than a quarter of the pairs goes to the
  screened search.

After the first chunk of a block has given each row ``k + 2`` candidates, a later chunk is merged by one
comparison per entry with the row's current largest candidate proxy (only the few entries below it are
sorted in).

:func:`kneighbors_both_ways` searches ``a`` in ``b`` and ``b`` in ``a`` in one pass over the ``a x b``
proxies (used by NNAA for ``T -> S`` and ``S -> T``): each block also updates the candidates of every ``b``
row down the column, with a running threshold per column, and both directions get the same exact re-check
and completeness test (rows that fail it go to the one-way search above).

``exclude_self=True`` (query set = reference set) leaves each row's own index out (leave-one-out); exact
duplicates of a row are other rows and do count.

Every search returns the ``k`` smallest exact distances of each row with ties going to the smaller reference
index (:func:`~mipkit.data.neighbors.topk.first_k`; on integer data after the distances are put on their
exact lattice), so a search split in any way gives the same answer. Under a
:class:`~mipkit.data.neighbors.blocks.BlockPlan` (:func:`~mipkit.data.neighbors.blocks.in_blocks`) the
searches run in blocks of query rows x reference rows, mapped by the plan's mapper (local, or Ray tasks:
:mod:`mipkit.engine.ray_blocks`), and merged exactly (:mod:`~mipkit.data.neighbors.grid`).

Modules
-------
:mod:`~mipkit.data.neighbors.kernels` (exact distances), :mod:`~mipkit.data.neighbors.screening` (float32
proxies, error bounds and the margin test), :mod:`~mipkit.data.neighbors.categorical_bound` (the search
pruned by category mismatches), :mod:`~mipkit.data.neighbors.topk` (candidate selection),
:mod:`~mipkit.data.neighbors.search` (the public searches and the parallel block runner),
:mod:`~mipkit.data.neighbors.blocks` (the plan of a search in blocks) and :mod:`~mipkit.data.neighbors.grid`
(the blocks of queries x references and their exact merge).
"""

from mipkit.data.neighbors.kernels import Table
from mipkit.data.neighbors.kernels import _n_rows as _n_rows
from mipkit.data.neighbors.kernels import _take as _take
from mipkit.data.neighbors.search import (
    ALGORITHMS,
    DEFAULT_BLOCK_BYTES,
    METRICS,
    kneighbors,
    kneighbors_both_ways,
    pairwise_distances,
)

__all__ = [
    "ALGORITHMS",
    "DEFAULT_BLOCK_BYTES",
    "METRICS",
    "Table",
    "kneighbors",
    "kneighbors_both_ways",
    "pairwise_distances",
]
# ``_n_rows`` and ``_take`` (row count and row selection of either table type) are imported by
# mipkit.metrics and mipkit.attacks; they stay importable from here.
