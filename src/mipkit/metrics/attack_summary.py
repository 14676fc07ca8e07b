"""One attack's metrics on a membership game, each with an interval: the bundle an audit reports.

Given pooled scores and true memberships of the game's trials (higher score = more likely a member,
label 1 = member), :func:`summarize_attack` computes

* the ROC AUC with a Hanley & McNeil (1982) normal interval,
* TPR at each low FPR (Carlini et al. 2022): the threshold is the lowest one whose empirical FPR is at
  most the target; the interval is Clopper-Pearson on the true-positive count at that threshold
  (conditional on the threshold),
* the empirical MIP eta (Izzo et al., Def. 1; docs/theory.md section 1) and the balanced accuracy of
  *hard guesses* made with a threshold chosen on the other half of the trials (two-fold cross-fitting, so no
  guess uses a threshold tuned on its own trial), with a Clopper-Pearson interval on the number of correct
  guesses,
* precision at membership base rates (Francis & Wagner; docs/theory.md section 4) at each of those FPRs,
  with the interval that the TPR interval induces (precision is increasing in TPR at a fixed FPR),
* a log-spaced copy of the ROC curve and score histograms, small enough to store in ``results.json``.

The intervals here treat trials as independent. Trials that share a target model or a record are not, so
these intervals are too narrow for an audit's headline; the audit workflow adds two-way cluster-bootstrap
intervals over target models and records (:mod:`mipkit.workflows.audit.verdict`, docs/theory.md section 11)
from the :attr:`AttackSummary.guesses` kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from mipkit._random import check_random_state
from mipkit._validation import MipkitValueError, check_interval
from mipkit.metrics.roc import (
    DEFAULT_BASE_RATES,
    DEFAULT_FPRS,
    interpolate_roc,
    precision_at_base_rate,
    roc_auc,
    roc_curve,
)
from mipkit.stats import EtaEstimate, Proportion


def fpr_label(fpr: float) -> str:
    """The key under which a FPR is stored in JSON: ``0.01 -> "0.01"``."""
    return f"{fpr:g}"


def base_rate_label(base_rate: float) -> str:
    """``1/11 -> "1:10"``: members to non-members."""
    ratio = (1.0 - base_rate) / base_rate
    return f"1:{ratio:.0f}" if abs(ratio - round(ratio)) < 1e-6 else f"1:{ratio:.3g}"


def auc_interval(
    auc: float, n_members: int, n_nonmembers: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Hanley & McNeil (1982) normal interval for an AUC.

    ``SE^2 = (A(1-A) + (n1 - 1)(Q1 - A^2) + (n0 - 1)(Q2 - A^2)) / (n1 n0)`` with ``Q1 = A/(2 - A)`` and
    ``Q2 = 2A^2/(1 + A)`` (Radiology 143:29-36, Table 1 note); the interval is clipped to [0, 1].
    """
    a = float(auc)
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n_members - 1) * (q1 - a * a) + (n_nonmembers - 1) * (q2 - a * a)) / (
        n_members * n_nonmembers
    )
    z = float(special.ndtri(0.5 + confidence / 2))  # the normal quantile (scipy.stats is slow to import)
    half = z * np.sqrt(max(var, 0.0))
    return max(0.0, a - half), min(1.0, a + half)


