"""Rebuild the report of an ``audit-synthetic`` run folder: plain-language summary, tables and figures.

Everything here reads the ``results.json`` fields (``AuditSyntheticResult.to_dict()``) and the run folder's
``scores.parquet``, so a report rebuilt from a run folder equals the one written with the run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mipkit.report.audit_verdict_report import status_text
from mipkit.report.dpia_synthetic import audit_synthetic_paragraph
from mipkit.report.html import Section
from mipkit.report.plain_language import copies_sentences
from mipkit.report.results import read_results
from mipkit.report.synthetic_certified import certified_bounds, certified_section
from mipkit.report.synthetic_measured import (
    _fmt,
    _nnaa_intervals,
    dcr_section,
    inference_section,
    nnaa_section,
)


def verdict_sentence(res: dict) -> str | None:
    """The verdict line of the report and the terminal (``None`` for results without a verdict)."""
    v = res.get("verdict")
    if not v:
        return None
    policy = (
        f"policy: {v['metric_label']} must not exceed {v['fail_above']:g}"
        if v.get("fail_above") is not None
        else f"headline metric: {v['metric_label']}"
    )
    return f"Verdict: {status_text(v['status'])} ({policy}). {v['reason']}."


def _measured(dcr: dict) -> str:
    low = dcr.get("smallest_measured_fpr")
    if low is None or low <= 0.01:
        return ""
    return f" (interpolated at tied distances: no threshold measures a TPR below FPR {_fmt(100 * low, 1)}%)"


def _which_attack(r: dict) -> str:
    """The inference headline's attack, said as one of those run (chosen by improvement over its baseline)."""
    n = len(r.get("attacks") or [])
    if n <= 1:
        return f"the only attack ({r['attack']})"
    which = "the better of the two attacks" if n == 2 else f"the best of the {n} attacks"
    return f"{which} ({r['attack']}, by improvement over its own baseline)"


def summary_sentences(res: dict) -> list[str]:
    """The plain-language summary of the results dict of an ``audit-synthetic`` run (verdict first)."""
    out = []
    line = verdict_sentence(res)
    if line:
        out.append(line)
    out += copies_sentences(res.get("copies"), res.get("inputs", {}).get("confidence", 0.95))
    nn = res.get("nnaa", {})
    if nn.get("privacy_loss") is not None:
        iv = _nnaa_intervals(nn)
        lo, hi = iv["privacy_loss_ci"]
        verdict = (
            "by this measure the synthetic data sits no measurably closer to its training records than to "
            "unseen records (copies are counted on their own below)"
            if lo <= 0.0
            else "the synthetic data sits measurably closer to its training records than to unseen records"
        )
        out.append(
            f"Nearest-neighbour adversarial accuracy: {_fmt(nn['train'])} on the training records and "
            f"{_fmt(nn['test'])} on unseen records: the share of records whose nearest neighbour lies in "
            "their own table rather than the other (real against synthetic), 1/2 when synthetic and real "
            "records cannot be told apart, near 1 when the synthetic data do not resemble the real "
            "(utility), near 0 when synthetic records sit on real ones. The privacy loss is the unseen "
            "value minus the training value: above 0 when the "
            f"synthetic data sit closer to their training records than to unseen ones. Privacy loss "
            f"{_fmt(nn['privacy_loss'])} ({100 * iv.get('confidence', 0.95):.3g}% interval {_fmt(lo)} to "
            f"{_fmt(hi)}, {iv.get('method', 'bootstrap')}): {verdict}."
        )
    dcr = res.get("dcr", {})
    if dcr.get("auc") is not None:
        t1 = dcr["tpr_at_fpr"].get("0.01")
        ci = dcr.get("auc_ci") or [None, None]
        out.append(  # the exact-copy counts are the copies sentence's
            f"Distance-to-closest-record attack: AUC {_fmt(dcr['auc'])} (95% interval {_fmt(ci[0])} to "
            f"{_fmt(ci[1])}; 0.5 = guessing); at a 1% false-positive rate it finds {_fmt(100 * t1, 1)}% of "
            f"training records{_measured(dcr)}."
        )
    if dcr.get("baseline_protection"):
        out.append(
            f"DCR baseline protection {_fmt(dcr['baseline_protection']['score'], 2)} "
            "(0 = synthetic records sit on real ones, 1 = as far from them as random records; higher "
            "protects more, and useful synthetic data land well below 1: the DCR attack and the copy "
            "counts say whether training records are closer than unseen ones)."
        )
    for s, r in res.get("inference", {}).items():
        pi = r["precision_improvement"]
        ci = r.get("precision_improvement_ci") or [None, None]
        msg = (
            f"Inferring '{s}': {_which_attack(r)} is right {_fmt(100 * r['precision'], 1)}% of the time "
            "(its baseline: "
            f"{_fmt(100 * r['baseline_precision'], 1)}%, the same analysis without the targets' records; "
            f"like-for-like non-member baseline, {r['baseline']}), a precision improvement of {_fmt(pi, 3)} "
            "over that baseline ("
        )
        if pi is not None and ci[0] is not None:
            msg += f"95% interval {_fmt(ci[0])} to {_fmt(ci[1])}; "
        elif r.get("precision_improvement_note"):
            msg += f"n/a: {r['precision_improvement_note']}; "
        msg += "<= 0 means nothing learnt beyond the population)"
        if r.get("control"):
            rk = r["control"]["risk"]
            msg += f"; anonymeter-style risk against the control set {_fmt(rk['value'])}"
        out.append(msg + ".")
    out += _anonymity_sentences(res)
    skipped = [c for c in res.get("checks", []) if c["status"] == "skipped"]
    if skipped:
        out.append("Not run: " + "; ".join(f"{c['name']} ({c['why']})" for c in skipped) + ".")
    return out


