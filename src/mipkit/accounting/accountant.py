"""A DP-SGD accountant to step during training, with its state saved and loaded as JSON.

:class:`DPSGDAccountant` records what each step did (noise multiplier, Poisson sampling rate) as it runs,
and certifies what ran at any time: its record is a
:class:`~mipkit.accounting.mechanisms.HeterogeneousSubsampledGaussian` (consecutive steps with the same
parameters grouped), so every risk of :mod:`mipkit.accounting` is one call away, two-sided and for either
neighbouring relation (docs/theory.md section 3). The state is plain JSON (:meth:`DPSGDAccountant.to_json`,
:meth:`DPSGDAccountant.save`, :meth:`DPSGDAccountant.load`), so a training that resumes from a checkpoint
resumes its accounting too.

>>> from mipkit.accounting import DPSGDAccountant
>>> acc = DPSGDAccountant()
>>> acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=500)
>>> acc.step(noise_multiplier=1.2, sample_rate=0.01, steps=500)
>>> acc.steps, acc.record().groups
(1000, ((1.0, 0.01, 500), (1.2, 0.01, 500)))
>>> DPSGDAccountant.from_json(acc.to_json()) == acc
True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mipkit._validation import MipkitValueError, check_positive, check_positive_int, check_sample_rate
from mipkit.accounting.mechanisms import HeterogeneousSubsampledGaussian
from mipkit.accounting.relations import check_neighbours

__all__ = ["DPSGDAccountant"]

_FORMAT = "mipkit.DPSGDAccountant/1"


class DPSGDAccountant:
    """Account DP-SGD step by step (the noise multiplier and the sampling rate may change between steps).

    Parameters
    ----------
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The relation of :meth:`curve` and :meth:`epsilon` (MIP eta always uses replace-one).
    tolerance : float, default=1e-4
        Width allowed between the two sides of every risk (:func:`mipkit.accounting.tradeoff_curve`).
    """

    def __init__(self, *, neighbours: str = "add_remove", tolerance: float = 1e-4) -> None:
        self.neighbours = check_neighbours(neighbours, "DPSGDAccountant")
        self.tolerance = check_positive("tolerance", tolerance, owner="DPSGDAccountant")
        self._groups: list[list] = []
        self._curve: Any = None

    # -- stepping ---------------------------------------------------------------------------------
    def step(self, noise_multiplier: float, sample_rate: float, steps: int = 1) -> None:
        """Record ``steps`` steps with this noise multiplier and Poisson sampling rate (one call per batch
        or per epoch). The parameters must not depend on the data beyond what this accounting covers."""
        owner = "DPSGDAccountant.step"
        z = check_positive("noise_multiplier", noise_multiplier, owner=owner)
        q = check_sample_rate(sample_rate, owner=owner)
        n = check_positive_int("steps", steps, owner=owner)
        if self._groups and self._groups[-1][0] == z and self._groups[-1][1] == q:
            self._groups[-1][2] += n
        else:
            self._groups.append([z, q, n])
        self._curve = None

    @property
    def steps(self) -> int:
        """Number of steps recorded."""
        return sum(n for _, _, n in self._groups)

    def record(self, neighbours: str | None = None) -> HeterogeneousSubsampledGaussian:
        """The mechanism record of the steps so far (for ``neighbours``, default the accountant's)."""
        if not self._groups:
            raise MipkitValueError("No step was recorded: there is nothing to account.")
        rel = (
            self.neighbours if neighbours is None else check_neighbours(neighbours, "DPSGDAccountant.record")
        )
        return HeterogeneousSubsampledGaussian(groups=tuple(tuple(g) for g in self._groups), neighbours=rel)

    # -- what it certifies -------------------------------------------------------------------------
    def curve(self, neighbours: str | None = None) -> Any:
        """The two-sided trade-off curve of the steps so far (cached until the next step)."""
        from mipkit.accounting.curves import tradeoff_curve

        rel = self.neighbours if neighbours is None else neighbours
        if self._curve is None or self._curve[0] != rel:
            self._curve = (rel, tradeoff_curve(self.record(rel), tolerance=self.tolerance))
        return self._curve[1]

    def epsilon(self, delta: float) -> tuple[float, float]:
        """``(upper, lower)`` epsilon at ``delta`` of the steps so far (the accountant's relation)."""
        c = self.curve()
        return float(c.epsilon_for_delta(delta)), float(c.lower_curve().epsilon_for_delta(delta))

    def eta(self) -> tuple[float, float]:
        """``(upper, lower)`` MIP eta of the steps so far (replace-one, the membership game's relation)."""
        from mipkit.accounting.risk import eta_from_curve

        c = self.curve("replace_one")
        return float(eta_from_curve(c)), float(eta_from_curve(c.lower_curve()))

    def risk_profile(self, **kwargs: Any) -> dict:
        """:func:`mipkit.accounting.risk_profile` of the steps so far."""
        from mipkit.accounting.profile import risk_profile

        return risk_profile(self.curve(), mip_curve=self.curve("replace_one"), **kwargs)

    # -- state ------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The state: ``{"format", "neighbours", "tolerance", "groups": [[z, q, steps], ...]}``."""
        return {
            "format": _FORMAT,
            "neighbours": self.neighbours,
            "tolerance": self.tolerance,
            "groups": [list(g) for g in self._groups],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> DPSGDAccountant:
        """The accountant :meth:`to_dict` wrote (every step validated again)."""
        if not isinstance(d, dict) or d.get("format") != _FORMAT:
            raise MipkitValueError(
                f"This is not a DPSGDAccountant state: expected format {_FORMAT!r}. Got {d!r} instead."
            )
        acc = cls(neighbours=d.get("neighbours", "add_remove"), tolerance=d.get("tolerance", 1e-4))
        for g in d.get("groups", []):
            if not isinstance(g, (list, tuple)) or len(g) != 3:
                raise MipkitValueError(f"Each group of a DPSGDAccountant state is [z, q, steps]. Got {g!r}.")
            acc.step(g[0], g[1], g[2])
        return acc

    @classmethod
    def from_json(cls, text: str) -> DPSGDAccountant:
        """The accountant :meth:`to_json` wrote."""
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as err:
            raise MipkitValueError(f"A DPSGDAccountant state must be JSON: {err.msg}.") from None

    def save(self, path: str | Path) -> Path:
        """Write the state to ``path`` (JSON)."""
        p = Path(path)
        p.write_text(self.to_json() + "\n", encoding="utf-8")
        return p

    @classmethod
    def load(cls, path: str | Path) -> DPSGDAccountant:
        """Read a state written by :meth:`save`."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DPSGDAccountant) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (
            f"DPSGDAccountant(steps={self.steps}, groups={len(self._groups)}, neighbours={self.neighbours!r})"
        )
