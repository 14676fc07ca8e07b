"""The outcome of a model audit: :class:`AuditResult`, a frozen object with the per-attack summaries, the
per-record vulnerability table and the run's set-up, and its views (``results.json``, a pandas frame, a
notebook table).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._runfolder import atomic_write, staged_writes
from mipkit.attacks.ltu import LTUResult
from mipkit.metrics.attack_summary import AttackSummary, fpr_label
from mipkit.metrics.slices import SliceSummary, slices_frame
from mipkit.report.results import to_jsonable, write_json_atomic, write_results
from mipkit.workflows.audit.config import ROW_COLUMN, AuditConfig, RecordInfo

__all__ = [
    "CONFIG_FILE",
    "FITTED_MODEL",
    "NOTES",
    "QUESTIONS",
    "RUN_FILES",
    "SCORES_FILE",
    "TRAINING_PROCEDURE",
    "VULNERABILITY_FPR",
    "AuditResult",
    "game_row",
    "id_field",
    "vulnerability_table",
]

CONFIG_FILE = "config.json"
SCORES_FILE = "scores.parquet"
#: The files of an audit's run folder: a new run replaces all of them (``ledger.sqlite`` is kept).
RUN_FILES = (CONFIG_FILE, "results.json", SCORES_FILE, "report.html")
VULNERABILITY_FPR = 0.01
NOTES = (
    "auc and tpr_at_fpr at the top level are the largest over the attacks; eta is that of the attack with "
    "the largest held-out eta (strongest_attack), a lower bound on the model's MIP eta.",
    "eta_ci at the top level (and headline) is a two-way cluster bootstrap interval over target models and "
    "records, simultaneous over the attacks, so it accounts for choosing the strongest attack "
    "(docs/theory.md section 11). Each attack's eta_ci / tpr_ci / auc_ci treat trials as independent and "
    "are too narrow; its *_cluster fields are the valid per-attack intervals.",
)
ROW_MEANING = (
    "0-based position of the record in the table as read (pandas.read_csv(file).iloc[row]; line row + 2 of a "
    "CSV with a header), before dropna and the subsample; for arrays, the position in the arrays passed"
)
FITTED_MODEL = "this fitted model"
TRAINING_PROCEDURE = "this training procedure"
QUESTIONS = {
    FITTED_MODEL: (
        "How well can an attacker tell the records this released model was trained on (members) from "
        "records it was not trained on (non-members), given its outputs? The trials are the records of one "
        "model; the answer is about this object, not about other models the same code would produce."
    ),
    TRAINING_PROCEDURE: (
        "How much does a model trained by this procedure on a random half of the data reveal about who was "
        "in that half? The trials are many models trained on random halves (the MIP game, docs/theory.md "
        "section 1); the answer is about the procedure, averaged over its random training sets."
    ),
}
"""The two questions an audit answers, and what each means (``results.json["question"]``)."""

MOST_EXPOSED = 10
_IDENTITY = {"record", ROW_COLUMN, "label", "n_member_trials", "n_nonmember_trials"}


def id_field(id_column: str | None) -> str | None:
    """The name of the ids' column in the per-record outputs: the id column's own name, or ``id_<name>`` when
    that name is taken by one of the table's fixed columns (``record``, ``row``, ``label``, ...)."""
    if id_column is None:
        return None
    return f"id_{id_column}" if id_column in _IDENTITY else id_column


_NO_ROC = {
    "auc": None,
    "tpr_at_fpr": None,
    "eta": None,
    "eta_ci": None,
    "balanced_accuracy": None,
    "precision_at_base_rate": None,
}


def game_row(result: LTUResult, confidence: float = 0.95) -> dict:
    """The ``results.json`` row of a pairwise (LTU) game: no ROC metrics, the pair accuracy with its
    Clopper-Pearson interval and the privacy ``min{2(1 - A), 1} +- 2 sqrt(A(1 - A)/N)`` (docs/theory.md
    section 5)."""
    acc = result.accuracy
    return {
        **_NO_ROC,
        "game": "ltu",
        "strategy": result.strategy,
        "accuracy": acc.value,
        "accuracy_ci": list(acc.interval(confidence)),
        "rounds": acc.trials,
        "correct": acc.successes,
        "privacy": float(result.privacy),
        "privacy_error": float(result.privacy_error),
    }


