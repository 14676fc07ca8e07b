"""Measures of the distance-to-closest-record (DCR) attack and the DCR protection scores.

The attack (:mod:`mipkit.attacks.distance`) scores a record by ``-DCR``, minus its distance to the closest
synthetic record, for the training (original) records, label 1, and for holdout / control records from the
same population that were not used for training, label 0. This module measures it: ROC (AUC, TPR at low
FPR) and precision at realistic base rates (``docs/theory.md`` section 4), and the protection scores (all
computed with the same distance):

* ``share_below_holdout_p05``: share of training records whose DCR is below the 5th percentile of the
  holdout records' DCRs. Without memorisation it is about ``holdout_share_below_p05`` (about 5%, less
  with ties); a larger value says that many training records have an unusually close synthetic twin.
* ``exact_match_share`` (training) vs ``holdout_exact_match_share``: records with an identical synthetic
  record (DCR = 0). Identical holdout records show how often such matches happen by chance.
* ``dcr_baseline_protection`` (as SDMetrics' DCRBaselineProtection): ``min(1, median DCR(synthetic ->
  original) / median DCR(random -> original))`` where the random table has as many rows as the synthetic
  one, numerics uniform on the original's range and categories uniform over the original's categories.
  1 = the synthetic records are as far from the real ones as random records; 0 = they sit on them.
* ``dcr_overfitting_protection`` (as SDMetrics' DCROverfittingProtection): with equally many training and
  holdout records, the share ``p`` of synthetic records whose closest real record is a training record;
  the score is ``min(1, 2 (1 - p))``: 1 when synthetic records are no closer to training than to holdout
  records (``p <= 1/2``), 0 when all are closer to training records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError
from mipkit.data.neighbors import Table, _n_rows, _take, kneighbors
from mipkit.data.tables import MixedArrays
from mipkit.metrics.roc import (
    DEFAULT_BASE_RATES,
    DEFAULT_FPRS,
    precision_at_base_rate,
    roc_auc,
    roc_curve,
    smallest_measured_fpr,
    tpr_at_fpr,
)


@dataclass(frozen=True)
class DCRAttackResult:
    """The DCR membership attack: per-record distances and the attack's summary.

    Attributes
    ----------
    dcr_members, dcr_nonmembers : ndarray
        DCR of the training records and of the holdout records.
    auc : float
    tpr_at_fpr : dict
        ``{fpr: tpr}`` at ``DEFAULT_FPRS`` (largest TPR with FPR <= fpr).
    precision_at_base_rate : dict
        ``{"1:k": {fpr: precision}}``: precision of the rule at that FPR when one target in ``k + 1`` is a
        member (Francis & Wagner).
    protection : dict
        The protection scores of the module docstring that need only the two DCR samples.
    auc_ci : list of float
        DeLong's 95% interval of the AUC (:func:`auc_delong`).
    smallest_measured_fpr : float
        The smallest non-zero FPR of a threshold on the DCRs (``1 / n_nonmembers`` without ties; more when
        unseen records tie at the smallest DCRs, e.g. at 0): below it ``tpr_at_fpr`` is interpolated, the
        TPR of a rule that flags a random share of the tied records.
    unresolved_fprs : list of str
        The FPRs of ``tpr_at_fpr`` below ``1 / (number of non-members)``: there the TPR is the TPR at FPR 0,
        the audit cannot resolve such rates.
    """

    dcr_members: np.ndarray = field(repr=False)
    dcr_nonmembers: np.ndarray = field(repr=False)
    auc: float
    tpr_at_fpr: dict
    precision_at_base_rate: dict
    protection: dict
    auc_ci: list = field(default_factory=lambda: [float("nan"), float("nan")])
    auc_se: float = float("nan")
    unresolved_fprs: list = field(default_factory=list)
    smallest_measured_fpr: float | None = None

    def to_dict(self) -> dict:
        return {
            "auc": self.auc,
            "auc_ci": self.auc_ci,
            "auc_se": self.auc_se,
            "auc_interval": "DeLong, normal, 95%",
            "tpr_at_fpr": self.tpr_at_fpr,
            "tpr_at_fpr_unresolved": dict.fromkeys(
                self.unresolved_fprs,
                f"below 1/{self.dcr_nonmembers.size}, one unseen record: the value is the TPR at FPR 0",
            ),
            "smallest_measured_fpr": self.smallest_measured_fpr,
            "precision_at_base_rate": self.precision_at_base_rate,
            "protection": self.protection,
            "n_members": int(self.dcr_members.size),
            "n_nonmembers": int(self.dcr_nonmembers.size),
            "dcr_median_members": float(np.median(self.dcr_members)),
            "dcr_median_nonmembers": float(np.median(self.dcr_nonmembers)),
        }

    def roc(self) -> tuple[np.ndarray, np.ndarray]:
        """``(fpr, tpr)`` of the attack (for log-log plots)."""
        scores, labels = _scores_labels(self.dcr_members, self.dcr_nonmembers)
        f, t, _ = roc_curve(scores, labels)
        return f, t


def _scores_labels(dcr_members: np.ndarray, dcr_nonmembers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The attack's scores ``-DCR`` (members first) and membership labels."""
    scores = -np.concatenate([dcr_members, dcr_nonmembers])
    labels = np.concatenate([np.ones(dcr_members.size, int), np.zeros(dcr_nonmembers.size, int)])
    return scores, labels


