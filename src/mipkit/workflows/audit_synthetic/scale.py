"""How big the audit's neighbour searches were and where they ran: the ``samples`` and ``backend`` blocks.

``samples`` says, for NNAA, DCR and the protection scores, whether each ran on all records or on a random
subsample and which setting capped it ("NNAA on a random 20,000 of the 100,000 training records;
max_nnaa_rows"). ``backend`` says where the exact neighbour searches ran: on this machine's threads, or on
Ray in blocks (:mod:`mipkit.data.neighbors.grid`), with the number of blocks and the bytes one block task
holds at most. ``samples`` is part of the measurement; ``backend`` is not (the same audit on either backend
gives the same ``results.json`` apart from ``backend`` and ``timings_s``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mipkit.data.neighbors.blocks import BlockPlan, in_blocks
from mipkit.workflows.audit_synthetic.config import AuditSyntheticConfig

__all__ = ["NOT_COMPARED", "backend_record", "sample_record", "search_backend"]

#: The ``results.json`` fields that differ between backends and runs (where and how long), not measurements.
NOT_COMPARED = ("backend", "timings_s")


@contextmanager
def search_backend(config: AuditSyntheticConfig) -> Iterator[BlockPlan | None]:
    """Every neighbour search inside runs on ``config.backend``: local threads (``None``), or Ray blocks
    (:func:`mipkit.engine.ray_blocks.ray_blocks`, the plan yielded)."""
    if config.backend != "ray":
        yield None
        return
    from mipkit.engine.ray_blocks import ray_blocks

    with (
        ray_blocks(n_cpus=config.n_jobs, address=config.address, block_rows=config.block_rows) as plan,
        in_blocks(plan),
    ):
        yield plan


def backend_record(config: AuditSyntheticConfig, plan: BlockPlan | None) -> dict:
    """The ``backend`` block: ``name``, and for Ray the blocks (``block_rows``, ``searches``, ``blocks``,
    ``peak_task_bytes``) and whether a cluster address was given (not the address)."""
    if plan is None:
        return {"name": "local", "threads": config.n_jobs, "blocks": None, "peak_task_bytes": None}
    return {"name": "ray", "cluster": config.address is not None, **plan.totals()}


def _subsample(what: str, n: int, total: int, records: str, cap_name: str, capped: bool) -> dict:
    if n >= total:
        text = f"{what} on all {total:,} {records}"
        why = None
    else:
        why = cap_name if capped else "equal set sizes"
        text = f"{what} on a random {n:,} of the {total:,} {records}; {why}"
    return {"n": n, "of": total, "subsampled": n < total, "because": why, "text": text}


def sample_record(
    config: AuditSyntheticConfig, sizes: dict, nnaa_n: int | None, dcr_rows: tuple[int, int] | None
) -> dict:
    """The ``samples`` block: for ``nnaa``, ``dcr`` and ``protection``, ``{n, of, subsampled, because,
    text}`` (None where the part did not run).

    ``sizes``: ``n_original``, ``n_synthetic`` and ``n_nonmember`` (or None); ``nnaa_n``: the common size
    of the NNAA sets; ``dcr_rows``: the training and non-member records DCR scored.
    """
    out: dict = {"nnaa": None, "dcr": None, "protection": None}
    n_o, n_s = sizes["n_original"], sizes["n_synthetic"]
    if nnaa_n is not None:
        smallest = min(n_o, sizes["n_nonmember"] or n_o, n_s // 2)
        capped = config.max_nnaa_rows is not None and nnaa_n == config.max_nnaa_rows < smallest
        out["nnaa"] = _subsample("NNAA", nnaa_n, n_o, "training records", "max_nnaa_rows", capped)
    if dcr_rows is not None:
        out["dcr"] = _subsample("DCR", dcr_rows[0], n_o, "training records", "max_dcr_rows", True)
    if dcr_rows is not None and config.max_protection_rows is not None:
        n = min(n_s, config.max_protection_rows)
        out["protection"] = _subsample(
            "The DCR protection scores", n, n_s, "synthetic records", "max_protection_rows", True
        )
    elif dcr_rows is not None:
        out["protection"] = _subsample("The DCR protection scores", n_s, n_s, "synthetic records", "", True)
    return out
