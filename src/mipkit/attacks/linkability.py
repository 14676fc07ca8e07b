"""The linkability attack on released synthetic data: two column subsets joined through synthetic records.

Threat model (Article 29 Working Party, Opinion 05/2014; Giomi et al., PoPETs 2023, the method of
anonymeter's ``LinkabilityEvaluator``): the attacker holds two tables about the same people, one with the
columns ``aux_a``, the other with ``aux_b``, and wants to join them. With the synthetic table, they link
the two halves of a record when the ``k`` synthetic records nearest to one half (on ``aux_a``) and the
``k`` nearest to the other half (on ``aux_b``) share a record (mixed distance, :mod:`mipkit.data.neighbors`).

The attack is run on ``n_attacks`` training (original) records and on as many control records, which the
generator never saw; :func:`mipkit.metrics.linkability.measure_linkability` compares the two success rates
(``docs/theory.md`` section 6).

Ties: the synthetic rows are shuffled (seeded) before the search, and identical rows are taken in that
order, so that which of several equally near records is taken does not depend on the synthetic file's row
order; the share of targets whose ``k``-th and ``(k + 1)``-th neighbours are equally near (a link that then
rests on that draw) is reported. Identical query rows and identical synthetic rows are searched once (the
distinct rows of each half), which also removes most exact ties from the search itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_positive_int
from mipkit.data.attack_records import LinkabilityGuesses
from mipkit.data.neighbors import kneighbors
from mipkit.data.tables import MixedArrays, TableSchema, encode_mixed

__all__ = ["LinkabilityGuesses", "check_aux_columns", "linkability_guesses", "linked"]


def check_aux_columns(aux_cols: Sequence[Sequence[str]], columns: Sequence[str]) -> tuple[tuple, tuple]:
    """Two non-empty, disjoint lists of known columns (a one-line error otherwise)."""
    if len(aux_cols) != 2:
        raise MipkitValueError(f"Linkability needs exactly two column subsets. Got {len(aux_cols)}.")
    a, b = (tuple(dict.fromkeys(str(c) for c in part)) for part in aux_cols)
    if not a or not b:
        raise MipkitValueError("Each of the two linkability column subsets needs at least one column.")
    unknown = [c for c in (*a, *b) if c not in columns]
    if unknown:
        raise MipkitValueError(
            f"Linkability column(s) {', '.join(map(repr, unknown))} not found in the tables. "
            f"Columns: {', '.join(map(repr, list(columns)[:15]))}{' ...' if len(columns) > 15 else ''}."
        )
    both = [c for c in a if c in b]
    if both:
        raise MipkitValueError(f"The two linkability column subsets share {', '.join(map(repr, both))}.")
    return a, b


def _half(enc: MixedArrays, schema: TableSchema, cols: Sequence[str]) -> MixedArrays:
    keep = set(cols)
    return enc.columns(
        [i for i, c in enumerate(schema.numeric) if c in keep],
        [i for i, c in enumerate(schema.categorical) if c in keep],
    )


def linked(
    query_a: MixedArrays,
    query_b: MixedArrays,
    synthetic_a: MixedArrays,
    synthetic_b: MixedArrays,
    *,
    n_neighbors: int = 1,
    order: np.ndarray | None = None,
    n_jobs: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """Which query rows are linked: their ``k`` nearest synthetic rows on ``a`` and on ``b`` share one.

    Parameters
    ----------
    query_a, query_b : MixedArrays
        The two column subsets of the same query rows.
    synthetic_a, synthetic_b : MixedArrays
        The same subsets of the synthetic rows.
    n_neighbors : int
        ``k``.
    order : int array, optional
        A permutation of the synthetic rows searched in that order (the tie-break); default: as given.

    Returns
    -------
    linked : bool array of shape (n_query,)
    tied : bool array of shape (n_query,)
        The ``k``-th and ``(k + 1)``-th nearest are equally near on ``a`` or on ``b``.
    """
    k = check_positive_int("n_neighbors", n_neighbors, owner="linked")
    n_syn = len(synthetic_a)
    if k > n_syn:
        raise MipkitValueError(
            f"The 'n_neighbors' parameter of linked must be at most {n_syn} (synthetic rows). "
            f"Got {k} instead."
        )
    perm = np.arange(n_syn) if order is None else np.asarray(order)
    found, tied = [], np.zeros(len(query_a), dtype=bool)
    for q, syn in ((query_a, synthetic_a), (query_b, synthetic_b)):
        idx, tie = _k_nearest_records(q, syn.take(perm), k, n_jobs)
        found.append(perm[idx])
        tied |= tie
    ia, ib = found
    return (ia[:, :, None] == ib[:, None, :]).any(axis=(1, 2)), tied


def _distinct(x: MixedArrays) -> tuple[MixedArrays, np.ndarray]:
    """The distinct rows of ``x`` (first occurrences, in order) and each row's distinct-row index."""
    frame = pd.DataFrame(np.hstack([x.numeric, x.codes.astype(float)]))
    inverse = frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()
    return x.take(np.unique(inverse, return_index=True)[1]), inverse