def summary_rows(summary: dict) -> list[tuple[str, str]]:
    """``(measure, value)`` rows of the headline numbers of ``AuditSyntheticResult.json_summary()``."""
    nn, dcr = summary["nnaa"], summary["dcr"]
    ci = nn.get("privacy_loss_ci") or [None, None]
    auc_ci = dcr.get("auc_ci") or [None, None]
    v = summary.get("verdict") or {}
    rows = []
    if v:
        thr = v.get("fail_above")
        policy = f" ({v['metric']} > {thr:g})" if thr is not None else ""
        rows.append((f"verdict{policy}", str(status_text(v["status"]))))
    rows += [
        ("NNAA train / test (1/2: alike)", f"{_fmt(nn['train'])} / {_fmt(nn['test'])}"),
        (
            "privacy loss = test - train [95% CI]",
            f"{_fmt(nn['privacy_loss'])} [{_fmt(ci[0])}, {_fmt(ci[1])}]",
        ),
        ("DCR attack AUC [95% CI]", f"{_fmt(dcr['auc'])} [{_fmt(auc_ci[0])}, {_fmt(auc_ci[1])}]"),
        ("DCR baseline protection (1 = random)", _fmt(dcr["baseline_protection"])),
    ]
    for secret, r in summary["inference"].items():
        values = (r["precision"], r["baseline_precision"], r["precision_improvement"])
        attack = r.get("attack")
        text = " / ".join(_fmt(v) for v in values) + (f" ({attack})" if attack else "")
        rows.append((f"inference {secret}: precision/baseline/gain", text))
    for mode, r in (summary.get("singling_out") or {}).items():
        ci = r.get("risk_ci") or [None, None]
        rows.append(
            (
                f"singling out ({mode}): members / control / risk [95% CI]",
                f"{_fmt(r['attack_success'])} / {_fmt(r['control_success'])} / {_fmt(r['risk'])} "
                f"[{_fmt(ci[0])}, {_fmt(ci[1])}]",
            )
        )
    lk = summary.get("linkability")
    if lk:
        ci = lk.get("risk_ci") or [None, None]
        rows.append(
            (
                "linkability: members / control / risk [95% CI]",
                f"{_fmt(lk['attack_success'])} / {_fmt(lk['control_success'])} / {_fmt(lk['risk'])} "
                f"[{_fmt(ci[0])}, {_fmt(ci[1])}]",
            )
        )
    return rows


def _risk_text(risk: dict | None) -> str:
    if not risk:
        return "no risk: no non-member records to compare with"
    lo, hi = risk["ci"]
    return f"risk {_fmt(risk['value'])} (95% interval {_fmt(lo)} to {_fmt(hi)}; 0 = no more than non-members)"


def _anonymity_sentences(res: dict) -> list[str]:
    """Singling out and linkability, when they were run."""
    out = []
    for mode, r in (res.get("singling_out") or {}).items():
        if r["attack_success"] is None:
            out.append(f"Singling out ({mode}): {r['note']}.")
            continue
        eq = r["equal_size"]
        same = (
            ""
            if eq is None
            else f" (at one size, {eq['size']} records: {_fmt(100 * eq['attack_success'], 1)}% of training "
            f"and {_fmt(100 * eq['control_success'], 1)}% of unseen records)"
        )
        out.append(
            f"Singling out ({mode}): {r['n_predicates']} predicates written from the synthetic data isolate "
            f"exactly one training record {_fmt(100 * r['attack_success']['value'], 1)}% of the time{same}"
            f"; {_risk_text(r['risk'])}."
        )
    lk = res.get("linkability")
    if lk:
        ctl = lk["control_success"]
        out.append(
            f"Linkability ({' + '.join(lk['aux_cols'][0])} | {' + '.join(lk['aux_cols'][1])}, "
            f"{lk['n_neighbors']} nearest): the two halves of {_fmt(100 * lk['attack_success']['value'], 1)}"
            "% of training records are joined through a synthetic record"
            + ("" if ctl is None else f", of unseen records {_fmt(100 * ctl['value'], 1)}%")
            + f"; {_risk_text(lk['risk'])}."
        )
    return out


