"""Exact neighbour searches on Ray: one Ray task per block of query rows x reference rows.

:class:`RayBlockMapper` is a block mapper (:mod:`mipkit.data.neighbors.blocks`): it puts each table in
Ray's object store once (``ray.put``, remembered for the mapper's lifetime, so once per table per audit),
submits one task per block with the tables' ObjectRefs and the block's small spec (row ranges, ``k``, the
metric), and returns the blocks' results in order. Ray hands a task the arrays of an ObjectRef read from
the object store (NumPy arrays without a copy), so no task argument carries a table. A block task is a pure
function of its arguments, so Ray may run it again when a worker dies (``max_retries``).

:func:`ray_blocks` starts or joins Ray (:func:`~mipkit.engine.ray_backend.ray_session`) and yields the
:class:`~mipkit.data.neighbors.blocks.BlockPlan` to search under.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from mipkit.data.neighbors.blocks import DEFAULT_BLOCK_ROWS, BlockPlan
from mipkit.engine.ray_backend import MAX_RETRIES, import_ray, ray_get, ray_session

__all__ = ["MAX_RETRIES", "RayBlockMapper", "ray_blocks"]


def _run_block(work: Callable[..., Any], *args: Any) -> Any:
    """The body of a block task: ``work(*args)`` (Ray has resolved the tables' ObjectRefs)."""
    return work(*args)


class RayBlockMapper:
    """``mapper(work, tables, specs)``: ``work(*tables, *spec)`` for every spec as Ray tasks, in order.

    Parameters
    ----------
    ray : module
        The initialised ``ray`` module.
    max_retries : int
        Retries of a task whose worker died (the tasks are idempotent).
    """

    def __init__(self, ray: Any, *, max_retries: int = MAX_RETRIES):
        self._ray = ray
        self._remote = ray.remote(num_cpus=1, max_retries=max_retries)(_run_block)
        self._refs: dict[int, tuple[Any, Any]] = {}  # id(table) -> (table, its ObjectRef)
        self.tasks = 0

    def put(self, table: Any) -> Any:
        """The ObjectRef of ``table``, put in the object store on first use."""
        held = self._refs.get(id(table))
        if held is None or held[0] is not table:
            held = (table, self._ray.put(table))
            self._refs[id(table)] = held
        return held[1]

    def task_args(self, tables: Sequence[Any], spec: tuple) -> tuple:
        """The arguments of one block task: the tables' ObjectRefs, then the block's spec."""
        return (*(self.put(t) for t in tables), *spec)

    def __call__(self, work: Callable[..., Any], tables: Sequence[Any], specs: Sequence[tuple]) -> list:
        ray = self._ray
        pending = [self._remote.remote(work, *self.task_args(tables, spec)) for spec in specs]
        self.tasks += len(pending)
        try:
            return ray_get(ray, pending, what="A neighbour-search block")
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)  # end the workers: never interrupt one mid-import
            raise

    def release(self) -> None:
        """Forget the tables put so far (their object-store copies are freed with the refs)."""
        self._refs.clear()


@contextmanager
def ray_blocks(
    *, n_cpus: int, address: str | None, block_rows: int = DEFAULT_BLOCK_ROWS
) -> Iterator[BlockPlan]:
    """A :class:`~mipkit.data.neighbors.blocks.BlockPlan` whose blocks run as Ray tasks.

    Ray is started with ``n_cpus`` CPUs on loopback, or joined at ``address``, for the ``with`` block
    (:func:`~mipkit.engine.ray_backend.ray_session`); the tables put in the object store are released at
    the end.
    """
    import_ray()
    with ray_session(n_cpus=n_cpus, address=address) as ray:
        mapper = RayBlockMapper(ray)
        try:
            yield BlockPlan(block_rows=block_rows, mapper=mapper)
        finally:
            mapper.release()
