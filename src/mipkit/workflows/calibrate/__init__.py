"""The ``calibrate`` verb: a mechanism family and a risk target in, the least noise that meets it out.

``calibrate(NoiseFamily(...), CalibrateConfig(...)) -> CalibrateResult``: Gaussian or Laplace noise on a
query, or DP-SGD's noise multiplier for its schedule, calibrated to MIP eta, advantage, TPR at FPR,
success over a baseline, precision or epsilon (docs/theory.md section 3).
"""

from mipkit.workflows.calibrate.config import CalibrateConfig
from mipkit.workflows.calibrate.family import NoiseFamily
from mipkit.workflows.calibrate.result import CalibrateResult
from mipkit.workflows.calibrate.run import calibrate

__all__ = ["CalibrateConfig", "CalibrateResult", "NoiseFamily", "calibrate"]
