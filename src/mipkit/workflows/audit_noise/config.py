"""The settings of the noise audit: :class:`AuditNoiseConfig`, frozen and checked when built.

The model and its MIP noise are :class:`~mipkit.workflows.protect.config.NoiseSettings` (shared with
``protect``); the game adds its sizes: the attacker's reference fits, the releases and the targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mipkit._validation import MipkitValueError, check_positive_int
from mipkit.workflows.protect.config import NoiseSettings

__all__ = ["AuditNoiseConfig"]


@dataclass(frozen=True)
class AuditNoiseConfig(NoiseSettings):
    """Every setting of ``audit_noise``: the model, its MIP noise and the size of the MIP game.

    The fields of :class:`~mipkit.workflows.protect.config.NoiseSettings` (``seed`` seeds the whole game
    here, its noise included: a measurement), and:

    Attributes
    ----------
    n_reference : int >= 2
        Fits on random halves: the attacker's reference pool, and the sigma estimate when none is given.
    n_releases : int >= 1
        Game rounds; each releases a model trained on a fresh random half with fresh noise.
    n_targets : int >= 1
        The most exposed records attacked (when ``targets`` is None).
    targets : tuple of int or None
        Row indices to attack instead.
    n_boot : int >= 2
        Replicates of the cluster bootstrap over releases and targets.
    """

    n_reference: int = 200
    n_releases: int = 200
    n_targets: int = 10
    targets: tuple[int, ...] | None = None
    n_boot: int = 1000

    owner = "audit_noise"

    def mip_settings(self) -> dict[str, Any]:
        return {**super().mip_settings(), "n_estimates": self.n_reference, "train_on": "half"}

    def check(self) -> None:
        owner = self.owner
        sizes = {"n_reference": 2, "n_releases": 1, "n_targets": 1, "n_boot": 2}
        for name, minimum in sizes.items():
            value = check_positive_int(name, getattr(self, name), minimum=minimum, owner=owner)
            object.__setattr__(self, name, value)
        if self.targets is not None:
            raw = self.targets.tolist() if hasattr(self.targets, "tolist") else self.targets
            items = list(raw) if isinstance(raw, (list, tuple)) else ()
            if not items:
                raise MipkitValueError(
                    f"The 'targets' parameter of {owner} must be None or a non-empty list of row indices. "
                    f"Got {self.targets!r}."
                )
            targets = tuple(check_positive_int("targets", t, minimum=0, owner=owner) for t in items)
            object.__setattr__(self, "targets", targets)
        super().check()
