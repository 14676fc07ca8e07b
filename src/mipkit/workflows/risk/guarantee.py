"""What :func:`mipkit.workflows.risk.risk` acts on: a privacy guarantee, :class:`Guarantee`.

Exactly one mechanism, in the terms its owner knows it by: ``epsilon`` (with ``delta``: ``(epsilon,
delta)``-DP), ``mu`` (GDP), ``rho`` (zCDP), ``gaussian_sigma`` or ``laplace_scale`` (with ``sensitivity``),
DP-SGD's ``noise_multiplier`` with its schedule (``sample_rate`` and ``steps``, or ``batch_size``,
``epochs`` and ``n_records``: :mod:`mipkit.workflows._dpsgd`), or any mechanism record
(:mod:`mipkit.accounting.mechanisms`). :meth:`Guarantee.mechanism` is the record; the guarantee is
checked when built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mipkit._validation import MipkitValueError, check_choice, check_delta
from mipkit.workflows._dpsgd import SCHEDULE_WORDS, sample_rate_and_steps

if TYPE_CHECKING:  # pragma: no cover
    from mipkit.accounting.mechanisms import Mechanism

__all__ = ["MECHANISM_WORDS", "Guarantee"]

OWNER = "risk"
NEIGHBOURS = ("add_remove", "replace_one")
#: The ways to give the mechanism, for messages.
MECHANISM_WORDS = (
    "epsilon [with delta], mu, rho, gaussian_sigma [with sensitivity], laplace_scale [with sensitivity], "
    f"noise_multiplier with {SCHEDULE_WORDS}, or a mechanism record"
)
_DPSGD = ("noise_multiplier", "sample_rate", "steps", "batch_size", "epochs", "n_records")
_SINGLE = ("epsilon", "mu", "rho", "gaussian_sigma", "laplace_scale", "record")


@dataclass(frozen=True)
class Guarantee:
    """A privacy guarantee: exactly one mechanism, and the relation it holds for (checked when built).

    Attributes
    ----------
    epsilon : float, optional
        ``epsilon``-DP (``PureDP``), with ``delta`` ``(epsilon, delta)``-DP (``ApproxDP``).
    delta : float, optional
        With ``epsilon``: the DP delta. Otherwise: report the epsilon of the mechanism at this delta.
    mu : float, optional
        ``mu``-GDP.
    rho : float, optional
        ``rho``-zCDP.
    gaussian_sigma, laplace_scale : float, optional
        The Gaussian mechanism's noise standard deviation, the Laplace mechanism's scale.
    sensitivity : float, optional
        Their query's sensitivity (l2 Gaussian, l1 Laplace); default 1.
    noise_multiplier : float, optional
        DP-SGD, with its schedule: ``sample_rate`` and ``steps``, or ``batch_size``, ``epochs`` and
        ``n_records`` (Opacus's terms: ``q = batch_size / n_records``, ``T = epochs * ceil(n_records /
        batch_size)``).
    record : Mechanism, optional
        Any mechanism record (:mod:`mipkit.accounting.mechanisms`); it states its own relation.
    neighbours : {"add_remove", "replace_one"}, optional
        The relation the guarantee holds for (default ``"add_remove"``); with ``record``, the record's.
    """

    epsilon: float | None = None
    delta: float | None = None
    mu: float | None = None
    rho: float | None = None
    gaussian_sigma: float | None = None
    laplace_scale: float | None = None
    sensitivity: float | None = None
    noise_multiplier: float | None = None
    sample_rate: float | None = None
    steps: int | None = None
    batch_size: int | None = None
    epochs: int | None = None
    n_records: int | None = None
    record: Mechanism | None = None
    neighbours: str | None = None

    def __post_init__(self) -> None:
        self.mechanism()  # the record checks its parameters

    def kind(self) -> str:
        """The one mechanism given: a field name (``"noise_multiplier"`` for DP-SGD)."""
        given = [name for name in _SINGLE if getattr(self, name) is not None]
        if any(getattr(self, name) is not None for name in _DPSGD):
            given.append("noise_multiplier")
        if not given:
            raise MipkitValueError(f"Give one mechanism: {MECHANISM_WORDS}.")
        if len(given) > 1:
            raise MipkitValueError(
                f"Give exactly one mechanism; got {' and '.join(given)}. Use {MECHANISM_WORDS}."
            )
        return given[0]

    @property
    def report_delta(self) -> float | None:
        """The delta at which to report an epsilon (``0`` for pure DP; None: none asked for)."""
        delta = None if self.delta is None else check_delta(self.delta, owner=OWNER)
        if self.epsilon is not None and delta is None:
            return 0.0
        return delta

    def _relation(self, kind: str) -> str:
        if kind == "record":
            from mipkit.accounting.mechanisms import Mechanism

            if not isinstance(self.record, Mechanism):
                raise MipkitValueError(
                    "The 'record' parameter of risk must be a mechanism record (PureDP, GDP, "
                    f"SubsampledGaussian, ...). Got {type(self.record).__name__} instead."
                )
            if self.neighbours is not None and self.neighbours != self.record.neighbours:
                raise MipkitValueError(
                    f"The record states {self.record.neighbours} neighbours; the 'neighbours' parameter of "
                    f"risk says {self.neighbours}. Leave it out, or give the record for that relation."
                )
            return self.record.neighbours
        return check_choice("neighbours", self.neighbours or "add_remove", NEIGHBOURS, owner=OWNER)

    def mechanism(self) -> Mechanism:
        """The mechanism record of the guarantee (it states the relation)."""
        from mipkit.accounting.mechanisms import (
            GDP,
            ZCDP,
            ApproxDP,
            GaussianMechanism,
            LaplaceMechanism,
            PureDP,
        )

        kind = self.kind()
        rel = {"neighbours": self._relation(kind)}
        if self.sensitivity is not None and kind not in ("gaussian_sigma", "laplace_scale"):
            raise MipkitValueError(
                "The 'sensitivity' parameter applies only to gaussian_sigma and laplace_scale."
            )
        sens = 1.0 if self.sensitivity is None else self.sensitivity
        delta = self.report_delta
        if kind == "record":
            return self.record  # type: ignore[return-value]
        if kind == "epsilon":
            return PureDP(self.epsilon, **rel) if self.delta is None else ApproxDP(self.epsilon, delta, **rel)
        if kind == "mu":
            return GDP(self.mu, **rel)
        if kind == "rho":
            return ZCDP(self.rho, **rel)
        if kind == "gaussian_sigma":
            return GaussianMechanism(self.gaussian_sigma, sens, **rel)
        if kind == "laplace_scale":
            return LaplaceMechanism(self.laplace_scale, sens, **rel)
        return self._dpsgd(rel["neighbours"])

    def _dpsgd(self, neighbours: str) -> Mechanism:
        """DP-SGD's ``SubsampledGaussian`` record, its schedule in either form."""
        from mipkit.accounting.mechanisms import SubsampledGaussian

        q, steps = sample_rate_and_steps(
            self.sample_rate, self.steps, self.batch_size, self.epochs, self.n_records, owner=OWNER
        )
        if self.noise_multiplier is None:
            raise MipkitValueError(f"DP-SGD needs noise_multiplier with {SCHEDULE_WORDS}.")
        missing = [name for name, v in (("sample_rate", q), ("steps", steps)) if v is None]
        if missing:
            raise MipkitValueError(
                f"DP-SGD needs noise_multiplier with {SCHEDULE_WORDS}; missing {', '.join(missing)}."
            )
        return SubsampledGaussian(self.noise_multiplier, q, steps, neighbours=neighbours)
