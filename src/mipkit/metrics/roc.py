"""ROC, TPR at low FPR, precision at a base rate and the best-threshold accuracy of an attack.

The eta estimate of hard guesses and the intervals live in :mod:`mipkit.stats`. Vocabulary: alpha = FPR,
beta = FNR, TPR = 1 - beta. A score is higher for "more likely a member"; labels are 1 for members and 0 for
non-members.
"""

from __future__ import annotations

import numpy as np

from mipkit._defaults import DEFAULT_BASE_RATES as DEFAULT_BASE_RATES  # re-exported: the metrics' defaults
from mipkit._defaults import DEFAULT_FPRS as DEFAULT_FPRS
from mipkit._validation import MipkitValueError, check_probability


def _check_scores_labels(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(labels).ravel()
    if s.shape != y.shape:
        raise MipkitValueError(f"scores and labels differ in length: {s.shape[0]} vs {y.shape[0]}.")
    if not np.all(np.isfinite(s)):
        raise MipkitValueError("Attack scores must be finite (no NaN or infinity).")
    if not np.all((y == 0) | (y == 1)):
        raise MipkitValueError("Membership labels must be 0 (non-member) or 1 (member).")
    y = y.astype(int)
    if y.min() == y.max():
        raise MipkitValueError("Membership labels need both members (1) and non-members (0).")
    return s, y


def roc_curve(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full ROC: ``(fpr, tpr, thresholds)``, every threshold kept (for log-log plots at low FPR)."""
    from sklearn import metrics as skm  # here: scikit-learn takes a second to import

    s, y = _check_scores_labels(scores, labels)
    fpr, tpr, thr = skm.roc_curve(y, s, drop_intermediate=False)
    return fpr, tpr, thr


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (ties counted one half)."""
    from sklearn import metrics as skm

    s, y = _check_scores_labels(scores, labels)
    return float(skm.roc_auc_score(y, s))


def interpolate_roc(f: np.ndarray, t: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """TPR at each target FPR of the best rule that flags every record above a threshold and a random share
    of the records tied at it: the straight line between the ROC's consecutive points ``(f, t)`` (both
    non-decreasing, from ``(0, 0)`` to ``(1, 1)``), the highest TPR where the curve is vertical.

    Only consecutive points are joined: the segment between them is what randomising over one group of
    tied scores reaches. Joining points further apart (the convex hull) would mix two thresholds.
    """
    f = np.asarray(f, dtype=float)
    t = np.asarray(t, dtype=float)
    x = np.asarray(targets, dtype=float)
    i = np.clip(np.searchsorted(f, x, side="right") - 1, 0, f.size - 1)  # last point at or left of x
    j = np.minimum(i + 1, f.size - 1)  # the next point, strictly right of x unless i is the last
    width = f[j] - f[i]
    step = np.where(width > 0, (x - f[i]) / np.where(width > 0, width, 1.0), 0.0)
    return t[i] + np.clip(step, 0.0, 1.0) * (t[j] - t[i])


def tpr_at_fpr(scores: np.ndarray, labels: np.ndarray, fpr: float | np.ndarray) -> np.ndarray:
    """TPR at FPR ``fpr`` (Carlini et al.'s low-FPR metric), ties handled by a randomised threshold.

    Where scores tie, a threshold rule jumps from one ROC point to the next; flagging a random share of
    the tied records reaches every point between them, so the TPR is interpolated linearly between the
    ROC's points (:func:`interpolate_roc`). Without ties this is the largest TPR of a threshold whose FPR
    is at most ``fpr``. Returns an array of the shape of ``np.atleast_1d(fpr)``. Below
    :func:`smallest_measured_fpr` no threshold is measured: the value is the randomised rule's.
    """
    f, t, _ = roc_curve(scores, labels)
    targets = np.atleast_1d(np.asarray(fpr, dtype=float))
    for a in targets:
        check_probability("fpr", a, owner="tpr_at_fpr")
    return interpolate_roc(f, t, targets)


def smallest_measured_fpr(scores: np.ndarray, labels: np.ndarray) -> float:
    """The smallest non-zero FPR of a threshold on these scores: ``1/m`` for ``m`` non-members without
    ties, more when non-members tie at the highest scores (below it a TPR is only a randomised rule's)."""
    f, _, _ = roc_curve(scores, labels)
    pos = f[f > 0]
    return float(pos[0]) if pos.size else 1.0


def precision_at_base_rate(tpr: float | np.ndarray, fpr: float | np.ndarray, base_rate: float) -> np.ndarray:
    """Precision of a rule with rates (TPR, FPR) when a fraction ``base_rate`` of targets are members.

    ``precision = pi TPR / (pi TPR + (1 - pi) FPR)`` (Francis & Wagner; docs/theory.md section 4). Where
    both rates are 0 (no positive predictions) precision is undefined and NaN is returned.
    """
    pi = check_probability("base_rate", base_rate, closed="neither", owner="precision_at_base_rate")
    t = np.asarray(tpr, dtype=float)
    f = np.asarray(fpr, dtype=float)
    num = pi * t
    den = num + (1 - pi) * f
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def precision_recall_at_base_rate(
    scores: np.ndarray, labels: np.ndarray, base_rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """The attack's precision-recall curve re-weighted to a membership base rate ``pi``.

    Returns ``(recall, precision)`` over every threshold with at least one positive prediction.
    """
    f, t, _ = roc_curve(scores, labels)
    keep = (t + f) > 0
    return t[keep], precision_at_base_rate(t[keep], f[keep], base_rate)


def best_threshold_accuracy(scores: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """Highest balanced accuracy ``(TPR + 1 - FPR)/2`` over thresholds, and the threshold's index.

    Choosing the threshold on the same data is optimistic; use a held-out split (or
    :func:`mipkit.stats.eta_from_guesses` on guesses made with a threshold fixed beforehand) for a fair
    estimate.
    """
    f, t, _ = roc_curve(scores, labels)
    bal = (t + 1 - f) / 2
    i = int(np.argmax(bal))
    return float(bal[i]), i
