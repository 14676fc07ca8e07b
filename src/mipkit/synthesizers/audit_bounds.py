"""Certified bounds beside the measured risks of a synthetic-data audit (``audit-synthetic --certificate``).

For a synthesizer with a certificate (:class:`~mipkit.synthesizers.certificate.SynthesisCertificate`) and the
audit of its output (:func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`):

* **DCR membership attack.** Training records against holdout records is a test of "record in against
  record out", bounded by the add/remove curve: at every FPR ``alpha`` of the attack's ROC the TPR is at most
  ``1 - f(alpha)`` (docs/theory.md section 3).
* **Attribute inference.** With baseline success ``base`` (the non-member baseline precision), the unified
  bound of Kulynych et al. (2025) caps the attack's success at ``1 - f(base)``.

A measured value above its certified bound is reported at two strengths:

* ``above_bound``: the point estimate exceeds the bound (a TPR by more than one member, ``1 / m``; ROC
  points at an FPR the audit cannot resolve, below one non-member ``1 / n``, are not compared). Information
  only: with thousands of ROC points and a handful of non-members at the lowest FPRs, some point of a valid
  mechanism's ROC lies above its bound in most audits (MST at epsilon 1 on BankChurners did).
* ``violation`` (the headline, listed in ``violations``): the excess survives sampling error,
  simultaneously over every point compared (Bonferroni): the one-sided Clopper-Pearson lower bound of the
  measured TPR lies above the bound taken at the upper bound of the FPR, each at level
  ``1 - alpha / (2 k)`` for ``k`` points (alpha = 0.05); an inference success whose interval's lower end is
  above its bound. The guarantee, the implementation or the audit is then wrong. The false-alarm rate on
  audits whose members and non-members are exchangeable is tested (``tests/synthesize``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from mipkit.synthesizers.certificate import SynthesisCertificate, certificate_curve

__all__ = ["audit_with_certificate", "certified_audit_bounds", "certified_lines", "certified_roc_excess"]


#: Family-wise error of the violation verdicts of one comparison family (the ROC scan, the TPR table).
ALPHA = 0.05


def _lower(successes: Any, trials: float, level: float = 0.95) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound of a binomial rate (vectorised over ``successes``)."""
    k = np.asarray(successes, dtype=float)
    if trials <= 0:
        return np.zeros_like(k)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(np.maximum(k, 1.0), trials - k + 1.0, 1.0 - level)
    return np.where(k <= 0, 0.0, out)


def _upper(successes: Any, trials: float, level: float = 0.95) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound of a binomial rate (vectorised over ``successes``)."""
    k = np.asarray(successes, dtype=float)
    if trials <= 0:
        return np.ones_like(k)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(k + 1.0, np.maximum(trials - k, 1.0), level)
    return np.where(k >= trials, 1.0, out)


def certified_roc_excess(
    curve: Any, dcr_members: np.ndarray, dcr_nonmembers: np.ndarray, *, alpha: float = ALPHA
) -> dict:
    """Largest excess of the DCR attack's ROC (score ``-DCR``) over the certified ``1 - f(alpha)``, at the
    resolved FPRs (``>= 1 / n``, below 1), and whether some point exceeds it beyond sampling error,
    simultaneously over the ``k`` points compared (module docstring).

    Returns
    -------
    dict
        ``max_excess`` (TPR minus bound, largest over the points), ``at_fpr``, ``tpr``, ``certified_tpr`` at
        that point, ``above_bound`` (``max_excess > 1 / m``), ``violation`` (some point's TPR lower bound
        above the bound at its FPR upper bound, each at level ``1 - alpha / (2 k)``), ``significant`` (the
        same, kept for results written before), ``points`` (thresholds) and ``compared`` (``k``).
    """
    m = np.sort(np.asarray(dcr_members, dtype=float))
    h = np.sort(np.asarray(dcr_nonmembers, dtype=float))
    thresholds = np.unique(np.concatenate([m, h]))
    k_m = np.searchsorted(m, thresholds, side="right")  # "member" when DCR <= threshold
    k_h = np.searchsorted(h, thresholds, side="right")
    tpr, fpr = k_m / m.size, k_h / h.size
    bound = np.asarray(curve.tpr(np.clip(fpr, 0.0, 1.0)), dtype=float)
    # resolved FPRs, without the trivial corner (1, 1) where every curve and its bound meet (when the ROC
    # has no other point, that corner is all there is)
    resolved = (fpr >= 1.0 / h.size) & ((fpr < 1.0) | (thresholds.size == 1))
    excess = np.where(resolved, tpr - bound, -np.inf)
    i = int(np.argmax(excess))
    compared = max(int(resolved.sum()), 1)
    level = 1.0 - alpha / (2.0 * compared)
    tpr_lo = _lower(k_m[resolved], m.size, level)
    fpr_hi = _upper(k_h[resolved], h.size, level)
    beyond = bool(np.any(tpr_lo > np.asarray(curve.tpr(fpr_hi), dtype=float)))
    return {
        "max_excess": float(excess[i]),
        "at_fpr": float(fpr[i]),
        "tpr": float(tpr[i]),
        "certified_tpr": float(bound[i]),
        "above_bound": bool(excess[i] > 1.0 / m.size),
        "violation": beyond,
        "significant": beyond,
        "points": int(thresholds.size),
        "compared": compared,
    }


def certified_audit_bounds(certificate: SynthesisCertificate, audit: Any) -> dict:
    """The certified bounds of ``certificate`` beside the measured risks of ``audit``.

    Parameters
    ----------
    certificate : SynthesisCertificate
    audit : AuditSyntheticResult or dict
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
    out["dcr"]["tpr_at_fpr"] = _dcr_table(curve, res.get("dcr") or {}, violations)
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
                f"DCR attack ROC lies above the certified curve beyond sampling error (largest excess: TPR "
                f"{roc['tpr']:.4f} at FPR {roc['at_fpr']:.4g}, certified {roc['certified_tpr']:.4f})"
            )
    out["inference"] = _inference_bounds(curve, res.get("inference") or {}, violations)
    out["violations"] = violations
    return out