def _k_nearest_records(
    query: MixedArrays, reference: MixedArrays, k: int, n_jobs: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest reference rows of each query row, equally near rows taken in reference order.

    Identical rows are searched once: the distinct query rows against the distinct reference rows (groups
    of identical rows, each group's rows in reference order); the nearest groups are then expanded into
    their rows until ``k`` are taken. ``tied``: the ``k``-th and ``(k + 1)``-th nearest rows are equally
    near (rows left in the last group used, or a next group at the same distance).
    """
    q_rows, q_inv = _distinct(query)
    groups, g_inv = _distinct(reference)
    members = np.argsort(g_inv, kind="stable")  # rows grouped, each group in reference order
    sizes = np.bincount(g_inv)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    n_groups = len(groups)
    kk = min(k + 1, n_groups)
    dist, gi = kneighbors(q_rows, groups, k=kk, metric="mixed", n_jobs=n_jobs)
    nq = len(q_rows)
    out = np.zeros((nq, k), dtype=np.int64)
    filled = np.zeros(nq, dtype=np.int64)
    tied = np.zeros(nq, dtype=bool)
    for slot in range(kk):
        size = sizes[gi[:, slot]]
        take = np.minimum(size, k - filled)
        for r in range(int(take.max(initial=0))):
            sel = np.flatnonzero(r < take)
            out[sel, filled[sel] + r] = members[starts[gi[sel, slot]] + r]
        ends = (filled < k) & (filled + take == k)  # the k-th row comes from this group
        nxt = dist[:, slot + 1] == dist[:, slot] if slot + 1 < kk else np.zeros(nq, dtype=bool)
        tied |= ends & ((size > take) | nxt)
        filled += take
    return out[q_inv], tied[q_inv]


def linkability_guesses(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    schema: TableSchema,
    aux_cols: Sequence[Sequence[str]],
    control: pd.DataFrame | None = None,
    n_attacks: int = 500,
    n_neighbors: int = 1,
    random_state: RandomState = None,
    n_jobs: int = 2,
) -> LinkabilityGuesses:
    """Run the linkability attack on ``n_attacks`` random training records and as many control records.

    The targets are drawn without replacement (all records of a smaller table); distances use the schema's
    ranges (those of the original), as every mixed distance of the audit.
    """
    a, b = check_aux_columns(aux_cols, schema.columns)
    n_attacks = check_positive_int("n_attacks", n_attacks, owner="linkability_guesses")
    rng = check_random_state(random_state)
    syn = encode_mixed(synthetic, schema)
    syn_a, syn_b = _half(syn, schema, a), _half(syn, schema, b)
    order = rng.permutation(len(syn))

    def targets(df: pd.DataFrame) -> tuple[np.ndarray, MixedArrays]:
        rows = np.sort(rng.choice(len(df), size=min(n_attacks, len(df)), replace=False))
        return rows, encode_mixed(df.iloc[rows], schema)

    rows, enc = targets(original)
    c_rows, c_enc = targets(control) if control is not None else (None, None)
    if c_enc is not None:  # one search per half for both target sets
        enc = MixedArrays(
            np.vstack([enc.numeric, c_enc.numeric]),
            np.vstack([enc.codes, c_enc.codes]),
            enc.n_levels,
            enc.lattice if enc.lattice == c_enc.lattice else None,
        )
    ok, tie = linked(
        _half(enc, schema, a), _half(enc, schema, b), syn_a, syn_b,
        n_neighbors=n_neighbors, order=order, n_jobs=n_jobs,
    )  # fmt: skip
    n = rows.size
    c_ok, c_tie = (None, None) if c_rows is None else (ok[n:], tie[n:])
    ok, tie = ok[:n], tie[:n]
    return LinkabilityGuesses((a, b), int(n_neighbors), rows, ok, tie, c_rows, c_ok, c_tie)
