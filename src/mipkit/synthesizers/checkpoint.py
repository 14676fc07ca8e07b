"""Checkpoints of a synthesizer's fit: one ``.npz`` file, written whole or not at all, tied to its run.

A long fit (AIM's rounds) keeps its state in a checkpoint so that a killed run continues where it stopped.
The file holds arrays and one JSON document (no pickles, loaded with ``allow_pickle=False``) and the
run's key, a hash of everything the fit depends on (:func:`run_key`): a checkpoint of other data or
parameters is never resumed, a file that is not a checkpoint is ignored (and replaced by the next save).
DP-WGAN-GP keeps its torch state the same way with ``torch.save`` / ``torch.load(weights_only=True)``. A
symbolic link at the checkpoint's name is never followed: it is read as no checkpoint, and the first save
replaces the link itself (``mipkit._runfolder``'s rules).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["load_checkpoint", "read_checkpoint_bytes", "run_key", "run_params", "save_checkpoint"]

_META = "__meta__"


def run_params(estimator: Any, skip: Sequence[str]) -> dict:
    """The parameters of ``estimator`` a run depends on: its attributes but those in ``skip`` (progress
    callbacks, the checkpoint's own settings, thread counts) and the private or fitted ones
    (``_x``, ``x_``)."""
    return {k: v for k, v in vars(estimator).items() if k not in skip and "_" not in (k[0], k[-1])}


def run_key(params: Any, arrays: Sequence[np.ndarray]) -> str:
    """SHA-256 of ``params`` (as sorted JSON, ``repr`` for what JSON cannot hold) and the arrays' bytes."""
    h = hashlib.sha256(json.dumps(params, sort_keys=True, default=repr).encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_checkpoint(path: str | Path, key: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` under ``key`` to ``path`` atomically."""
    from mipkit._runfolder import atomic_write

    doc = np.frombuffer(json.dumps({"key": key, "meta": meta}).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **{_META: doc}, **arrays)
    atomic_write(path, buf.getvalue())


def read_checkpoint_bytes(path: str | Path) -> bytes | None:
    """The bytes of the checkpoint file ``path``; None when there is none, or it is not a regular file (a
    symbolic link is not followed)."""
    from mipkit._runcommit import read_nofollow
    from mipkit._validation import MipkitValueError

    try:
        return read_nofollow(path)
    except (MipkitValueError, OSError):
        return None


def load_checkpoint(path: str | Path, key: str) -> tuple[dict, dict[str, np.ndarray]] | None:
    """``(meta, arrays)`` saved under ``key`` at ``path``; None when there is none, or it is another run's
    or not a checkpoint, or a symbolic link (never followed: the next save replaces the link)."""
    raw = read_checkpoint_bytes(path)
    if raw is None:
        return None
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            doc = json.loads(z[_META].tobytes().decode())
            if doc.get("key") != key:
                return None
            return doc["meta"], {k: z[k] for k in z.files if k != _META}
    except Exception:  # not a checkpoint (or a damaged one): start afresh
        return None
