"""The ``risk`` verb: a privacy guarantee in, the risks people can act on out.

``risk(Guarantee(...), RiskConfig(...)) -> RiskResult``: the guarantee (epsilon / delta, mu-GDP, zCDP, a
Gaussian or Laplace mechanism, DP-SGD in either form of its schedule, or any mechanism record) becomes its
trade-off curve and every operational risk it bounds (docs/theory.md sections 1 and 3).
"""

from mipkit.workflows.risk.config import RiskConfig
from mipkit.workflows.risk.guarantee import Guarantee
from mipkit.workflows.risk.result import RiskResult
from mipkit.workflows.risk.run import risk

__all__ = ["Guarantee", "RiskConfig", "RiskResult", "risk"]
