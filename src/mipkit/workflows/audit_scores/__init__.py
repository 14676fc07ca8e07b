"""Audit one model from its per-record outputs: ``audit_scores(data, config) -> AuditScoresResult``.

``data`` is the predictions: a table with one row per record (the vendor's columns, named by
:class:`AuditScoresConfig`) or :class:`Predictions` (arrays, with :class:`ModelOutputs` for the audited model
and any reference models). ``config`` holds the measurement and the column mapping.
"""

from mipkit.workflows.audit_scores.config import AuditScoresConfig
from mipkit.workflows.audit_scores.file import read_predictions
from mipkit.workflows.audit_scores.outputs import ModelOutputs, Predictions
from mipkit.workflows.audit_scores.result import AuditScoresResult
from mipkit.workflows.audit_scores.run import audit_scores

__all__ = [
    "AuditScoresConfig",
    "AuditScoresResult",
    "ModelOutputs",
    "Predictions",
    "audit_scores",
    "read_predictions",
]
