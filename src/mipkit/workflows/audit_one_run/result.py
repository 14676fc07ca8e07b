"""The outcome of a one-run audit: :class:`AuditOneRunResult`, the epsilon lower bound beside the certificate
it is checked against, and its views (the plain paragraph, ``results.json``, a table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit.metrics.dp_lower_bounds import OneRunBound
from mipkit.workflows.audit_one_run.config import AuditOneRunConfig

__all__ = ["BELOW", "KIND", "NO_CERTIFICATE", "VIOLATION", "AuditOneRunResult"]

KIND = "audit-one-run"
NO_CERTIFICATE = "no certificate"
BELOW = "below the certificate"
VIOLATION = "VIOLATION: lower bound above the certificate"
_FRAME_ROWS = (
    "epsilon_lower",
    "delta",
    "confidence",
    "certified_epsilon",
    "ratio",
    "canaries",
    "canaries_included",
    "guesses",
    "correct",
    "n_train",
)


@dataclass(frozen=True)
class AuditOneRunResult:
    """What :func:`mipkit.workflows.audit_one_run.run.audit_one_run` measured (frozen).

    Attributes
    ----------
    bound : OneRunBound
        The epsilon lower bound at ``delta`` and the guesses behind it.
    certified_epsilon : float or None
        The trainer's certified add-or-remove epsilon at the same delta (None without a certificate).
    certificate : dict or None
        The trainer's certificate.
    n_train : int
        Records the model was trained on (the other rows and the included canaries).
    included : int
        Canaries that went into the training set.
    test_note : str
        How the canaries were scored.
    config : AuditOneRunConfig
        The settings of the run.
    seconds : float
        Wall time of the run.
    data_source : dict
        What the audited records were: ``data`` (the file; None for a DataFrame or arrays) and ``target``.
    """

    bound: OneRunBound
    certified_epsilon: float | None
    certificate: dict | None
    n_train: int
    included: int
    test_note: str
    config: AuditOneRunConfig
    seconds: float
    data_source: Mapping[str, Any] = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        """The measured lower bound exceeds the certified epsilon."""
        return self.certified_epsilon is not None and self.bound.epsilon > self.certified_epsilon

    @property
    def exceeds_limit(self) -> bool:
        """The measured lower bound exceeds the configured ``fail_above``."""
        limit = self.config.fail_above
        return limit is not None and self.bound.epsilon > float(limit)

    def finding(self, limit: str = "the limit") -> str | None:
        """Why the audit fails, in one sentence (the bound above the certificate, else above the limit, named
        ``limit``), or None when it does not."""
        exceeds = f"the measured lower bound {self.bound.epsilon:.4g} exceeds"
        if self.violation:
            return f"{exceeds} the certified epsilon {self.certified_epsilon:.4g}."
        if self.exceeds_limit:
            return f"{exceeds} {limit} {float(self.config.fail_above):g}."
        return None

    def config_dict(self) -> dict[str, Any]:
        """What defined the run: the data (``data``, ``target``) and every setting, as JSON."""
        return {**dict(self.data_source), **self.config.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        """The bound, the certificate, the guesses and the run's facts as JSON (``results.json``'s fields)."""
        b = self.bound
        ratio = b.epsilon / self.certified_epsilon if self.certified_epsilon else None
        if self.certified_epsilon is None:
            status = NO_CERTIFICATE
        else:
            status = VIOLATION if self.violation else BELOW
        return {
            "epsilon_lower": b.epsilon,
            "delta": b.delta,
            "confidence": b.confidence,
            "certified_epsilon": self.certified_epsilon,
            "ratio": ratio,
            "verdict": status,
            "canaries": b.m,
            "canaries_included": self.included,
            "guesses": b.n_guess,
            "correct": b.n_correct,
            "k_plus": b.k_plus,
            "k_minus": b.k_minus,
            "rules_tried": b.rules_tried,
            "n_train": self.n_train,
            "certificate": self.certificate,
            "scores": self.test_note,
            "model": self.config.model,
            "params": self.config.params,
            "seconds": self.seconds,
            "config": self.config_dict(),
        }

    def summary(self) -> str:
        """The plain paragraph a privacy officer can paste into a DPIA: what was audited, the lower bound on
        epsilon in words, what it means and its premises (:func:`mipkit.report.dpia.one_run_paragraph`)."""
        from mipkit.report.dpia import one_run_paragraph

        return one_run_paragraph(self.to_dict())

    def headline(self) -> str:
        """The bound (and the certificate) in one line each."""
        d = self.to_dict()
        text = (
            f"One-run audit: epsilon >= {d['epsilon_lower']:.4g} at delta {d['delta']:g} "
            f"({100 * d['confidence']:g}% confidence; {d['correct']} of {d['guesses']} guesses right, "
            f"{d['canaries']} canaries)."
        )
        if d["certified_epsilon"] is not None:
            text += f"\nCertified (add/remove): epsilon <= {d['certified_epsilon']:.4g}: {d['verdict']}."
        return text

    def to_frame(self) -> pd.DataFrame:
        """One row per measured quantity (index ``quantity``): the bound, its delta and confidence, the
        certified epsilon and the ratio, the canaries, guesses and training records."""
        d = self.to_dict()
        return pd.DataFrame(
            {"value": [d[k] for k in _FRAME_ROWS]}, index=pd.Index(_FRAME_ROWS, name="quantity")
        )

    def write(self, out: str | Path) -> Path:
        """Write ``results.json`` (kind ``"audit-one-run"``) to the run folder ``out``; returns the folder."""
        from mipkit.report.results import write_results

        folder = Path(out)
        write_results(folder, self.to_dict(), kind=KIND)
        return folder
