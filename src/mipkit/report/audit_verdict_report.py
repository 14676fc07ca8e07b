"""The verdict box and the certificate's table of a model audit's report (docs/theory.md section 11).

The box comes first in the report: the status against the user's policy (pass / finding / inconclusive / no
policy stated), the measurement it was read from, certificate violations, the date and the data and model
fingerprints. The certificate sentences say what a certified eta allows, its premise and whether it is exact.
"""

from __future__ import annotations

import pandas as pd

from mipkit.report.html import Section

__all__ = [
    "certificate_sentences",
    "certificate_table",
    "roc_attacks",
    "status_text",
    "verdict_section",
    "verdict_sentence",
]


def _pct(x: float | None, digits: int = 1, why: str = "not measured") -> str:
    return f"n/a ({why})" if x is None else f"{100 * x:.{digits}f}%"


def _ci(ci, digits: int = 3, scale: float = 1.0) -> str:
    if not ci or ci[0] is None:
        return ""
    return f"[{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"


def roc_attacks(results: dict) -> dict[str, dict]:
    """Attacks with a ROC (everything except the pairwise LTU game)."""
    return {k: v for k, v in results.get("attacks", {}).items() if v.get("roc")}


_STATUS_TEXT = {
    "pass": "PASS",
    "finding": "FINDING",
    "inconclusive": "INCONCLUSIVE",
    "no policy": "NO POLICY STATED",
}


def status_text(status: str) -> str:
    """The word a report shows for a verdict's status (``"pass"`` -> ``"PASS"``; unknown ones as they are).

    Parameters
    ----------
    status : str
        The ``status`` of a results dict's ``verdict``.

    Returns
    -------
    str
        Its upper-case label, or ``status`` itself when it is not a known status.
    """
    return _STATUS_TEXT.get(status, status)


def verdict_sentence(results: dict) -> str | None:
    """The verdict line (first in the summary and on the terminal); None for results without a verdict."""
    v = results.get("verdict")
    if not v:
        return None
    return f"Verdict: {status_text(v['status'])}. {v['text']}"


def certificate_sentences(cert: dict) -> list[str]:
    """What a certificate allows, its premise and whether it is exact (docs/theory.md sections 1 and 3); an
    estimated sigma, a premise that depends on the private data, comes first."""
    eta = float(cert["eta"])
    first = []
    source = str(cert.get("sigma_source") or "")
    if cert.get("exact") is False and source.startswith("estimated"):  # the data-dependent premise first
        first.append(
            f"The certificate is approximate because sigma was estimated from the private data ({source}), "
            "not known a priori: it holds only if that estimate bounds the true spread."
        )
    out = [
        f"The trainer is certified eta <= {eta:.3g} ({cert.get('source', '')}): no attacker is right more "
        f"than {100 * (0.5 + eta):.1f}% of the time on a balanced guess. Eta alone still allows "
        f"TPR <= FPR + 2 eta: an attacker may find up to {100 * min(1.0, 2 * eta):.0f}% of the members with "
        "no false alarm."
    ]
    if cert.get("tradeoff"):
        out[0] += " Its f-DP trade-off curve bounds the TPR at each FPR more tightly (table below)."
    if cert.get("premise"):
        out.append(f"Premise of the certificate: {cert['premise']}.")
    if cert.get("exactness"):
        out.append(f"The certificate is {cert['exactness']}.")
    return first + out


def _certificate_text(results: dict, v: dict) -> str:
    """The verdict box's certificate row: the violations, "no violation", or that none was given."""
    if v.get("certificate_violations"):
        return "; ".join(v["certificate_violations"])
    if results.get("certificate") or v.get("certificate_by_attack"):
        return "no violation"
    return "no certificate given"


def verdict_section(results: dict) -> Section | None:
    """The verdict box: status, policy, measurement, date and fingerprints."""
    v = results.get("verdict")
    if not v:
        return None
    prov = results.get("provenance") or {}
    policy = v.get("policy")
    m = v.get("measured") or {}
    rows = [
        ("verdict", status_text(v["status"])),
        (
            "policy",
            f"{policy['metric']} must not exceed {policy['fail_above']:g}"
            if policy
            else "no policy stated (give a limit to get pass / finding)",
        ),
        (
            "measured",
            f"{m.get('metric')} {m.get('value'):.4f} ({m.get('attack')}), "
            f"{100 * m.get('confidence', 0.95):g}% simultaneous interval {_ci(m.get('ci'), 4)}"
            if m.get("value") is not None
            else "n/a (no score attack ran)",
        ),
        ("certificate", _certificate_text(results, v)),
        ("date (UTC)", prov.get("date") or results.get("created") or "n/a (not recorded)"),
        ("data fingerprint (SHA-256 of the encoded arrays)", prov.get("data_sha256") or "n/a (not recorded)"),
        ("model", prov.get("model_class") or "n/a (not recorded)"),
        (
            "model fingerprint (class, version, parameters)",
            prov.get("model_fingerprint") or "n/a (not recorded)",
        ),
    ]
    text = [
        v["text"],
        "finding: the interval lies above the limit (or a certificate is violated); pass: it lies at or "
        "below the limit for these attacks (an audit cannot prove a model private); inconclusive: it "
        "straddles the limit.",
    ]
    return Section("Verdict", text, [pd.DataFrame(rows, columns=["", "value"])])


def certificate_table(results: dict) -> pd.DataFrame | None:
    """Certified TPR beside each attack's measured TPR (with its simultaneous cluster interval) per FPR."""
    cert = results.get("certificate") or {}
    bounds = cert.get("tpr_bound")
    if not bounds:
        return None
    rows = []
    for name, a in roc_attacks(results).items():
        for k, d in a.get("tpr_at_fpr_detail", {}).items():
            ci = d.get("tpr_ci_simultaneous") or d.get("tpr_ci")
            bound = bounds.get(k)
            rows.append(
                {
                    "attack": name,
                    "FPR": k,
                    "measured TPR [simultaneous CI]": f"{_pct(d['tpr'], 2)} {_ci(ci, 2, 100)}",
                    "certified TPR": "n/a (FPR not certified)" if bound is None else _pct(bound, 2),
                    "above the certificate": "n/a (no certified TPR here)"
                    if bound is None
                    else ("YES" if ci and ci[0] is not None and ci[0] > bound else "no"),
                }
            )
    return pd.DataFrame(rows)
