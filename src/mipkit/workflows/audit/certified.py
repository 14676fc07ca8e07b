"""Per-attack verdicts of a model audit against the trainer's certificate.

The certificate protocol (:func:`mipkit.workflows.audit.measure.read_certificate`) gives the certified
TPR at each FPR (``certificate["tpr_bound"]``: ``1 - f(FPR)`` of an f-DP certificate's replace-one curve,
else ``FPR + 2 eta``). An attack *violates* the certificate at an FPR when the **lower** end of its measured
(simultaneous) interval lies above the certified TPR there: sampling error alone would not put it there, so
the training or its accounting is wrong (docs/theory.md sections 3 and 11). Otherwise it is "below the
certificate" (its point estimate may still exceed the bound by sampling error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BELOW", "VIOLATION", "certificate_by_attack"]

BELOW = "below the certificate"
VIOLATION = "violation"


def certificate_by_attack(
    stats: Mapping[str, Any] | None, certificate: Mapping[str, Any] | None
) -> dict | None:
    """``{attack: {"verdict", "tpr_at_fpr": {fpr: {measured_tpr, lower_end, certified_tpr, verdict}}}}``.

    Parameters
    ----------
    stats : mapping
        The audit's measurement (``stats["attacks"][name]["tpr_at_fpr"][fpr]`` with ``tpr`` and
        ``tpr_ci_simultaneous``).
    certificate : mapping or None
        The annotated certificate (``tpr_bound`` per FPR label).

    Returns
    -------
    dict or None
        None without a certificate or a measurement; an attack's verdict is a violation when any of its
        FPRs is.
    """
    if not certificate or not stats:
        return None
    bounds = certificate.get("tpr_bound") or {}
    out: dict[str, Any] = {}
    for name, row in stats.get("attacks", {}).items():
        per = {}
        for key, d in row.get("tpr_at_fpr", {}).items():
            bound = bounds.get(key)
            if bound is None:
                continue
            low = float(d["tpr_ci_simultaneous"][0])
            per[key] = {
                "measured_tpr": float(d["tpr"]),
                "lower_end": low,
                "certified_tpr": float(bound),
                "verdict": VIOLATION if low > float(bound) else BELOW,
            }
        if per:
            worst = VIOLATION if any(v["verdict"] == VIOLATION for v in per.values()) else BELOW
            out[name] = {"verdict": worst, "tpr_at_fpr": per}
    return out
