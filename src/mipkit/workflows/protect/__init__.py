"""The protect verb: a model released with MIP noise on its parameters (:class:`~mipkit.mechanisms.MIPNoise`).

``protect(data, config) -> ProtectResult``: ``data`` is a :class:`ProtectData` (the rows, encoded from a
public domain) or an ``(X, y)`` pair; :class:`ProtectConfig` holds the model and every setting of the noise.
"""

from mipkit.workflows.protect.config import NoiseSettings, ProtectConfig
from mipkit.workflows.protect.data import ProtectData
from mipkit.workflows.protect.result import ProtectResult
from mipkit.workflows.protect.run import protect

__all__ = ["NoiseSettings", "ProtectConfig", "ProtectData", "ProtectResult", "protect"]
