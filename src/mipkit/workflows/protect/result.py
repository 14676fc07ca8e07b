"""What ``protect`` returns: :class:`ProtectResult`, the released model, its certificate and their views."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mipkit.mechanisms.certificate import MIPCertificate
from mipkit.workflows.protect.config import ProtectConfig

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ProtectResult"]


@dataclass(frozen=True)
class ProtectResult:
    """The release of ``protect``: the noisy model as published, and what its certificate says.

    Attributes
    ----------
    model : MIPNoise
        :meth:`MIPNoise.release() <mipkit.mechanisms.MIPNoise.release>`: the noisy parameters, the schema
        and the certificate; without the fits on halves, the secret half, and (unless the config's
        ``include_estimates``) an estimated sigma and the noise values scaled by it.
    config : ProtectConfig
        The settings.
    n_records : int
        Rows the release was made from.
    domain : dict or None
        Where the encoding came from (None for arrays the caller encoded).
    """

    model: Any
    config: ProtectConfig
    n_records: int
    domain: dict | None = None

    @property
    def certificate(self) -> MIPCertificate:
        """The published certificate (``model.certificate_``)."""
        return self.model.certificate_

    def summary(self) -> str:
        """The paragraph for a DPIA: what was released, eta in words, the premises (data-dependent first)."""
        from mipkit.report.dpia import protect_paragraph

        return protect_paragraph(self._fields())

    def _fields(self) -> dict[str, Any]:
        return {
            **self.certificate.to_dict(),
            "model": self.config.model_name,
            "attributes": list(self.config.attributes),
            "n_records": int(self.n_records),
            "domain": self.domain,
        }

    def to_dict(self) -> dict[str, Any]:
        """The certificate's fields (estimates withheld unless asked for), the model, the row count, the
        encoding's provenance and the summary: nothing else computed from the data."""
        return {**self._fields(), "summary": self.summary()}

    def to_frame(self) -> pd.DataFrame:
        """The certificate as one tidy table: ``field``, ``value`` (one row per scalar field; a list field,
        such as per-coordinate sigma, one row per coordinate with its ``index``)."""
        import pandas as pd

        rows = []
        for key, value in self.certificate.to_dict().items():
            if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
                rows += [{"field": key, "index": i, "value": v} for i, v in enumerate(value)]
            elif not isinstance(value, (dict, list, tuple)):
                rows.append({"field": key, "index": None, "value": value})
        return pd.DataFrame(rows, columns=["field", "index", "value"])

    def write(self, out: str | Path) -> Path:
        """Save the released model with joblib to the file ``out`` (whole or not at all); return the path."""
        import joblib

        from mipkit._runfolder import atomic_write

        return atomic_write(Path(out), lambda f: joblib.dump(self.model, f))