def _anonymity_section(res: dict) -> Section | None:
    """The singling-out and linkability tables (``None`` when neither was run)."""
    so, lk = res.get("singling_out") or {}, res.get("linkability")
    if not so and not lk:
        return None
    rows = []

    def ci_text(ci) -> str:
        return "" if not ci or ci[0] is None else f"[{_fmt(ci[0])}, {_fmt(ci[1])}]"

    for mode, r in so.items():
        risk, eq = r["risk"] or {}, r["equal_size"] or {}
        rows.append(
            {
                "attack": f"singling out, {mode}"
                + (f" ({r['n_cols']} columns)" if mode == "multivariate" else ""),
                "attempts": r["n_predicates"],
                "members": eq.get("attack_success", (r["attack_success"] or {}).get("value")),
                "members 95% CI": "",
                "non-members": eq.get("control_success"),
                "risk": risk.get("value"),
                "risk 95% CI": ci_text(risk.get("ci")),
            }
        )
        if r.get("training_size") and not r["training_size"]["exact"]:
            ts = r["training_size"]
            rows.append(
                {
                    "attack": f"singling out, {mode}, at the training size (non-members bounded)",
                    "attempts": r["n_predicates"],
                    "members": ts["attack_success"],
                    "members 95% CI": ci_text(ts["attack_success_ci"]),
                    "non-members": "{} to {}".format(*map(_fmt, ts["control_success_bounds"])),
                    "risk": "{} to {}".format(*map(_fmt, ts["risk"]["bounds"])),
                    "risk 95% CI": ci_text(ts["risk"]["ci"]),
                }
            )
    if lk:
        risk = lk["risk"] or {}
        rows.append(
            {
                "attack": f"linkability, {lk['n_neighbors']} nearest",
                "attempts": lk["attack_success"]["trials"],
                "members": lk["attack_success"]["value"],
                "members 95% CI": ci_text(lk["attack_success"]["ci"]),
                "non-members": (lk["control_success"] or {}).get("value"),
                "risk": risk.get("value"),
                "risk 95% CI": ci_text(risk.get("ci")),
            }
        )
    tables = [pd.DataFrame(rows)]
    if lk and lk.get("precision_at_base_rate"):
        tables.append(
            pd.DataFrame(
                [
                    {
                        "members : non-members": k,
                        "precision of a link": v["value"],
                        "95% CI": ci_text(v["ci"]),
                    }
                    for k, v in lk["precision_at_base_rate"].items()
                ]
            )
        )
    text = [
        "Singling out: predicates written from the synthetic data alone (rare or extreme values; conditions "
        "on several columns of a synthetic record) succeed when exactly one training record satisfies them. "
        "Linkability: the two column subsets of a record are joined when their nearest synthetic records "
        "share one. Both are also run on records the generator never saw; risk = (members - non-members) / "
        "(1 - non-members), as anonymeter (docs/theory.md section 6). Singling out is compared at one table "
        "size, the smaller table's (the larger one subsampled exactly); at the training data's size a "
        "smaller control bounds the non-members' success (every population consistent with its counts), "
        "and the risk is the range those bounds allow."
    ]
    return Section("Singling out and linkability", text, tables)


def _verdict_section(res: dict) -> Section | None:
    v = res.get("verdict")
    if not v:
        return None
    iv = v.get("interval") or [None, None]
    inputs = res.get("inputs", {})
    rows = [
        ("verdict", status_text(v["status"])),
        ("metric", v["metric_label"]),
        ("fail above", "not stated" if v.get("fail_above") is None else f"{v['fail_above']:g}"),
        ("value", _fmt(v.get("value"), 4)),
        ("interval", f"[{_fmt(iv[0], 4)}, {_fmt(iv[1], 4)}] at {100 * v.get('confidence', 0.95):.3g}%"),
        ("how", v.get("detail") or "n/a: the metric was not computed"),
        ("audited on", res.get("created", "n/a: no date in the results file")),
        ("mipkit", res.get("mipkit_version", "n/a")),
    ]
    for name, fp in (inputs.get("fingerprints") or {}).items():
        rows.append((f"{name} table fingerprint", fp))
    for name, src in (inputs.get("sources") or {}).items():
        rows.append((f"{name} file", str(src)))
    checks = pd.DataFrame(
        [(c["name"], c["status"], c["why"] or "") for c in res.get("checks", [])],
        columns=["check", "status", "why"],
    )
    text = [
        f"{v['reason']}.",
        "A finding: the metric's whole interval lies above the threshold; a pass: at or below it; "
        "inconclusive: the interval contains the threshold, or the metric could not be computed.",
    ]
    return Section("Verdict", text, [pd.DataFrame(rows, columns=["", "value"]), checks])


def build(run_dir: str | Path) -> tuple[str, list[str], list[Section]]:
    """``(title, summary, sections)`` of an ``audit-synthetic`` run folder (the DPIA paragraph first)."""
    run_dir = Path(run_dir)
    res = read_results(run_dir)
    title = "Synthetic data audit"
    certified = certified_bounds(run_dir)
    sections = [
        _verdict_section(res),
        nnaa_section(res),
        dcr_section(res, run_dir, certified),
        inference_section(res, certified),
        _anonymity_section(res),
        None if certified is None else certified_section(certified),
    ]
    return (
        title,
        [audit_synthetic_paragraph(res, certified), *summary_sentences(res)],
        [section for section in sections if section is not None],
    )
