"""The audit verb: how much a model trained by a given procedure reveals about who was in its training data.

``audit(data, config)`` trains ``config.n_models`` models on random halves of the records ``data`` (a
:class:`LabelledTable` or arrays), attacks each of the first ones with the others as the attacker's reference
models, and returns an :class:`AuditResult` (docs/audit.md).
"""

from mipkit.workflows._records import LabelledTable
from mipkit.workflows.audit.config import AuditConfig
from mipkit.workflows.audit.result import AuditResult
from mipkit.workflows.audit.run import audit

__all__ = ["AuditConfig", "AuditResult", "LabelledTable", "audit"]
