"""Turn a privacy guarantee into the risks people can act on: :func:`risk`.

The guarantee (:class:`~mipkit.workflows.risk.guarantee.Guarantee`) becomes a mechanism record
(:mod:`mipkit.accounting.mechanisms`), :func:`~mipkit.accounting.tradeoff_curve` its trade-off curve
(two-sided to the config's tolerance for DP-SGD), and :func:`~mipkit.accounting.profile.risk_profile`
every operational risk of it: MIP eta, advantage, TPR at low FPR, success over a baseline, precision at a
base rate, and the epsilon at the guarantee's delta (docs/theory.md sections 1 and 3).
"""

from __future__ import annotations

from typing import Any

from mipkit._progress import Progress, report
from mipkit._validation import MipkitValueError
from mipkit.workflows.risk.config import RiskConfig
from mipkit.workflows.risk.guarantee import Guarantee
from mipkit.workflows.risk.result import RiskResult

__all__ = ["risk"]


def _guarantee(data: Any) -> Guarantee:
    """``data`` as a :class:`Guarantee` (a mechanism record becomes ``Guarantee(record=...)``)."""
    from mipkit.accounting.mechanisms import Mechanism

    if isinstance(data, Guarantee):
        return data
    if isinstance(data, Mechanism):
        return Guarantee(record=data)
    raise MipkitValueError(
        "The 'data' parameter of risk must be a Guarantee (e.g. Guarantee(epsilon=1.0)) or a mechanism "
        f"record (e.g. GDP(1.0)). Got {type(data).__name__} instead."
    )


def risk(
    data: Guarantee | Any,
    config: RiskConfig | None = None,
    *,
    progress: Progress | None = None,
) -> RiskResult:
    """The certified membership, re-identification and attribute-inference risks of a guarantee.

    Parameters
    ----------
    data : Guarantee or Mechanism
        The guarantee: ``Guarantee(epsilon=1.0, delta=1e-5)``, ``Guarantee(noise_multiplier=1.1,
        batch_size=64, epochs=30, n_records=8000)``, ... or a mechanism record such as ``GDP(1.0)``.
    config : RiskConfig, optional
        What to report (FPRs, baselines, base rates, recalls) and the PLD tolerance; default
        ``RiskConfig()``.
    progress : Progress, optional
        ``progress("risk accounting", done, 1)``: one unit, reported when it starts and when it ends.

    Returns
    -------
    RiskResult

    Examples
    --------
    >>> from mipkit.workflows.risk import Guarantee, risk
    >>> round(risk(Guarantee(epsilon=1.0, neighbours="replace_one")).profile["eta"], 4)
    0.2311
    """
    from mipkit.accounting.curves import tradeoff_curve
    from mipkit.accounting.profile import risk_profile

    guarantee = _guarantee(data)
    cfg = RiskConfig() if config is None else config
    mechanism = guarantee.mechanism()
    report(progress, "risk accounting", 0, 1)
    curve = tradeoff_curve(mechanism, tolerance=cfg.tolerance)
    report(progress, "risk accounting", 1, 1)
    profile = risk_profile(
        curve,
        fprs=cfg.fprs,
        baselines=cfg.baselines,
        base_rates=cfg.base_rates,
        recalls=cfg.recalls,
        delta=guarantee.report_delta,
    )
    return RiskResult(guarantee=guarantee, mechanism=mechanism, profile=profile, config=cfg, curve=curve)
