"""Intervals for the unbiased NNAA that respect its dependence structure.

Two variance estimates of ``AA``, both with the neighbours recomputed: the **neighbourhood** variance (tight
at 1,000 records per set and more, see the last section below) and the delete-one **jackknife**
(conservative, 1.5-2 times too wide). The default of :func:`mipkit.metrics.nnaa.privacy_loss` takes the
first from 1,000 records per set and the second below (:func:`mipkit.metrics.nnaa.interval_method`).

Every term of the NNAA (:mod:`mipkit.metrics.nnaa`) depends on a record *and on its neighbours*: removing one
record changes its own contribution, the contributions of the records whose nearest own-set neighbour it was,
and those of the other set's records that had it among their two nearest neighbours (and the size ``m`` of
the other set, for everyone). A bootstrap that resamples the per-record contributions ``g(i)/m`` holds that
structure fixed and so ignores the covariance between neighbours; on same-distribution tables its 95%
intervals covered 1/2 only 87-90% of the time (``docs/theory.md`` section 6).

The **delete-one jackknife** recomputes the statistic with each record removed, neighbours included. It is
exact and cheap here: with each record's two nearest own-set neighbours and three nearest other-set
neighbours (distances and indices), removing record ``j`` changes

* the own distance ``s`` of each record whose nearest own neighbour was ``j`` (it becomes the second
  nearest distance),
* ``(o1, o2)`` of each other-set record that had ``j`` as its first or second neighbour (they become
  ``(o2, o3)`` or ``(o1, o3)``),
* ``m`` (the size of ``j``'s set) in the count of every record of the other set,

so all ``n_T + n_S`` delete-one values come from a few grouped sums, in ``O(n)`` after the searches. Ties
are handled by the same rule as the statistic (a tied neighbour that is not the one indexed stays in the set,
and its distance equals the one indexed).

For two independent samples the jackknife variance is the sum of the one-sample jackknife variances
(Arvesen, Ann. Math. Statist. 1969)::

    v = (n_T - 1)/n_T sum_j (AA_(-j) - mean_T)^2  +  (n_S - 1)/n_S sum_k (AA_(-k) - mean_S)^2 ,

and the interval is ``AA -+ z_{1 - a/2} sqrt(v)``. By the Efron-Stein inequality (Efron & Stein, Ann. Statist.
1981) the expectation of the jackknife variance is at least the variance of the statistic on one record fewer,
for *any* symmetric statistic of independent records: the interval errs on the wide side, whatever the
dependence between neighbours. ``docs/theory.md`` section 6 has the argument and the measured coverage.

Why the jackknife is wide, and the neighbourhood variance
---------------------------------------------------------
A record's term is, to first order, ``1(label of i = label of its nearest neighbour a)``. On same-distribution
tables the labels are exchangeable given the pooled points, and the indicator is an exclusive-or of two
labels: it is uncorrelated with every other record's indicator except where the two share their pair
(mutual nearest neighbours classify each other right or wrong together). The statistic has no first-order
(per-record) component; its variance is all interaction between neighbours. The jackknife counts each
interaction once for each record it involves (Efron & Stein: a degree-``k`` component ``k`` times), and
deleting a record re-draws the indicators of the records that pointed to it, so the estimate is 2.2-3 times
the variance (1.5-1.75 times the width) - and still more on leaky tables.

The **neighbourhood variance** sums the covariances of the terms directly. With ``u_r = w_r (h_r - hbar)``
(``h_r`` the record's term ``g(r)/m``, ``hbar`` the mean of its set, ``w_r = 1/(2 n_set)``) and
``D(r) = {r, nearest own neighbour, nearest other neighbour}`` (pooled indices),

    v = sum_r u_r^2 + 2 sum_{r < r' : D(r) and D(r') meet} u_r u_r' ,

the variance of a sum of terms that are dependent only when their records are, or share, nearest
neighbours. On the null it estimates the exclusive-or structure exactly (mutual pairs contribute
``+1/4 w^2`` each, the other pairs zero in expectation); on leaky tables the products of neighbours with
similar (non-central) terms keep it on the wide side. ``benchmarks/nnaa_interval_coverage.py`` measures it.
"""

