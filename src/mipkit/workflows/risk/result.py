"""What :func:`mipkit.workflows.risk.risk` returns: :class:`RiskResult`, a guarantee's certified risks.

``to_dict()`` is the ``mipkit risk --json`` contract: the risk profile
(:func:`mipkit.accounting.profile.risk_profile`: each risk with ``<key>_lower`` and ``relation_of``) with
``mechanism``, the record's ``to_dict()``. ``summary()`` is the paragraph for a DPIA
(:func:`mipkit.report.dpia.risk_paragraph`), ``to_frame()`` the table of every figure once, ``write(out)``
the folder ``risk.json`` and ``tradeoff.png``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mipkit.workflows.risk.config import RiskConfig
from mipkit.workflows.risk.guarantee import Guarantee
from mipkit.workflows.risk.table import risk_rows, risk_table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mipkit.accounting.mechanisms import Mechanism
    from mipkit.workflows._text_table import TextTable

__all__ = ["FIGURE_FILE", "RISK_FILE", "RiskResult"]

RISK_FILE = "risk.json"
FIGURE_FILE = "tradeoff.png"


@dataclass(frozen=True)
class RiskResult:
    """The certified risks of a guarantee.

    Attributes
    ----------
    guarantee : Guarantee
        What was asked about.
    mechanism : Mechanism
        Its mechanism record.
    profile : dict
        :func:`~mipkit.accounting.profile.risk_profile` of the record's trade-off curve.
    config : RiskConfig
        The settings the profile was computed with.
    curve : TradeoffCurve
        The record's trade-off curve (for the figure).
    """

    guarantee: Guarantee
    mechanism: Mechanism
    profile: dict
    config: RiskConfig
    curve: Any = field(default=None, repr=False, compare=False)

    def summary(self) -> str:
        """The paragraph for a DPIA: the release, the headline risk, what it means, the premise."""
        from mipkit.report.dpia import risk_paragraph

        return risk_paragraph(self.profile, self.mechanism.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The ``mipkit risk --json`` object: ``mechanism`` and every key of the risk profile."""
        return {"mechanism": self.mechanism.to_dict(), **self.profile}

    def to_frame(self) -> pd.DataFrame:
        """One row per figure of the table: ``risk``, ``neighbours``, ``bound`` and ``lower`` (``inf``
        where no finite value exists)."""
        import pandas as pd

        def value(v: float | None) -> float:
            return math.inf if v is None else float(v)

        rows = risk_rows(self.profile, self.mechanism.to_dict())
        return pd.DataFrame(
            [(r.label, r.relation, value(r.bound), value(r.lower)) for r in rows],
            columns=["risk", "neighbours", "bound", "lower"],
        )

    def tables(self) -> list[TextTable]:
        """The table as the command line prints it, with the lines that say what it means."""
        return [risk_table(self.profile, self.mechanism.to_dict())]

    def figure(self) -> Any:
        """The trade-off curve and the precision at each base rate (a matplotlib figure)."""
        from mipkit.accounting.plots import plot_tradeoff

        return plot_tradeoff(self.curve, base_rates=self.config.base_rates)

    def write_figure(self, path: str | Path) -> Path:
        """Write :meth:`figure` to ``path`` (its suffix names the format: .png, .pdf or .svg)."""
        from mipkit._runfolder import atomic_write

        target = Path(path)
        fig = self.figure()
        return atomic_write(target, lambda f: fig.savefig(f, format=target.suffix[1:].lower(), dpi=110))

    def write(self, out: str | Path) -> Path:
        """Write ``risk.json`` (:meth:`to_dict`) and ``tradeoff.png`` (:meth:`figure`) into the folder
        ``out``; returns it."""
        from mipkit._runfolder import check_output_path, staged_writes
        from mipkit.report.results import write_json_atomic

        folder = check_output_path(out)
        with staged_writes(folder, replaces=(RISK_FILE, FIGURE_FILE)):
            write_json_atomic(folder / RISK_FILE, self.to_dict())
            self.write_figure(folder / FIGURE_FILE)
        return folder
