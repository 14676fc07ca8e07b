"""``report.html`` of a private training run (``mipkit train-private``): the certificate and the accuracy.

:func:`report_parts` turns the run's ``results.json`` payload and its certified trade-off curve into the
title, the summary and the sections of :func:`mipkit.report.html.write_html_report`: the certificate's
trade-off curve (the largest TPR any membership attack reaches at each FPR; with an audit, the measured TPRs
drawn on it), the certified risks, the held-out accuracy against always guessing the majority class, and,
with an audit, the measured TPR at each FPR beside its certified bound.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mipkit.report.html import Figure, Section, figure_to_png

__all__ = ["report_parts"]


def _curve_figure(curve: Any, audit: dict | None) -> Figure:
    from mipkit.accounting.plots import plot_tradeoff

    fig = plot_tradeoff(
        curve, title="Certificate of the released model: the most any membership attack can do"
    )
    if audit:
        pts = [(float(k), r["measured"]) for k, r in audit["tpr_at_fpr"].items() if r["measured"] > 0]
        for ax in fig.axes[:2]:
            if pts:
                ax.plot(*zip(*pts, strict=True), "k^", ms=8, label="measured (LOSS, this model)")
                ax.legend(loc="lower right", fontsize="small")
    return Figure(
        "Certified trade-off curve",
        figure_to_png(fig),
        "Blue: the largest true-positive rate a membership attack can reach at each false-positive rate, "
        "certified for this training run; dashed: what MIP eta alone allows; dotted: guessing.",
    )


def _within(point: bool, violation: bool) -> str:
    if violation:
        return "NO: above beyond sampling error"
    return "yes" if point else "point above, within sampling error"


def report_parts(payload: dict, curve: Any) -> tuple[str, list[str], list[Section]]:
    """``(title, summary, sections)`` of the run's report from its ``results.json`` payload and the
    certified curve (for the certificate's neighbours)."""
    audit = payload.get("audit")
    sections = [_certificate_section(payload, curve), _accuracy_section(payload)]
    if audit:
        sections.append(_audit_section(audit))
    return "Private training (DP-SGD)", _summary(payload), sections


def _summary(payload: dict) -> list[str]:
    """What the certificate bounds and how accurate the model is, in words; with an audit, its verdict."""
    c = payload["certified"]
    at1 = c["tpr_at_fpr"].get("0.01")
    tpr_line = (
        "" if at1 is None else f" At a 1% false-positive rate it finds at most {100 * at1:.1f}% of them."
    )
    summary = [
        f"This model was trained with DP-SGD on {payload['n_train']} records; a further "
        f"{payload['held_out']['rows']} were held out. Its certificate bounds what anyone holding the model "
        f"can learn about whether a record was among the training records: no membership attack is right "
        f"more than {100 * (0.5 + c['eta']):.1f}% of the time on a fair coin (MIP eta {c['eta']:.3g})."
        f"{tpr_line} "
        f"On the held-out records the model is right {100 * payload['test_accuracy']:.1f}% of the time, "
        f"against {100 * payload['majority_rate']:.1f}% for always guessing the most common class.",
    ]
    audit = payload.get("audit")
    if audit:
        verdict = "within" if audit["holds"] else "ABOVE (beyond sampling error)"
        summary.append(
            f"Audited as released: the measured TPRs of a membership attack on this model are {verdict} the "
            f"certified bounds. {audit['note']}"
        )
    return summary


def _certificate_section(payload: dict, curve: Any) -> Section:
    """The DP-SGD run, its certified risks and its trade-off curve."""
    c = payload["certified"]
    rel = payload["neighbours"].replace("_", "-")
    cert_rows = [("MIP eta (replace-one)", c["eta"]), (f"advantage ({rel})", c["advantage"])]
    cert_rows += [(f"TPR at FPR {k} ({rel})", v) for k, v in c["tpr_at_fpr"].items()]
    cert_rows.append((f"epsilon at delta {c['delta']:g} ({rel})", c["epsilon"]))
    return Section(
        "Certificate",
        [
            f"DP-SGD ran {payload['steps']} steps at sampling rate {payload['sample_rate']:.4g} "
            f"({payload['epochs']} epochs of batches of {payload['batch_size']}) with noise multiplier "
            f"{payload['noise_multiplier']:.4g}; neighbours: {payload['premise']}.",
        ],
        [pd.DataFrame(cert_rows, columns=["certified risk", "bound"])],
        [_curve_figure(curve, payload.get("audit"))],
    )


def _accuracy_section(payload: dict) -> Section:
    """Held-out accuracy against always guessing the majority class."""
    return Section(
        "Accuracy",
        [f"Held-out split: {payload['held_out']['method']}; rows in {payload['held_out']['file']}."],
        [
            pd.DataFrame(
                [
                    ("held-out accuracy of the model", payload["test_accuracy"]),
                    ("always guessing the majority class", payload["majority_rate"]),
                ],
                columns=["", "accuracy"],
            )
        ],
    )


def _audit_section(audit: dict) -> Section:
    """Each measured TPR at FPR (and eta) beside its certified bound."""
    rows = [
        (
            f"TPR at FPR {k}",
            r["measured"],
            r["upper"],
            r["certified"],
            _within(r["within"], r["violation"]),
        )
        for k, r in audit["tpr_at_fpr"].items()
    ]
    eta, (low, high), bound = audit["measured_eta"], audit["measured_eta_ci"], audit["certified_eta"]
    rows.append(("MIP eta", eta, high, bound, _within(eta <= bound, low > bound)))
    left = (
        f" {audit['left_out']} held-out rows equal to a training row were left out."
        if audit["left_out"]
        else ""
    )
    return Section(
        "Audit of the released model against its certificate",
        [
            f"{audit['attack'].upper()} attack on the model's outputs: {audit['members']} training "
            f"rows (members) against {audit['non_members']} held-out rows.{left} {audit['note']} "
            "A measured value above its certified bound beyond its confidence interval would mean "
            "the guarantee, the training or the audit is wrong.",
        ],
        [pd.DataFrame(rows, columns=["risk", "measured", "upper end (95%)", "certified", "within"])],
    )
