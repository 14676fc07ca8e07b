"""The outcome of an audit of one model's outputs: :class:`AuditScoresResult`.

It is an :class:`~mipkit.workflows.audit.result.AuditResult` (same metrics, ``to_dict`` / ``to_frame`` /
``write`` / ``_repr_html_``) whose ``config`` is the audit's :class:`~mipkit.workflows.audit_scores.config.
MeasureConfig` and whose results say which question was answered and which attacks were skipped and why.
Its run folder holds ``results.json`` of kind ``"audit-fitted"``, ``config.json``, ``scores.parquet`` and
``report.html`` (:mod:`mipkit.report.fitted_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit._runfolder import atomic_write, staged_writes
from mipkit.report.results import to_jsonable, write_json_atomic, write_results
from mipkit.workflows.audit.result import (
    CONFIG_FILE,
    FITTED_MODEL,
    QUESTIONS,
    RUN_FILES,
    SCORES_FILE,
    AuditResult,
)
from mipkit.workflows.audit_scores.records import (
    MOST_EXPOSED,
    RANK_MEANING,
    ROW_MEANING,
    most_exposed_members,
    record_id_field,
)

__all__ = ["FITTED_NOTES", "RECORD_BOOTSTRAP_METHOD", "AuditScoresResult"]

RECORD_BOOTSTRAP_METHOD = (
    "record bootstrap (one target model; the records are independent draws, so resampling records is the "
    "valid interval; the two-way bootstrap with a single model reduces to it); intervals simultaneous over "
    "the attacks (max-|t| critical value), so the strongest attack's interval accounts for choosing it"
)
FITTED_NOTES = (
    "auc and tpr_at_fpr at the top level are the largest over the attacks; eta is that of the attack with "
    "the largest held-out eta (strongest_attack): a lower bound on how much this model reveals.",
    "eta_ci at the top level (and headline) is a record-bootstrap interval, simultaneous over the attacks. "
    "Each attack's *_cluster fields hold the same record bootstrap per attack; its eta_ci / tpr_ci / auc_ci "
    "treat records as independent without resampling.",
    "eta's hard guesses use a threshold chosen on the other half of the records (two-fold cross-fitting).",
)


@dataclass(frozen=True, eq=False)
class AuditScoresResult(AuditResult):
    """What :func:`mipkit.audit_scores` measured on one model's outputs.

    Attributes (beyond :class:`AuditResult`'s; ``config`` is the audit's config, ``setup`` the design,
    written as ``"design"``)
    ----------
    question : str
        :data:`~mipkit.workflows.audit.result.FITTED_MODEL`: which question the numbers answer.
    skipped : dict attack row -> reason
        Attacks of the request that did not run, and why (no reference models, none trained on the
        audited records, ...).
    """

    question: str = FITTED_MODEL
    skipped: Mapping[str, str] = field(default_factory=dict)

    @property
    def settings(self) -> dict[str, Any]:
        """The audit's measurement settings (``settings`` of ``results.json``, written to ``config.json``)."""
        return self.config.measure_settings()

    def summary(self) -> str:
        """The paragraph a privacy officer can paste into a DPIA: what was audited, the headline risk in
        words, what it means and its premises (:func:`mipkit.report.dpia.audit_paragraph`)."""
        from mipkit.report.dpia import audit_paragraph

        return audit_paragraph(self.to_dict())

    def to_dict(self) -> dict:
        """The fields of ``results.json`` (kind ``"audit-fitted"``), as JSON types."""
        out = super().to_dict()
        out.pop("game", None)
        out.pop("config", None)
        head = {
            "question": {"answered": self.question, "meaning": QUESTIONS[self.question]},
            "skipped": dict(self.skipped),
        }
        rest = {
            "design": to_jsonable(dict(self.setup)),
            "settings": to_jsonable(self.settings),
            "notes": list(FITTED_NOTES),
        }
        return {**head, **{k: v for k, v in out.items() if k not in ("notes", "question")}, **rest}

    def most_exposed(self, k: int = MOST_EXPOSED) -> pd.DataFrame:
        """The ``k`` members ranked highest by the strongest attack: their rank among all audited records,
        ``record``, ``row``, the id and the score (:func:`~mipkit.workflows.audit_scores.records.
        most_exposed_members`)."""
        field_ = record_id_field(self.id_column)
        return most_exposed_members(self.scores, self.strongest_attack, k, id_field=field_)

    def records_block(self) -> dict:
        """``results.json``'s ``records``: how the per-record table names records, and the most exposed."""
        return {
            "id_column": self.id_column,
            "id_field": record_id_field(self.id_column),
            "row_field": "row",
            "row": ROW_MEANING,
            "rank": RANK_MEANING,
            "most_exposed_attack": self.strongest_attack,
            "most_exposed": self.most_exposed().to_dict(orient="records"),
        }

    def _headline(self) -> str:
        model = str(self.trainer.get("import_path", "model"))
        s = self.setup
        head = (
            f"Membership-inference audit of {self.question} ({model}): {s.get('members')} members and "
            f"{s.get('nonmembers')} non-members, {s.get('n_reference_models', 0)} reference models"
        )
        _, sep, rest = super()._headline().partition("; strongest attack")  # the measurement, as there
        return head + sep + rest

    def __repr__(self) -> str:
        return type(self).__name__ + super().__repr__().removeprefix("AuditResult")

    def write(self, out: str | Path, *, report: bool = True) -> Path:
        """Write ``config.json``, ``results.json`` (kind ``"audit-fitted"``), ``scores.parquet`` and, with
        ``report``, ``report.html`` to the folder ``out``, all renamed into place together. Returns the
        folder."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        config = {**to_jsonable(self.settings), "data_sha256_16": self.data_sha256_16}
        if self.run_key:
            config["run_key"] = self.run_key
        with staged_writes(folder, replaces=RUN_FILES):  # the report is committed with the files it shows
            write_json_atomic(folder / CONFIG_FILE, config)
            write_results(folder, self.to_dict(), kind="audit-fitted")
            atomic_write(folder / SCORES_FILE, lambda f: self.scores.to_parquet(f, index=False))
            if report:
                from mipkit.report import write_html_report
                from mipkit.report.fitted_report import build

                title, summary, sections = build(folder)
                write_html_report(folder, title=title, summary=summary, sections=sections)
        return folder