def _dcr_table(curve: Any, dcr: dict, violations: list[str]) -> dict:
    """The DCR attack's TPR at each FPR of the audit's table beside its certified bound (violations, beyond
    sampling error simultaneously over the table, appended to ``violations``)."""
    n_members = dcr.get("n_members") or 0
    n_non = dcr.get("n_nonmembers") or 0
    table = {}
    points = {k: v for k, v in (dcr.get("tpr_at_fpr") or {}).items() if v is not None}
    level = 1.0 - ALPHA / (2.0 * max(len(points), 1))  # simultaneous over the table's FPRs
    for key, measured in points.items():
        bound = float(curve.tpr(float(key)))
        lo = float(_lower(round(float(measured) * n_members), n_members, level))
        resolved = n_non == 0 or float(key) >= 1.0 / n_non
        fpr_hi = float(_upper(np.floor(float(key) * n_non + 1e-9), n_non, level)) if n_non else float(key)
        beyond = bool(resolved and lo > float(curve.tpr(fpr_hi)))
        row = {
            "measured": float(measured),
            "certified": bound,
            "above_bound": bool(resolved and measured > bound + (1.0 / n_members if n_members else 1e-12)),
            "violation": beyond,
            "significant": beyond,
        }
        table[key] = row
        if row["violation"]:
            violations.append(
                f"DCR attack TPR {measured:.4f} at FPR {key} is above the certified {bound:.4f}, beyond "
                "sampling error"
            )
    return table


def _inference_bounds(curve: Any, inference: dict, violations: list[str]) -> dict:
    """Each secret's attribute-inference precision beside the certified success at its baseline
    (violations, the interval's lower end above the bound, appended to ``violations``)."""
    out = {}
    for secret, r in inference.items():
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
            "above_bound": bool(prec > bound + 1e-12),
            "violation": bool(lo > bound),
            "significant": bool(lo > bound),
        }
        out[secret] = row
        if row["violation"]:
            violations.append(
                f"attribute inference of {secret!r}: precision {prec:.4f} (interval from {lo:.4f}) is above "
                f"the certified {bound:.4f} (baseline {base:.4f})"
            )
    return out


def audit_with_certificate(
    certificate: SynthesisCertificate, audit: Any, run_dir: str | Any = None, *, report: bool = True
) -> dict:
    """:func:`certified_audit_bounds`; with ``run_dir`` (the audit's run folder, already written) also
    written to ``run_dir/certified_bounds.json`` and, with ``report``, drawn into its ``report.html``, the two
    renamed into place together (``mipkit audit-synthetic --certificate`` writes the bounds with the audit's
    files instead: :meth:`AuditSyntheticResult.write`)."""
    out = certified_audit_bounds(certificate, audit)
    if run_dir is not None:
        from pathlib import Path

        from mipkit._runfolder import staged_writes
        from mipkit.report.results import write_json_atomic

        with staged_writes(run_dir, replaces=("certified_bounds.json", "report.html")):
            write_json_atomic(Path(run_dir) / "certified_bounds.json", out)
            if report:
                from mipkit.report import write_html_report
                from mipkit.report.synthetic_report import build

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
    noisy = _above_within_error(bounds)
    lines += [f"VIOLATION: {v}" for v in viol] or [
        "No measured risk is above its certified bound beyond sampling error"
        + (f" (above it, within sampling error: {'; '.join(noisy)})." if noisy else ".")
    ]
    return lines


def _above_within_error(bounds: dict) -> list[str]:
    """Each figure whose point estimate lies above its certified bound but within sampling error, named."""
    dcr = bounds.get("dcr", {})
    named = [
        (f"DCR attack TPR at FPR {fpr}: {r['measured']:.4f} > {r['certified']:.4f}", r)
        for fpr, r in (dcr.get("tpr_at_fpr") or {}).items()
    ]
    roc = dcr.get("roc")
    if roc:
        named.append(
            (
                f"DCR attack's ROC curve at FPR {roc['at_fpr']:.3g} (the point nearest its bound, of "
                f"{roc['points']} thresholds): TPR {roc['tpr']:.4f} > {roc['certified_tpr']:.4f}",
                roc,
            )
        )
    named += [
        (f"inference of {s}: {r['precision']:.4f} > {r['certified_success']:.4f}", r)
        for s, r in (bounds.get("inference") or {}).items()
    ]
    return [text for text, r in named if r.get("above_bound") and not r.get("violation")]
