"""Mechanisms as data: frozen, validated records of what a release did (dp_accounting's ``DpEvent`` pattern).

A record says *which* mechanism ran, with which parameters, and for which **neighbouring relation** its
guarantee is stated; it does no arithmetic. :func:`mipkit.accounting.tradeoff_curve` turns any record into
its trade-off curve (docs/theory.md section 3) and :func:`mipkit.accounting.calibrate_noise` searches a family
of records for the least noise that meets a risk target.

**Neighbours.** Every record has ``neighbours``: ``"add_remove"`` (one record added or removed: the usual DP
convention, Opacus's and ``dp_accounting``'s for DP-SGD; the default everywhere) or ``"replace_one"`` (one
record replaced by another, the number of records fixed: the membership game of MIP). For ``PureDP``,
``ApproxDP``, ``GDP``, ``RDP`` and ``ZCDP`` it is the premise of the stated guarantee; for
``GaussianMechanism`` / ``LaplaceMechanism`` the relation the sensitivity was computed for; for DP-SGD
(``SubsampledGaussian``, ``HeterogeneousSubsampledGaussian``) the relation accounted (each clipped
contribution has norm at most the clipping norm, so both relations are accounted from the same record).
MIP risks always use the replace-one curve (docs/theory.md sections 1 and 3).

Every record serialises to a JSON-ready dict with one ``"name"`` per type (:meth:`Mechanism.to_dict`);
:func:`mechanism_from_dict` reads it back (a dict without ``"neighbours"`` gets the default):

=====================================  ========================================  ============================
record                                 ``"name"``                                guarantee
=====================================  ========================================  ============================
``PureDP(epsilon)``                    ``"pure_dp"``                             ``(epsilon, 0)``-DP
``ApproxDP(epsilon, delta)``           ``"approx_dp"``                           ``(epsilon, delta)``-DP
``GaussianMechanism(sigma, L)``        ``"gaussian"``                            ``q(D) + N(0, sigma^2 I)``
``LaplaceMechanism(scale, L)``         ``"laplace"``                             ``q(D) + Lap(b)`` (scalar)
``GDP(mu)``                            ``"gdp"``                                 mu-GDP
``SubsampledGaussian(z, q, T)``        ``"subsampled_gaussian"``                 DP-SGD
``HeterogeneousSubsampledGaussian``    ``"heterogeneous_subsampled_gaussian"``   DP-SGD, varying ``z``
``RDP(orders, rdp_values)``            ``"rdp"``                                 Renyi DP at each order
``ZCDP(rho)``                          ``"zcdp"``                                ``rho``-zCDP
``Composed(mechanisms)``               ``"composed"``                            all run on the same data
=====================================  ========================================  ============================

>>> from mipkit.accounting.mechanisms import SubsampledGaussian, mechanism_from_dict
>>> m = SubsampledGaussian(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
>>> m.to_dict()["neighbours"]
'add_remove'
>>> mechanism_from_dict(m.to_dict()) == m
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mipkit._validation import MipkitValueError
from mipkit.accounting._record_base import NEIGHBOURS, Mechanism, _set, record_parts
from mipkit.accounting.mechanisms_dp import RDP, ZCDP, HeterogeneousSubsampledGaussian, dpsgd_schedule

__all__ = [
    "GDP",
    "MECHANISM_NAMES",
    "NEIGHBOURS",
    "RDP",
    "ZCDP",
    "ApproxDP",
    "Composed",
    "GaussianMechanism",
    "HeterogeneousSubsampledGaussian",
    "LaplaceMechanism",
    "Mechanism",
    "PureDP",
    "SubsampledGaussian",
    "dpsgd_schedule",
    "mechanism_from_dict",
    "record_parts",
]


@dataclass(frozen=True)
class PureDP(Mechanism, name="pure_dp", checks={"epsilon": "epsilon"}):
    """An ``(epsilon, 0)``-DP mechanism (any: its curve is the worst case among them).

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound, finite and ``>= 0``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The relation the guarantee holds for.
    """

    epsilon: float
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class ApproxDP(Mechanism, name="approx_dp", checks={"epsilon": "epsilon", "delta": "delta"}):
    """Any mechanism that is ``(epsilon, delta)``-DP: the worst case among them has the curve used here.

    Parameters
    ----------
    epsilon : float
        Bound on the privacy loss outside the ``delta`` event, finite and ``>= 0``.
    delta : float
        Failure probability, in ``[0, 1)``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The relation the guarantee holds for.
    """

    epsilon: float
    delta: float
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class GaussianMechanism(Mechanism, name="gaussian", checks={"sigma": "positive", "sensitivity": "positive"}):
    """The Gaussian mechanism ``q(D) + N(0, sigma^2 I)`` on a query of l2-sensitivity ``L``.

    It is ``L / sigma``-GDP for the relation ``L`` was computed for (Dong, Roth & Su 2022, Thm 2.7;
    docs/theory.md section 3). Under replace-one a query moves by at most ``2L`` when ``L`` is its
    add/remove sensitivity (a removal then an addition).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    sensitivity : float, default=1.0
        l2-sensitivity ``L > 0`` of the query for ``neighbours``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    sigma: float
    sensitivity: float = 1.0
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class LaplaceMechanism(Mechanism, name="laplace", checks={"scale": "positive", "sensitivity": "positive"}):
    """The Laplace mechanism ``q(D) + Lap(b)`` on a scalar query of l1-sensitivity ``L``.

    Pure ``L / b``-DP, with an exact trade-off curve tighter than the ``(L/b, 0)``-DP one (Dong, Roth &
    Su 2022; docs/theory.md section 3).

    Parameters
    ----------
    scale : float
        The noise scale ``b``, positive: the density is ``exp(-|x| / b) / (2b)``.
    sensitivity : float, default=1.0
        How far the query moves between neighbouring datasets (l1), positive.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    scale: float
    sensitivity: float = 1.0
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class GDP(Mechanism, name="gdp", checks={"mu": "nonnegative"}):
    """A mu-GDP mechanism: testing ``N(0, 1)`` against ``N(mu, 1)`` (Dong, Roth & Su 2022, Def. 2.6).

    Parameters
    ----------
    mu : float
        ``>= 0`` and finite (``0`` = no information).
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    mu: float
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class SubsampledGaussian(
    Mechanism,
    name="subsampled_gaussian",
    checks={"noise_multiplier": "positive", "sample_rate": "sample_rate", "steps": "positive_int"},
):
    """DP-SGD: the Poisson-subsampled Gaussian mechanism composed ``steps`` times (Abadi et al. 2016).

    Clipping norm 1 (the noise multiplier is the noise standard deviation in units of the clipping norm).
    ``neighbours`` is the relation accounted: ``"add_remove"`` (``dp_accounting``'s ``ADD_OR_REMOVE_ONE``,
    Opacus's convention) or ``"replace_one"`` (``REPLACE_ONE``: the slot of the replaced record holds a
    contribution of norm at most 1 either way; docs/theory.md section 3).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation / clipping norm, ``> 0``.
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]`` (batch size / dataset size).
    steps : int
        Number of noisy gradient steps ``T >= 1``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    """

    noise_multiplier: float
    sample_rate: float
    steps: int
    neighbours: str = "add_remove"


