"""The words of a private training run: ``report.md`` and the tables the command line prints.

:func:`markdown_report` is the run folder's ``report.md``; :func:`run_tables` the run's table (target,
noise, certified risks, accuracy, encoding) and, with an audit, the measured TPR at each certified FPR
beside its bound. Both read the run's ``to_dict()`` payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mipkit.workflows._text_table import TextTable
from mipkit.workflows.train_private.records import SPLIT_FILE

__all__ = ["markdown_report", "run_tables"]


def _domain_line(domain: Mapping[str, Any]) -> str:
    if domain.get("path"):
        return f"from the public domain {domain['path']} ({domain['columns']} columns)"
    if "columns" in domain:
        return f"from a public domain given as a mapping ({domain['columns']} columns)"
    return domain["source"]


def _audit_lines(audit: Mapping[str, Any] | None) -> str:
    if not audit:
        return ""
    tprs = ", ".join(
        f"TPR at FPR {k}: {r['measured']:.4g} measured, {r['certified']:.4g} certified" for k, r in
        audit["tpr_at_fpr"].items()
    )  # fmt: skip
    verdict = "within its certificate" if audit["holds"] else "ABOVE its certificate beyond sampling error"
    return (
        f"- Audit: {audit['attack'].upper()} on {audit['members']} training rows vs "
        f"{audit['non_members']} held-out rows: {tprs}; the model is {verdict}. {audit['note']}\n"
    )


def markdown_report(d: Mapping[str, Any], data: str) -> str:
    """``report.md`` of the run whose payload is ``d``, trained on ``data`` (the table in words)."""
    c = d["certified"]
    tprs = ", ".join(f"TPR <= {v:.4g} at FPR {k}" for k, v in c["tpr_at_fpr"].items())
    tgt = d["target"]
    target_line = (
        f"- Target: {tgt['name']} <= {tgt['value']:g} (certified {tgt['achieved']:.4g}).\n"
        if tgt
        else "- Noise multiplier given directly (no risk target).\n"
    )
    split_line = (
        f"- Split: {SPLIT_FILE} lists every row (position in the table"
        f"{', id' if d['held_out']['id_column'] else ''}) and whether it trained the model: keep it as "
        "private as the data.\n"
    )
    return (
        "# Private training (DP-SGD)\n\n"
        f"- Data: {data} ({d['n_train']} training rows; {d['held_out']['rows']} held out: "
        f"{d['held_out']['method']}).\n"
        f"- Encoding: {_domain_line(d['domain'])}.\n"
        f"{target_line}"
        f"- DP-SGD: noise multiplier {d['noise_multiplier']:.4g}, sample rate {d['sample_rate']:.4g}, "
        f"{d['steps']} steps ({d['epochs']} epochs), clipping norm {d['max_grad_norm']:g}.\n"
        f"- Certified for {d['neighbours'].replace('_', '-')} neighbours ({d['premise']}): MIP eta <= "
        f"{c['eta']:.4g}, advantage <= {c['advantage']:.4g}, {tprs}, epsilon <= {c['epsilon']:.4g} at "
        f"delta {c['delta']:g} (docs/theory.md section 3).\n"
        f"- Noise and batches: {d['noise_source']}.\n"
        f"- Held-out accuracy: {d['test_accuracy']:.4f} (always guessing the majority class: "
        f"{d['majority_rate']:.4f}).\n"
        + (split_line if d["held_out"]["file"] else "")
        + _audit_lines(d["audit"])
    )


def _audit_table(audit: Mapping[str, Any], run_line: tuple[str, ...]) -> TextTable:
    rows = []
    for fpr, r in audit["tpr_at_fpr"].items():
        within = "NO (beyond sampling error)" if r["violation"] else "yes" if r["within"] else "point above"
        measured = f"{r['measured']:.4g} [{max(r['lower'], 0.0):.4g}, {min(r['upper'], 1.0):.4g}]"
        rows.append((f"TPR at FPR {fpr}", measured, f"{r['certified']:.4g}", within))
    note = (
        f"{audit['attack'].upper()} on {audit['members']} training rows vs {audit['non_members']} held-out "
        f"rows. {audit['note']}"
    )
    return TextTable(
        "Audit of the released model against its certificate",
        ("Risk", "Measured [95% interval]", "Certified", "Within"),
        tuple(rows),
        (note, *run_line),
        align="lrrr",
        bold_first=False,
    )


def run_tables(d: Mapping[str, Any]) -> list[TextTable]:
    """The run's table, the lines under it and, with an audit, the audit's table."""
    rows = []
    if d["target"]:
        rows.append(("Risk target", f"{d['target']['name']} <= {d['target']['value']:g}"))
    c = d["certified"]
    rows += [
        ("Noise multiplier", f"{d['noise_multiplier']:.4g}"),
        ("Sample rate / steps", f"{d['sample_rate']:.4g} / {d['steps']}"),
        ("Certified MIP eta", f"{c['eta']:.4g}"),
        ("Certified advantage", f"{c['advantage']:.4g}"),
        *((f"Certified TPR at FPR {fpr}", f"{bound:.4g}") for fpr, bound in c["tpr_at_fpr"].items()),
        (f"Certified epsilon (delta {c['delta']:g})", f"{c['epsilon']:.4g}"),
        ("Held-out accuracy", f"{d['test_accuracy']:.4f} (majority {d['majority_rate']:.4f})"),
    ]
    dom = d["domain"]
    rows.append(
        ("Encoding", f"public domain ({dom['columns']} columns)" if "columns" in dom else dom["source"])
    )
    notes = [f"Neighbours: {d['neighbours'].replace('_', '-')}, {d['premise']}."]
    if d["noise_source"] != "os-entropy":
        notes.append(f"Noise and batches {d['noise_source']}.")
    run_line: tuple[str, ...] = ()
    if d.get("run_dir"):
        split = "; split.parquet: the rows trained on, keep it private" if d["held_out"]["file"] else ""
        run_line = (f"Run folder: {d['run_dir']} (report.html{split})",)
    audit = d.get("audit")
    main_notes = tuple(notes) if audit else (*notes, *run_line)
    tables = [
        TextTable("Private training (DP-SGD)", ("Quantity", "Value"), tuple(rows), main_notes, align="lr")
    ]
    if audit:
        tables.append(_audit_table(audit, run_line))
    return tables
