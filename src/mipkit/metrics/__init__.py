"""Metrics of an attack: ROC, TPR at low FPR, base-rate precision and the per-attack summary of an audit.

Intervals and estimates (``Proportion``, ``clopper_pearson``, ``wilson``, ``EtaEstimate``,
``eta_from_guesses``) live one layer down, in :mod:`mipkit.stats`.
"""

from mipkit.metrics.attack_summary import AttackSummary, TprAtFpr, crossfit_guesses, summarize_attack
from mipkit.metrics.roc import (
    DEFAULT_BASE_RATES,
    DEFAULT_FPRS,
    best_threshold_accuracy,
    precision_at_base_rate,
    precision_recall_at_base_rate,
    roc_auc,
    roc_curve,
    tpr_at_fpr,
)

__all__ = [
    "DEFAULT_BASE_RATES",
    "DEFAULT_FPRS",
    "AttackSummary",
    "TprAtFpr",
    "best_threshold_accuracy",
    "crossfit_guesses",
    "precision_at_base_rate",
    "precision_recall_at_base_rate",
    "roc_auc",
    "roc_curve",
    "summarize_attack",
    "tpr_at_fpr",
]
