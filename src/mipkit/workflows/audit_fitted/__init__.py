"""Audit one fitted model (or pipeline) on its members and non-members."""

from mipkit.workflows.audit_fitted.run import audit_fitted

__all__ = ["audit_fitted"]