def auc_delong(
    member_scores: np.ndarray, nonmember_scores: np.ndarray, confidence: float = 0.95
) -> tuple[float, float, list[float]]:
    """AUC ``P(score_m > score_h) + P(=)/2`` with DeLong's standard error and normal interval.

    DeLong, DeLong & Clarke-Pearson (Biometrics 1988), with midranks (Sun & Xu, IEEE SPL 2014): the
    placements ``V10_i = (rank of m_i among all - rank among members) / n_h`` and
    ``V01_j = 1 - (rank of h_j among all - rank among non-members) / n_m`` give
    ``SE^2 = var(V10)/n_m + var(V01)/n_h``. Valid when the scores of each group are independent draws
    (under the null, synthetic data independent of the training records, they are, given the synthetic
    table). Returns ``(auc, se, [low, high])``, the interval clipped to [0, 1].
    """
    from scipy.stats import norm, rankdata

    x = np.asarray(member_scores, float).ravel()
    y = np.asarray(nonmember_scores, float).ravel()
    n_m, n_h = x.size, y.size
    tz = rankdata(np.concatenate([x, y]))
    v10 = (tz[:n_m] - rankdata(x)) / n_h
    v01 = 1.0 - (tz[n_m:] - rankdata(y)) / n_m
    auc = float(v10.mean())
    var = (v10.var(ddof=1) / n_m if n_m > 1 else 0.0) + (v01.var(ddof=1) / n_h if n_h > 1 else 0.0)
    se = float(np.sqrt(var))
    z = float(norm.ppf(0.5 + confidence / 2))
    return auc, se, [max(0.0, auc - z * se), min(1.0, auc + z * se)]


def _base_rate_label(pi: float) -> str:
    return f"1:{round((1 - pi) / pi):d}"


def dcr_protection(dcr_members: np.ndarray, dcr_nonmembers: np.ndarray, *, quantile: float = 0.05) -> dict:
    """Protection scores that compare training and holdout DCRs (see the module docstring)."""
    m, h = np.asarray(dcr_members, float), np.asarray(dcr_nonmembers, float)
    thr = float(np.quantile(h, quantile))
    key = f"p{round(quantile * 100):02d}"
    return {
        f"holdout_dcr_{key}": thr,
        f"share_below_holdout_{key}": float(np.mean(m < thr)),
        f"holdout_share_below_{key}": float(np.mean(h < thr)),
        "exact_match_share": float(np.mean(m == 0)),
        "holdout_exact_match_share": float(np.mean(h == 0)),
    }


def dcr_attack(
    dcr_members: np.ndarray,
    dcr_nonmembers: np.ndarray,
    *,
    fprs: Sequence[float] = DEFAULT_FPRS,
    base_rates: Sequence[float] = DEFAULT_BASE_RATES,
) -> DCRAttackResult:
    """Measure the DCR attack (score ``-DCR``) from the DCRs of members and non-members.

    AUC and TPR at each FPR of ``fprs`` from the ROC of the scores; precision at each base rate ``pi`` of
    ``base_rates`` from ``TPR pi / (TPR pi + FPR (1 - pi))`` (``docs/theory.md`` section 4); the protection
    scores of :func:`dcr_protection`.
    """
    m = np.asarray(dcr_members, float).ravel()
    h = np.asarray(dcr_nonmembers, float).ravel()
    if m.size == 0 or h.size == 0:
        raise MipkitValueError("The DCR attack needs at least one member and one non-member record.")
    scores, labels = _scores_labels(m, h)
    auc = roc_auc(scores, labels)
    _, auc_se, auc_ci = auc_delong(-m, -h)
    tprs = tpr_at_fpr(scores, labels, np.asarray(fprs))
    prec = {
        _base_rate_label(pi): {
            str(a): float(precision_at_base_rate(t, a, pi)) if t > 0 else None
            for a, t in zip(fprs, tprs, strict=True)
        }
        for pi in base_rates
    }
    return DCRAttackResult(
        dcr_members=m,
        dcr_nonmembers=h,
        auc=float(auc),
        tpr_at_fpr={str(a): float(t) for a, t in zip(fprs, tprs, strict=True)},
        precision_at_base_rate=prec,
        protection=dcr_protection(m, h),
        auc_ci=auc_ci,
        auc_se=auc_se,
        unresolved_fprs=[str(a) for a in fprs if a < 1.0 / h.size],
        smallest_measured_fpr=smallest_measured_fpr(scores, labels),
    )