def vulnerability_table(
    scores: Mapping[str, np.ndarray],
    summaries: Mapping[str, AttackSummary],
    in_mask_targets: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    *,
    include_labels: bool = False,
    records: RecordInfo | None = None,
) -> pd.DataFrame:
    """One row per record: how exposed it is to each attack, over the target models.

    ``record`` is the position in the audited arrays; with ``records``, ``row`` (the record's position in the
    table as read, before ``dropna`` and the subsample) and the ids of the id column (:func:`id_field`) follow
    it. The record's label (real data) is a column only with ``include_labels``.

    Columns per attack ``a``: ``a_mean_in`` / ``a_mean_out`` (mean score when the record is a member /
    non-member of the target), ``a_gap`` (their difference in units of the pooled score SD), ``a_hit_rate``
    (fraction of its member trials flagged at the pooled threshold of FPR 1%) and ``a_false_alarm`` (fraction
    of its non-member trials flagged).
    """
    n = y.size
    m = in_mask_targets
    columns = {"record": np.arange(n)}
    if records is not None:
        for name, values in records.frame().items():
            columns[id_field(name) if name != ROW_COLUMN else name] = values.to_numpy()
    if include_labels:
        columns["label"] = classes[y].astype(str)
    columns["n_member_trials"] = m.sum(axis=0)
    columns["n_nonmember_trials"] = (~m).sum(axis=0)
    df = pd.DataFrame(columns)
    key = fpr_label(VULNERABILITY_FPR)
    for name, s in scores.items():
        summ = summaries[name]
        thr = next((p.threshold for p in summ.tpr_at_fpr if fpr_label(p.target_fpr) == key), None)
        n_in = np.maximum(m.sum(axis=0), 1)
        n_out = np.maximum((~m).sum(axis=0), 1)
        mean_in = np.where(m.any(axis=0), (s * m).sum(axis=0) / n_in, np.nan)
        mean_out = np.where((~m).any(axis=0), (s * ~m).sum(axis=0) / n_out, np.nan)
        sd = float(np.std(s)) or 1.0
        df[f"{name}_mean_in"] = mean_in
        df[f"{name}_mean_out"] = mean_out
        df[f"{name}_gap"] = (mean_in - mean_out) / sd
        if thr is not None and np.isfinite(thr):
            flagged = s >= thr
            df[f"{name}_hit_rate"] = np.where(m.any(axis=0), (flagged & m).sum(axis=0) / n_in, np.nan)
            df[f"{name}_false_alarm"] = np.where((~m).any(axis=0), (flagged & ~m).sum(axis=0) / n_out, np.nan)
    return df


def _headline_json(stats: Mapping[str, Any] | None) -> dict | None:
    """The headline block of ``results.json`` (the per-attack cluster intervals live in ``attacks``)."""
    if not stats:
        return None
    return {
        **stats["headline"],
        "method": stats["method"],
        "n_boot": stats["n_boot"],
        "confidence": stats["confidence"],
        "critical_values": stats["critical_values"],
    }


