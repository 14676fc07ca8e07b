"""Find the least noise whose certified risk meets a target: :func:`calibrate`.

The family (:class:`~mipkit.workflows.calibrate.family.NoiseFamily`, or any family of
:mod:`mipkit.accounting.families`) and the target of the config go to
:func:`mipkit.accounting.calibration.calibrate_noise` (docs/theory.md section 3): closed forms for Gaussian
and Laplace noise, the two-sided PLD search for DP-SGD, proved within the config's tolerance of the least
safe noise.
"""

from __future__ import annotations

from typing import Any

from mipkit._progress import Progress, report
from mipkit.workflows.calibrate.config import CalibrateConfig
from mipkit.workflows.calibrate.family import NoiseFamily
from mipkit.workflows.calibrate.result import CalibrateResult

__all__ = ["calibrate"]


def calibrate(
    data: NoiseFamily | Any,
    config: CalibrateConfig | None = None,
    *,
    progress: Progress | None = None,
) -> CalibrateResult:
    """The smallest noise of a mechanism family whose certified risk meets the config's target.

    Parameters
    ----------
    data : NoiseFamily, MechanismFamily or callable
        The family: ``NoiseFamily("dpsgd", sample_rate=0.01, steps=1000)``, ``NoiseFamily("gaussian",
        sensitivity=2.0)``, ..., or any ``noise -> Mechanism`` family (:func:`~mipkit.accounting.
        families.parameter_family` calibrates any parameter of any record).
    config : CalibrateConfig, optional
        The target and the tolerance; default ``CalibrateConfig()`` (MIP eta at most 0.05).
    progress : Progress, optional
        ``progress("noise calibration", done, 1)``: one unit, reported when it starts and when it ends.

    Returns
    -------
    CalibrateResult

    Examples
    --------
    >>> from mipkit.workflows.calibrate import CalibrateConfig, NoiseFamily, calibrate
    >>> result = calibrate(NoiseFamily("gaussian"), CalibrateConfig(target="advantage", value=0.1))
    >>> round(result.calibration.noise, 4)
    3.9789
    """
    from mipkit.accounting.calibration import calibrate_noise

    cfg = CalibrateConfig() if config is None else config
    if isinstance(data, NoiseFamily):
        family, label = data.family(), data.mechanism
    else:
        family, label = data, getattr(data, "label", "this mechanism family")
    report(progress, "noise calibration", 0, 1)
    calibration = calibrate_noise(family, cfg.risk_target(), tolerance=cfg.tolerance)
    report(progress, "noise calibration", 1, 1)
    return CalibrateResult(calibration=calibration, family=label, config=cfg)
