"""Mechanisms as data: frozen, validated records of what a release did (dp_accounting's ``DpEvent`` pattern).

A record says *which* mechanism ran and with which parameters; it does no arithmetic. The arithmetic lives
elsewhere: :func:`mipkit.accounting.tradeoff_curve` turns any record into its trade-off curve (closed forms
for the pure, approximate and Gaussian DP guarantees and the Laplace mechanism; privacy-loss distributions
for DP-SGD and compositions; docs/theory.md section 3), and :func:`mipkit.accounting.calibrate` searches a
family of records for the least noise that meets a risk target.

Every record serialises to a JSON-ready dict with one ``"name"`` per type (:meth:`Mechanism.to_dict`);
:func:`mechanism_from_dict` reads it back. The names are the one vocabulary mipkit uses wherever a result
names a mechanism:

=========================  ====================  ===================================================
record                     ``"name"``            guarantee
=========================  ====================  ===================================================
``PureDP(epsilon)``        ``"pure_dp"``         ``(epsilon, 0)``-DP
``ApproxDP(eps, delta)``   ``"approx_dp"``       ``(epsilon, delta)``-DP
``GaussianMechanism``      ``"gaussian"``        ``q(D) + N(0, sigma^2 I)``, l2-sensitivity ``L``
``LaplaceMechanism``       ``"laplace"``         ``q(D) + Lap(b)``, l1-sensitivity ``L`` (scalar)
``GDP(mu)``                ``"gdp"``             mu-Gaussian differential privacy
``SubsampledGaussian``     ``"subsampled_gaussian"``  DP-SGD: Poisson rate ``q``, ``T`` steps
``Composed(mechanisms)``   ``"composed"``        all of them run on the same data
=========================  ====================  ===================================================

>>> from mipkit.accounting.mechanisms import SubsampledGaussian, mechanism_from_dict
>>> m = SubsampledGaussian(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
>>> m.to_dict()
{'name': 'subsampled_gaussian', 'noise_multiplier': 1.0, 'sample_rate': 0.01, 'steps': 1000}
>>> mechanism_from_dict(m.to_dict()) == m
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

from mipkit._validation import (
    MipkitValueError,
    check_delta,
    check_epsilon,
    check_interval,
    check_positive,
    check_positive_int,
    check_sample_rate,
)

__all__ = [
    "GDP",
    "MECHANISM_NAMES",
    "ApproxDP",
    "Composed",
    "GaussianMechanism",
    "LaplaceMechanism",
    "Mechanism",
    "PureDP",
    "SubsampledGaussian",
    "mechanism_from_dict",
    "record_parts",
]


class Mechanism:
    """Base class of the mechanism records: frozen dataclasses validated when built.

    Subclasses set ``name`` (the ``"name"`` of :meth:`to_dict`) and validate their fields in
    ``__post_init__``. Records compare and hash by value.
    """

    name: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., <field>: <value>, ...}``: JSON-ready; :func:`mechanism_from_dict` reverses it."""
        return {"name": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}  # type: ignore[arg-type]


def _set(record: Mechanism, field_name: str, value: Any) -> None:
    object.__setattr__(record, field_name, value)


def _positive(record: Mechanism, *names: str) -> None:
    """Check (and store as floats) the fields of ``record`` that must be finite and ``> 0``."""
    for n in names:
        _set(record, n, check_positive(n, getattr(record, n), owner=type(record).__name__))


@dataclass(frozen=True)
class PureDP(Mechanism):
    """An ``(epsilon, 0)``-DP mechanism (any: its curve is the worst case among them).

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound, finite and ``>= 0``.
    """

    name: ClassVar[str] = "pure_dp"
    epsilon: float

    def __post_init__(self) -> None:
        _set(self, "epsilon", check_epsilon(self.epsilon, owner="PureDP"))


@dataclass(frozen=True)
class ApproxDP(Mechanism):
    """Any mechanism that is ``(epsilon, delta)``-DP: the worst case among them has the curve used here.

    Parameters
    ----------
    epsilon : float
        Bound on the privacy loss outside the ``delta`` event, finite and ``>= 0``.
    delta : float
        Failure probability, in ``[0, 1)``.
    """

    name: ClassVar[str] = "approx_dp"
    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        _set(self, "epsilon", check_epsilon(self.epsilon, owner="ApproxDP"))
        _set(self, "delta", check_delta(self.delta, owner="ApproxDP"))


class _AdditiveNoise(Mechanism):
    """Noise added to a query: every field (noise scale, sensitivity) must be finite and ``> 0``."""

    def __post_init__(self) -> None:
        _positive(self, *(f.name for f in fields(self)))  # type: ignore[arg-type]


@dataclass(frozen=True)
class GaussianMechanism(_AdditiveNoise):
    """The Gaussian mechanism ``q(D) + N(0, sigma^2 I)`` on a query of l2-sensitivity ``L``.

    It is ``L / sigma``-GDP (Dong, Roth & Su 2022, Thm 2.7; docs/theory.md section 3).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    sensitivity : float, default=1.0
        l2-sensitivity ``L > 0`` of the query.
    """

    name: ClassVar[str] = "gaussian"
    sigma: float
    sensitivity: float = 1.0


