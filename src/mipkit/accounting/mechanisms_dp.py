"""Mechanism records of DP-SGD with varying noise and of Renyi / zero-concentrated DP guarantees.

Companions of :mod:`mipkit.accounting.mechanisms` (which re-exports them): the record of a DP-SGD run whose
steps do not share one noise multiplier (:class:`HeterogeneousSubsampledGaussian`, what
:class:`mipkit.accounting.DPSGDAccountant` records), and the guarantees Opacus's and TF Privacy's RDP
accountants report (:class:`RDP`, :class:`ZCDP`). docs/theory.md section 3.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mipkit._validation import (
    MipkitValueError,
    check_interval,
    check_positive,
    check_positive_int,
    check_sample_rate,
)
from mipkit.accounting._record_base import Mechanism, _relation, _set, record_parts

__all__ = ["RDP", "ZCDP", "HeterogeneousSubsampledGaussian", "dpsgd_schedule"]


def dpsgd_schedule(
    batch_size: int, epochs: int, n_records: int, *, owner: str | None = None, records: str = "records"
) -> tuple[float, int]:
    """DP-SGD's sampling rate and number of steps from the terms its users know (Opacus's).

    ``q = batch_size / n_records`` (Poisson sampling, the expected batch size ``batch_size``) and
    ``T = epochs * ceil(n_records / batch_size)``: what :class:`mipkit.trainers.DPSGDClassifier` runs and
    accounts for, and what Opacus's ``make_private_with_epsilon`` assumes.

    Parameters
    ----------
    batch_size, epochs, n_records : int
        Expected batch size (at most ``n_records``), passes over the data and number of training records,
        each ``>= 1``.
    owner : str, optional
        Who asks, for the messages.
    records : str
        What ``n_records`` counts, for the messages (``"training rows"``).

    Returns
    -------
    (float, int)
        ``(sample_rate, steps)``.

    >>> dpsgd_schedule(64, 30, 8000)
    (0.008, 3750)
    """
    bs = check_positive_int("batch_size", batch_size, owner=owner)
    epochs = check_positive_int("epochs", epochs, owner=owner)
    size = check_positive_int("n_records", n_records, owner=owner)
    if bs > size:
        who = "" if owner is None else f" of {owner}"
        raise MipkitValueError(
            f"The 'batch_size' parameter{who} must be at most the number of {records} ({size}) so that the "
            f"sampling rate batch_size / {records} is at most 1. Got {bs} instead."
        )
    return bs / size, epochs * math.ceil(size / bs)


@dataclass(frozen=True)
class HeterogeneousSubsampledGaussian(Mechanism, name="heterogeneous_subsampled_gaussian"):
    """Poisson-subsampled Gaussian steps in groups ``(noise_multiplier, sample_rate, count)``.

    DP-SGD whose steps do not all share one noise-to-sensitivity ratio (e.g. the critic steps of
    DP-WGAN-GP, docs/theory.md section 8; or an accountant stepped during training). The ratios must be
    fixed before the data are touched. Accounted like :class:`SubsampledGaussian`, group by group.

    Parameters
    ----------
    groups : sequence of (float, float, int)
        Each group: noise standard deviation over the step's l2 sensitivity (``> 0``), Poisson sampling
        rate in ``(0, 1]``, number of consecutive steps (``>= 1``). Stored as a tuple of tuples.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    groups: tuple[tuple[float, float, int], ...]
    neighbours: str = "add_remove"

    def __post_init__(self) -> None:
        owner = "HeterogeneousSubsampledGaussian"
        items = self.groups
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise MipkitValueError(
                f"The 'groups' parameter of {owner} must be a sequence of (noise_multiplier, sample_rate, "
                f"count) triples. Got {type(items).__name__} instead."
            )
        parts = []
        for g in items:
            if isinstance(g, (str, bytes)) or not isinstance(g, Sequence) or len(g) != 3:
                raise MipkitValueError(
                    f"Each group of {owner} must be a (noise_multiplier, sample_rate, count) triple. "
                    f"Got {g!r} instead."
                )
            z = check_positive("noise_multiplier", g[0], owner=owner)
            q = check_sample_rate(g[1], owner=owner)
            n = check_positive_int("count", g[2], owner=owner)
            parts.append((float(z), float(q), int(n)))
        if not parts:
            raise MipkitValueError(
                f"The 'groups' parameter of {owner} must hold at least one group. Got none."
            )
        _set(self, "groups", tuple(parts))
        _relation(self)

    @property
    def steps(self) -> int:
        """Total number of steps."""
        return sum(n for _, _, n in self.groups)

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "groups": [[z, q, count], ...], "neighbours": ...}`` (JSON-ready)."""
        return {"name": self.name, "groups": [list(g) for g in self.groups], "neighbours": self.neighbours}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HeterogeneousSubsampledGaussian:
        """The record :meth:`to_dict` wrote (same as :func:`mechanism_from_dict`)."""
        _, params = record_parts(d, {cls.name: cls}, "mechanism", f"{cls.__name__}.from_dict")
        groups = params.get("groups")
        if isinstance(groups, Iterable):
            params["groups"] = tuple(tuple(g) if isinstance(g, Iterable) else g for g in groups)
        return cls(**params)


@dataclass(frozen=True)
class RDP(Mechanism, name="rdp"):
    """A Renyi-DP guarantee: ``D_a(M(D) || M(D')) <= rdp_values[i]`` at each order ``a = orders[i]``.

    What Opacus's and TF Privacy's RDP accountants report. Its trade-off curve is the envelope of the
    ``(epsilon, delta(epsilon))``-DP curves of the RDP-to-DP conversion at every epsilon (docs/theory.md
    section 3).

    Parameters
    ----------
    orders : sequence of float
        Renyi orders, each ``> 1`` (finite), without repeats.
    rdp_values : sequence of float
        The divergence bound at each order, ``>= 0``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    orders: tuple[float, ...]
    rdp_values: tuple[float, ...]
    neighbours: str = "add_remove"

    def __post_init__(self) -> None:
        owner = "RDP"
        orders = _float_tuple("orders", self.orders, owner)
        values = _float_tuple("rdp_values", self.rdp_values, owner)
        if len(orders) != len(values) or not orders:
            raise MipkitValueError(
                f"The 'orders' and 'rdp_values' parameters of {owner} must be non-empty and of equal length. "
                f"Got {len(orders)} and {len(values)} instead."
            )
        for a in orders:
            check_interval("orders", a, 1.0, math.inf, closed="neither", owner=owner)
        if len(set(orders)) != len(orders):
            raise MipkitValueError(
                f"The 'orders' parameter of {owner} must not repeat an order. Got {orders}."
            )
        for v in values:
            check_interval("rdp_values", v, 0.0, math.inf, closed="left", owner=owner)
        _set(self, "orders", orders)
        _set(self, "rdp_values", values)
        _relation(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "orders": list(self.orders),
            "rdp_values": list(self.rdp_values),
            "neighbours": self.neighbours,
        }


def _float_tuple(name: str, values: Any, owner: str) -> tuple[float, ...]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise MipkitValueError(
            f"The {name!r} parameter of {owner} must be a sequence of numbers. Got {values!r} instead."
        )
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise MipkitValueError(f"The {name!r} parameter of {owner} must hold numbers. Got {v!r} instead.")
        out.append(float(v))
    return tuple(out)


@dataclass(frozen=True)
class ZCDP(Mechanism, name="zcdp", checks={"rho": "nonnegative"}):
    """A ``rho``-zCDP guarantee (Bun & Steinke 2016): RDP ``rho * a`` at every order ``a > 1``.

    Parameters
    ----------
    rho : float
        ``>= 0`` and finite.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    rho: float
    neighbours: str = "add_remove"
