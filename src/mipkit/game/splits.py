"""Who trains on whom: the membership splits of the game.

The membership game (Izzo et al., Provable Membership Inference Privacy, Sec. 2; Carlini et al., Membership
Inference Attacks From First Principles, Sec. 4.1 / Alg. 1) trains many models on random halves of a pool of
records, so that for every record there are models that saw it (IN) and models that did not (OUT). The split
is recorded as a boolean matrix ``in_mask`` of shape ``(n_models, n_records)`` with
``in_mask[k, i] = True`` iff record ``i`` is in model ``k``'s training set.
"""

from __future__ import annotations

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_positive_int


def balanced_membership(n_records: int, n_models: int, *, random_state: RandomState) -> np.ndarray:
    """Random membership matrix in which every record is IN for exactly half of the models.

    LiRA's design (Carlini et al. 2022, Sec. 4.1 and the released code): for each record independently, a
    uniformly random subset of ``n_models / 2`` models includes it. Each model's training set then has
    ``n_records / 2`` records in expectation (Binomial-like spread around it, exactly ``n_records / 2`` on
    average over models since every column sums to ``n_models / 2``).

    Parameters
    ----------
    n_records : int
        Number of records in the pool (>= 1).
    n_models : int
        Number of models, even and >= 2.
    random_state : int, Generator, SeedSequence or None
        Seed; the same seed gives the same matrix.

    Returns
    -------
    in_mask : ndarray of bool, shape (n_models, n_records)
        ``in_mask[k, i]`` is True iff record ``i`` is in model ``k``'s training set; every column has
        exactly ``n_models // 2`` True entries.
    """
    n_records = check_positive_int("n_records", n_records, owner="balanced_membership")
    n_models = check_positive_int("n_models", n_models, owner="balanced_membership")
    if n_models < 2 or n_models % 2:
        raise MipkitValueError(
            "The 'n_models' parameter of balanced_membership must be an even integer >= 2 (each record is "
            f"IN for exactly half of the models). Got {n_models} instead."
        )
    rng = check_random_state(random_state)
    # One independent random permutation of the model indices per record (column); a record is IN for the
    # models placed in the first half of its permutation.
    ranks = rng.permuted(np.tile(np.arange(n_models)[:, None], (1, n_records)), axis=0)
    return ranks < n_models // 2


def random_half(n_records: int, *, random_state: RandomState) -> np.ndarray:
    """Boolean mask selecting a uniformly random subset of exactly ``n_records // 2`` records.

    The single-model version of the game: one target model trained on a random half (members) with the
    other half held out (non-members), as in Izzo et al.'s experiment set-up.

    Parameters
    ----------
    n_records : int
        Number of records (>= 2).
    random_state : int, Generator, SeedSequence or None
        Seed.

    Returns
    -------
    mask : ndarray of bool, shape (n_records,)
    """
    n_records = check_positive_int("n_records", n_records, minimum=2, owner="random_half")
    rng = check_random_state(random_state)
    mask = np.zeros(n_records, dtype=bool)
    mask[rng.permutation(n_records)[: n_records // 2]] = True
    return mask
