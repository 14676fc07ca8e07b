"""Certified bounds beside the measured risks of a synthetic-data audit (``audit-synthetic --certificate``).

For a synthesizer with a certificate (:class:`~mipkit.synthesize.certificate.SynthesisCertificate`) and the
audit of its output (:func:`mipkit.workflows.audit_synthetic.audit_synthetic`):

* **DCR membership attack.** Training records against holdout records is a test of "record in against
  record out", bounded by the add/remove curve: at every FPR ``alpha`` of the attack's ROC the TPR is at most
  ``1 - f(alpha)`` (docs/theory.md section 3).
* **Attribute inference.** With baseline success ``base`` (the non-member baseline precision), the unified
  bound of Kulynych et al. (2025) caps the attack's success at ``1 - f(base)``.

A measured value above its certified bound is a *violation*: the guarantee, the implementation or the audit
is wrong, or the measurement is noisy. Measured rates move in steps of one record, so a TPR counts as above
its bound when it exceeds it by more than one member (``1 / m``), and ROC points at an FPR the audit cannot
resolve (below one non-member, ``1 / n``) are not compared. ``significant`` says whether the violation
survives sampling error: the one-sided 95% Clopper-Pearson lower bound of the measured rate is above the
bound, taken at the 95% upper bound of the FPR for the ROC.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from mipkit.synthesize.certificate import SynthesisCertificate, certificate_curve

__all__ = ["audit_with_certificate", "certified_audit_bounds", "certified_lines", "certified_roc_excess"]


def _lower(successes: float, trials: float, level: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound of a binomial rate."""
    if trials <= 0 or successes <= 0:
        return 0.0
    return float(stats.beta.ppf(1.0 - level, successes, trials - successes + 1))


