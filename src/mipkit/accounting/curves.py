"""From a mechanism record to its trade-off curve: :func:`tradeoff_curve`, the one way from a record to the
arithmetic.

The closed forms (:mod:`mipkit.accounting.closed_forms`: (epsilon, delta)-DP, Gaussian, Laplace) where they
exist, the RDP conversion (:mod:`mipkit.accounting.rdp`) for RDP and zCDP, a privacy-loss distribution
(:mod:`mipkit.accounting.pld`) for DP-SGD and compositions; another neighbouring relation than the record
states through :mod:`mipkit.accounting.relations`. docs/theory.md section 3.
"""

from __future__ import annotations

from mipkit._validation import MipkitValueError
from mipkit.accounting.closed_forms import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.mechanisms import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    Composed,
    GaussianMechanism,
    HeterogeneousSubsampledGaussian,
    LaplaceMechanism,
    Mechanism,
    PureDP,
    SubsampledGaussian,
)
from mipkit.accounting.relations import (
    GroupPrivacyCurve,
    add_remove_record,
    check_neighbours,
    replace_one_record,
)
from mipkit.accounting.tradeoff import TradeoffCurve

__all__ = ["has_closed_form", "tradeoff_curve"]


# ---------------------------------------------------------------------------------------------------
# From a mechanism record to its curve
# ---------------------------------------------------------------------------------------------------
_CLOSED_FORMS = (PureDP, ApproxDP, GaussianMechanism, LaplaceMechanism, GDP, RDP, ZCDP)
_PLD_RECORDS = (SubsampledGaussian, HeterogeneousSubsampledGaussian, Composed)


def has_closed_form(mechanism: Mechanism) -> bool:
    """Whether :func:`tradeoff_curve` gives ``mechanism`` a curve without a PLD grid (exact arithmetic of its
    guarantee: closed forms, and the RDP conversion); else a two-sided PLD curve."""
    if isinstance(mechanism, Composed):
        return all(isinstance(m, (RDP, ZCDP)) for m in mechanism.mechanisms)
    return isinstance(mechanism, _CLOSED_FORMS)


def _native(mechanism: Mechanism, vdi: float | None, tolerance: float | None) -> TradeoffCurve:
    """The curve of a record for the relation it states."""
    m = mechanism
    if isinstance(m, (PureDP, ApproxDP)):
        delta = m.delta if isinstance(m, ApproxDP) else 0.0
        return ApproxDPCurve(m.epsilon, delta, mechanism=m)
    if isinstance(m, GaussianMechanism):
        return GaussianCurve(m.sensitivity / m.sigma, mechanism=m)
    if isinstance(m, GDP):
        return GaussianCurve(m.mu, mechanism=m)
    if isinstance(m, LaplaceMechanism):
        return LaplaceCurve(m.scale, m.sensitivity, mechanism=m)
    if isinstance(m, (RDP, ZCDP)) or (isinstance(m, Composed) and has_closed_form(m)):
        from mipkit.accounting.rdp import RDPCurve

        return RDPCurve(m)
    if isinstance(m, _PLD_RECORDS):
        from mipkit.accounting.pld import pld_curve  # heavy (dp_accounting): only when needed

        return pld_curve(m, value_discretization_interval=vdi, tolerance=tolerance)
    raise MipkitValueError(
        "The 'mechanism' parameter of tradeoff_curve must be a mechanism record (PureDP, ApproxDP, "
        "GaussianMechanism, LaplaceMechanism, GDP, SubsampledGaussian, HeterogeneousSubsampledGaussian, "
        f"RDP, ZCDP, Composed). Got {type(m).__name__} instead."
    )


def tradeoff_curve(
    mechanism: Mechanism,
    *,
    value_discretization_interval: float | None = None,
    neighbours: str | None = None,
    tolerance: float | None = None,
) -> TradeoffCurve:
    """The trade-off curve of a mechanism record: the one way from a record to the arithmetic.

    * ``PureDP(eps)``, ``ApproxDP(eps, delta)``: :class:`ApproxDPCurve`, the exact worst case (Kairouz,
      Oh & Viswanath 2015);
    * ``GaussianMechanism(sigma, L)``: :class:`GaussianCurve` with ``mu = L / sigma`` (Dong, Roth & Su
      2022, Thm 2.7); ``GDP(mu)``: :class:`GaussianCurve`;
    * ``LaplaceMechanism(b, L)``: the exact :class:`LaplaceCurve`;
    * ``RDP``, ``ZCDP``: :class:`~mipkit.accounting.rdp.RDPCurve` (the RDP-to-DP conversion at every
      epsilon);
    * ``SubsampledGaussian``, ``HeterogeneousSubsampledGaussian`` (DP-SGD), ``Composed``:
      :class:`~mipkit.accounting.pld.PLDCurve`, two-sided: the curve of a pessimistic PLD (never above the
      exact curve) whose :meth:`~mipkit.accounting.pld.PLDCurve.lower_curve` is the optimistic one, the grid
      refined until they agree to ``tolerance``.

    ``neighbours`` asks for the curve of another relation than the record states: ``"replace_one"`` from an
    add/remove record by :mod:`mipkit.accounting.relations` (``2 mu``, sensitivity ``2L``, DP-SGD accounted
    for replace-one, or group privacy ``1 - g o g``); ``"add_remove"`` from a replace-one DP-SGD record.
    Every curve carries its relation (``curve.neighbours``) and the record (``curve.mechanism``;
    ``curve.describe()``). Formulas: docs/theory.md section 3.

    Parameters
    ----------
    mechanism : Mechanism
        A record of :mod:`mipkit.accounting.mechanisms`.
    value_discretization_interval : float, optional
        A fixed PLD grid for the records without a closed form (ignored for the others); default: the grid
        is chosen for ``tolerance``.
    neighbours : {"add_remove", "replace_one"}, optional
        The relation of the curve; default the record's.
    tolerance : float, optional
        Largest gap between the upper and lower value of any risk of a PLD curve; default ``1e-4``.

    Examples
    --------
    >>> from mipkit.accounting import GaussianMechanism, tradeoff_curve
    >>> tradeoff_curve(GaussianMechanism(sigma=2.0)).mu
    0.5
    >>> tradeoff_curve(GaussianMechanism(sigma=2.0), neighbours="replace_one").mu
    1.0
    """
    owner = "tradeoff_curve"
    if not isinstance(mechanism, Mechanism):
        raise MipkitValueError(
            "The 'mechanism' parameter of tradeoff_curve must be a mechanism record (PureDP, ApproxDP, "
            "GaussianMechanism, LaplaceMechanism, GDP, SubsampledGaussian, Composed, ...). "
            f"Got {type(mechanism).__name__} instead."
        )
    rel = mechanism.neighbours if neighbours is None else check_neighbours(neighbours, owner)
    m = mechanism
    mixed = isinstance(m, Composed) and any(p.neighbours != rel for p in m.mechanisms)
    if rel == "replace_one" and (m.neighbours != rel or mixed):
        converted = replace_one_record(m)
        if converted is None:
            return GroupPrivacyCurve(_native(m, value_discretization_interval, tolerance))
        m = converted
    elif rel == "add_remove" and (m.neighbours != rel or mixed):
        m = add_remove_record(m)
    return _native(m, value_discretization_interval, tolerance)
