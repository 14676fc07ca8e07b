"""The outcome of an audit of one fitted model: :class:`AuditFittedResult`.

It is an :class:`~mipkit.workflows.audit_scores.result.AuditScoresResult` (the same measurement of one model's
outputs, ``summary`` / ``to_dict`` / ``to_frame`` / ``write``) whose ``config`` is the
:class:`~mipkit.workflows.audit_fitted.config.AuditFittedConfig` and whose ``run_key`` names the reference
fits of the run folder's ledger. Its run folder holds ``results.json`` of kind ``"audit-fitted"``,
``config.json``, ``scores.parquet``, ``report.html`` (:mod:`mipkit.report.fitted_report`) and the reference
fits' ``ledger.sqlite``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mipkit.workflows.audit_scores.result import AuditScoresResult

__all__ = ["AuditFittedResult"]


@dataclass(frozen=True, eq=False)
class AuditFittedResult(AuditScoresResult):
    """What :func:`mipkit.audit_fitted` measured on the released model.

    The attributes are those of :class:`~mipkit.workflows.audit_scores.result.AuditScoresResult`; ``setup``
    (written as ``"design"``) also lists the columns the model reads (``columns_used``) and those it ignores
    (``columns_ignored``), and how the reference models were trained.
    """
