"""The audit_noise verb: the MIP game with the Bayes-optimal attacker against MIP noise on a model.

``audit_noise(data, config) -> AuditNoiseResult``: ``data`` is the pool ``D`` (a
:class:`~mipkit.workflows.protect.ProtectData` or an ``(X, y)`` pair), :class:`AuditNoiseConfig` the model,
its noise and the size of the game.
"""

from mipkit.workflows.audit_noise.config import AuditNoiseConfig
from mipkit.workflows.audit_noise.result import AuditNoiseResult
from mipkit.workflows.audit_noise.run import audit_noise
from mipkit.workflows.protect.data import ProtectData

__all__ = ["AuditNoiseConfig", "AuditNoiseResult", "ProtectData", "audit_noise"]
