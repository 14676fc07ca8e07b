"""Heterogeneous Poisson-subsampled Gaussian steps: DP-SGD whose steps do not all share one noise multiplier.

A run of DP-WGAN-GP (Pedersen, thesis ch. 3; docs/theory.md section 8) releases, at every critic step, a
Poisson-subsampled sum of per-record contributions plus Gaussian noise. Each step has its own
noise-to-sensitivity ratio ``z_t`` (the noise standard deviation over that step's l2 sensitivity), so the
run is not one ``SubsampledGaussian(z, q, T)`` but a sequence of groups ``(z, q, count)``. Its privacy-loss
distribution is the convolution of the groups' PLDs, each ``from_gaussian_mechanism(standard_deviation=z,
sensitivity=1, sampling_prob=q)`` self-composed ``count`` times (Koskela et al. 2020; Doroshenko et al. 2022;
docs/theory.md section 3). The ratios must be fixed before the data are touched (a schedule), not read off
the run: a fixed-parameter composition says nothing about ratios chosen from earlier noisy outputs.

The record states its neighbouring relation:

* ``"add_remove"``: adding or removing one record adds or removes its contribution (norm at most the
  sensitivity), with probability ``q``. ``dp_accounting``'s ``ADD_OR_REMOVE_ONE``.
* ``"replace_one"``: one record replaced by another; each contribution lies within the sensitivity of a
  common centre (half the range for interval bounds), so the two differ by at most twice it.
  ``dp_accounting``'s ``REPLACE_ONE``: the mixtures ``q N(-s) + (1 - q) N(0)`` against ``q N(s) + (1 - q) N(0)``.

:func:`heterogeneous_curve` gives the :class:`~mipkit.accounting.pld.PLDCurve` of a record.

>>> from mipkit.accounting.heterogeneous import HeterogeneousSubsampledGaussian, group_steps
>>> rec = HeterogeneousSubsampledGaussian(groups=group_steps([2.0, 2.0, 3.0], sample_rate=0.1))
>>> rec.groups
((2.0, 0.1, 2), (3.0, 0.1, 1))
>>> rec.steps
3
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_positive,
    check_positive_int,
    check_sample_rate,
)
from mipkit.accounting.mechanisms import Mechanism

__all__ = [
    "NEIGHBOURS",
    "HeterogeneousSubsampledGaussian",
    "group_steps",
    "heterogeneous_curve",
    "heterogeneous_pld",
]

#: The neighbouring relations a record can state.
NEIGHBOURS: tuple[str, ...] = ("add_remove", "replace_one")
#: Default PLD grid (the DP-SGD default of :mod:`mipkit.accounting.pld`).
DEFAULT_DISCRETIZATION = 1e-3


@dataclass(frozen=True)
class HeterogeneousSubsampledGaussian(Mechanism):
    """Poisson-subsampled Gaussian steps in groups ``(noise_multiplier, sample_rate, count)``.

    Parameters
    ----------
    groups : sequence of (float, float, int)
        Each group: noise standard deviation over the step's l2 sensitivity (``> 0``), Poisson sampling
        rate in ``(0, 1]``, number of consecutive steps (``>= 1``). Stored as a tuple of tuples.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The neighbouring relation the sensitivities were computed for (module docstring).
    """

    name: ClassVar[str] = "heterogeneous_subsampled_gaussian"
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
        object.__setattr__(self, "groups", tuple(parts))
        object.__setattr__(
            self, "neighbours", check_choice("neighbours", self.neighbours, NEIGHBOURS, owner=owner)
        )

    @property
    def steps(self) -> int:
        """Total number of steps."""
        return sum(n for _, _, n in self.groups)

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "groups": [[z, q, count], ...], "neighbours": ...}`` (JSON-ready)."""
        return {"name": self.name, "groups": [list(g) for g in self.groups], "neighbours": self.neighbours}

    @classmethod
    def from_dict(cls, d: dict) -> HeterogeneousSubsampledGaussian:
        """The record :meth:`to_dict` wrote."""
        if not isinstance(d, dict) or d.get("name") != cls.name:
            raise MipkitValueError(f"Expected a dict with name {cls.name!r}. Got {d!r} instead.")
        return cls(groups=tuple(tuple(g) for g in d["groups"]), neighbours=d.get("neighbours", "add_remove"))


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


@functools.lru_cache(maxsize=256)
def _group_pld(z: float, q: float, count: int, relation: str, d: float) -> Any:
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    rel = privacy_accountant.NeighboringRelation
    one = pld_lib.from_gaussian_mechanism(
        standard_deviation=z,
        sensitivity=1.0,
        pessimistic_estimate=True,
        value_discretization_interval=d,
        sampling_prob=q,
        use_connect_dots=True,
        neighboring_relation=rel.REPLACE_ONE if relation == "replace_one" else rel.ADD_OR_REMOVE_ONE,
    )
    return one.self_compose(count) if count > 1 else one


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
        the record's relation; the centred release of :mod:`mipkit.synthesize` has the same ratio under
        both relations (docs/synthesize.md).
    value_discretization_interval : float
        PLD grid.
    """
    if not isinstance(record, HeterogeneousSubsampledGaussian):
        raise MipkitValueError(
            "The 'record' parameter of heterogeneous_pld must be a HeterogeneousSubsampledGaussian. "
            f"Got {type(record).__name__} instead."
        )
    rel = record.neighbours if neighbours is None else check_choice("neighbours", neighbours, NEIGHBOURS)
    d = check_positive(
        "value_discretization_interval", value_discretization_interval, owner="heterogeneous_pld"
    )
    plds = [_group_pld(z, q, n, rel, float(d)) for z, q, n in record.groups]
    return functools.reduce(lambda a, b: a.compose(b), plds)


def heterogeneous_curve(
    record: HeterogeneousSubsampledGaussian,
    *,
    neighbours: str | None = None,
    value_discretization_interval: float = DEFAULT_DISCRETIZATION,
) -> Any:
    """The :class:`~mipkit.accounting.pld.PLDCurve` of :func:`heterogeneous_pld` (record attached)."""
    from mipkit.accounting.pld import PLDCurve

    pld = heterogeneous_pld(
        record, neighbours=neighbours, value_discretization_interval=value_discretization_interval
    )
    return PLDCurve(pld, mechanism=record)