from __future__ import annotations

import numpy as np

from mipkit._validation import MipkitValueError


def _g(s: np.ndarray, o1: np.ndarray, o2: np.ndarray, m: int, ties: str) -> np.ndarray:
    """``g(i) / m``: the share of the ``m`` leave-one-out versions of the other set that classify i right."""
    strict = np.where(o1 > s, float(m), np.where(o2 > s, 1.0, 0.0))
    if ties == "strict":
        return strict / m
    nonstrict = np.where(o1 >= s, float(m), np.where(o2 >= s, 1.0, 0.0))
    if ties == "nonstrict":
        return nonstrict / m
    return (strict + nonstrict) / (2.0 * m)


def _delete_from_a(
    a_own: np.ndarray,
    a_own_idx: np.ndarray,
    a_other: np.ndarray,
    b_own: np.ndarray,
    b_other: np.ndarray,
    b_other_idx: np.ndarray,
    ties: str,
) -> tuple[np.ndarray, np.ndarray]:
    """``(term_a, term_b)`` of the NNAA with each record ``j`` of set A removed in turn (arrays of ``n_A``).

    ``a_own`` (n_A, 2): the two nearest leave-one-out distances of A's records in A, ``a_own_idx[:, 0]`` the
    index of the first; ``a_other`` (n_A, 2): their two nearest distances in B. ``b_own`` (n_B,): B's own
    leave-one-out distance; ``b_other`` (n_B, 3) and ``b_other_idx`` (n_B, 3): B's three nearest in A.
    """
    n_a, n_b = a_own.shape[0], b_own.shape[0]
    # A's own term: record j leaves; records whose nearest own neighbour was j move to their second
    r_a = _g(a_own[:, 0], a_other[:, 0], a_other[:, 1], n_b, ties)
    r_a_moved = _g(a_own[:, 1], a_other[:, 0], a_other[:, 1], n_b, ties)
    shift_a = np.bincount(a_own_idx[:, 0], weights=r_a_moved - r_a, minlength=n_a)
    term_a = (r_a.sum() - r_a + shift_a) / (n_a - 1)
    # B's term: m becomes n_a - 1 for everyone; B records that had j as first or second neighbour in A
    m = n_a - 1
    s, o1, o2, o3 = b_own, b_other[:, 0], b_other[:, 1], b_other[:, 2]
    v0 = _g(s, o1, o2, m, ties)
    first = np.bincount(b_other_idx[:, 0], weights=_g(s, o2, o3, m, ties) - v0, minlength=n_a)
    second = np.bincount(b_other_idx[:, 1], weights=_g(s, o1, o3, m, ties) - v0, minlength=n_a)
    term_b = (v0.sum() + first + second) / n_b
    return term_a, term_b


def jackknife_values(
    t_own: np.ndarray,
    t_own_idx: np.ndarray,
    t_other: np.ndarray,
    t_other_idx: np.ndarray,
    s_own: np.ndarray,
    s_own_idx: np.ndarray,
    s_other: np.ndarray,
    s_other_idx: np.ndarray,
    *,
    ties: str = "average",
) -> tuple[np.ndarray, np.ndarray]:
    """Delete-one values of ``AA_TS``: removing each ``T`` record, then each ``S`` record.

    Parameters
    ----------
    t_own, t_own_idx : ndarray of shape (n_T, 2)
        The two nearest leave-one-out distances of each ``T`` record in ``T`` (ascending) and their indices.
    t_other, t_other_idx : ndarray of shape (n_T, 3)
        The three nearest distances of each ``T`` record in ``S`` and their indices.
    s_own, s_own_idx, s_other, s_other_idx : the same for the ``S`` records.
    ties : {"average", "strict", "nonstrict"}

    Returns
    -------
    aa_minus_t : ndarray of shape (n_T,)
        ``AA`` of ``(T minus record j, S)`` for each ``j``.
    aa_minus_s : ndarray of shape (n_S,)
        ``AA`` of ``(T, S minus record k)`` for each ``k``.
    """
    n_t, n_s = t_own.shape[0], s_own.shape[0]
    if n_t < 3 or n_s < 3:
        raise MipkitValueError(
            f"The NNAA jackknife needs at least 3 points in each set. Got {n_t} and {n_s}."
        )
    tt, st = _delete_from_a(t_own, t_own_idx, t_other, s_own[:, 0], s_other, s_other_idx, ties)
    ss, ts = _delete_from_a(s_own, s_own_idx, s_other, t_own[:, 0], t_other, t_other_idx, ties)
    return 0.5 * (tt + st), 0.5 * (ts + ss)


