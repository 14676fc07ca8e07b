"""Audit one fitted model (or pipeline) on its members and non-members:
``audit_fitted(FittedRelease(model, members, non_members), AuditFittedConfig(target=...))``."""

from mipkit.workflows.audit_fitted.config import DEFAULT_N_REFERENCE, AuditFittedConfig
from mipkit.workflows.audit_fitted.data import FittedRelease
from mipkit.workflows.audit_fitted.result import AuditFittedResult
from mipkit.workflows.audit_fitted.run import audit_fitted

__all__ = ["DEFAULT_N_REFERENCE", "AuditFittedConfig", "AuditFittedResult", "FittedRelease", "audit_fitted"]
