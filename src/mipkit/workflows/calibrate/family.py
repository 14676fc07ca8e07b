"""What :func:`mipkit.workflows.calibrate.calibrate` acts on: the mechanism family whose noise it sets.

:class:`NoiseFamily` names one of :data:`MECHANISMS` with its fixed parameters: the query's
``sensitivity`` for Gaussian and Laplace noise, the schedule for DP-SGD (``sample_rate`` and ``steps``, or
``batch_size``, ``epochs`` and ``n_records``: :mod:`mipkit.workflows._dpsgd`), and the relation the
sensitivity or the accounting is for. :meth:`NoiseFamily.family` is the family of
:mod:`mipkit.accounting.families`; it is checked when built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mipkit._validation import MipkitValueError, check_choice
from mipkit.workflows._dpsgd import OPACUS_TERMS, SCHEDULE_WORDS, sample_rate_and_steps

if TYPE_CHECKING:  # pragma: no cover
    from mipkit.accounting.families import MechanismFamily

__all__ = ["MECHANISMS", "NoiseFamily"]

OWNER = "calibrate"
#: The families :class:`NoiseFamily` names.
MECHANISMS: tuple[str, ...] = ("gaussian", "laplace", "dpsgd")
_SCHEDULE = ("sample_rate", "steps", *OPACUS_TERMS)


@dataclass(frozen=True)
class NoiseFamily:
    """A family of mechanisms indexed by their noise (checked when built).

    Attributes
    ----------
    mechanism : {"gaussian", "laplace", "dpsgd"}
        Gaussian noise (``sigma``), Laplace noise (``scale``) or DP-SGD (``noise_multiplier``).
    sensitivity : float, optional
        The query's sensitivity (l2 Gaussian, l1 Laplace; default 1); not for DP-SGD, whose clipping norm
        is the sensitivity and whose noise multiplier is in its units.
    sample_rate, steps, batch_size, epochs, n_records
        DP-SGD's schedule, in one of its two forms (DP-SGD only).
    neighbours : {"add_remove", "replace_one"}
        The relation the sensitivity or the accounting is for.
    """

    mechanism: str = "gaussian"
    sensitivity: float | None = None
    sample_rate: float | None = None
    steps: int | None = None
    batch_size: int | None = None
    epochs: int | None = None
    n_records: int | None = None
    neighbours: str = "add_remove"

    def __post_init__(self) -> None:
        self.family()  # the family checks its parameters

    def _schedule(self) -> tuple[float, int]:
        """DP-SGD's ``(sample_rate, steps)``, after refusing a schedule given to another mechanism."""
        mech = check_choice("mechanism", self.mechanism, MECHANISMS, owner=OWNER)
        if mech != "dpsgd":
            for name in _SCHEDULE:
                if getattr(self, name) is not None:
                    raise MipkitValueError(f"{name} applies only to the dpsgd mechanism.")
            return 0.0, 0
        if self.sensitivity is not None:
            raise MipkitValueError(
                "sensitivity does not apply to the dpsgd mechanism (the clipping norm is the sensitivity; "
                "the noise multiplier is in its units)."
            )
        q, steps = sample_rate_and_steps(*(getattr(self, k) for k in _SCHEDULE), owner=OWNER)
        for name, v in (("sample_rate", q), ("steps", steps)):
            if v is None:
                raise MipkitValueError(f"The dpsgd mechanism needs {SCHEDULE_WORDS}; missing {name}.")
        return q, steps  # type: ignore[return-value]

    def family(self) -> MechanismFamily:
        """The family of :mod:`mipkit.accounting.families` with these fixed parameters."""
        from mipkit.accounting.families import dpsgd_family, gaussian_family, laplace_family

        q, steps = self._schedule()
        rel = check_choice("neighbours", self.neighbours, ("add_remove", "replace_one"), owner=OWNER)
        if self.mechanism == "dpsgd":
            return dpsgd_family(q, steps, neighbours=rel)
        sens = 1.0 if self.sensitivity is None else self.sensitivity
        build = gaussian_family if self.mechanism == "gaussian" else laplace_family
        return build(sens, neighbours=rel)