def jackknife_variance(*delete_one: np.ndarray) -> float:
    """Jackknife variance summed over independent samples: ``sum_g (n_g - 1)/n_g sum_j (v_j - mean_g)^2``.

    Each argument holds the delete-one values of the statistic over one sample (Arvesen 1969).
    """
    total = 0.0
    for v in delete_one:
        v = np.asarray(v, float)
        n = v.size
        total += (n - 1) / n * float(np.sum((v - v.mean()) ** 2))
    return total


def dependence_pairs(deps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct pairs ``r < r'`` whose dependence sets meet: ``deps`` (N, k) holds ``D(r)`` minus ``r``.

    Each record's set is ``{r} | deps[r]``; records are grouped by each member of their set and every two
    records of a group form a pair (counted once however many members they share).
    """
    n = deps.shape[0]
    rec = np.repeat(np.arange(n), deps.shape[1] + 1)
    elem = np.column_stack([np.arange(n), deps]).ravel()
    order = np.lexsort((rec, elem))
    rec, elem = rec[order], elem[order]
    starts = np.flatnonzero(np.r_[True, elem[1:] != elem[:-1]])
    sizes = np.diff(np.r_[starts, elem.size])
    pos = np.arange(elem.size) - np.repeat(starts, sizes)  # position within its group
    after = np.repeat(sizes, sizes) - pos - 1  # later members of the same group
    first = np.repeat(np.arange(elem.size), after)
    offset = np.arange(first.size) - np.repeat(np.cumsum(after) - after, after) + 1
    a, b = rec[first], rec[first + offset]
    keep = a != b
    key = np.unique(np.minimum(a, b)[keep] * n + np.maximum(a, b)[keep])
    return key // n, key % n


def neighbourhood_variance(
    per_record_t: np.ndarray, per_record_s: np.ndarray, deps_t: np.ndarray, deps_s: np.ndarray
) -> float:
    """Variance of ``AA = (mean(h_T) + mean(h_S)) / 2`` from the covariances of dependent terms.

    Parameters
    ----------
    per_record_t, per_record_s : ndarray
        Each record's term ``h = g / m`` (:attr:`mipkit.metrics.nnaa.AdversarialAccuracy.per_record_t`).
    deps_t : ndarray of int, shape (n_T, 2)
        Each ``T`` record's nearest leave-one-out neighbour in ``T`` and nearest neighbour in ``S`` (indices
        into ``T`` and ``S``).
    deps_s : ndarray of int, shape (n_S, 2)
        The same for the ``S`` records (nearest in ``S``, nearest in ``T``).

    Returns
    -------
    float
        ``sum_r u_r^2 + 2 sum_{pairs} u_r u_r'`` (module docstring), never below the variance of
        independent terms' half (a floor that only binds on tiny tables).
    """
    h_t, h_s = np.asarray(per_record_t, float), np.asarray(per_record_s, float)
    n_t, n_s = h_t.size, h_s.size
    u = np.concatenate([(h_t - h_t.mean()) / (2 * n_t), (h_s - h_s.mean()) / (2 * n_s)])
    d_t, d_s = np.asarray(deps_t, np.int64), np.asarray(deps_s, np.int64)
    # pooled indices: T records first, then S records
    deps = np.vstack(
        [np.column_stack([d_t[:, 0], d_t[:, 1] + n_t]), np.column_stack([d_s[:, 0] + n_t, d_s[:, 1]])]
    )
    lo, hi = dependence_pairs(deps)
    independent = float(np.sum(u**2))
    return max(independent + 2.0 * float(np.sum(u[lo] * u[hi])), 0.5 * independent)
