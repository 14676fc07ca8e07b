"""What :func:`mipkit.workflows.train_private.train_private` returns: :class:`TrainPrivateResult`.

The fitted pipeline (the encoding of the raw columns, the scaler and the classifier), its certificate, the
held-out accuracy, the split and, with an audit, the audit against the certificate. ``to_dict()`` is the
``--json`` payload and ``results.json``; ``write(out)`` the run folder: ``model.joblib``,
``certificate.json``, with ``record_split`` ``split.parquet``, ``results.json`` (kind ``"train-private"``),
``report.md`` and ``report.html``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mipkit.workflows.train_private.config import TrainPrivateConfig
from mipkit.workflows.train_private.data import TrainingTable
from mipkit.workflows.train_private.records import SPLIT_FILE

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mipkit.workflows._text_table import TextTable

__all__ = ["CERTIFICATE_FILE", "HTML_FILE", "MODEL_FILE", "REPORT_FILE", "TrainPrivateResult"]

MODEL_FILE = "model.joblib"
CERTIFICATE_FILE = "certificate.json"
REPORT_FILE = "report.md"
HTML_FILE = "report.html"
_TARGET_PARAMETERS = ("fpr", "baseline", "base_rate", "recall", "delta")


def _target(cal: dict | None) -> dict | None:
    """The risk target the noise was calibrated to, with what the calibration achieved (None: noise given)."""
    if cal is None:
        return None
    params = {k: cal["details"][k] for k in _TARGET_PARAMETERS if k in cal["details"]}
    return {"name": cal["target"], "value": cal["target_value"], **params, "achieved": cal["achieved_fine"],
            "converged": cal["converged"]}  # fmt: skip


@dataclass(frozen=True)
class TrainPrivateResult:
    """What a private training run did: the fitted pipeline, its certificate and the held-out accuracy.

    ``model``, ``split`` (which rows trained the model) and ``data`` are as private as the table; neither
    :meth:`to_dict` nor :meth:`summary` holds them.
    """

    model: Any
    certificate: Any
    test_accuracy: float
    majority_rate: float
    held_out: dict
    config: TrainPrivateConfig
    seconds: dict
    data: TrainingTable | None = None
    run_dir: Path | None = None
    domain: dict = field(default_factory=lambda: {"source": "arrays given by the caller"})
    split: Any = None  # split.parquet's frame (row, id, member)
    audit: dict | None = None  # audit_against_certificate's answer

    def to_dict(self) -> dict:
        """The ``--json`` payload: run settings, ``certified`` risks, accuracy, split and files."""
        cert = self.certificate
        files = (MODEL_FILE, CERTIFICATE_FILE, SPLIT_FILE, REPORT_FILE, HTML_FILE)
        return {
            "noise_multiplier": cert.noise_multiplier,
            "sample_rate": cert.sample_rate,
            "steps": cert.steps,
            "epochs": self.config.epochs,
            "batch_size": self.config.batch_size,
            "max_grad_norm": cert.max_grad_norm,
            "n_train": cert.n_train,
            "neighbours": cert.neighbours,
            "premise": cert.to_dict()["premise"],
            "noise_source": cert.noise_source,
            "certified": cert.certified,
            "target": _target(cert.calibration),
            "test_accuracy": self.test_accuracy,
            "majority_rate": self.majority_rate,
            "held_out": self.held_out,
            "domain": self.domain,
            "audit": self.audit,
            "seconds": self.seconds,
            "run_dir": None if self.run_dir is None else str(self.run_dir),
            "files": None
            if self.run_dir is None
            else {
                name: str(self.run_dir / name)
                for name in files
                if name != SPLIT_FILE or self.config.record_split
            },
        }

    def summary(self) -> str:
        """The paragraph for a DPIA: the model released, its certified risk, what it means, the measured
        check (with an audit) and the premise."""
        from mipkit.report.dpia import train_private_paragraph

        return train_private_paragraph(self.to_dict())

    def to_frame(self) -> pd.DataFrame:
        """One row per figure: ``quantity`` and ``value`` (the run's noise and schedule, each certified risk,
        the accuracy and, with an audit, each measured TPR)."""
        import pandas as pd

        d = self.to_dict()
        c = d["certified"]
        rows = [
            ("noise_multiplier", d["noise_multiplier"]),
            ("sample_rate", d["sample_rate"]),
            ("steps", d["steps"]),
        ]
        rows += [("certified_eta", c["eta"]), ("certified_advantage", c["advantage"])]
        rows += [(f"certified_tpr_at_fpr_{k}", v) for k, v in c["tpr_at_fpr"].items()]
        rows += [("certified_epsilon", c["epsilon"]), ("delta", c["delta"]),
                 ("test_accuracy", d["test_accuracy"]), ("majority_rate", d["majority_rate"])]  # fmt: skip
        for k, r in (d["audit"] or {}).get("tpr_at_fpr", {}).items():
            rows.append((f"measured_tpr_at_fpr_{k}", r["measured"]))
        return pd.DataFrame([(q, float(v)) for q, v in rows], columns=["quantity", "value"])

    def tables(self) -> list[TextTable]:
        """The tables as the command line prints them, with the lines under them."""
        from mipkit.workflows.train_private.report import run_tables

        return run_tables(self.to_dict())

    def write(self, out: str | Path) -> Path:
        """Write the run folder ``out`` (module docstring); returns it. The audit's own run folder
        (``audit/``) is written by the run, with ``record_split``."""
        import joblib

        from mipkit._runfolder import atomic_write, check_output_path, staged_writes
        from mipkit.report.html import write_html_report
        from mipkit.report.results import write_json_atomic, write_results
        from mipkit.report.train_private_report import report_parts
        from mipkit.workflows.train_private.report import markdown_report

        folder = check_output_path(out)
        result = self if self.run_dir == folder else replace(self, run_dir=folder)
        payload = result.to_dict()
        cert = result.certificate
        title, summary, sections = report_parts(payload, cert.curve(cert.neighbours))
        data = "arrays given by the caller" if self.data is None else self.data.describe()
        config = {**({} if self.data is None else self.data.to_dict()), **self.config.to_dict()}
        replaces = (MODEL_FILE, CERTIFICATE_FILE, SPLIT_FILE, "results.json", REPORT_FILE, HTML_FILE)
        with staged_writes(folder, replaces=replaces):
            atomic_write(folder / MODEL_FILE, lambda f: joblib.dump(result.model, f))
            write_json_atomic(folder / CERTIFICATE_FILE, {**cert.to_dict(), "domain": result.domain})
            if result.config.record_split:  # the membership the certificate protects: only when asked
                atomic_write(folder / SPLIT_FILE, lambda f: result.split.to_parquet(f, index=False))
            write_results(folder, {**payload, "config": config}, kind="train-private")
            atomic_write(folder / REPORT_FILE, markdown_report(payload, data))
            write_html_report(folder, title=title, summary=summary, sections=sections)
        return folder