@dataclass(frozen=True, eq=False)
class AuditResult:
    """What :func:`mipkit.workflows.audit.run.audit` measured (frozen; raw counts kept).

    Attributes
    ----------
    config : AuditConfig
        The settings of the run.
    summaries : dict row -> AttackSummary
        ROC metrics, TPR at FPR, eta and precision of every score attack row (``"loss"``, ``"lira-online"``,
        ...), each with its raw counts; intervals at :attr:`AuditConfig.confidence` on demand.
    games : dict row -> LTUResult
        The pairwise games played (``"ltu"``).
    attack_settings : dict
        What the attacks chose (e.g. RMIA's tuned ``a`` per target).
    certificate : dict or None
        The MIP certificate drawn next to the measurement (``eta``, ``source``, ...).
    utility : dict
        Mean accuracy of the models on held-out records and on their own training records.
    setup : dict
        The game's layout: records, features, classes, models, targets, trials, members, protocol (written to
        ``results.json`` as ``"game"``).
    trainer : dict
        Import path, parameters and fingerprint of the trainer.
    scores : pandas.DataFrame
        One row per record: its exposure to each attack (see :func:`vulnerability_table`); the run
        folder's ``scores.parquet``.
    trial_scores : dict row -> array of shape (T, n)
        The membership score of every (target model, record) trial.
    in_mask : bool array of shape (K, n)
        Who trained on what.
    run_key, data_sha256_16 : str
        Identify the fits (the ledger's key) and the data, for ``config.json``.
    run_dir : Path or None
        The run folder :func:`~mipkit.workflows.audit.run.audit` wrote (None when it wrote none).
    headline : dict or None
        :func:`mipkit.workflows.audit.verdict.headline_statistics`: cluster-bootstrap intervals per attack
        and the headline, simultaneous over the attacks.
    verdict : dict or None
        :func:`mipkit.workflows.audit.verdict.verdict`: pass / finding / inconclusive / no policy.
    provenance : dict or None
        Date (UTC), data and model fingerprints.
    slices : SliceSummary or None
        AUC, TPR at FPR and eta of the strongest attack per subgroup (true class and ``slice_by`` columns),
        with cluster-bootstrap intervals and the more exposed subgroups flagged
        (:func:`mipkit.metrics.slices.slice_summary`); :meth:`slices_frame` shows it.
    id_column : str or None
        The column whose ids name the records in :attr:`scores` (see :func:`id_field`).
    data_source : dict
        What the audited records were: ``data`` (the file; None for a DataFrame or arrays), ``target`` and
        ``id_column`` (:meth:`~mipkit.workflows._records.LabelledTable.describe`), written beside the
        settings in ``config.json``.
    """

    config: AuditConfig
    summaries: Mapping[str, AttackSummary]
    games: Mapping[str, LTUResult]
    attack_settings: Mapping[str, Any]
    certificate: dict | None
    utility: Mapping[str, Any]
    setup: Mapping[str, Any]
    trainer: Mapping[str, Any]
    scores: pd.DataFrame = field(repr=False)
    trial_scores: Mapping[str, np.ndarray] = field(repr=False)
    in_mask: np.ndarray = field(repr=False)
    run_key: str = ""
    data_sha256_16: str = ""
    run_dir: Path | None = None
    headline: Mapping[str, Any] | None = None
    verdict: Mapping[str, Any] | None = None
    provenance: Mapping[str, Any] | None = None
    slices: SliceSummary | None = None
    id_column: str | None = None
    data_source: Mapping[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------ headline numbers

    @property
    def attacks(self) -> dict[str, dict]:
        """Per-row metrics as in ``results.json`` (score rows first, then the games)."""
        conf = self.config.confidence
        rows = {name: s.to_dict(conf) for name, s in self.summaries.items()}
        cluster = (self.headline or {}).get("attacks", {})
        for name, row in rows.items():
            c = cluster.get(name)
            if c:
                row["eta_ci_cluster"] = c["eta_ci"]
                row["eta_ci_simultaneous"] = c["eta_ci_simultaneous"]
                row["auc_ci_cluster"] = c["auc_ci"]
                row["design_effect_eta"] = c["design_effect_eta"]
                for key, d in row["tpr_at_fpr_detail"].items():
                    d["tpr_ci_cluster"] = c["tpr_at_fpr"][key]["tpr_ci"]
                    d["tpr_ci_simultaneous"] = c["tpr_at_fpr"][key]["tpr_ci_simultaneous"]
        rows.update({name: game_row(g, conf) for name, g in self.games.items()})
        return rows

    @property
    def strongest_attack(self) -> str | None:
        """The row with the largest held-out eta (the first one on a tie); None without score rows."""
        best, best_eta = None, -np.inf
        for name, s in self.summaries.items():
            if s.eta.eta > best_eta:
                best, best_eta = name, s.eta.eta
        return best

    @property
    def eta(self) -> float | None:
        """Measured MIP eta of the strongest attack: a lower bound on the model's eta."""
        best = self.strongest_attack
        return None if best is None else self.summaries[best].eta.eta

    @property
    def eta_ci(self) -> list[float] | None:
        """Interval of :attr:`eta` at the configured confidence: the two-way cluster bootstrap over target
        models and records, simultaneous over the attacks (it accounts for choosing the strongest)."""
        if self.headline:
            return list(self.headline["headline"]["eta_ci"])
        best = self.strongest_attack
        return None if best is None else list(self.summaries[best].eta.interval(self.config.confidence))

    @property
    def reveals(self) -> bool | None:
        """Whether :attr:`eta_ci` lies above 0: the model measurably reveals membership."""
        ci = self.eta_ci
        return None if ci is None else bool(ci[0] > 0)

    @property
    def balanced_accuracy(self) -> float | None:
        best = self.strongest_attack
        return None if best is None else self.summaries[best].balanced_accuracy

    @property
    def auc(self) -> float | None:
        """Largest AUC over the score rows."""
        return max((s.auc for s in self.summaries.values()), default=None)

    @property
    def tpr_at_fpr(self) -> dict[str, float | None]:
        """Largest TPR over the score rows at each configured FPR, keyed like ``"0.01"``."""
        out = {}
        for f in self.config.fprs:
            key = fpr_label(f)
            vals = [
                p.tpr for s in self.summaries.values() for p in s.tpr_at_fpr if fpr_label(p.target_fpr) == key
            ]
            out[key] = max(vals, default=None)
        return out

    # --------------------------------------------------------------------------------------------- views

    def to_dict(self) -> dict:
        """The fields of ``results.json`` (without its header), in the schema's order, as JSON types (arrays
        become lists, non-finite floats ``None``)."""
        attacks = self.attacks
        best = attacks.get(self.strongest_attack, {}) if self.strongest_attack else {}
        return to_jsonable(
            {
                "question": {"answered": TRAINING_PROCEDURE, "meaning": QUESTIONS[TRAINING_PROCEDURE]},
                "auc": self.auc,
                "tpr_at_fpr": self.tpr_at_fpr,
                "eta": best.get("eta"),
                "eta_ci": self.eta_ci,
                "strongest_attack": self.strongest_attack,
                "balanced_accuracy": best.get("balanced_accuracy"),
                "attacks": attacks,
                "attack_settings": dict(self.attack_settings),
                "certificate": self.certificate,
                "certified": (self.certificate or {}).get("certified"),
                "utility": dict(self.utility),
                "game": dict(self.setup),
                "trainer": dict(self.trainer),
                "config": self.config_dict(),
                "notes": list(NOTES),
                "verdict": dict(self.verdict) if self.verdict else None,
                "headline": _headline_json(self.headline),
                "provenance": dict(self.provenance) if self.provenance else None,
                "records": self.records_block(),
                "slices": self.slices.to_dict() if self.slices is not None else None,
            }
        )

    def config_dict(self) -> dict:
        """What defined the run: the data (``data``, ``target``, ``id_column``) and every setting as JSON,
        with the number of target models the run used (``results.json``'s ``config``; ``config.json`` adds
        the run key and the data's hash)."""
        source = dict(self.data_source)
        settings = self.config.to_dict()
        if settings.get("n_targets") is None and self.setup.get("n_targets") is not None:
            settings["n_targets"] = self.setup["n_targets"]
        return {**source, **settings, "id_column": source.get("id_column", self.id_column)}

    def summary(self) -> str:
        """The plain paragraph a privacy officer can paste into a DPIA: what was audited, the headline risk
        in words, what it means and the premise (:func:`mipkit.report.dpia.audit_paragraph`)."""
        from mipkit.report.dpia import audit_paragraph

        return audit_paragraph(self.to_dict())

    def most_exposed(self, k: int = MOST_EXPOSED) -> pd.DataFrame:
        """The ``k`` records most exposed to the strongest attack (highest hit rate at FPR 1%, then largest
        score gap), named by ``record``, ``row`` and the id column (as in the report)."""
        from mipkit.report.audit_report import top_records

        best = self.strongest_attack
        if best is None:
            return pd.DataFrame()
        return top_records(self.scores, best, k, id_column=id_field(self.id_column))

    def records_block(self) -> dict:
        """``results.json``'s ``records``: how the per-record outputs name records, and the most exposed."""
        top = self.most_exposed()
        return {
            "id_column": self.id_column,
            "id_field": id_field(self.id_column),
            "row_field": ROW_COLUMN if ROW_COLUMN in self.scores else None,
            "row": ROW_MEANING,
            "most_exposed_attack": self.strongest_attack,
            "most_exposed": top.to_dict(orient="records"),
        }

    def slices_frame(self) -> pd.DataFrame:
        """One row per subgroup (index ``column``, ``group``; first row all records): AUC, TPR at each FPR and
        eta with their interval ends (``_low`` / ``_high``), the trials, whether the column is a feature,
        ``more_exposed`` and a note for subgroups too small to measure."""
        if self.slices is None:
            return pd.DataFrame()
        return slices_frame(self.slices.to_dict())

    def to_frame(self) -> pd.DataFrame:
        """One row per attack row (index ``attack``): AUC, TPR at each FPR, eta and balanced accuracy, each
        with its interval ends (``_low`` / ``_high``); the game rows carry their pair accuracy and privacy
        instead (NaN elsewhere)."""
        conf = self.config.confidence
        rows = []
        for name, s in self.summaries.items():
            row: dict[str, Any] = {"attack": name, "family": "score"}
            row["auc"] = s.auc
            row["auc_low"], row["auc_high"] = s.auc_interval(conf)
            for p in s.tpr_at_fpr:
                key = f"tpr@{fpr_label(p.target_fpr)}"
                row[key] = p.tpr
                row[f"{key}_low"], row[f"{key}_high"] = p.interval(conf)
            row["eta"] = s.eta.eta
            row["eta_low"], row["eta_high"] = s.eta.interval(conf)
            row["balanced_accuracy"] = s.balanced_accuracy
            row["trials"] = s.members + s.nonmembers
            rows.append(row)
        for name, g in self.games.items():
            lo, hi = g.accuracy.interval(conf)
            rows.append(
                {
                    "attack": name,
                    "family": "game",
                    "trials": g.accuracy.trials,
                    "accuracy": g.accuracy.value,
                    "accuracy_low": lo,
                    "accuracy_high": hi,
                    "privacy": g.privacy,
                    "privacy_error": g.privacy_error,
                }
            )
        return pd.DataFrame(rows).set_index("attack")

    def _headline(self) -> str:
        model = str(self.trainer.get("import_path", "model")).rsplit(".", 1)[-1]
        setup = self.setup
        head = (
            f"Membership-inference audit of {model}: {setup.get('n_models')} models on random halves "
            f"of {setup.get('n_records')} records, {setup.get('n_targets')} targets, "
            f"{setup.get('trials')} trials"
        )
        if self.strongest_attack is None:
            return head
        lo, hi = self.eta_ci
        status = f"; verdict: {self.verdict['status']}" if self.verdict else ""
        best = f"strongest attack {self.strongest_attack}: eta {self.eta:.4f} [{lo:.4f}, {hi:.4f}]"
        return f"{head}; {best}{status}"

    def _table(self) -> pd.DataFrame:
        frame = self.to_frame()
        keep = [c for c in frame.columns if not c.endswith(("_low", "_high")) and c != "family"]
        return frame[keep].dropna(axis=1, how="all")

    def __repr__(self) -> str:
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            table = self._table().to_string(float_format=lambda x: f"{x:.4f}", na_rep="")
        where = f"\nrun folder: {self.run_dir}" if self.run_dir is not None else ""
        exposed = ""
        if self.slices is not None and self.slices.most_exposed:
            names = ", ".join(f"{r['column']}={r['group']}" for r in self.slices.most_exposed)
            exposed = f"\nmore exposed subgroups ({self.slices.attack}): {names}"
        return f"AuditResult({self._headline()})\n{table}{exposed}{where}"

    def _repr_html_(self) -> str:
        table = self.to_frame().to_html(float_format=lambda x: f"{x:.4f}", na_rep="", border=0)
        where = f"<p>Run folder: <code>{html.escape(str(self.run_dir))}</code></p>" if self.run_dir else ""
        return f"<div><p><strong>{html.escape(self._headline())}</strong></p>{table}{where}</div>"

    def write(self, run_dir: str | Path, *, report: bool = True) -> Path:
        """Write ``config.json``, ``results.json`` (kind ``"audit"``), ``scores.parquet`` and, with
        ``report``, ``report.html`` (rendered from those files, as :func:`mipkit.report.rebuild_report` does)
        to ``run_dir``, all renamed into place together (without ``report``, a previous run's report.html is
        removed with them). Returns the folder."""
        out = Path(run_dir)
        out.mkdir(parents=True, exist_ok=True)
        config = {**self.config_dict(), "run_key": self.run_key, "data_sha256_16": self.data_sha256_16}
        with staged_writes(out, replaces=RUN_FILES):  # renamed into place together, once all are written
            write_json_atomic(out / CONFIG_FILE, config)
            write_results(out, self.to_dict(), kind="audit")
            atomic_write(out / SCORES_FILE, lambda f: self.scores.to_parquet(f, index=False))
            if report:  # rendered from the staged files, committed with them
                from mipkit.report import rebuild_report

                rebuild_report(out)
        return out
