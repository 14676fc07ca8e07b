"""The outcome of an audit of one fitted model: :class:`FittedAuditResult`.

It is an :class:`~mipkit.workflows.audit.result.AuditResult` (same metrics, ``to_dict`` / ``to_frame`` /
``write`` / ``_repr_html_`` protocol) whose results say which question was answered and which attacks were
skipped and why. Its run folder holds ``results.json`` of kind ``"audit-fitted"``, ``config.json``,
``scores.parquet`` and ``report.html`` (:mod:`mipkit.report.fitted_report`).
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
    TRAINING_PROCEDURE,
    AuditResult,
)
from mipkit.workflows.audit_fitted.records import (
    MOST_EXPOSED,
    RANK_MEANING,
    ROW_MEANING,
    most_exposed_members,
    record_id_field,
)

__all__ = [
    "FITTED_MODEL",
    "FITTED_NOTES",
    "QUESTIONS",
    "RECORD_BOOTSTRAP_METHOD",
    "TRAINING_PROCEDURE",
    "FittedAuditResult",
]

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
class FittedAuditResult(AuditResult):
    """What :func:`mipkit.workflows.audit_scores.run.audit_predictions` (and
    :func:`mipkit.workflows.audit_fitted.run.audit_fitted`) measured on one fitted model.

    Attributes (beyond :class:`AuditResult`'s; ``setup`` holds the design, written as ``"design"``)
    ----------
    question : str
        :data:`FITTED_MODEL`: which question the numbers answer (see :data:`QUESTIONS`).
    skipped : dict attack row -> reason
        Attacks of the request that did not run, and why (no reference models, none trained on the
        audited records, ...).
    settings : dict
        The audit's own settings (written to ``config.json``).
    """

    question: str = FITTED_MODEL
    skipped: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

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
            "settings": to_jsonable(dict(self.settings)),
            "notes": list(FITTED_NOTES),
        }
        return {**head, **{k: v for k, v in out.items() if k not in ("notes", "question")}, **rest}

    def most_exposed(self, k: int = MOST_EXPOSED) -> pd.DataFrame:
        """The ``k`` members ranked highest by the strongest attack: their rank among all audited records,
        ``record``, ``row``, the id and the score (:func:`~mipkit.workflows.audit_fitted.records.
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
        return "Fitted" + super().__repr__()

    def write(self, run_dir: str | Path, *, report: bool = True) -> Path:
        """Write ``config.json``, ``results.json`` (kind ``"audit-fitted"``), ``scores.parquet`` and, with
        ``report``, ``report.html`` to ``run_dir``. Returns the folder."""
        out = Path(run_dir)
        out.mkdir(parents=True, exist_ok=True)
        config = {**to_jsonable(dict(self.settings)), "data_sha256_16": self.data_sha256_16}
        if self.run_key:
            config["run_key"] = self.run_key
        with staged_writes(out, replaces=RUN_FILES):  # the report is committed with the files it shows
            write_json_atomic(out / CONFIG_FILE, config)
            write_results(out, self.to_dict(), kind="audit-fitted")
            atomic_write(out / SCORES_FILE, lambda f: self.scores.to_parquet(f, index=False))
            if report:
                from mipkit.report import write_html_report
                from mipkit.report.fitted_report import build

                title, summary, sections = build(out)
                write_html_report(out, title=title, summary=summary, sections=sections)
        return out
