"""Copy rates of a synthetic table: how many training records it copies, exactly or nearly, beyond chance.

Two rates, each the share of training records with a property minus the share of reference records with it
(the *excess*), so that 0 is what chance gives and 1 is every training record copied:

* ``exact``: the record has an identical synthetic record (DCR = 0).
* ``near``: its DCR lies below the 5th percentile of the unseen records' DCRs (a synthetic twin closer than
  unseen records usually get; exact copies count too). Defined with unseen records only.

The reference records are unseen records of the same population (holdout or control) when there are any:
given the synthetic table, training and unseen records are then exchangeable when the generator ignores
its training data, and the two shares are independent binomial proportions. Without unseen records, the
reference of the exact rate is the share of training records with an identical record among the *other*
training records, against a random subsample of the synthetic table of at most ``n - 1`` rows: a record
that is common in the population has a twin among ``n - 1`` other draws as often as among ``n - 1``
synthetic draws of a generator that ignores its data. The two shares then share their records, and
identical records share both indicators: the standard error is the larger of Agresti and Caffo's and a
cluster-robust one with each distinct row a cluster (without it, tables of few distinct rows raised false
alarms in up to 17% of null pairs at 95%; ``benchmarks/verdict_calibration_synthetic.py --part twins``).

The interval of an excess is Agresti and Caffo's (2000) for a difference of proportions: one success and
one failure added to each sample, then the Wald interval; it keeps its level down to zero counts.
"""

from __future__ import annotations

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit.data.tables import MixedArrays

__all__ = ["copy_rates", "excess_interval", "row_ids"]

NEAR_QUANTILE = 0.05


def _row_bytes(table) -> np.ndarray:
    if isinstance(table, MixedArrays):
        num = np.ascontiguousarray(np.asarray(table.numeric, float) + 0.0)  # -0.0 -> 0.0
        codes = np.ascontiguousarray(np.asarray(table.codes, np.int64))
        parts = [num.view(np.uint8).reshape(len(num), -1), codes.view(np.uint8).reshape(len(codes), -1)]
        return np.concatenate(parts, axis=1)
    arr = np.ascontiguousarray(np.asarray(table, float) + 0.0)
    return arr.view(np.uint8).reshape(len(arr), -1)


def row_ids(*tables) -> list[np.ndarray]:
    """An integer id per row of each table, equal for identical rows across the tables (same encoding)."""
    rows = [_row_bytes(t) for t in tables]
    _, inverse = np.unique(np.concatenate(rows, axis=0), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    bounds = np.cumsum([0, *(len(r) for r in rows)])
    return [inverse[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _excess(k1: int, n1: int, k2: int, n2: int) -> dict:
    """Shares ``k1/n1`` and ``k2/n2``, their difference, and Agresti-Caffo's centre and standard error."""
    p1, p2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    return {
        "share": k1 / n1,
        "reference_share": k2 / n2,
        "excess": k1 / n1 - k2 / n2,
        "n": int(n1),
        "n_reference": int(n2),
        "centre": p1 - p2,
        "se": float(np.sqrt(p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2))),
    }


def excess_interval(rate: dict, confidence: float) -> list[float]:
    """Two-sided Agresti-Caffo interval of an excess (a ``copy_rates`` entry) at ``confidence``."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    return [max(-1.0, rate["centre"] - z * rate["se"]), min(1.0, rate["centre"] + z * rate["se"])]


def copy_rates(
    dcr_members: np.ndarray,
    dcr_nonmembers: np.ndarray | None = None,
    *,
    original=None,
    synthetic=None,
    random_state: RandomState = None,
) -> dict:
    """The exact and near copy rates of the module docstring.

    Parameters
    ----------
    dcr_members, dcr_nonmembers : ndarray
        DCRs of training records and of unseen records (``None``: no unseen records).
    original, synthetic : MixedArrays or ndarray, optional
        The encoded training and synthetic tables; used (and needed) only without unseen records.
    random_state : int or Generator, optional
        Draws the synthetic subsample of the reference without unseen records.

    Returns
    -------
    dict
        ``reference`` (what the training records are compared with), ``exact`` and, with unseen records,
        ``near`` (each: ``share``, ``reference_share``, ``excess``, ``n``, ``n_reference``, ``centre``,
        ``se``; ``near`` also ``radius``).
    """
    m = np.asarray(dcr_members, float).ravel()
    if dcr_nonmembers is not None:
        h = np.asarray(dcr_nonmembers, float).ravel()
        radius = float(np.quantile(h, NEAR_QUANTILE))
        near = _excess(int(np.sum(m < radius)), m.size, int(np.sum(h < radius)), h.size)
        return {
            "reference": "unseen records",
            "exact": _excess(int(np.sum(m == 0)), m.size, int(np.sum(h == 0)), h.size),
            "near": {**near, "radius": radius, "quantile": NEAR_QUANTILE},
        }
    rng = check_random_state(random_state)
    n = len(original)
    n_syn = len(synthetic)
    ids_o, ids_s = row_ids(original, synthetic)
    if n_syn > n - 1:
        ids_s = ids_s[rng.choice(n_syn, size=n - 1, replace=False)]
    copied = np.isin(ids_o, ids_s)
    _, inverse, counts = np.unique(ids_o, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    twins = counts[inverse] > 1
    exact = _excess(int(copied.sum()), n, int(twins.sum()), n)
    exact["se"] = max(exact["se"], _clustered_se(copied.astype(float) - twins, inverse))
    return {"reference": "training records' twins among the other training records", "exact": exact}


def _clustered_se(d: np.ndarray, groups: np.ndarray) -> float:
    """Standard error of the mean of ``d`` with the records of one group (here: one distinct row) as one
    cluster: the copy and twin indicators of identical records are identical, and a twin pair counts twice
    (the cluster-robust sandwich, ``G / (G - 1)`` corrected for ``G`` groups)."""
    g = np.bincount(groups, weights=d - d.mean())
    return float(np.sqrt(np.sum(g**2) * g.size / max(g.size - 1, 1)) / d.size)
