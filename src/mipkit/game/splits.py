"""Who trains on whom: the membership splits of the game, drawn by one algorithm.

The membership game (Izzo et al., Provable Membership Inference Privacy, Def. 1; Carlini et al., Membership
Inference Attacks From First Principles, Sec. 4.1 / Alg. 1) trains models on random halves of a pool of
records, so that for every record there are models that saw it (IN) and models that did not (OUT). A split
is a boolean matrix ``in_mask`` of shape ``(n_models, n_records)`` with ``in_mask[k, i] = True`` iff record
``i`` is in model ``k``'s training set (docs/theory.md section 1).

Every random half in mipkit comes from :func:`random_halves` (``random_half`` is its one-row case,
``independent_halves`` the audit's name for it), so the same seed gives the same halves whichever path
draws them: the MIP noise fits, the Bayes game's pools and the model audit's design. The algorithm: one
NumPy ``Generator``; row ``r`` is IN on the first ``k`` entries of the ``r``-th call of
``rng.permutation(n_records)``. Every size-``k`` subset then has probability ``1 / C(n, k)`` (a uniform
permutation's first ``k`` entries are a uniform ``k``-subset), and the rows are independent.
:func:`all_halves` enumerates the subsets instead, for exact games on tiny pools.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_positive_int

__all__ = [
    "MAX_EXHAUSTIVE_HALVES",
    "all_halves",
    "balanced_membership",
    "independent_halves",
    "membership_probability",
    "random_half",
    "random_halves",
]

MAX_EXHAUSTIVE_HALVES = 2_000_000
_CHUNK_ENTRIES = 4_000_000  # permutation entries held at once by random_halves


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


def _check_half_size(n_records: int, k: int | None, owner: str) -> tuple[int, int]:
    n_records = check_positive_int("n_records", n_records, minimum=2, owner=owner)
    k = n_records // 2 if k is None else check_positive_int("k", k, owner=owner)
    if k >= n_records:
        raise MipkitValueError(
            f"The 'k' parameter of {owner} must be < n_records = {n_records} (a half leaves records out). "
            f"Got {k} instead."
        )
    return n_records, k


def membership_probability(n_records: int, k: int | None = None) -> float:
    """``P(a given record is in D_train) = k / n`` when ``D_train`` is a uniform size-``k`` subset (default
    ``k = n // 2``): 1/2 for an even pool, ``(n - 1) / (2n)`` for an odd one (docs/theory.md section 1).

    The MIP bound is ``max(k/n, 1 - k/n) + eta`` (Izzo et al., Def. 1): on an odd pool always guessing
    "out" is right ``1 - k/n > 1/2`` of the time, whatever the release.
    """
    n_records, k = _check_half_size(n_records, k, "membership_probability")
    return k / n_records


def random_halves(
    n_records: int, n_halves: int, *, k: int | None = None, random_state: RandomState
) -> np.ndarray:
    """``n_halves`` independent uniformly random size-``k`` subsets of ``n_records`` records.

    Row ``r`` holds the first ``k`` entries of the ``r``-th permutation ``rng.permutation(n_records)`` drawn
    from one Generator (``rng.permuted`` on a tiled ``arange``, which draws the rows in that order), so
    ``P(row = S) = 1 / C(n_records, k)`` for every size-``k`` subset ``S`` (Izzo et al., Def. 1:
    ``D_train`` uniform among the subsets of size ``k = n/2``).

    Parameters
    ----------
    n_records : int
        Pool size ``n`` (>= 2).
    n_halves : int
        Number of subsets (rows, >= 1).
    k : int, optional
        Subset size, ``1 <= k < n``; default ``n // 2``.
    random_state : int, Generator, SeedSequence or None
        Seed; a Generator is used (and advanced) in place.

    Returns
    -------
    halves : ndarray of bool, shape (n_halves, n_records)
        ``halves[r, i]`` is True iff record ``i`` is in subset ``r``; every row has exactly ``k`` True
        entries.
    """
    n_records, k = _check_half_size(n_records, k, "random_halves")
    n_halves = check_positive_int("n_halves", n_halves, owner="random_halves")
    rng = check_random_state(random_state)
    out = np.zeros((n_halves, n_records), dtype=bool)
    rows_per_chunk = max(1, _CHUNK_ENTRIES // n_records)
    for start in range(0, n_halves, rows_per_chunk):
        stop = min(n_halves, start + rows_per_chunk)
        perms = rng.permuted(np.tile(np.arange(n_records), (stop - start, 1)), axis=1)
        np.put_along_axis(out[start:stop], perms[:, :k], True, axis=1)
    return out


def random_half(n_records: int, *, k: int | None = None, random_state: RandomState) -> np.ndarray:
    """One uniformly random size-``k`` subset (default ``n_records // 2``): ``random_halves(...)[0]``.

    The single-model version of the game: one target model trained on a random half (members) with the
    other half held out (non-members), as in Izzo et al.'s experiment set-up.

    Parameters
    ----------
    n_records : int
        Number of records (>= 2).
    k : int, optional
        Subset size, ``1 <= k < n``; default ``n // 2``.
    random_state : int, Generator, SeedSequence or None
        Seed.

    Returns
    -------
    mask : ndarray of bool, shape (n_records,)
    """
    n_records, k = _check_half_size(n_records, k, "random_half")
    return random_halves(n_records, 1, k=k, random_state=random_state)[0]


def independent_halves(n_records: int, n_models: int, *, random_state: RandomState) -> np.ndarray:
    """``in_mask`` (n_models, n_records): each model trains on its own uniformly random half of the records.

    The model audit's design, :func:`random_halves` with ``k = n_records // 2``. This is the MIP game of
    Izzo et al. (Def. 1: ``D_train`` a uniformly random subset of size ``n/2``), drawn independently for every
    model. LiRA's exactly balanced design (every record IN for exactly ``K/2`` models,
    :func:`balanced_membership`) is not used there on purpose: with leave-one-out over models, a record's
    number of IN reference models would then be ``K/2 - 1`` when it is a member of the target and ``K/2``
    when it is not, so the reference set itself would reveal the answer (an attack counting IN references is
    always right, and the reference means shift by one model in ``K - 1``). With independent halves the
    target's membership is independent of the references' (up to the fixed half size, an ``O(1/n)`` effect).

    Parameters
    ----------
    n_records : int
        Pool size (>= 2).
    n_models : int
        Number of models (>= 1).
    random_state : int, Generator, SeedSequence or None

    Returns
    -------
    in_mask : ndarray of bool, shape (n_models, n_records)
    """
    return random_halves(n_records, n_models, random_state=random_state)


def all_halves(n_records: int, k: int | None = None) -> np.ndarray:
    """Every size-``k`` subset of ``n_records`` records, boolean matrix of shape ``(C(n, k), n)``.

    Rows in the lexicographic order of :func:`itertools.combinations`. ``k`` defaults to ``n // 2``. With
    all subsets the MIP game's posterior is exact (Izzo et al., Prop. 2); refused
    (:class:`~mipkit._validation.MipkitValueError`) above ``MAX_EXHAUSTIVE_HALVES`` = 2 million subsets.
    """
    n_records, k = _check_half_size(n_records, k, "all_halves")
    count = math.comb(n_records, k)
    if count > MAX_EXHAUSTIVE_HALVES:
        raise MipkitValueError(
            f"C({n_records}, {k}) = {count} subsets is too many to enumerate; use random_halves instead."
        )
    out = np.zeros((count, n_records), dtype=bool)
    for row, subset in enumerate(combinations(range(n_records), k)):
        out[row, list(subset)] = True
    return out
