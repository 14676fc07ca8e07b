"""What the synthetic-data audit acts on: :class:`SyntheticRelease`, the released table and its references."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mipkit._validation import MipkitValueError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mipkit.synthesizers.certificate import SynthesisCertificate

__all__ = ["SyntheticRelease"]


@dataclass(frozen=True)
class SyntheticRelease:
    """A synthetic table, the table its generator was trained on, and records it never saw.

    Parameters
    ----------
    original : DataFrame
        The generator's training data.
    synthetic : DataFrame
        Its output (the original's columns).
    holdout, control : DataFrame, optional
        Records of the same population not used for training. ``holdout`` (else ``control``) is the
        non-member set of the NNAA test term, the DCR attack, near copies, singling out and linkability;
        ``control`` also gives anonymeter's control-set risk for attribute inference.
    certificate : SynthesisCertificate, optional
        The synthesizer's certificate (``certificate.json`` of ``mipkit synthesize``): the audit then puts
        the certified bounds beside the measured risks (``certified_bounds.json``).
    sources : mapping, optional
        Where the tables came from (e.g. file names and their SHA-256), recorded in ``inputs``.
    """

    original: pd.DataFrame = field(repr=False)
    synthetic: pd.DataFrame = field(repr=False)
    holdout: pd.DataFrame | None = field(default=None, repr=False)
    control: pd.DataFrame | None = field(default=None, repr=False)
    certificate: SynthesisCertificate | None = None
    sources: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        from mipkit.synthesizers.certificate import SynthesisCertificate

        if self.certificate is not None and not isinstance(self.certificate, SynthesisCertificate):
            raise MipkitValueError(
                "The certificate of a SyntheticRelease must be a SynthesisCertificate "
                f"(SynthesisCertificate.read(path)). Got {type(self.certificate).__name__}."
            )

    @property
    def nonmember(self) -> tuple[pd.DataFrame | None, str | None]:
        """The unseen records and their name: the holdout table, else the control table, else none."""
        if self.holdout is not None:
            return self.holdout, "holdout"
        if self.control is not None:
            return self.control, "control"
        return None, None

    def tables(self) -> dict[str, pd.DataFrame | None]:
        """The four tables by name (``original``, ``synthetic``, ``control``, ``holdout``)."""
        return {
            "original": self.original,
            "synthetic": self.synthetic,
            "control": self.control,
            "holdout": self.holdout,
        }
