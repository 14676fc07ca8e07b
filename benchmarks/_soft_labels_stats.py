"""Inference for the optimally-soft-labels benchmarks: cluster bootstrap over defender models, TOST, power.

Every defender model of a setting is trained on the same defender set with its own seed (the same seeds in
every setting), attacked with the same shadow models, and scored on the same records. The LTU game's pairs
and LiRA's trials of one model share that model, so they are not independent: the unit of resampling is
the defender model (Field & Welsh, J. R. Stat. Soc. B 69, 2007, "cluster bootstrap"). A replicate draws
``T`` defender models with replacement (:func:`mipkit.stats.pigeonhole_weights`, one factor) and recomputes
every statistic of every setting from the same draw, so differences between settings keep their pairing.
The intervals are conditional on the data set and on the attacker's shadow models.

The LTU game (docs/theory.md section 5) pairs each member of a defender model with a random non-member;
over the random pairing its expected accuracy is the model's AUC between members and non-members (a
round's pair is uniform over member x non-member pairs). :func:`per_model_auc` is that expectation, the
game without the pairing's noise.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from mipkit.stats import pigeonhole_weights

__all__ = [
    "bootstrap_means",
    "model_weights",
    "models_for_power",
    "models_for_tost",
    "percentile_interval",
    "per_model_auc",
    "power_paired",
    "privacy",
    "tost_paired",
    "tost_power",
    "weighted_tpr_at_fpr",
]


def privacy(accuracy):
    """LTU privacy ``min{2 (1 - A), 1}`` of the attacker's accuracy ``A`` (Pedersen eq. (4.9))."""
    return np.minimum(2.0 * (1.0 - np.asarray(accuracy, dtype=float)), 1.0)


def per_model_auc(scores: np.ndarray, member: np.ndarray) -> np.ndarray:
    """AUC of each row: ``P(score of a member > score of a non-member)``, ties one half.

    Parameters
    ----------
    scores : array of shape (T, n)
        Higher = called the member.
    member : bool array of shape (T, n)

    Returns
    -------
    array of shape (T,)
    """
    s = np.asarray(scores, dtype=float)
    m = np.asarray(member, dtype=bool)
    ranks = stats.rankdata(s, axis=1, method="average")
    k = m.sum(axis=1)
    u = np.sum(np.where(m, ranks, 0.0), axis=1) - k * (k + 1) / 2.0
    return u / (k * (s.shape[1] - k))


def model_weights(n_boot: int, n_models: int, random_state=None) -> np.ndarray:
    """Resampling counts ``(B, T)`` of the defender models: each row a multinomial draw of ``T`` models."""
    return pigeonhole_weights(n_boot, n_models, 1, random_state)[0]


