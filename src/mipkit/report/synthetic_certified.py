"""The "Certified bounds" part of a synthetic-data audit report (``audit-synthetic --certificate``).

Reads ``certified_bounds.json`` (written by :func:`mipkit.synthesizers.audit_bounds.audit_with_certificate`)
and tabulates each certified bound beside its measured value; the figures of
:mod:`mipkit.report.synthetic_report` draw the same bounds over the measured curves.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mipkit.report.html import Section

__all__ = ["certified_bounds", "certified_section"]


def _above(row: dict) -> bool:
    """Point estimate above its bound (``violation`` in files written before the two were told apart)."""
    return bool(row.get("above_bound", row.get("violation")))


def certified_bounds(run_dir: Path) -> dict | None:
    """``certified_bounds.json`` of a run audited with ``--certificate`` (``None`` without one)."""
    from mipkit.report.results import read_json_file

    return read_json_file(run_dir / "certified_bounds.json")


def certified_section(bounds: dict) -> Section:
    """The certified bounds beside the measured values, and every violation."""
    if not bounds.get("certified"):
        return Section(
            "Certified bounds",
            [f"The {bounds.get('method')!r} synthesizer is not private: no risk is certified."],
        )
    rows = []
    for fpr, r in (bounds.get("dcr", {}).get("tpr_at_fpr") or {}).items():
        rows.append(("DCR attack", f"TPR at FPR {fpr}", r["measured"], r["certified"], _above(r),
                     r["violation"]))  # fmt: skip
    roc = bounds.get("dcr", {}).get("roc")
    if roc:
        measure = (
            f"whole ROC, {roc['points']} thresholds: the point closest to its bound (TPR - bound "
            f"{roc['max_excess']:+.4f}, at FPR {roc['at_fpr']:.3g})"
        )
        rows.append(("DCR attack", measure, roc["tpr"], roc["certified_tpr"], _above(roc),
                     roc["violation"]))  # fmt: skip
    for secret, r in (bounds.get("inference") or {}).items():
        rows.append((f"inference of {secret}", f"precision (baseline {r['baseline_precision']:.3f})",
                     r["precision"], r["certified_success"], _above(r), r["violation"]))  # fmt: skip
    table = pd.DataFrame(
        rows, columns=["attack", "measure", "measured", "certified bound", "point above bound", "violation"]
    )
    viol = bounds.get("violations") or []
    text = [
        f"The synthesizer's certificate ({bounds.get('method')}) bounds every attack: the DCR membership "
        "attack's TPR by the certified trade-off curve 1 - f(FPR) (add/remove neighbours), an attribute "
        "inference's success by 1 - f(baseline), with the non-member baseline (docs/theory.md). A violation "
        "is a measured value above its bound beyond sampling error, simultaneously over the points compared "
        "(Clopper-Pearson, Bonferroni; family-wise 5%): then the guarantee, the implementation or the audit "
        "is wrong. A point estimate above its bound within sampling error is listed but is not a violation: "
        "among thousands of ROC points, some lie above a valid bound by chance.",
        *(["Violations: " + "; ".join(viol) + "."] if viol else ["No measured risk is above its bound."]),
    ]
    return Section("Certified bounds", text, [table])
