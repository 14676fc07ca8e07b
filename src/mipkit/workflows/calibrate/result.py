"""What :func:`mipkit.workflows.calibrate.calibrate` returns: :class:`CalibrateResult`.

It holds the calibration record of :func:`mipkit.accounting.calibration.calibrate_noise`
(:class:`~mipkit.accounting.calibration.Calibration`): ``to_dict()`` is its JSON (the ``mipkit calibrate
--json`` contract: ``mechanism``, the calibrated record; ``noise_lower``, ``minimal``, ``tolerance``: how
close to the least safe noise it is proved to be), ``summary()`` the paragraph for a DPIA
(:func:`mipkit.report.dpia.calibration_paragraph`), ``to_frame()`` its figures, ``write(out)`` the folder
``calibration.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mipkit.workflows._text_table import TextTable
from mipkit.workflows.calibrate.config import CalibrateConfig

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mipkit.accounting.calibration import Calibration

__all__ = ["CALIBRATION_FILE", "CalibrateResult"]

CALIBRATION_FILE = "calibration.json"
#: Parameters of the target and the family, in the order the table shows them.
_PARAMETERS = ("fpr", "baseline", "base_rate", "recall", "delta", "sensitivity", "sample_rate", "steps")


@dataclass(frozen=True)
class CalibrateResult:
    """The least noise of a family that meets a risk target.

    Attributes
    ----------
    calibration : Calibration
        The record of :func:`~mipkit.accounting.calibration.calibrate_noise`.
    family : str
        The family calibrated, in words (``"gaussian"``, ``"laplace"``, ``"dpsgd"`` or the family's label).
    config : CalibrateConfig
        The target and the tolerance.
    """

    calibration: Calibration
    family: str
    config: CalibrateConfig

    def summary(self) -> str:
        """The paragraph for a DPIA: the noise, what it guarantees, and the premise."""
        from mipkit.report.dpia import calibration_paragraph

        return calibration_paragraph(self.calibration)

    def to_dict(self) -> dict[str, Any]:
        """The ``mipkit calibrate --json`` object: every field of the calibration record."""
        return self.calibration.to_dict()

    def figures(self) -> dict[str, float]:
        """The calibration's figures by name: the noise, the target, the risks at the noise, the target's
        and family's parameters, and the proof of minimality (where there is one)."""
        cal = self.calibration
        out = {"noise": cal.noise, "target_value": cal.target_value}
        out |= {k: float(cal.details[k]) for k in _PARAMETERS if k in cal.details}
        out |= {"achieved": cal.achieved, "achieved_fine": cal.achieved_fine}
        for key in ("achieved_lower", "noise_lower", "tolerance"):
            if getattr(cal, key) is not None:
                out[key] = float(getattr(cal, key))
        return out | {"seconds": cal.seconds}

    def to_frame(self) -> pd.DataFrame:
        """One row per figure of :meth:`figures`: ``quantity`` and ``value``."""
        import pandas as pd

        return pd.DataFrame(list(self.figures().items()), columns=["quantity", "value"])

    def tables(self) -> list[TextTable]:
        """The table as the command line prints it."""
        from mipkit.report.plain_language import format_risk

        cal = self.calibration
        rows = [
            (f"Calibrated {cal.parameter_name}", f"{cal.noise:.6g}"),
            (f"Target ({cal.target})", f"{cal.target_value:g}"),
        ]
        rows += [(f"  {key}", f"{cal.details[key]:g}") for key in _PARAMETERS if key in cal.details]
        rows.append(("Neighbours of the risk", str(cal.neighbours)))
        rows.append(("Risk at this noise (certified)", format_risk(cal.achieved_fine, cal.target_value)))
        if cal.achieved_lower is not None and cal.achieved_lower != cal.achieved_fine:
            rows.append(("Risk at this noise (lower end)", f"{cal.achieved_lower:.6g}"))
        if cal.tolerance is not None:
            rows.append(
                (
                    f"Least safe noise, within {100 * cal.tolerance:.2g}%",
                    "yes" if cal.minimal else "no (cost cap reached)",
                )
            )
            if cal.noise_lower is not None:
                rows.append(("Unsafe below", f"{cal.noise_lower:.6g}"))
        rows += [("Converged", "yes" if cal.converged else "no"), ("Time", f"{cal.seconds:.2f} s")]
        title = f"Calibration: {self.family}, target {cal.target}"
        return [TextTable(title, ("Quantity", "Value"), tuple(rows), align="lr")]

    def write(self, out: str | Path) -> Path:
        """Write ``calibration.json`` (:meth:`to_dict`) into the folder ``out``; returns it."""
        from mipkit._runfolder import check_output_path, staged_writes
        from mipkit.report.results import write_json_atomic

        folder = check_output_path(out)
        with staged_writes(folder, replaces=(CALIBRATION_FILE,)):
            write_json_atomic(folder / CALIBRATION_FILE, self.to_dict())
        return folder
