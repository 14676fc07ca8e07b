"""The Likelihood Ratio Attack (LiRA) of Carlini et al. 2022, online and offline.

Carlini, Chien, Nasr, Song, Terzis, Tramer, "Membership Inference Attacks From First Principles"
(IEEE S&P 2022), Sec. IV and Algorithm 1. For each target record ``i`` the attacker has ``K`` reference
("shadow") models, some trained with the record (IN) and some without (OUT), and their logit-scaled
confidences ``phi_k(i)`` (:func:`mipkit.attacks.logit_confidence`). It fits one Gaussian to the IN
confidences and one to the OUT confidences of that record and scores the target model's confidence
``x = phi_theta(i)`` by

- **online** (eq. (4) and Algorithm 1): ``log N(x; mu_in, s_in^2) - log N(x; mu_out, s_out^2)``, the
  log-likelihood ratio of the two fits;
- **offline** (Sec. IV-D): OUT models only. The paper runs a one-sided test: the record is a member when
  ``x`` is large compared with ``N(mu_out, s_out^2)``, i.e. when the p-value ``1 - Phi((x - mu_out)/s_out)``
  is small. ``test="one-sided"`` returns ``-log(1 - Phi(z))`` with ``z = (x - mu_out)/s_out`` (computed with
  ``scipy.stats.norm.logsf``): the same ordering as ``Phi(z)`` for each record, but it does not saturate at
  1 for ``z > 8``, so low-FPR thresholds stay distinct. The authors' released code instead scores
  ``-log N(x; mu_out, s_out^2)`` (``test="logpdf"``), a two-sided score that also calls a record a member
  when ``x`` is far *below* the OUT mean; both are offered (docs/theory.md section 9).

``global_variance=True`` replaces the per-record variances by one pooled variance (the paper's advice when
there are few reference models, Sec. IV-C "fixed variance"). mipkit pools the *within-record* deviations,
``s^2 = sum_i sum_{k in side} (phi_k(i) - mu(i))^2 / sum_i (n_i - 1)``; the reference code takes the
variance of all confidences together, which also counts the spread of the means across records.

Records with too few reference models on one side (see :func:`lira_gaussian_fits`) borrow global estimates:
a missing mean is the other side's mean shifted by the average IN-OUT gap over records that have both (or
the global mean of that side when no record has both), and a variance from fewer than two values is the
pooled variance of that side. Variances are floored at ``MIN_VARIANCE``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from mipkit._validation import MipkitValueError, check_choice, check_finite_array

__all__ = ["MIN_VARIANCE", "GaussianFits", "lira_gaussian_fits", "lira_offline", "lira_online"]

MIN_VARIANCE = 1e-12
"""Floor on fitted variances, so identical reference confidences do not give an infinite density."""


@dataclass(frozen=True)
class GaussianFits:
    """Per-record Gaussian fits of the IN and OUT reference confidences (arrays of shape (n,)).

    ``n_in`` / ``n_out`` count the reference models of each side per record; where a count is 0 the mean
    is a global fallback, and where it is below 2 (or ``global_variance`` was asked) the variance is the
    pooled one. ``mean_in`` / ``var_in`` are NaN when no reference model holds any record IN.
    """

    mean_in: np.ndarray
    var_in: np.ndarray
    n_in: np.ndarray
    mean_out: np.ndarray
    var_out: np.ndarray
    n_out: np.ndarray


def _side_stats(conf: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per-record count, mean and unbiased variance of ``conf[mask]``, and the pooled within-record
    variance (NaN where undefined)."""
    count = mask.sum(axis=0)
    total = np.where(mask, conf, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        squares = np.where(mask, (conf - np.where(count > 0, mean, 0.0)) ** 2, 0.0).sum(axis=0)
        var = np.where(count >= 2, squares / np.maximum(count - 1, 1), np.nan)
    dof = np.sum(np.maximum(count - 1, 0))
    pooled = float(np.sum(squares[count >= 2]) / dof) if dof > 0 else np.nan
    return count, mean, var, pooled


def _check_lira_inputs(target_conf, ref_conf, ref_in, owner: str):
    target = check_finite_array("target_conf", target_conf, ndim=1, owner=owner)
    ref = check_finite_array("ref_conf", ref_conf, ndim=2, owner=owner)
    member = np.asarray(ref_in)
    if member.dtype != bool:
        if not np.all((member == 0) | (member == 1)):
            raise MipkitValueError(f"The 'ref_in' parameter of {owner} must be boolean (True = IN).")
        member = member.astype(bool)
    if ref.shape[1] != target.shape[0] or member.shape != ref.shape:
        raise MipkitValueError(
            f"{owner} needs target_conf of shape (n,) and ref_conf, ref_in of shape (K, n). Got "
            f"{target.shape}, {ref.shape} and {member.shape} instead."
        )
    return target, ref, member


def lira_gaussian_fits(ref_conf, ref_in, *, global_variance: bool = False) -> GaussianFits:
    """Fit ``N(mu_in(i), s_in(i)^2)`` and ``N(mu_out(i), s_out(i)^2)`` per record (Carlini et al. Alg. 1).

    Parameters
    ----------
    ref_conf : array of shape (K, n)
        Signal (usually :func:`logit_confidence`) of each reference model on each record.
    ref_in : bool array of shape (K, n)
        ``ref_in[k, i]`` is True iff record ``i`` was in reference model ``k``'s training set.
    global_variance : bool
        Use one pooled variance per side for every record.
    """
    _, ref, member = _check_lira_inputs(
        np.zeros(np.shape(ref_conf)[-1]), ref_conf, ref_in, owner="lira_gaussian_fits"
    )
    n_in, mean_in, var_in, pooled_in = _side_stats(ref, member)
    n_out, mean_out, var_out, pooled_out = _side_stats(ref, ~member)
    if not np.any(n_out > 0):
        raise MipkitValueError("LiRA needs OUT reference models: ref_in is True everywhere.")
    both = (n_in > 0) & (n_out > 0)
    gap = float(np.mean(mean_in[both] - mean_out[both])) if np.any(both) else np.nan
    if np.any(n_in > 0):
        global_in = float(np.sum(np.where(member, ref, 0.0)) / member.sum())
        fill = mean_out + gap if np.isfinite(gap) else np.full_like(mean_out, global_in)
        mean_in = np.where(n_in > 0, mean_in, fill)
    global_out = float(np.sum(np.where(member, 0.0, ref)) / (~member).sum())
    fill = mean_in - gap if np.isfinite(gap) else np.full_like(mean_in, global_out)
    mean_out = np.where(n_out > 0, mean_out, np.where(np.isfinite(fill), fill, global_out))

    def _variance(var: np.ndarray, pooled: float, count: np.ndarray, side: str) -> np.ndarray:
        if not np.any(count > 0):
            return np.full_like(var, np.nan)
        if not np.isfinite(pooled):
            # no record has two references on this side: the variance of all values of that side
            values = ref[member] if side == "in" else ref[~member]
            pooled = float(np.var(values)) if values.size > 1 else 0.0
        out = np.full_like(var, pooled) if global_variance else np.where(count >= 2, var, pooled)
        return np.maximum(out, MIN_VARIANCE)

    return GaussianFits(
        mean_in=mean_in,
        var_in=_variance(var_in, pooled_in, n_in, "in"),
        n_in=n_in,
        mean_out=mean_out,
        var_out=_variance(var_out, pooled_out, n_out, "out"),
        n_out=n_out,
    )


def lira_online(target_conf, ref_conf, ref_in, *, global_variance: bool = False) -> np.ndarray:
    """Online LiRA score ``log N(x; mu_in, s_in^2) - log N(x; mu_out, s_out^2)`` (Carlini et al. eq. (4)).

    Parameters
    ----------
    target_conf : array of shape (n,)
        The target model's signal on each record (usually :func:`logit_confidence`).
    ref_conf : array of shape (K, n)
        The reference models' signals.
    ref_in : bool array of shape (K, n)
        Membership of each record in each reference model's training set.
    global_variance : bool
        One pooled variance per side instead of per-record variances (advised for few reference models).

    Returns
    -------
    ndarray of shape (n,)
        Log-likelihood ratio; higher = more likely a member.
    """
    x, ref, member = _check_lira_inputs(target_conf, ref_conf, ref_in, owner="lira_online")
    if not np.any(member):
        raise MipkitValueError("Online LiRA needs IN reference models: ref_in is False everywhere.")
    fits = lira_gaussian_fits(ref, member, global_variance=global_variance)
    log_in = stats.norm.logpdf(x, fits.mean_in, np.sqrt(fits.var_in))
    log_out = stats.norm.logpdf(x, fits.mean_out, np.sqrt(fits.var_out))
    return log_in - log_out


def lira_offline(
    target_conf, ref_conf, ref_in, *, global_variance: bool = False, test: str = "one-sided"
) -> np.ndarray:
    """Offline LiRA score from the OUT reference models only (Carlini et al. Sec. IV-D).

    ``test="one-sided"``: ``-log(1 - Phi((x - mu_out)/s_out))``, minus the log p-value of the paper's
    one-sided test (same ordering per record as ``Phi(z)``, without saturation).
    ``test="logpdf"``: ``-log N(x; mu_out, s_out^2)``, the authors' released code (two-sided: large for ``x``
    far from ``mu_out`` on either side).

    Returns
    -------
    ndarray of shape (n,)
        Higher = more likely a member.
    """
    check_choice("test", test, ("one-sided", "logpdf"), owner="lira_offline")
    x, ref, member = _check_lira_inputs(target_conf, ref_conf, ref_in, owner="lira_offline")
    fits = lira_gaussian_fits(ref, member, global_variance=global_variance)
    sd_out = np.sqrt(fits.var_out)
    if test == "one-sided":
        return -stats.norm.logsf((x - fits.mean_out) / sd_out)
    return -stats.norm.logpdf(x, fits.mean_out, sd_out)