@dataclass(frozen=True)
class TprAtFpr:
    """TPR of the lowest threshold whose empirical FPR is at most ``target_fpr``, as raw counts."""

    target_fpr: float
    true_positives: int
    members: int
    false_positives: int
    nonmembers: int
    threshold: float
    tied_share: float = 0.0
    """The share of the trials tied at ``threshold`` that the randomised rule flags (0: none tie there)."""
    smallest_measured_fpr: float = 0.0
    """The smallest non-zero FPR of a threshold on these trials (``1/nonmembers`` without ties): below it,
    a TPR is the randomised rule's, not a measured threshold's."""

    @property
    def flagged_members(self) -> Proportion:
        """Members flagged at the threshold, as counts (Clopper-Pearson interval)."""
        return Proportion(self.true_positives, self.members, "clopper-pearson")

    @property
    def tpr(self) -> float:
        """``true_positives / members``."""
        return self.flagged_members.value

    @property
    def fpr(self) -> float:
        """The FPR the threshold achieves on the trials (at most ``target_fpr``)."""
        return Proportion(self.false_positives, self.nonmembers).value

    def member_flags(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Each trial's expected flag under this rule, counted on the members only (0 for a non-member):
        1 above the threshold, :attr:`tied_share` at it when the rule is randomised there. Their sum over
        the members of the trials the rule was set on is the rule's true positives (before rounding), so
        any resampling of these flags measures the same TPR as :attr:`tpr`."""
        s = np.asarray(scores, dtype=float)
        if self.tied_share > 0:
            flags = (s > self.threshold) + self.tied_share * (s == self.threshold)
        else:
            flags = (s >= self.threshold).astype(float)
        return flags * np.asarray(labels, dtype=bool)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Clopper-Pearson interval on the TPR at this threshold."""
        return self.flagged_members.interval(confidence)

    def to_dict(self, confidence: float = 0.95) -> dict:
        lo, hi = self.interval(confidence)
        return {
            "tpr": self.tpr,
            "tpr_ci": [lo, hi],
            "fpr_achieved": self.fpr,
            "true_positives": self.true_positives,
            "members": self.members,
            "false_positives": self.false_positives,
            "nonmembers": self.nonmembers,
            "threshold": self.threshold,
            "tied_share": self.tied_share,
            "smallest_measured_fpr": self.smallest_measured_fpr,
        }


@dataclass(frozen=True)
class AttackSummary:
    """Every reported metric of one attack (raw counts kept; intervals computed on demand)."""

    name: str
    auc: float
    members: int
    nonmembers: int
    tpr_at_fpr: tuple[TprAtFpr, ...]
    eta: EtaEstimate
    balanced_accuracy: float
    base_rates: tuple[float, ...]
    roc_fpr: np.ndarray = field(repr=False)
    roc_tpr: np.ndarray = field(repr=False)
    hist_edges: np.ndarray = field(repr=False)
    hist_members: np.ndarray = field(repr=False)
    hist_nonmembers: np.ndarray = field(repr=False)
    guesses: np.ndarray | None = field(default=None, repr=False)
    """The cross-fitted 0/1 guesses behind :attr:`eta`, one per trial (for cluster-bootstrap intervals)."""

    def auc_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        return auc_interval(self.auc, self.members, self.nonmembers, confidence)

    def precision_at_base_rate(self, confidence: float = 0.95) -> dict:
        """``{"1:10": {"0.01": {"precision", "precision_ci"}, ...}, ...}`` at each FPR point."""
        out: dict = {}
        for pi in self.base_rates:
            row = {}
            for point in self.tpr_at_fpr:
                lo, hi = point.interval(confidence)
                p, plo, phi = (precision_at_base_rate(t, point.fpr, pi).item() for t in (point.tpr, lo, hi))
                row[fpr_label(point.target_fpr)] = {"precision": p, "precision_ci": [plo, phi]}
            out[base_rate_label(pi)] = row
        return out

    def to_dict(self, confidence: float = 0.95) -> dict:
        eta = self.eta.to_dict(confidence)
        return {
            "auc": self.auc,
            "auc_ci": list(self.auc_interval(confidence)),
            "tpr_at_fpr": {fpr_label(p.target_fpr): p.tpr for p in self.tpr_at_fpr},
            "tpr_at_fpr_detail": {fpr_label(p.target_fpr): p.to_dict(confidence) for p in self.tpr_at_fpr},
            "eta": eta["eta"],
            "eta_ci": eta["eta_ci"],
            "eta_detail": eta,
            "balanced_accuracy": self.balanced_accuracy,
            "precision_at_base_rate": self.precision_at_base_rate(confidence),
            "members": self.members,
            "nonmembers": self.nonmembers,
            "roc": {"fpr": self.roc_fpr, "tpr": self.roc_tpr},
            "histogram": {
                "edges": self.hist_edges,
                "members": self.hist_members,
                "nonmembers": self.hist_nonmembers,
            },
        }


def threshold_at_fpr(scores: np.ndarray, labels: np.ndarray, target: float) -> TprAtFpr:
    """The rule at ``target``: every trial above a threshold, and where the next score's trials tie and would
    overshoot the FPR, the share of them that meets it (a randomised rule; expected counts, rounded)."""
    f, t, thr = roc_curve(scores, labels)
    n_pos = int(labels.sum())
    n_neg = int(labels.size - n_pos)
    i = max(int(np.searchsorted(f, target, side="right") - 1), 0)
    i = i + int(np.argmax(t[i:][f[i:] == f[i]]))  # the highest TPR at this FPR
    tp, fp, share = t[i] * n_pos, f[i] * n_neg, 0.0
    if i + 1 < f.size and f[i + 1] > target:
        extra = np.floor(target * n_neg + 1e-9) - round(fp)  # tied non-members the FPR still allows
        share = float(extra / round((f[i + 1] - f[i]) * n_neg))
        tp, fp = tp + share * (t[i + 1] - t[i]) * n_pos, fp + extra
    pos = f[f > 0]
    return TprAtFpr(
        target_fpr=float(target),
        true_positives=int(round(tp)),
        members=n_pos,
        false_positives=int(round(fp)),
        nonmembers=n_neg,
        threshold=float(thr[i + 1] if share > 0 else thr[i]),
        tied_share=share,
        smallest_measured_fpr=float(pos[0]) if pos.size else 1.0,
    )


def _best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """Threshold (guess member iff score >= it) of highest balanced accuracy on these trials.

    The threshold is placed midway between the best cut's score and the next lower score, so a new trial
    that falls in the gap is not decided by which side of the gap the training trials happened to end.
    """
    f, t, thr = roc_curve(scores, labels)
    i = int(np.argmax(t - f))
    if np.isfinite(thr[i]) and i + 1 < thr.size and np.isfinite(thr[i + 1]):
        return float((thr[i] + thr[i + 1]) / 2)
    return float(thr[i])


def crossfit_guesses(
    scores: np.ndarray,
    labels: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    random_state=None,
) -> np.ndarray:
    """Hard member/non-member guesses, each made with a threshold chosen on the *other* half of trials.

    The trials are split in two folds: by ``groups`` (e.g. the target model of each trial) when there
    are at least two groups, so a threshold never sees the target model it is applied to, otherwise
    at random. In each fold the threshold of best balanced accuracy on the other fold is applied
    (guess member iff score >= threshold). Returns an int array of 0/1 guesses.
    """
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(labels).ravel().astype(int)
    rng = check_random_state(random_state)
    if groups is not None and np.unique(groups).size >= 2:
        g = np.asarray(groups).ravel()
        uniq = rng.permutation(np.unique(g))
        fold_of = {u: k % 2 for k, u in enumerate(uniq)}
        fold = np.array([fold_of[v] for v in g])
    else:
        fold = np.zeros(s.size, dtype=int)
        fold[rng.permutation(s.size)[: s.size // 2]] = 1
    guesses = np.zeros(s.size, dtype=int)
    for k in (0, 1):
        train, test = fold != k, fold == k
        if y[train].min() == y[train].max():
            raise MipkitValueError(
                "A cross-fitting fold has only members or only non-members; "
                "use more target models or records."
            )
        guesses[test] = (s[test] >= _best_threshold(s[train], y[train])).astype(int)
    return guesses


def _log_roc(fpr: np.ndarray, tpr: np.ndarray, n_nonmembers: int, n_points: int = 160) -> tuple:
    lo = max(1.0 / max(n_nonmembers, 1), 1e-6)
    grid = np.unique(np.concatenate([[0.0], np.logspace(np.log10(lo), 0, n_points)]))
    return grid, interpolate_roc(fpr, tpr, grid)


def summarize_attack(
    scores: np.ndarray,
    labels: np.ndarray,
    *,
    name: str = "attack",
    groups: np.ndarray | None = None,
    fprs: tuple[float, ...] = DEFAULT_FPRS,
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES,
    bins: int = 40,
    random_state=None,
) -> AttackSummary:
    """Summarise one attack on a membership game's pooled trials.

    Parameters
    ----------
    scores : array of shape (n_trials,)
        Attack scores, higher = more likely a member; must be finite.
    labels : array of shape (n_trials,)
        1 if the trial's record was in the target model's training set, else 0.
    name : str
    groups : array of shape (n_trials,), optional
        Target model of each trial; the eta threshold is cross-fitted across groups (see
        :func:`crossfit_guesses`).
    fprs, base_rates : tuples of floats in (0, 1)
    bins : int
        Histogram bins (between the 0.5% and 99.5% quantiles of the scores).
    random_state : int, Generator or None
        Seeds the fold assignment of the cross-fitting.

    Returns
    -------
    AttackSummary
    """
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(labels).ravel()
    if s.shape != y.shape:
        raise MipkitValueError(f"scores and labels differ in length: {s.size} vs {y.size}.")
    for f in fprs:
        check_interval("fprs", f, 0.0, 1.0, owner="summarize_attack")
    for b in base_rates:
        check_interval("base_rates", b, 0.0, 1.0, owner="summarize_attack")
    f, t, _ = roc_curve(s, y)  # validates scores and labels
    y = y.astype(int)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    guesses = crossfit_guesses(s, y, groups=groups, random_state=random_state)
    tpr_hat = float(np.mean(guesses[y == 1]))
    tnr_hat = float(np.mean(1 - guesses[y == 0]))
    lo, hi = np.quantile(s, [0.005, 0.995])
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    clipped = np.clip(s, lo, hi)
    grid, roc_t = _log_roc(f, t, n_neg)
    return AttackSummary(
        name=name,
        auc=roc_auc(s, y),
        members=n_pos,
        nonmembers=n_neg,
        tpr_at_fpr=tuple(threshold_at_fpr(s, y, a) for a in fprs),
        eta=EtaEstimate(int(np.sum(guesses == y)), int(y.size)),
        balanced_accuracy=(tpr_hat + tnr_hat) / 2,
        base_rates=tuple(base_rates),
        roc_fpr=grid,
        roc_tpr=roc_t,
        hist_edges=edges,
        hist_members=np.histogram(clipped[y == 1], bins=edges)[0],
        hist_nonmembers=np.histogram(clipped[y == 0], bins=edges)[0],
        guesses=guesses,
    )
