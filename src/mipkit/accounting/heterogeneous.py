"""Heterogeneous Poisson-subsampled Gaussian steps: DP-SGD whose steps do not all share one noise multiplier.

A run of DP-WGAN-GP (Pedersen, thesis ch. 3; docs/theory.md section 8) releases, at every critic step, a
Poisson-subsampled sum of per-record contributions plus Gaussian noise. Each step has its own
noise-to-sensitivity ratio ``z_t`` (the noise standard deviation over that step's l2 sensitivity), so the
run is not one ``SubsampledGaussian(z, q, T)`` but a sequence of groups ``(z, q, count)``: the record
:class:`~mipkit.accounting.mechanisms.HeterogeneousSubsampledGaussian` (defined with the other records and
re-exported here). Its privacy-loss distribution is the convolution of the groups' PLDs, each one step
self-composed ``count`` times (Koskela et al. 2020; Doroshenko et al. 2022; docs/theory.md section 3);
:func:`mipkit.accounting.tradeoff_curve` gives its two-sided curve like any record's. The ratios must be
fixed before the data are touched (a schedule), not read off the run: a fixed-parameter composition says
nothing about ratios chosen from earlier noisy outputs.

The record states its neighbouring relation:

* ``"add_remove"``: adding or removing one record adds or removes its contribution (norm at most the
  sensitivity), with probability ``q``. ``dp_accounting``'s ``ADD_OR_REMOVE_ONE``.
* ``"replace_one"``: one record replaced by another; each contribution lies within the sensitivity of a
  common centre (half the range for interval bounds), so the two differ by at most twice it.
  ``dp_accounting``'s ``REPLACE_ONE``: the mixtures ``q N(-s) + (1 - q) N(0)`` against
  ``q N(s) + (1 - q) N(0)``.

>>> from mipkit.accounting.heterogeneous import HeterogeneousSubsampledGaussian, group_steps
>>> rec = HeterogeneousSubsampledGaussian(groups=group_steps([2.0, 2.0, 3.0], sample_rate=0.1))
>>> rec.groups
((2.0, 0.1, 2), (3.0, 0.1, 1))
>>> rec.steps
3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mipkit._validation import MipkitValueError, check_choice, check_positive, check_sample_rate
from mipkit.accounting.mechanisms import NEIGHBOURS, HeterogeneousSubsampledGaussian

# NEIGHBOURS and HeterogeneousSubsampledGaussian are re-exported from mipkit.accounting.mechanisms
__all__ = ["group_steps", "heterogeneous_curve", "heterogeneous_pld"]

#: Default PLD grid of :func:`heterogeneous_pld` (the DP-SGD search grid of :mod:`mipkit.accounting.pld`).
DEFAULT_DISCRETIZATION = 1e-3


def group_steps(
    noise_multipliers: Sequence[float], *, sample_rate: float
) -> tuple[tuple[float, float, int], ...]:
    """Run-length groups ``(z, q, count)`` of consecutive steps with equal noise multipliers (exactly equal).

    Parameters
    ----------
    noise_multipliers : sequence of float
        One ratio per step, in the order they ran.
    sample_rate : float
        The Poisson rate of every step.
    """
    q = check_sample_rate(sample_rate, owner="group_steps")
    out: list[list] = []
    for z in noise_multipliers:
        zf = float(z)
        if out and out[-1][0] == zf:
            out[-1][2] += 1
        else:
            out.append([zf, q, 1])
    return tuple((z, r, n) for z, r, n in out)


def _record(record: Any, neighbours: str | None, owner: str) -> HeterogeneousSubsampledGaussian:
    if not isinstance(record, HeterogeneousSubsampledGaussian):
        raise MipkitValueError(
            f"The 'record' parameter of {owner} must be a HeterogeneousSubsampledGaussian. "
            f"Got {type(record).__name__} instead."
        )
    if neighbours is None:
        return record
    return replace(record, neighbours=check_choice("neighbours", neighbours, NEIGHBOURS, owner=owner))


def heterogeneous_pld(
    record: HeterogeneousSubsampledGaussian,
    *,
    neighbours: str | None = None,
    value_discretization_interval: float = DEFAULT_DISCRETIZATION,
) -> Any:
    """Pessimistic ``dp_accounting`` PLD of the record: the convolution of its groups' PLDs.

    Parameters
    ----------
    record : HeterogeneousSubsampledGaussian
    neighbours : {"add_remove", "replace_one"}, optional
        Relation to account for (default: the record's). The ratios are in units of the sensitivity of
        the record's relation; the centred release of :mod:`mipkit.synthesizers` has the same ratio under
        both relations (docs/synthesize.md).
    value_discretization_interval : float
        PLD grid.
    """
    from mipkit.accounting.pld import privacy_loss_distribution

    rec = _record(record, neighbours, "heterogeneous_pld")
    d = check_positive(
        "value_discretization_interval", value_discretization_interval, owner="heterogeneous_pld"
    )
    return privacy_loss_distribution(rec, value_discretization_interval=d)


def heterogeneous_curve(
    record: HeterogeneousSubsampledGaussian, *, neighbours: str | None = None, **options: Any
) -> Any:
    """The two-sided :class:`~mipkit.accounting.pld.PLDCurve` of the record for ``neighbours``:
    :func:`mipkit.accounting.tradeoff_curve` with ``options`` (``value_discretization_interval``, default
    ``DEFAULT_DISCRETIZATION``; ``None`` with ``tolerance`` refines the grid until its two sides agree)."""
    from mipkit.accounting.curves import tradeoff_curve

    options.setdefault("value_discretization_interval", DEFAULT_DISCRETIZATION)
    return tradeoff_curve(_record(record, neighbours, "heterogeneous_curve"), **options)