def _closest(records: Table, reference: Table, *, metric: str = "mixed", n_jobs: int = 2) -> np.ndarray:
    """Distance of each record to its closest reference record (exact search)."""
    return kneighbors(records, reference, k=1, metric=metric, n_jobs=n_jobs)[0][:, 0]


def random_like(original: MixedArrays, n: int, *, random_state: RandomState = None) -> MixedArrays:
    """A random table in the original's encoding: numerics uniform on [0, 1] (the original's normalised
    range), categories uniform over the categories present in the original; no missing values."""
    rng = check_random_state(random_state)
    num = rng.uniform(0.0, 1.0, size=(n, original.numeric.shape[1]))
    codes = np.empty((n, original.codes.shape[1]), dtype=np.int32)
    for j in range(original.codes.shape[1]):
        present = np.unique(original.codes[:, j])
        present = present[present != original.n_levels[j] - 1]
        if present.size == 0:
            present = np.array([original.n_levels[j] - 1])
        codes[:, j] = rng.choice(present, size=n)
    return MixedArrays(num, codes, original.n_levels)


def dcr_baseline_protection(
    original: MixedArrays,
    synthetic: MixedArrays,
    *,
    random_state: RandomState = None,
    n_jobs: int = 2,
    max_rows: int | None = None,
) -> dict:
    """SDMetrics-style DCRBaselineProtection with the mixed distance (see the module docstring).

    ``max_rows`` subsamples the synthetic table (and the random table with it) for speed.
    """
    rng = check_random_state(random_state)
    syn = synthetic
    if max_rows is not None and len(syn) > max_rows:
        syn = syn.take(np.sort(rng.choice(len(syn), size=max_rows, replace=False)))
    rnd = random_like(original, len(syn), random_state=rng)
    med_syn = float(np.median(_closest(syn, original, n_jobs=n_jobs)))
    med_rnd = float(np.median(_closest(rnd, original, n_jobs=n_jobs)))
    score = min(1.0, med_syn / med_rnd) if med_rnd > 0 else float("nan")
    return {"score": score, "median_dcr_synthetic": med_syn, "median_dcr_random": med_rnd, "n": len(syn)}


def dcr_overfitting_protection(
    train: Table,
    holdout: Table,
    synthetic: Table,
    *,
    metric: str = "mixed",
    random_state: RandomState = None,
    n_jobs: int = 2,
    max_rows: int | None = None,
) -> dict:
    """SDMetrics-style DCROverfittingProtection: ``min(1, 2 (1 - p))`` (see the module docstring).

    The larger of ``train`` and ``holdout`` is subsampled to the smaller's size so that a synthetic record
    is equally likely to be closer to either when the generator does not overfit. A tie counts one half.
    """
    rng = check_random_state(random_state)
    n = min(_n_rows(train), _n_rows(holdout))
    tr = _take(train, np.sort(rng.choice(_n_rows(train), size=n, replace=False)))
    ho = _take(holdout, np.sort(rng.choice(_n_rows(holdout), size=n, replace=False)))
    syn = synthetic
    if max_rows is not None and _n_rows(syn) > max_rows:
        syn = _take(syn, np.sort(rng.choice(_n_rows(syn), size=max_rows, replace=False)))
    d_tr = _closest(syn, tr, metric=metric, n_jobs=n_jobs)
    d_ho = _closest(syn, ho, metric=metric, n_jobs=n_jobs)
    p = float(np.mean(d_tr < d_ho) + 0.5 * np.mean(d_tr == d_ho))
    return {"score": min(1.0, 2 * (1 - p)), "share_closer_to_train": p, "n_real_each": n}
