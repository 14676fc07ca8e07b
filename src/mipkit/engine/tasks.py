"""The fits of a run: :class:`FitTask` (which rows, in which order, with which seed) and the tasks of a
membership matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mipkit._random import RandomState, check_random_state, spawn_seeds
from mipkit._validation import MipkitValueError

__all__ = ["FitTask", "tasks_from_membership"]


@dataclass(frozen=True, eq=False)
class FitTask:
    """One model to fit.

    Parameters
    ----------
    index : int
        The task's identity (its row in the ledger); unique within a run.
    train_idx : ndarray of int
        Rows of ``X`` to train on, used in the order given (not sorted): a fixed data order versus a
        shuffled one is part of the task.
    seed : int or None
        The estimator's ``random_state``; None leaves the trainer's own default (non-reproducible fits).
    """

    index: int
    train_idx: np.ndarray
    seed: int | None

    def __post_init__(self) -> None:
        idx = np.asarray(self.train_idx)
        if idx.ndim != 1 or idx.size == 0:
            raise MipkitValueError(
                f"The 'train_idx' of FitTask {self.index} must be a non-empty 1-D array of row indices."
            )
        if idx.dtype == bool:
            raise MipkitValueError(
                f"The 'train_idx' of FitTask {self.index} must hold row indices, not a boolean mask "
                "(use np.flatnonzero(mask))."
            )
        if not np.issubdtype(idx.dtype, np.integer):
            raise MipkitValueError(
                f"The 'train_idx' of FitTask {self.index} must be integers. Got {idx.dtype}."
            )
        idx = idx.astype(np.int64, copy=True)
        idx.setflags(write=False)
        object.__setattr__(self, "train_idx", idx)
        object.__setattr__(self, "index", int(self.index))
        if self.seed is not None:
            object.__setattr__(self, "seed", int(self.seed))


def tasks_from_membership(
    in_mask: np.ndarray, *, random_state: RandomState, shuffle: bool = False, seeded: bool = True
) -> list[FitTask]:
    """One :class:`FitTask` per row of a membership matrix (see :func:`mipkit.game.balanced_membership`).

    Parameters
    ----------
    in_mask : ndarray of bool, shape (n_models, n_records)
        ``in_mask[k, i]`` True iff record ``i`` trains model ``k``.
    random_state : int, Generator, SeedSequence or None
        Draws each model's seed (and, with ``shuffle``, its data order).
    shuffle : bool
        False: each model sees its records in increasing row order (fixed data order). True: in a random
        order of its own.
    seeded : bool
        False gives every task ``seed=None`` (the trainer's own randomness: the "no seed" scenario).

    Returns
    -------
    list of FitTask
        Task ``k`` trains on the records of row ``k``.
    """
    mask = np.asarray(in_mask)
    if mask.ndim != 2 or mask.dtype != bool:
        raise MipkitValueError("The 'in_mask' parameter must be a 2-D boolean array (n_models, n_records).")
    rng = check_random_state(random_state)
    seeds = spawn_seeds(rng, mask.shape[0])
    tasks = []
    for k in range(mask.shape[0]):
        idx = np.flatnonzero(mask[k])
        if shuffle:
            idx = rng.permutation(idx)
        tasks.append(FitTask(k, idx, int(seeds[k]) if seeded else None))
    return tasks