def _upper(successes: float, trials: float, level: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a binomial rate."""
    if trials <= 0 or successes >= trials:
        return 1.0
    return float(stats.beta.ppf(level, successes + 1, trials - successes))


def certified_roc_excess(curve: Any, dcr_members: np.ndarray, dcr_nonmembers: np.ndarray) -> dict:
    """Largest excess of the DCR attack's ROC (score ``-DCR``) over the certified ``1 - f(alpha)``, at the
    resolved FPRs (``>= 1 / n``, below 1), and whether a point exceeds it beyond sampling error (module
    docstring)."""
    m = np.sort(np.asarray(dcr_members, dtype=float))
    h = np.sort(np.asarray(dcr_nonmembers, dtype=float))
    thresholds = np.unique(np.concatenate([m, h]))
    tpr = np.searchsorted(m, thresholds, side="right") / m.size  # "member" when DCR <= threshold
    fpr = np.searchsorted(h, thresholds, side="right") / h.size
    bound = np.asarray(curve.tpr(np.clip(fpr, 0.0, 1.0)), dtype=float)
    # resolved FPRs, without the trivial corner (1, 1) where every curve and its bound meet (when the ROC
    # has no other point, that corner is all there is)
    resolved = (fpr >= 1.0 / h.size) & ((fpr < 1.0) | (thresholds.size == 1))
    excess = np.where(resolved, tpr - bound, -np.inf)
    i = int(np.argmax(excess))
    k_m = np.searchsorted(m, thresholds, side="right")
    k_h = np.searchsorted(h, thresholds, side="right")
    tpr_lo = np.array([_lower(k, m.size) for k in k_m])
    fpr_hi = np.array([_upper(k, h.size) for k in k_h])
    significant = tpr_lo > np.asarray(curve.tpr(fpr_hi), dtype=float)
    return {
        "max_excess": float(excess[i]),
        "at_fpr": float(fpr[i]),
        "tpr": float(tpr[i]),
        "certified_tpr": float(bound[i]),
        "violation": bool(excess[i] > 1.0 / m.size),
        "significant": bool(significant.any()),
        "points": int(thresholds.size),
    }


def certified_audit_bounds(certificate: SynthesisCertificate, audit: Any) -> dict:
    """The certified bounds of ``certificate`` beside the measured risks of ``audit``.

    Parameters
    ----------
    certificate : SynthesisCertificate
    audit : SyntheticAuditResult or dict
        The audit (its ``to_dict()`` payload is enough; the full ROC needs the result object).

    Returns
    -------
    dict
        ``{"certified": bool, "dcr": {"tpr_at_fpr": {fpr: {"measured", "certified", "violation",
        "significant"}}, "roc": {...}, "curve": {"fpr": [...], "tpr": [...]}}, "inference": {secret:
        {"precision", "baseline_precision", "certified_success", "violation", "significant"}},
        "violations": [text, ...]}``; ``dcr.curve`` is the certified bound ``1 - f`` on a log grid.
    """
    if not certificate.certified:
        return {
            "certified": False,
            "method": certificate.method,
            "dcr": {},
            "inference": {},
            "violations": [],
        }
    curve = certificate_curve(certificate, "add_remove")
    res = audit.to_dict() if hasattr(audit, "to_dict") else dict(audit)
    out: dict[str, Any] = {"certified": True, "method": certificate.method, "dcr": {}, "inference": {}}
    violations: list[str] = []
    dcr = res.get("dcr") or {}
    n_members = dcr.get("n_members") or 0
    n_non = dcr.get("n_nonmembers") or 0
    table = {}
    for key, measured in (dcr.get("tpr_at_fpr") or {}).items():
        if measured is None:
            continue
        bound = float(curve.tpr(float(key)))
        lo = _lower(float(measured) * n_members, n_members)
        resolved = n_non == 0 or float(key) >= 1.0 / n_non
        fpr_hi = _upper(float(key) * n_non, n_non) if n_non else float(key)
        row = {
            "measured": float(measured),
            "certified": bound,
            "violation": bool(resolved and measured > bound + (1.0 / n_members if n_members else 1e-12)),
            "significant": bool(resolved and lo > float(curve.tpr(fpr_hi))),
        }
        table[key] = row
        if row["violation"]:
            violations.append(
                f"DCR attack TPR {measured:.4f} at FPR {key} is above the certified {bound:.4f}"
            )
    out["dcr"]["tpr_at_fpr"] = table
    grid = np.concatenate([np.logspace(-6, -1, 41)[:-1], np.linspace(0.1, 1.0, 19)])
    out["dcr"]["curve"] = {  # the certified ROC bound 1 - f(alpha), for the report's figure
        "fpr": grid.tolist(),
        "tpr": [float(v) for v in np.asarray(curve.tpr(grid), dtype=float)],
    }
    attack = getattr(audit, "dcr_attack", None)
    if attack is not None:
        roc = certified_roc_excess(curve, attack.dcr_members, attack.dcr_nonmembers)
        out["dcr"]["roc"] = roc
        if roc["violation"] and not any("DCR" in v for v in violations):
            violations.append(
                f"DCR attack ROC reaches TPR {roc['tpr']:.4f} at FPR {roc['at_fpr']:.4g}, above the "
                f"certified {roc['certified_tpr']:.4f}"
            )
    for secret, r in (res.get("inference") or {}).items():
        base, prec = r.get("baseline_precision"), r.get("precision")
        if base is None or prec is None:
            continue
        bound = float(curve.tpr(min(max(float(base), 0.0), 1.0)))
        ci = r.get("precision_ci") or [None, None]
        lo = ci[0] if ci and ci[0] is not None else prec
        row = {
            "precision": float(prec),
            "baseline_precision": float(base),
            "certified_success": bound,
            "violation": bool(prec > bound + 1e-12),
            "significant": bool(lo > bound),
        }
        out["inference"][secret] = row
        if row["violation"]:
            violations.append(
                f"attribute inference of {secret!r}: precision {prec:.4f} is above the certified {bound:.4f} "
                f"(baseline {base:.4f})"
            )
    out["violations"] = violations
    return out


def audit_with_certificate(certificate: SynthesisCertificate, audit: Any, run_dir: str | Any = None) -> dict:
    """:func:`certified_audit_bounds`; with ``run_dir`` (the audit's run folder, already written) also
    written to ``run_dir/certified_bounds.json`` and drawn into its ``report.html`` (what
    ``mipkit audit-synthetic --certificate`` calls)."""
    out = certified_audit_bounds(certificate, audit)
    if run_dir is not None:
        from pathlib import Path

        from mipkit.report import write_html_report
        from mipkit.report.results import write_json_atomic
        from mipkit.report.synthetic_report import build

        write_json_atomic(Path(run_dir) / "certified_bounds.json", out)
        title, summary, sections = build(run_dir)
        write_html_report(run_dir, title=title, summary=summary, sections=sections)
    return out


def certified_lines(bounds: dict) -> list[str]:
    """Plain sentences for a terminal: the certified bounds beside the measured values, and any violation."""
    if not bounds.get("certified"):
        return [f"The {bounds.get('method')!r} synthesizer is not private: no risk is certified."]
    lines = []
    for fpr, row in (bounds.get("dcr", {}).get("tpr_at_fpr") or {}).items():
        measured, bound = row["measured"], row["certified"]
        lines.append(f"DCR attack TPR at FPR {fpr}: measured {measured:.4f}, certified <= {bound:.4f}")
    for secret, row in (bounds.get("inference") or {}).items():
        lines.append(
            f"inference of {secret}: precision {row['precision']:.4f} (non-member baseline "
            f"{row['baseline_precision']:.4f}), certified <= {row['certified_success']:.4f}"
        )
    viol = bounds.get("violations") or []
    lines += [f"VIOLATION: {v}" for v in viol] or ["No measured risk is above its certified bound."]
    return lines
