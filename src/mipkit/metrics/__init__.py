"""Metrics of an attack: ROC, TPR at low FPR, base-rate precision, eta estimates and intervals."""

from mipkit.metrics.intervals import Proportion, clopper_pearson, wilson
from mipkit.metrics.roc import (
    DEFAULT_BASE_RATES,
    DEFAULT_FPRS,
    EtaEstimate,
    best_threshold_accuracy,
    eta_from_guesses,
    precision_at_base_rate,
    precision_recall_at_base_rate,
    roc_auc,
    roc_curve,
    tpr_at_fpr,
)

__all__ = [
    "DEFAULT_BASE_RATES",
    "DEFAULT_FPRS",
    "EtaEstimate",
    "Proportion",
    "best_threshold_accuracy",
    "clopper_pearson",
    "eta_from_guesses",
    "precision_at_base_rate",
    "precision_recall_at_base_rate",
    "roc_auc",
    "roc_curve",
    "tpr_at_fpr",
    "wilson",
]