@dataclass(frozen=True)
class LaplaceMechanism(_AdditiveNoise):
    """The Laplace mechanism ``q(D) + Lap(b)`` on a scalar query of l1-sensitivity ``L``.

    Pure ``L / b``-DP, with an exact trade-off curve tighter than the ``(L/b, 0)``-DP one (Dong, Roth &
    Su 2022; docs/theory.md section 3).

    Parameters
    ----------
    scale : float
        The noise scale ``b``, positive: the density is ``exp(-|x| / b) / (2b)``.
    sensitivity : float, default=1.0
        How far the query moves between neighbouring datasets (l1), positive.
    """

    name: ClassVar[str] = "laplace"
    scale: float
    sensitivity: float = 1.0


@dataclass(frozen=True)
class GDP(Mechanism):
    """A mu-GDP mechanism: testing ``N(0, 1)`` against ``N(mu, 1)`` (Dong, Roth & Su 2022, Def. 2.6).

    Parameters
    ----------
    mu : float
        ``>= 0`` and finite (``0`` = no information).
    """

    name: ClassVar[str] = "gdp"
    mu: float

    def __post_init__(self) -> None:
        _set(self, "mu", check_interval("mu", self.mu, 0.0, math.inf, closed="left", owner="GDP"))


@dataclass(frozen=True)
class SubsampledGaussian(Mechanism):
    """DP-SGD: the Poisson-subsampled Gaussian mechanism composed ``steps`` times (Abadi et al. 2016).

    Add-or-remove-one neighbours, clipping norm 1 (so the noise multiplier is the noise standard
    deviation in units of the clipping norm).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation / clipping norm, ``> 0``.
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]`` (batch size / dataset size).
    steps : int
        Number of noisy gradient steps ``T >= 1``.
    """

    name: ClassVar[str] = "subsampled_gaussian"
    noise_multiplier: float
    sample_rate: float
    steps: int

    def __post_init__(self) -> None:
        owner = "SubsampledGaussian"
        _set(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier, owner=owner))
        _set(self, "sample_rate", check_sample_rate(self.sample_rate, owner=owner))
        _set(self, "steps", check_positive_int("steps", self.steps, owner=owner))


@dataclass(frozen=True)
class Composed(Mechanism):
    """Several mechanisms run on the same data (adaptive composition: the privacy losses add up).

    Parameters
    ----------
    mechanisms : tuple of Mechanism
        At least one record (a list is accepted and stored as a tuple).
    """

    name: ClassVar[str] = "composed"
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

    def to_dict(self) -> dict[str, Any]:
        """``{"name": "composed", "mechanisms": [<record dict>, ...]}``."""
        return {"name": self.name, "mechanisms": [m.to_dict() for m in self.mechanisms]}


_RECORDS: dict[str, type[Mechanism]] = {
    cls.name: cls
    for cls in (PureDP, ApproxDP, GaussianMechanism, LaplaceMechanism, GDP, SubsampledGaussian, Composed)
}
#: The ``"name"`` of every record type, in the order of the table above.
MECHANISM_NAMES: tuple[str, ...] = tuple(_RECORDS)


def record_parts(
    d: Mapping[str, Any], registry: Mapping[str, type], kind: str, owner: str
) -> tuple[type, dict]:
    """The class and the parameters of a serialised record ``{"name": ..., <parameter>: ..., ...}``.

    Checks that ``d`` is a dict whose ``"name"`` is in ``registry`` (name -> dataclass), with no unknown key
    and every parameter without a default given (not None). Shared by :func:`mechanism_from_dict` and
    :func:`mipkit.accounting.targets.target_from_dict`; ``kind`` names the record in messages.
    """
    if not isinstance(d, Mapping) or "name" not in d:
        raise MipkitValueError(
            f"The 'd' parameter of {owner} must be a dict with a 'name' key. Got {d!r} instead."
        )
    name = d["name"]
    if name not in registry:
        raise MipkitValueError(
            f"The 'name' of a {kind} must be one of {list(registry)}. Got {name!r} instead."
        )
    cls = registry[name]
    known = fields(cls)
    extra = sorted(set(d) - {f.name for f in known} - {"name"})
    if extra:
        raise MipkitValueError(
            f"A {name!r} {kind} takes {[f.name for f in known]}. Got unknown keys {extra} instead."
        )
    for f in known:
        if f.default is MISSING and d.get(f.name) is None:
            raise MipkitValueError(f"The {name!r} {kind} needs the {f.name!r} parameter. Got None instead.")
    return cls, {k: v for k, v in d.items() if k != "name"}


def mechanism_from_dict(d: Mapping[str, Any]) -> Mechanism:
    """The record that :meth:`Mechanism.to_dict` wrote (validated as when built directly).

    Parameters
    ----------
    d : mapping
        ``{"name": <one of MECHANISM_NAMES>, <parameter>: <value>, ...}``; a ``"composed"`` dict holds the
        dicts of its parts under ``"mechanisms"``.
    """
    cls, params = record_parts(d, _RECORDS, "mechanism", "mechanism_from_dict")
    if cls is Composed:
        parts = params["mechanisms"]
        if isinstance(parts, (str, Mapping)) or not isinstance(parts, Iterable):
            raise MipkitValueError(
                f"The 'mechanisms' of a 'composed' mechanism must be a list of dicts. Got {parts!r} instead."
            )
        params["mechanisms"] = tuple(mechanism_from_dict(p) for p in parts)
    return cls(**params)
