"""Certify: privacy guarantees as trade-off curves, the operational risks they bound, and noise calibrated
to a risk target.

A mechanism is a record (:mod:`mipkit.accounting.mechanisms`: ``PureDP``, ``ApproxDP``,
``GaussianMechanism``, ``LaplaceMechanism``, ``GDP``, ``SubsampledGaussian`` and
``HeterogeneousSubsampledGaussian`` for DP-SGD, ``RDP``, ``ZCDP``, ``Composed``), each stating its
neighbouring relation; :func:`tradeoff_curve` turns any record into a :class:`TradeoffCurve` (two-sided
for PLDs); :mod:`mipkit.accounting.risk` and :func:`risk_profile` turn any curve into MIP eta (on the
replace-one curve), attack advantage, TPR at low FPR, success over a baseline and precision at a base rate;
:func:`calibrate_noise` finds the least noise (or any parameter) of a family of records that meets a risk
target (:mod:`mipkit.accounting.targets`); :class:`DPSGDAccountant` accounts a training step by step.
Formulas: docs/theory.md sections 1, 3 and 4.

>>> from mipkit.accounting import PureDP, eta_from_curve, tradeoff_curve
>>> round(eta_from_curve(tradeoff_curve(PureDP(epsilon=1.0, neighbours="replace_one"))), 4)
0.2311
>>> round(eta_from_curve(tradeoff_curve(PureDP(epsilon=1.0))), 4)  # add/remove: group privacy
0.3161
"""

from __future__ import annotations

from mipkit._lazy import lazy_exports
from mipkit.accounting import mechanisms as _records
from mipkit.accounting.mechanisms import *  # noqa: F403 - the records are light: loaded with the package

# Everything but the records is loaded on first use: the curves pull in scipy, the PLDs dp_accounting,
# the plots matplotlib, none of which `import mipkit.accounting` (or a command line that only builds a
# record) should pay for. Module -> the names of its __all__ (tests/accounting/test_mechanisms.py keeps
# the two in step).
_MODULES: dict[str, str] = {
    "tradeoff": "TradeoffCurve",
    "closed_forms": "ApproxDPCurve GaussianCurve LaplaceCurve",
    "curves": "has_closed_form tradeoff_curve",
    "relations": "GroupPrivacyCurve add_remove_record replace_one_record",
    "rdp": "RDPCurve rdp_delta",
    "risk": "DEFAULT_BASELINES DEFAULT_RECALLS advantage_over_baseline binary_attribute_error_bound "
    "certified_precision eta_from_curve eta_from_dp mip_tpr_bound replace_one_curve singling_out_bound "
    "success_bound tpr_at_fpr_bound",
    "profile": "risk_profile",
    "pld": "DEFAULT_DPSGD_DISCRETIZATION DEFAULT_EPSILON_RTOL DEFAULT_GAUSSIAN_DISCRETIZATION "
    "DEFAULT_TOLERANCE PLDCurve default_discretization pld_curve privacy_loss_distribution",
    "heterogeneous": "group_steps heterogeneous_curve heterogeneous_pld",
    "targets": "TARGETS AdvantageTarget EpsilonTarget EtaTarget PrecisionTarget RiskTarget SuccessTarget "
    "TprAtFprTarget target_from_dict",
    "calibration": "Calibration MechanismFamily calibrate_noise dpsgd_family gaussian_family laplace_family "
    "parameter_family",
    "accountant": "DPSGDAccountant",
    "search": "MonotoneRisk bracketed_search raise_until_safe",
    "plots": "plot_tradeoff skew_label",
    "wording": "describe_mechanism",
}
_LAZY, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())

__all__ = [*_records.__all__, *_LAZY]
