"""The audit_one_run verb: an epsilon lower bound for a training procedure from one training run with
canaries (Steinke, Nasr and Jagielski 2023).

``audit_one_run(data, config)`` trains one model on the records ``data`` (a :class:`LabelledTable` or arrays)
with canaries each included by a coin flip, guesses from the model which went in, and returns an
:class:`AuditOneRunResult`: the lower bound beside the trainer's certified epsilon (docs/audit.md).
"""

from mipkit.workflows._records import LabelledTable
from mipkit.workflows.audit_one_run.config import AuditOneRunConfig
from mipkit.workflows.audit_one_run.result import AuditOneRunResult
from mipkit.workflows.audit_one_run.run import audit_one_run

__all__ = ["AuditOneRunConfig", "AuditOneRunResult", "LabelledTable", "audit_one_run"]
