"""Weighted-AUC replicates of the two-way cluster bootstrap over target models and records.

Shared by the audit's headline intervals (:mod:`mipkit.workflows.audit.verdict`) and the per-subgroup
intervals (:mod:`mipkit.metrics.slices`), so both resample the same way (docs/theory.md section 11).
"""

from __future__ import annotations

import numpy as np

__all__ = ["weighted_auc_replicates"]


def weighted_auc_replicates(
    scores: np.ndarray, labels: np.ndarray, W: np.ndarray, V: np.ndarray
) -> np.ndarray:
    """Weighted-AUC replicates ``sum_{p,q} w_p w_q ([s_p > s_q] + [s_p = s_q]/2) / (sum w_p sum w_q)``.

    ``p`` runs over member trials, ``q`` over non-member trials; ``w`` is the weight ``W[b, t] V[b, i]`` of
    trial ``(t, i)`` in replicate ``b`` (:func:`mipkit.stats.pigeonhole_weights`: Owen, Ann. Appl. Stat. 1,
    2007). Computed from the trials sorted once by score: the non-member weight below each trial is an
    exclusive cumulative sum read at the start of its tie group.

    Parameters
    ----------
    scores : array of shape (T, n)
        Score of every (target model, record) trial.
    labels : bool array of shape (T, n)
        Membership of every trial.
    W, V : int arrays of shape (B, T), (B, n)
        Resampling counts of the target models and of the records.

    Returns
    -------
    array of shape (B,)
        NaN where a replicate has no member or no non-member weight.
    """
    T, n = labels.shape
    s = np.asarray(scores, dtype=float).ravel()
    order = np.argsort(s, kind="mergesort")
    s_sorted = s[order]
    y = labels.ravel().astype(bool)[order]
    rows, cols = np.divmod(order, n)
    new_group = np.r_[True, s_sorted[1:] != s_sorted[:-1]]
    start = np.maximum.accumulate(np.where(new_group, np.arange(s.size), 0))
    end = np.r_[start[1:][new_group[1:]], s.size]
    end = end[np.cumsum(new_group) - 1]
    out = np.empty(W.shape[0])
    chunk = max(1, int(1_000_000 // max(s.size, 1)))
    for a in range(0, W.shape[0], chunk):
        w = W[a : a + chunk][:, rows].astype(float) * V[a : a + chunk][:, cols]
        neg = np.where(y[None, :], 0.0, w)
        cum = np.concatenate([np.zeros((w.shape[0], 1)), np.cumsum(neg, axis=1)], axis=1)
        below = cum[:, start]
        equal = cum[:, end] - below
        num = np.sum(np.where(y[None, :], w, 0.0) * (below + 0.5 * equal), axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[a : a + chunk] = num / (np.sum(w * y[None, :], axis=1) * cum[:, -1])
    return out
