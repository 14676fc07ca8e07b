"""The settings of a one-run audit: :class:`AuditOneRunConfig`, checked when built."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.workflows._shape import VerbConfig

__all__ = ["CANARY_KINDS", "DEFAULT_MODEL", "AuditOneRunConfig"]

OWNER = "audit_one_run"
CANARY_KINDS = ("mislabeled", "records")
DEFAULT_MODEL = "mipkit.trainers.DPSGDClassifier"


@dataclass(frozen=True)
class AuditOneRunConfig(VerbConfig):
    """Every setting of a one-run audit, checked when built (before any data is read or model fitted). The
    table audited is the verb's ``data`` (:class:`~mipkit.workflows._records.LabelledTable`).

    Attributes
    ----------
    model : str
        Trainer import path (default ``"mipkit.trainers.DPSGDClassifier"``).
    params : dict
        Its constructor arguments (JSON).
    canaries : int
        ``m``, at most half of the rows.
    canary_kind : {"mislabeled", "records"}
        Canaries with a label changed to another class at random, or rows as they are.
    k_plus, k_minus : tuple of float
        Grid of "in" and "out" guess counts (fractions of ``m`` when below 1, else counts).
    delta : float or None
        Delta of the bound; default the certificate's (1e-5 without a certificate).
    confidence : float
        Confidence of the lower bound.
    scale : bool
        Standardise the features with the whole table's mean and sd (the same whoever is included).
    seed : int
        Seeds the canaries, their inclusion and the fit.
    encode, dropna, drop
        How a table becomes arrays, as for the audit (:func:`mipkit.data.io.features_target`).
    fail_above : float or None
        The policy: the audit's finding is a lower bound above this epsilon; None states none (a bound
        above the certificate is a finding in any case).

    Raises
    ------
    MipkitValueError
        When built with a bad setting (one line saying which and what to pass).
    """

    model: str = DEFAULT_MODEL
    params: dict = field(default_factory=dict)
    canaries: int = 1000
    canary_kind: str = "mislabeled"
    k_plus: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2)
    k_minus: tuple[float, ...] = (0.0,)
    delta: float | None = None
    confidence: float = 0.95
    scale: bool = True
    seed: int = 0
    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    fail_above: float | None = None

    def check(self) -> None:
        """Check every setting; the grids and names become tuples."""
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise MipkitValueError(f"The 'seed' parameter of {OWNER} must be an integer >= 0. Got {seed!r}.")
        if not isinstance(self.model, str) or not self.model.strip():
            raise MipkitValueError(
                f"The 'model' parameter of {OWNER} must be the import path of a trainer (e.g. "
                f"{DEFAULT_MODEL}). Got {self.model!r} instead."
            )
        if not isinstance(self.params, dict):
            raise MipkitValueError(f"The 'params' parameter of {OWNER} must be a dict. Got {self.params!r}.")
        check_positive_int("canaries", self.canaries, owner=OWNER)
        check_choice("canary_kind", self.canary_kind, CANARY_KINDS, owner=OWNER)
        check_choice("encode", self.encode, ("none", "onehot"), owner=OWNER)
        for name in ("k_plus", "k_minus"):
            object.__setattr__(self, name, self._grid(name))
        if self.delta is not None:
            check_interval("delta", self.delta, 0.0, 1.0, owner=OWNER)
        check_interval("confidence", self.confidence, 0.0, 1.0, owner=OWNER)
        limit = self.fail_above
        if limit is not None and (
            isinstance(limit, bool)
            or not isinstance(limit, (int, float, np.number))
            or not math.isfinite(limit)
        ):
            raise MipkitValueError(
                f"The 'fail_above' parameter of {OWNER} must be a finite number (a NaN limit never fails). "
                f"Got {limit!r}."
            )
        drop = [self.drop] if isinstance(self.drop, str) else list(self.drop or ())
        object.__setattr__(self, "drop", tuple(str(c) for c in drop))

    def _grid(self, name: str) -> tuple[float, ...]:
        """A grid of guess counts: fractions of the canaries (below 1) or whole counts up to ``canaries``."""
        grid = tuple(getattr(self, name))
        if not grid:
            raise MipkitValueError(f"The {name!r} parameter of {OWNER} must list at least one count.")
        for k in grid:
            k = check_interval(name, k, 0.0, float(self.canaries), closed="both", owner=OWNER)
            if k >= 1 and not k.is_integer():
                raise MipkitValueError(
                    f"The {name!r} parameter of {OWNER} holds fractions of the canaries (below 1) or "
                    f"counts (whole numbers). Got {k!r}."
                )
        return grid
