"""The plan of a search in blocks: how many rows a block has, who runs the blocks, what they held.

A :class:`BlockPlan` splits every exact neighbour search made while it is active (:func:`in_blocks`) into
blocks of at most ``block_rows`` query rows x ``block_rows`` reference rows
(:mod:`mipkit.data.neighbors.grid`). Its ``mapper`` runs a pure per-block function over the block specs and
returns the results in order: ``mapper(work, tables, specs) == [work(*tables, *spec) for spec in specs]``.
:func:`local_mapper` is that list comprehension; a mapper for a cluster (Ray:
:mod:`mipkit.engine.ray_blocks`) sends each block to a worker, with the tables put in the cluster's object
store once. The plan records each search's blocks and the memory one block task holds
(:func:`task_bytes`), so that a result can state them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mipkit.data.tables import MixedArrays

__all__ = [
    "BlockMapper",
    "BlockPlan",
    "DEFAULT_BLOCK_ROWS",
    "PAIR_BYTES",
    "WORKING_BYTES",
    "current_blocks",
    "in_blocks",
    "local_mapper",
    "task_bytes",
]

#: ``mapper(work, tables, specs) -> [work(*tables, *spec) for spec in specs]`` (in order).
BlockMapper = Callable[[Callable[..., Any], Sequence[Any], Sequence[tuple]], list]
DEFAULT_BLOCK_ROWS = 20_000
#: The small working arrays of a block task (candidates, norms, one-column temporaries).
WORKING_BYTES = 8 * 2**20
#: Bytes per pair of the working block of 256 query rows x (at most 16,384) reference rows: the screened
#: search's float32 proxies and their temporary, or the pruned search's mismatch counts, their mask and the
#: candidate pairs with their exact distances (:mod:`~mipkit.data.neighbors.screening`,
#: :mod:`~mipkit.data.neighbors.categorical_bound`).
PAIR_BYTES = 40

_CURRENT: ContextVar[BlockPlan | None] = ContextVar("mipkit_neighbour_blocks", default=None)


def local_mapper(work: Callable[..., Any], tables: Sequence[Any], specs: Sequence[tuple]) -> list:
    """``[work(*tables, *spec) for spec in specs]``: the blocks one after the other, in this process."""
    return [work(*tables, *spec) for spec in specs]


def _row_bytes(table: Any) -> int:
    """Bytes of one row of a table and of its encodings in a block task (float64 numerics, codes, the
    float32 one-hot codes and numerics of the screen, the float64 one-hot codes of the exact kernel)."""
    if isinstance(table, MixedArrays):
        p, c = table.numeric.shape[1], table.codes.shape[1]
        levels = int(sum(table.n_levels))
        return 8 * p + table.codes.itemsize * c + (4 + 8) * levels + 5 * p + 16
    width = int(np.asarray(table).shape[1]) if np.ndim(table) == 2 else 1
    return 8 * width + 4 * (width + 2) + 16


def task_bytes(query: Any, reference: Any, n_query: int, n_reference: int, k: int) -> int:
    """Bytes one block task holds at most (an estimate; ``benchmarks/ray_synthetic_scaling.py`` measures
    one task beside it): its query and reference rows with their encodings, its result (``k`` distances
    and indices per query row), the working block of 256 query rows x ``min(n_reference, 16384)``
    reference rows at :data:`PAIR_BYTES` per pair, and :data:`WORKING_BYTES`."""
    working = min(256, n_query) * min(n_reference, 16_384) * PAIR_BYTES
    rows = n_query * (_row_bytes(query) + 16 * (k + 3)) + n_reference * _row_bytes(reference)
    return int(rows + working + WORKING_BYTES)


@dataclass
class BlockPlan:
    """Blocks of at most ``block_rows`` query rows x ``block_rows`` reference rows, run by ``mapper``.

    ``searches`` lists, for each search run under the plan, ``{"query_rows", "reference_rows", "blocks",
    "task_bytes"}`` (the largest task's bytes, :func:`task_bytes`).
    """

    block_rows: int = DEFAULT_BLOCK_ROWS
    mapper: BlockMapper = local_mapper
    searches: list[dict] = field(default_factory=list)

    def record(self, n_query: int, n_reference: int, blocks: int, bytes_: int) -> None:
        self.searches.append(
            {"query_rows": n_query, "reference_rows": n_reference, "blocks": blocks, "task_bytes": bytes_}
        )

    def totals(self) -> dict:
        """``{"block_rows", "searches", "blocks", "peak_task_bytes"}`` over the searches so far."""
        return {
            "block_rows": self.block_rows,
            "searches": len(self.searches),
            "blocks": sum(s["blocks"] for s in self.searches),
            "peak_task_bytes": max((s["task_bytes"] for s in self.searches), default=0),
        }


def current_blocks() -> BlockPlan | None:
    """The plan active in this context (None: the searches run whole, on threads)."""
    return _CURRENT.get()


@contextmanager
def in_blocks(plan: BlockPlan | None) -> Iterator[BlockPlan | None]:
    """Run every neighbour search inside the ``with`` block by ``plan`` (None: as without it)."""
    token = _CURRENT.set(plan)
    try:
        yield plan
    finally:
        _CURRENT.reset(token)