def bootstrap_means(values: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Replicates ``(B, ...)`` of the mean over models of ``values`` (models on the first axis)."""
    v = np.asarray(values, dtype=float)
    flat = v.reshape(v.shape[0], -1)
    out = (W @ flat) / W.sum(axis=1, keepdims=True)
    return out.reshape((W.shape[0], *v.shape[1:]))


def weighted_tpr_at_fpr(scores: np.ndarray, member: np.ndarray, W: np.ndarray, fpr: float) -> np.ndarray:
    """Pooled TPR at FPR ``fpr`` of every replicate, model ``t`` counted ``W[b, t]`` times.

    With ``W`` all ones this is :func:`mipkit.metrics.roc.tpr_at_fpr` on the pooled trials (ROC points at
    the ends of groups of tied scores, linear interpolation between consecutive points).

    Parameters
    ----------
    scores, member : arrays of shape (T, n)
    W : int array of shape (B, T)
    fpr : float

    Returns
    -------
    array of shape (B,)
    """
    from mipkit.metrics.roc import interpolate_roc

    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(member, dtype=bool).ravel()
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    model = order // np.shape(scores)[1]
    last = np.r_[s_sorted[1:] != s_sorted[:-1], True]  # the end of each group of tied scores
    target = np.array([float(fpr)])
    out = np.empty(W.shape[0])
    for b in range(W.shape[0]):
        w = W[b, model].astype(float)
        tp = np.cumsum(np.where(y_sorted, w, 0.0))
        fp = np.cumsum(np.where(y_sorted, 0.0, w))
        if tp[-1] == 0 or fp[-1] == 0:
            out[b] = np.nan
            continue
        f = np.r_[0.0, fp[last] / fp[-1]]
        t = np.r_[0.0, tp[last] / tp[-1]]
        out[b] = interpolate_roc(f, t, target)[0]
    return out


def percentile_interval(replicates: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval (NaN replicates ignored)."""
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    lo, hi = np.quantile(r, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)


def tost_paired(diffs: np.ndarray, margin: float, alpha: float = 0.05) -> dict:
    """Two one-sided t tests (Schuirmann 1987) that the mean of paired differences lies in ``(-m, m)``.

    Equivalence is shown at level ``alpha`` when both one-sided p-values are below ``alpha``, i.e. when
    the ``1 - 2 alpha`` t interval of the mean lies inside ``(-margin, margin)``.

    Returns
    -------
    dict
        ``mean``, ``se``, ``p_lower`` (H0: mean <= -margin), ``p_upper`` (H0: mean >= margin), ``p`` (the
        larger), ``interval`` (the ``1 - 2 alpha`` t interval), ``equivalent`` and the inputs.
    """
    d = np.asarray(diffs, dtype=float)
    n = d.size
    if n < 2 or not margin > 0:
        raise ValueError(f"tost_paired needs >= 2 differences and a positive margin; got {n}, {margin}.")
    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(n))
    df = n - 1
    if se == 0:
        p_lower = 0.0 if mean > -margin else 1.0
        p_upper = 0.0 if mean < margin else 1.0
    else:
        p_lower = float(stats.t.sf((mean + margin) / se, df))
        p_upper = float(stats.t.cdf((mean - margin) / se, df))
    q = float(stats.t.ppf(1 - alpha, df))
    return {
        "mean": mean,
        "se": se,
        "n": n,
        "margin": float(margin),
        "alpha": float(alpha),
        "p_lower": p_lower,
        "p_upper": p_upper,
        "p": max(p_lower, p_upper),
        "interval": [mean - q * se, mean + q * se],
        "equivalent": bool(max(p_lower, p_upper) < alpha),
    }


def power_paired(sd: float, delta: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t test at level ``alpha`` to detect a mean difference ``delta`` with
    ``n`` pairs whose differences have standard deviation ``sd`` (noncentral t)."""
    df = n - 1
    nc = delta / (sd / math.sqrt(n))
    q = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(q, df, nc) + stats.nct.cdf(-q, df, nc))


def tost_power(sd: float, margin: float, n: int, true_diff: float = 0.0, alpha: float = 0.05) -> float:
    """Power of :func:`tost_paired` at true difference ``d`` (normal approximation with t critical values;
    Chow, Shao & Wang, Sample Size Calculations in Clinical Research, 2008, Sec. 3.2):
    ``Phi((m - d)/se - q) + Phi((m + d)/se - q) - 1`` with ``se = sd / sqrt(n)`` and ``q`` the ``1 - alpha``
    t quantile; 0 where that is negative."""
    se = sd / math.sqrt(n)
    q = stats.t.ppf(1 - alpha, n - 1)
    p = stats.norm.cdf((margin - true_diff) / se - q) + stats.norm.cdf((margin + true_diff) / se - q) - 1
    return float(max(p, 0.0))


def _smallest_n(power_of, target: float, n_max: int) -> int | None:
    lo, hi = 2, 2
    while power_of(hi) < target:
        if hi >= n_max:
            return None
        lo, hi = hi, min(2 * hi, n_max)
    while lo < hi:
        mid = (lo + hi) // 2
        if power_of(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi


def models_for_power(
    sd: float, delta: float, power: float = 0.8, alpha: float = 0.05, n_max: int = 100_000
) -> int | None:
    """Smallest number of defender models for :func:`power_paired` >= ``power`` (None above ``n_max``)."""
    return _smallest_n(lambda n: power_paired(sd, delta, n, alpha), power, n_max)


def models_for_tost(
    sd: float,
    margin: float,
    power: float = 0.8,
    true_diff: float = 0.0,
    alpha: float = 0.05,
    n_max: int = 100_000,
) -> int | None:
    """Smallest number of defender models for :func:`tost_power` >= ``power`` (None above ``n_max``)."""
    return _smallest_n(lambda n: tost_power(sd, margin, n, true_diff, alpha), power, n_max)
