"""The audit_synthetic verb: audit released synthetic data against its training records.

``audit_synthetic(SyntheticRelease(original, synthetic, holdout=...), AuditSyntheticConfig(...))`` measures
how much the synthetic table reveals of the records its generator was trained on (nearest-neighbour
adversarial accuracy, the distance-to-closest-record attack, copy counts, attribute inference and, on
request, singling out and linkability) and returns an :class:`AuditSyntheticResult`: its ``summary()`` is
the DPIA paragraph, ``write(run_dir)`` the run folder (docs/audit-synthetic.md).
"""

from mipkit.workflows.audit_synthetic.config import AuditSyntheticConfig
from mipkit.workflows.audit_synthetic.release import SyntheticRelease
from mipkit.workflows.audit_synthetic.result import AuditSyntheticResult
from mipkit.workflows.audit_synthetic.run import audit_synthetic

__all__ = ["AuditSyntheticConfig", "AuditSyntheticResult", "SyntheticRelease", "audit_synthetic"]
