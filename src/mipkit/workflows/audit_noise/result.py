"""What ``audit_noise`` returns: :class:`AuditNoiseResult`, the optimal attack's accuracy and the bound."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mipkit.game.mip_game import MIPGameResult
from mipkit.mechanisms.certificate import MIPCertificate
from mipkit.workflows.audit_noise.config import AuditNoiseConfig

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["AuditNoiseResult"]


@dataclass(frozen=True)
class AuditNoiseResult:
    """The MIP game against the noise-wrapped model: the measurement, its intervals and the certificate.

    Attributes
    ----------
    game : MIPGameResult
        Correct guesses per target, with Clopper-Pearson intervals (which treat every guess as independent)
        and the bound ``max(k/n, 1 - k/n) + eta``.
    certificate : MIPCertificate
        The certificate of the mechanism attacked; an estimated sigma and the noise values scaled by it
        (statistics of the private data) are withheld unless the config's ``include_estimates``.
    intervals : dict
        :func:`~mipkit.workflows.audit_noise.intervals.noise_intervals` of the guesses (the cluster bootstrap
        over releases and targets), with ``bound``, ``certificate_exact`` and ``verdict``: ``"above the
        bound"`` when the interval's lower end exceeds the bound (a finding), else ``"within the bound"``.
    config : AuditNoiseConfig
    n_records : int
        Rows of the pool.
    domain : dict or None
        Where the encoding came from (None for arrays the caller encoded).
    """

    game: MIPGameResult
    certificate: MIPCertificate
    intervals: dict
    config: AuditNoiseConfig
    n_records: int
    domain: dict | None = None

    def _fields(self) -> dict[str, Any]:
        return {
            "game": self.game.to_dict(),
            "certificate": self.certificate.to_dict(),
            "model": self.config.model_name,
            "intervals": dict(self.intervals),
            "n_records": int(self.n_records),
            "domain": self.domain,
        }

    def summary(self) -> str:
        """The paragraph for a DPIA: the measured accuracy of the optimal attack against the certificate's
        bound, and the premises (data-dependent first)."""
        from mipkit.report.dpia import audit_noise_paragraph

        return audit_noise_paragraph(self._fields())

    def to_dict(self) -> dict[str, Any]:
        """The game, the certificate (estimates withheld unless asked for), the intervals, the model, the
        pool's size, the encoding's provenance and the summary."""
        return {**self._fields(), "summary": self.summary()}

    def to_frame(self) -> pd.DataFrame:
        """One row per target and a pooled row (``target`` ``"all"``): accuracy, Clopper-Pearson interval,
        correct guesses and trials; the pooled row also has the cluster-bootstrap interval and the bound."""
        import pandas as pd

        game = self.game.to_dict()
        rows = [
            {
                "target": str(r["target"]),
                "accuracy": r["accuracy"],
                "ci_low": r["ci"][0],
                "ci_high": r["ci"][1],
                "correct": r["correct"],
                "trials": r["trials"],
            }
            for r in game["per_target"]
        ]
        lo, hi = self.intervals["accuracy_ci"]
        rows.append(
            {
                "target": "all",
                "accuracy": game["accuracy"],
                "ci_low": game["ci"][0],
                "ci_high": game["ci"][1],
                "correct": game["correct"],
                "trials": game["trials"],
                "cluster_ci_low": lo,
                "cluster_ci_high": hi,
                "bound": game["accuracy_bound"],
            }
        )
        return pd.DataFrame(rows)

    def write(self, out: str | Path) -> Path:
        """Write ``out/results.json`` (kind ``"audit-noise"``: :meth:`to_dict`); return the folder."""
        from mipkit.report.results import write_results

        write_results(out, self.to_dict(), kind="audit-noise")
        return Path(out)
