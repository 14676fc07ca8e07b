"""The result of :func:`mipkit.workflows.synthesize.run.synthesize`: the synthetic table and its certificate.

``summary()`` is the paragraph a privacy officer can paste into a DPIA
(:func:`mipkit.report.dpia_synthetic.synthesize_paragraph`), ``to_dict()`` what may leave the machine (no
record of the table: the release is ``synthetic.csv``), ``to_frame()`` one row per certified or measured
quantity, ``write(out)`` the folder with ``synthetic.csv`` and ``certificate.json``, and ``json_summary()``
what ``mipkit synthesize --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit.synthesizers.certificate import SynthesisCertificate

__all__ = ["SynthesizeResult"]

FRAME_COLUMNS = ["quantity", "relation", "value"]
#: The certificate's details that describe how the fit ran (AIM's rounds), copied into ``to_dict()["fit"]``.
FIT_KEYS = ("rounds", "horizon", "rho_used", "workload", "target_cliques", "round_log")


@dataclass(frozen=True)
class SynthesizeResult:
    """A synthetic table, the certificate of the synthesizer that made it, and the time it took.

    Attributes
    ----------
    method : str
    synthetic : DataFrame
    certificate : SynthesisCertificate
    seconds : float
        Fit, sampling and the utility report, wall clock (a resumed fit adds what the killed run spent up
        to its checkpoint).
    fit_seconds : float
    delta : float or None
    resumed_from : int
        Where a killed fit was resumed from (``checkpoint``): DP-WGAN-GP's generator iteration, AIM's round;
        0 when it ran whole.
    quality : dict or None
        The utility report (``SynthesizeConfig.quality``; a statistic of the real records, not covered by
        the certificate), ``None`` when not asked for.
    """

    method: str
    synthetic: pd.DataFrame = field(repr=False)
    certificate: SynthesisCertificate
    seconds: float
    fit_seconds: float
    delta: float | None
    resumed_from: int = 0
    quality: dict | None = None

    def json_summary(self) -> dict:
        """What ``mipkit synthesize --json`` prints: method, epsilon, delta, rows, seconds, certified, ...,
        ``domain`` (where the column domain came from, and its share of the budget) and, when asked for,
        ``quality``."""
        c = self.certificate
        out = {
            "method": self.method,
            "epsilon": c.headline_epsilon,
            "delta": c.delta if c.certified else self.delta,
            "neighbours": c.neighbours,
            "rows": int(len(self.synthetic)),
            "seconds": float(self.seconds),
            "fit_seconds": float(self.fit_seconds),
            "certified": c.summary(),
            "epsilon_by_relation": dict(c.epsilon),
            "noise_source": c.noise_source,
            "resumed_from": self.resumed_from,
            "domain": c.details.get("domain"),
        }
        return out | ({"quality": self.quality} if self.quality is not None else {})

    def to_dict(self) -> dict:
        """:meth:`json_summary` with the released columns, the certificate's notes and, for AIM, ``fit``: the
        rounds run, the horizon, the rho spent, the workload, the cliques measured with the target and the
        round log (each round's clique, ``sigma``, selection ``epsilon``, rho spent so far) (JSON types)."""
        from mipkit.report.results import to_jsonable

        extra = {"columns": [str(c) for c in self.synthetic.columns], "notes": list(self.certificate.notes)}
        fit = {k: self.certificate.details[k] for k in FIT_KEYS if k in self.certificate.details}
        return to_jsonable({**self.json_summary(), **extra, **({"fit": fit} if fit else {})})

    def summary(self) -> str:
        """The paragraph a privacy officer can paste into a DPIA: the table released, its certified risk in
        words, what it means, and the premises (:func:`mipkit.report.dpia_synthetic.synthesize_paragraph`)."""
        from mipkit.report.dpia_synthetic import synthesize_paragraph

        return synthesize_paragraph(self.to_dict())

    def to_frame(self) -> pd.DataFrame:
        """One row per quantity (``quantity``, ``relation`` where it depends on one, ``value``): the epsilon
        of each relation, delta, the certified eta, advantage and TPRs at the certificate's FPRs, the domain's
        share of epsilon, the table's size, the time taken and, for AIM, the rounds run and those that
        measured a clique with the target."""
        d = self.to_dict()
        rows: list[tuple[str, Any, Any]] = [
            ("epsilon", relation, eps) for relation, eps in d["epsilon_by_relation"].items()
        ]
        if d["delta"] is not None:
            rows.append(("delta", d["neighbours"], d["delta"]))
        cert = d["certified"]
        if cert["eta"] is not None:
            rows += [("eta", "replace_one", cert["eta"]), ("advantage", "add_remove", cert["advantage"])]
            rows += [(f"tpr_at_fpr_{fpr}", "add_remove", tpr) for fpr, tpr in cert["tpr_at_fpr"].items()]
        domain = d.get("domain") or {}
        if domain.get("epsilon") is not None:
            rows.append(("domain_epsilon", d["neighbours"], domain["epsilon"]))
        rows += [("rows", None, d["rows"]), ("columns", None, len(d["columns"]))]
        rows += [("seconds", None, d["seconds"]), ("fit_seconds", None, d["fit_seconds"])]
        if "rounds" in d.get("fit", {}):  # AIM: the rounds run and those that measured the target
            rows += [("rounds", None, d["fit"]["rounds"])]
            rows += [("target_rounds", None, len(d["fit"].get("target_cliques", [])))]
        frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
        return frame.astype({"value": float})

    def write(self, out: str | Path, *, raw_csv: bool = False) -> Path:
        """Write ``synthetic.csv`` (formula cells neutralised for spreadsheets unless ``raw_csv``:
        :func:`mipkit.data.csv_out.to_safe_csv`) and ``certificate.json`` into the folder ``out``
        (created); return its path."""
        from mipkit._runfolder import atomic_write, staged_writes
        from mipkit.data.csv_out import to_safe_csv

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with staged_writes(folder, replaces=("synthetic.csv", "certificate.json")):  # renamed together
            atomic_write(folder / "synthetic.csv", to_safe_csv(self.synthetic, raw=raw_csv))
            self.certificate.write(folder / "certificate.json")
        return folder
