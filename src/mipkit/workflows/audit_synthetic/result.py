"""The result of :func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`: one frozen object.

``summary()`` is the paragraph a privacy officer can paste into a DPIA
(:func:`mipkit.report.dpia_synthetic.audit_synthetic_paragraph`), ``to_dict()`` the ``results.json``
payload, ``to_frame()`` a pandas table with one row per measure and attack, ``write(run_dir)`` the run folder,
``json_summary()`` what ``mipkit audit-synthetic --json`` prints, and ``repr`` / ``_repr_html_`` a readable
summary in a terminal or a notebook.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mipkit.metrics.dcr import DCRAttackResult
from mipkit.metrics.inference import InferenceResult
from mipkit.metrics.linkability import LinkabilityResult
from mipkit.metrics.nnaa import PrivacyLoss
from mipkit.metrics.singling_out import SinglingOutResult
from mipkit.workflows.audit_synthetic.verdict import synthetic_checks, synthetic_verdict

FRAME_COLUMNS = ["section", "secret", "attack", "measure", "value", "ci_low", "ci_high"]
#: The files of a synthetic-data audit's run folder: a new run replaces all of them.
RUN_FILES = (
    "results.json",
    "scores.parquet",
    "inference.parquet",
    "certified_bounds.json",
    "quality.html",
    "report.html",
)


@dataclass(frozen=True, repr=False)
class AuditSyntheticResult:
    """What the synthetic-data audit found (``docs/theory.md`` sections 4 and 6).

    Attributes
    ----------
    inputs : dict
        Table sizes, the non-member set, the column schema and the audit's settings.
    nnaa : PrivacyLoss or None
        NNAA on training and unseen records and the privacy loss (``None`` without holdout or control).
    dcr_attack : DCRAttackResult or None
        The DCR membership attack (``None`` without holdout or control).
    overfitting_protection, baseline_protection : dict or None
        SDMetrics-style DCR protection scores (overfitting: needs non-members; baseline: mixed distance).
    inference : dict of str to InferenceResult
        Attribute inference per secret, against the non-member baseline.
    scores : DataFrame
        One row per record scored by DCR: ``set``, ``row``, ``member``, ``dcr``, ``score``.
    inference_targets : DataFrame
        One row per inference target and secret: which guesses were right, with which confidence.
    timings_s : dict
        Seconds spent per stage.
    policy : dict
        ``fail_above`` (or None), the verdict's ``metric`` and ``confidence``.
    inference_family : list of dict
        Each (secret, attack) pair's precision improvement with its Bonferroni-corrected interval.
    singling_out : dict of str to SinglingOutResult or None
        Univariate and multivariate singling out against the non-member set (``None``: not requested).
    linkability : LinkabilityResult or None
        The linkability attack against the non-member set (``None``: not requested).
    copies : dict or None
        Exact and near copy rates against their reference (:func:`mipkit.metrics.copies.copy_rates`;
        ``None``: the DCR part was not run).
    certified : dict or None
        The synthesizer certificate's bounds beside the measured risks
        (:func:`mipkit.synthesizers.audit_bounds.certified_audit_bounds`; ``None``: no certificate given).
    quality : dict or None
        The utility report (:func:`mipkit.synthesizers.quality_report.quality_report`; ``None``: not asked).
    samples : dict
        For NNAA, DCR and the protection scores: all records or a random subsample, and which cap
        (:func:`mipkit.workflows.audit_synthetic.scale.sample_record`).
    backend : dict
        Where the neighbour searches ran: local threads, or Ray blocks with their number and the bytes one
        task holds (:func:`mipkit.workflows.audit_synthetic.scale.backend_record`).
    """

    inputs: dict
    nnaa: PrivacyLoss | None
    dcr_attack: DCRAttackResult | None
    overfitting_protection: dict | None
    baseline_protection: dict | None
    inference: dict[str, InferenceResult]
    scores: pd.DataFrame = field(compare=False)
    inference_targets: pd.DataFrame = field(compare=False)
    timings_s: dict[str, float] = field(default_factory=dict, compare=False)
    policy: dict = field(default_factory=lambda: {"fail_above": None, "metric": "privacy_loss"})
    inference_family: list = field(default_factory=list)
    singling_out: dict[str, SinglingOutResult] | None = None
    linkability: LinkabilityResult | None = None
    copies: dict | None = None
    certified: dict | None = None
    quality: dict | None = None
    samples: dict = field(default_factory=dict)
    backend: dict = field(default_factory=lambda: {"name": "local"}, compare=False)

    @property
    def verdict(self) -> dict:
        """Pass / finding / inconclusive / no policy, with the evidence (``docs/audit-synthetic.md``)."""
        return self.to_dict()["verdict"]

    @property
    def exit_code(self) -> int:
        """1 on a finding, else 0 (what ``mipkit audit-synthetic`` exits with)."""
        return 1 if self.verdict["status"] == "finding" else 0

    # ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The ``results.json`` fields (JSON types; non-finite numbers become ``None``)."""
        from mipkit.report.results import to_jsonable

        if self.nnaa is not None:
            nnaa = self.nnaa.to_dict()
        else:
            requested = "nnaa" in self.inputs.get("checks", ("nnaa",))
            note = "no holdout or control" if requested else "not requested"
            nnaa = {"train": None, "test": None, "privacy_loss": None, "note": note}
        if self.dcr_attack is not None:
            dcr = {**self.dcr_attack.to_dict(), "overfitting_protection": self.overfitting_protection}
        else:
            members = self.scores.loc[self.scores["member"] == 1, "dcr"].to_numpy()
            requested = "dcr" in self.inputs.get("checks", ("dcr",))
            dcr = {
                "auc": None,
                "note": "no holdout or control: DCR attack not computed" if requested else "not requested",
                "dcr_median_members": float(np.median(members)) if members.size else None,
            }
        if self.baseline_protection is not None:
            dcr["baseline_protection"] = self.baseline_protection
        conf = self.inputs.get("confidence", 0.95)
        blocks = {
            "inputs": self.inputs,
            "nnaa": nnaa,
            "dcr": dcr,
            "inference": {s: r.to_dict(conf) for s, r in self.inference.items()},
            "inference_family": self.inference_family,
            "timings_s": self.timings_s,
            "samples": self.samples,
            "backend": self.backend,
        }
        if self.copies is not None:
            blocks["copies"] = self.copies
        if self.singling_out is not None:  # only when requested: earlier results keep their schema
            blocks["singling_out"] = {m: r.to_dict(conf) for m, r in self.singling_out.items()}
        if self.linkability is not None:
            blocks["linkability"] = self.linkability.to_dict(conf)
        res = to_jsonable(blocks)
        res["policy"] = to_jsonable(self.policy)
        res["verdict"] = to_jsonable(
            synthetic_verdict(
                res,
                metric=self.policy.get("metric", "privacy_loss"),
                fail_above=self.policy.get("fail_above"),
                inference_family=res["inference_family"],
            )
        )
        res["checks"] = synthetic_checks(res, metric_name=self.inputs.get("metric", "mixed"))
        return res

    def summary(self) -> str:
        """The paragraph a privacy officer can paste into a DPIA: what was audited, the headline verdict in
        words, the copy count, what it means and the premises
        (:func:`mipkit.report.dpia_synthetic.audit_synthetic_paragraph`)."""
        from mipkit.report.dpia_synthetic import audit_synthetic_paragraph

        return audit_synthetic_paragraph(self.to_dict(), self.certified)

    def json_summary(self) -> dict:
        """The compact machine-readable summary (what ``mipkit audit-synthetic --json`` prints): the
        verdict and the headline numbers, singling out and linkability when run, the certified bounds and the
        utility report when present."""
        res = self.to_dict()
        nn, dcr = res["nnaa"], res["dcr"]
        extra = {}
        if "singling_out" in res:
            extra["singling_out"] = {
                m: {
                    "risk": (r["risk"] or {}).get("value"),
                    "risk_ci": (r["risk"] or {}).get("ci"),
                    "attack_success": (r["equal_size"] or {}).get("attack_success"),
                    "control_success": (r["equal_size"] or {}).get("control_success"),
                    "size": (r["equal_size"] or {}).get("size"),
                    "n_predicates": r["n_predicates"],
                }
                for m, r in res["singling_out"].items()
            }
        if "linkability" in res:
            lk = res["linkability"]
            extra["linkability"] = {
                "risk": (lk["risk"] or {}).get("value"),
                "risk_ci": (lk["risk"] or {}).get("ci"),
                "attack_success": lk["attack_success"]["value"],
                "control_success": (lk["control_success"] or {}).get("value"),
            }
        after = {"certified": self.certified} if self.certified is not None else {}
        after.update({"quality": self.quality} if self.quality is not None else {})
        return (
            extra
            | {
                "verdict": {
                    k: res["verdict"].get(k)
                    for k in ("status", "metric", "fail_above", "value", "interval", "reason")
                },
                "nnaa": {
                    "train": nn.get("train"),
                    "test": nn.get("test"),
                    "privacy_loss": nn.get("privacy_loss"),
                    "privacy_loss_ci": (nn.get("intervals") or {}).get("privacy_loss_ci"),
                    "n": nn.get("n"),
                },
                "dcr": {
                    "auc": dcr.get("auc"),
                    "auc_ci": dcr.get("auc_ci"),
                    "tpr_at_fpr": dcr.get("tpr_at_fpr"),
                    "protection": dcr.get("protection"),
                    "baseline_protection": (dcr.get("baseline_protection") or {}).get("score"),
                    "overfitting_protection": (dcr.get("overfitting_protection") or {}).get("score"),
                },
                "inference": {
                    s: {
                        "precision": r["precision"],
                        "coverage": r["coverage"],
                        "baseline_precision": r["baseline_precision"],
                        "precision_improvement": r["precision_improvement"],
                        "precision_improvement_ci": r["precision_improvement_ci"],
                        "attack": r["attack"],
                        "baseline": r["baseline"],
                        **({"control_risk": r["control"]["risk"]["value"]} if r.get("control") else {}),
                    }
                    for s, r in res["inference"].items()
                },
            }
            | after
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per measure and attack: ``section``, ``secret``, ``attack``, ``measure``, ``value`` and the
        interval ``ci_low``, ``ci_high`` (NaN where the measure has none)."""
        res = self.to_dict()
        rows: list[tuple] = []

        def add(section, secret, attack, measure, value, ci=None):
            lo, hi = ci if ci is not None else (None, None)
            rows.append((section, secret, attack, measure, value, lo, hi))

        nn = res["nnaa"]
        if nn.get("privacy_loss") is not None:
            b = nn["intervals"]
            add("nnaa", None, "nnaa", "aa_train", nn["train"], b["train_ci"])
            add("nnaa", None, "nnaa", "aa_test", nn["test"], b["test_ci"])
            add("nnaa", None, "nnaa", "privacy_loss", nn["privacy_loss"], b["privacy_loss_ci"])
        dcr = res["dcr"]
        if dcr.get("auc") is not None:
            add("dcr", None, "dcr", "auc", dcr["auc"], dcr.get("auc_ci"))
            for fpr, tpr in dcr["tpr_at_fpr"].items():
                add("dcr", None, "dcr", f"tpr_at_fpr_{fpr}", tpr)
            for key, value in dcr["protection"].items():
                add("dcr", None, "dcr", key, value)
        elif dcr.get("dcr_median_members") is not None:
            add("dcr", None, None, "dcr_median_members", dcr["dcr_median_members"])
        for key in ("baseline_protection", "overfitting_protection"):
            if dcr.get(key):
                add("dcr", None, None, key, dcr[key]["score"])
        for s, r in res["inference"].items():
            for name, pc in r["attacks"].items():
                add("inference", s, name, "precision", pc["precision"], pc["precision_ci"])
                add("inference", s, name, "coverage", pc["coverage"])
            for name, pc in r["baselines"].items():
                add("inference", s, f"baseline:{name}", "precision", pc["precision"], pc["precision_ci"])
            for name, pair in r["pairs"].items():
                add(
                    "inference",
                    s,
                    name,
                    "precision_improvement",
                    pair["precision_improvement"],
                    pair["precision_improvement_ci"],
                )
            if r.get("control"):
                risk = r["control"]["risk"]
                add("inference", s, r["attack"], "control_risk", risk["value"], risk["ci"])
        for mode, r in res.get("singling_out", {}).items():
            if r["attack_success"] is not None:
                add("singling_out", None, mode, "attack_success", r["attack_success"]["value"],
                    r["attack_success"]["ci"])  # fmt: skip
            if r["equal_size"] is not None:
                eq = r["equal_size"]
                add("singling_out", None, mode, "attack_success_equal_size", eq["attack_success"])
                add("singling_out", None, mode, "control_success_equal_size", eq["control_success"])
            if r["risk"] is not None:
                add("singling_out", None, mode, "risk", r["risk"]["value"], r["risk"]["ci"])
            if r.get("training_size"):  # the risk's range over the bounds on the control's success there
                rk = r["training_size"]["risk"]
                add("singling_out", None, mode, "risk_training_size_lowest", rk["bounds"][0], rk["ci"])
                add("singling_out", None, mode, "risk_training_size_highest", rk["bounds"][1], rk["ci"])
        lk = res.get("linkability")
        if lk is not None:
            name = f"nearest_{lk['n_neighbors']}"
            add("linkability", None, name, "attack_success", lk["attack_success"]["value"],
                lk["attack_success"]["ci"])  # fmt: skip
            if lk["control_success"] is not None:
                add("linkability", None, name, "control_success", lk["control_success"]["value"],
                    lk["control_success"]["ci"])  # fmt: skip
                add("linkability", None, name, "risk", lk["risk"]["value"], lk["risk"]["ci"])
                for label, p in lk["precision_at_base_rate"].items():
                    add("linkability", None, name, f"precision_at_{label}", p["value"], p["ci"])
        frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
        return frame.astype(dict.fromkeys(("value", "ci_low", "ci_high"), float))

    def target_frame(self, *, target_outcomes: bool = False) -> pd.DataFrame:
        """What ``inference.parquet`` holds: per inference target and secret, its ``row``, the ``secret``
        attacked and each attack's confidence. Whether each guess was right (``*_correct``) tells the
        target's secret (for a two-valued secret, exactly), so it is kept only with ``target_outcomes``."""
        frame = self.inference_targets
        if target_outcomes:
            return frame
        return frame[[c for c in frame.columns if not c.endswith("_correct")]]

    def write(self, run_dir: str | Path, *, report: bool = True, target_outcomes: bool = False) -> Path:
        """Write the run folder ``run_dir`` (created if needed) and return its path.

        ``results.json``, ``scores.parquet``, ``inference.parquet`` (when secrets were attacked:
        :meth:`target_frame`, without whether each guess was right unless ``target_outcomes``),
        ``certified_bounds.json`` (:attr:`certified`, when a certificate was given), ``quality.html``
        (:attr:`quality`, when asked) and, with ``report``, ``report.html``, all renamed into place together;
        a previous run's files that this run does not write are removed with them. Without the report,
        ``mipkit report RUN_DIR`` writes it later from the same files."""
        from mipkit._runfolder import atomic_write, staged_writes
        from mipkit.report import write_json_atomic, write_results

        run = Path(run_dir)
        run.mkdir(parents=True, exist_ok=True)
        with staged_writes(run, replaces=RUN_FILES):  # renamed into place together, once all are written
            atomic_write(run / "scores.parquet", lambda f: self.scores.to_parquet(f, index=False))
            if len(self.inference_targets):
                frame = self.target_frame(target_outcomes=target_outcomes)
                atomic_write(run / "inference.parquet", lambda f: frame.to_parquet(f, index=False))
            if self.certified is not None:
                write_json_atomic(run / "certified_bounds.json", self.certified)
            write_results(run, self.to_dict(), kind="audit-synthetic")
            if self.quality is not None:
                from mipkit.report.synthetic_quality import write_quality_page

                write_quality_page(run, self.quality)
            if report:  # drawn from the staged files, committed with them
                from mipkit.report import write_html_report
                from mipkit.report.synthetic_report import build

                title, summary, sections = build(run)
                write_html_report(run, title=title, summary=summary, sections=sections)
        return run

    # ---------------------------------------------------------------------------------------------
    def summary_rows(self) -> list[tuple[str, str]]:
        """``(measure, value)`` pairs of the headline numbers, formatted for a terminal table."""
        from mipkit.report.synthetic_report import summary_rows

        return summary_rows(self.json_summary())

    def sentences(self) -> list[str]:
        """The plain-language summary of the report."""
        from mipkit.report.synthetic_report import summary_sentences

        return summary_sentences(self.to_dict())

    def _header(self) -> str:
        i = self.inputs
        non = i["nonmember_set"]
        non_text = f"non-members: {non} ({i['n_' + non]})" if non else "no non-member records"
        return f"{i['n_original']} original and {i['n_synthetic']} synthetic records, {non_text}"

    def __repr__(self) -> str:
        rows = self.summary_rows()
        width = max(len(k) for k, _ in rows)
        body = "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)
        return f"AuditSyntheticResult({self._header()})\n{body}"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.sentences())
        table = self.to_frame().to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}")
        return (
            f"<div><strong>Synthetic data audit</strong>: {html.escape(self._header())}"
            f"<ul>{items}</ul>{table}</div>"
        )
