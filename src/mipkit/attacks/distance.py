"""Distance to closest record (DCR): a membership attack on synthetic data and DCR protection scores.

The attacker holds the synthetic table and a candidate record. If the generator copied or nearly copied its
training records, training records lie closer to the synthetic data than records it never saw. The score
of a record is ``-DCR``, minus its distance to the closest synthetic record (higher = more likely a member),
computed for the training (original) records, label 1, and for holdout / control records from the same
population that were not used for training, label 0. The attack's ROC (AUC, TPR at low FPR) and precision at
realistic base rates come from :mod:`mipkit.metrics`.

Protection scores (all computed with the same distance):

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError
from mipkit.data.distance import Table, _n_rows, _take, kneighbors
from mipkit.data.tables import MixedArrays
from mipkit.metrics import (
    DEFAULT_BASE_RATES,
    DEFAULT_FPRS,
    precision_at_base_rate,
    roc_auc,
    roc_curve,
    tpr_at_fpr,
)


def distance_to_closest_record(
    records: Table,
    synthetic: Table,
    *,
    metric: str = "mixed",
    n_jobs: int = 2,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """DCR of each record: its distance to the closest synthetic record (exact, blocked or tree search)."""
    d, _ = kneighbors(records, synthetic, k=1, metric=metric, n_jobs=n_jobs, progress=progress)
    return d[:, 0]


@dataclass(frozen=True)
class DCRAttackResult:
    """The DCR membership attack: per-record scores and the attack's summary.

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
    """

    dcr_members: np.ndarray = field(repr=False)
    dcr_nonmembers: np.ndarray = field(repr=False)
    auc: float
    tpr_at_fpr: dict
    precision_at_base_rate: dict
    protection: dict

    def to_dict(self) -> dict:
        return {
            "auc": self.auc,
            "tpr_at_fpr": self.tpr_at_fpr,
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
    scores = -np.concatenate([dcr_members, dcr_nonmembers])
    labels = np.concatenate([np.ones(dcr_members.size, int), np.zeros(dcr_nonmembers.size, int)])
    return scores, labels


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
    """Summarise the DCR attack (score ``-DCR``) from the DCRs of members and non-members."""
    m = np.asarray(dcr_members, float).ravel()
    h = np.asarray(dcr_nonmembers, float).ravel()
    if m.size == 0 or h.size == 0:
        raise MipkitValueError("The DCR attack needs at least one member and one non-member record.")
    scores, labels = _scores_labels(m, h)
    auc = roc_auc(scores, labels)
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
    )


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
    med_syn = float(np.median(distance_to_closest_record(syn, original, n_jobs=n_jobs)))
    med_rnd = float(np.median(distance_to_closest_record(rnd, original, n_jobs=n_jobs)))
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
    d_tr = distance_to_closest_record(syn, tr, metric=metric, n_jobs=n_jobs)
    d_ho = distance_to_closest_record(syn, ho, metric=metric, n_jobs=n_jobs)
    p = float(np.mean(d_tr < d_ho) + 0.5 * np.mean(d_tr == d_ho))
    return {"score": min(1.0, 2 * (1 - p)), "share_closer_to_train": p, "n_real_each": n}