@dataclass(frozen=True)
class Composed(Mechanism, name="composed"):
    """Several mechanisms run on the same data (adaptive composition: the privacy losses add up).

    Parameters
    ----------
    mechanisms : tuple of Mechanism
        At least one record (a list is accepted and stored as a tuple).

    Notes
    -----
    ``neighbours`` is the parts' common relation (``"add_remove"`` when they differ: the curve of any
    relation is then built part by part, see :func:`mipkit.accounting.tradeoff_curve`).
    """

    mechanisms: tuple[Mechanism, ...]

    def __post_init__(self) -> None:
        items = self.mechanisms
        if (
            isinstance(items, Mechanism)
            or not isinstance(items, Iterable)
            or isinstance(items, (str, Mapping))
        ):
            raise MipkitValueError(
                "The 'mechanisms' parameter of Composed must be a sequence of mechanism records. "
                f"Got {type(items).__name__} instead."
            )
        parts = tuple(items)
        if not parts:
            raise MipkitValueError(
                "The 'mechanisms' parameter of Composed must hold at least one record. Got none."
            )
        for part in parts:
            if not isinstance(part, Mechanism):
                raise MipkitValueError(
                    "The 'mechanisms' parameter of Composed must hold mechanism records (PureDP, ApproxDP, "
                    f"GaussianMechanism, ...). Got {type(part).__name__} instead."
                )
        _set(self, "mechanisms", parts)

    @property
    def neighbours(self) -> str:  # type: ignore[override]
        """The relation all parts state (``"add_remove"`` if they differ)."""
        rel = {m.neighbours for m in self.mechanisms}
        return rel.pop() if len(rel) == 1 else "add_remove"

    def to_dict(self) -> dict[str, Any]:
        """``{"name": "composed", "mechanisms": [<record dict>, ...]}``."""
        return {"name": self.name, "mechanisms": [m.to_dict() for m in self.mechanisms]}


_RECORDS: dict[str, type[Mechanism]] = {
    cls.name: cls
    for cls in (
        PureDP,
        ApproxDP,
        GaussianMechanism,
        LaplaceMechanism,
        GDP,
        SubsampledGaussian,
        HeterogeneousSubsampledGaussian,
        RDP,
        ZCDP,
        Composed,
    )
}
#: The ``"name"`` of every record type, in the order of the table above.
MECHANISM_NAMES: tuple[str, ...] = tuple(_RECORDS)


def mechanism_from_dict(d: Mapping[str, Any]) -> Mechanism:
    """The record that :meth:`Mechanism.to_dict` wrote (validated as when built directly).

    Parameters
    ----------
    d : mapping
        ``{"name": <one of MECHANISM_NAMES>, <parameter>: <value>, ...}``; a ``"composed"`` dict holds the
        dicts of its parts under ``"mechanisms"``. A missing ``"neighbours"`` means ``"add_remove"``.
    """
    cls, params = record_parts(d, _RECORDS, "mechanism", "mechanism_from_dict")
    if cls is Composed:
        parts = params["mechanisms"]
        if isinstance(parts, (str, Mapping)) or not isinstance(parts, Iterable):
            raise MipkitValueError(
                f"The 'mechanisms' of a 'composed' mechanism must be a list of dicts. Got {parts!r} instead."
            )
        params["mechanisms"] = tuple(mechanism_from_dict(p) for p in parts)
    if cls is HeterogeneousSubsampledGaussian:
        return HeterogeneousSubsampledGaussian.from_dict(d)
    return cls(**params)
