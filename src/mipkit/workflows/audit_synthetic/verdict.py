"""The verdict of a synthetic-data audit against a policy the user states, and why each check ran or not.

A policy is a metric and a threshold ("fail above"). The verdict compares the metric's interval, not its point
estimate, with the threshold (``docs/theory.md`` sections 4 and 6):

* ``finding``: the whole interval lies above the threshold (the data measurably exceed the policy);
* ``pass``: the whole interval lies at or below it;
* ``inconclusive``: the interval straddles it (more records would decide), or the metric could not be
  computed (the reason is given);
* ``no policy``: no threshold was stated; the measurements are reported without a verdict.

Metrics (``VERDICT_METRICS``):

* ``"headline"`` (default): the family of tests of :mod:`mipkit.workflows.audit_synthetic.headline` (NNAA
privacy
  loss, exact and near copies, attribute inference), corrected for multiplicity; a pass only when every
  test the inputs allow was judged.
* ``"privacy_loss"``: NNAA privacy loss ``AA_test - AA_train`` with its NNAA interval (``nnaa_interval``)
  (:mod:`mipkit.metrics.nnaa_intervals`); 0 = no sign of memorisation.
* ``"dcr_auc"``: AUC of the distance-to-closest-record membership attack with DeLong's interval; 0.5 =
  guessing.
* ``"inference_pi"``: the like-for-like precision improvement of attribute inference (Francis & Wagner),
  over every attacked secret and every attack, each interval widened for the number of pairs compared
  (Bonferroni: level ``1 - a/J`` for ``J`` pairs), so that picking the strongest pair after the fact does
  not raise false alarms. A finding when any pair's corrected interval lies above the threshold, a pass when
  all lie at or below it.
"""

from __future__ import annotations

import math

from mipkit.workflows.audit_synthetic.headline import HEADLINE_LABEL, headline_verdict

VERDICT_METRICS = ("headline", "privacy_loss", "dcr_auc", "inference_pi")
METRIC_LABELS = {
    "headline": HEADLINE_LABEL,
    "privacy_loss": "NNAA privacy loss",
    "dcr_auc": "DCR attack AUC",
    "inference_pi": "attribute-inference precision improvement (like for like)",
}


def _decide(lo: float | None, hi: float | None, threshold: float) -> str:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "inconclusive"
    if lo > threshold:
        return "finding"
    if hi <= threshold:
        return "pass"
    return "inconclusive"


def _evidence(res: dict, metric: str, inference_family: list[dict]) -> dict:
    """``value``, ``interval``, ``confidence`` and ``detail`` of one metric, or a ``missing`` reason."""
    if metric == "privacy_loss":
        nn = res.get("nnaa") or {}
        if nn.get("privacy_loss") is None:
            return {"missing": nn.get("note") or "the NNAA privacy loss was not computed"}
        iv = nn.get("intervals") or {}
        return {
            "value": nn["privacy_loss"],
            "interval": iv.get("privacy_loss_ci"),
            "confidence": iv.get("confidence", 0.95),
            "detail": f"{iv.get('method', 'interval')} over n = {nn.get('n')} records per set",
        }
    if metric == "dcr_auc":
        dcr = res.get("dcr") or {}
        if dcr.get("auc") is None:
            return {"missing": dcr.get("note") or "the DCR attack was not computed"}
        return {
            "value": dcr["auc"],
            "interval": dcr.get("auc_ci"),
            "confidence": 0.95,
            "detail": f"DeLong interval, {dcr.get('n_members')} training vs {dcr.get('n_nonmembers')} unseen",
        }
    if not inference_family:
        return {"missing": "no secret column was attacked by attribute inference"}
    usable = [p for p in inference_family if p["ci_corrected"][0] is not None]
    if not usable:
        return {"missing": "no attack has a precision improvement (every baseline is already perfect)"}
    top = max(usable, key=lambda p: p["ci_corrected"][0])
    return {
        "value": max(p["value"] for p in usable),
        "interval": top["ci_corrected"],
        "confidence": top["level"],
        "detail": f"{len(inference_family)} (secret, attack) pairs, Bonferroni; strongest lower end: "
        f"{top['secret']!r} by {top['attack']}",
        "family": inference_family,
    }


def synthetic_verdict(
    res: dict, *, metric: str, fail_above: float | None, inference_family: list[dict] | None = None
) -> dict:
    """The verdict dict written to ``results.json`` (see the module docstring).

    ``res`` holds the ``nnaa``, ``dcr`` and ``inference`` fields of the results; ``inference_family`` the
    Bonferroni-corrected intervals of every (secret, attack) pair (``secret``, ``attack``, ``value``,
    ``ci_corrected``, ``level``).
    """
    if metric == "headline":
        conf = (res.get("inputs") or {}).get("confidence", 0.95)
        fam = res.get("inference_family", []) if inference_family is None else inference_family
        return headline_verdict({**res, "inference_family": fam}, fail_above=fail_above, confidence=conf)
    ev = _evidence(res, metric, inference_family or [])
    label = METRIC_LABELS[metric]
    out = {"metric": metric, "metric_label": label, "fail_above": fail_above}
    if fail_above is None:
        status = "no policy"
        reason = "no threshold was stated: measurements only (state one to get a pass or a finding)"
    elif "missing" in ev:
        status = "inconclusive"
        reason = f"{label} not available: {ev['missing']}"
    else:
        lo, hi = ev["interval"] if ev["interval"] else (None, None)
        status = _decide(lo, hi, fail_above)
        conf = f"{100 * ev['confidence']:.3g}%"
        head = f"{label} {ev['value']:.4f}"
        if lo is not None and hi is not None:
            head += f": its {conf} interval [{lo:.4f}, {hi:.4f}]"
        if status == "finding":
            reason = f"{head} lies above {fail_above:g}"
        elif status == "pass":
            reason = f"{head} lies at or below {fail_above:g}"
        elif lo is None or hi is None:
            reason = f"{head} has no interval"
        else:
            reason = f"{head} contains {fail_above:g}; more records would decide"
    return {**out, "status": status, "reason": reason, **{k: v for k, v in ev.items() if k != "missing"}}


def synthetic_checks(res: dict, *, metric_name: str) -> list[dict]:
    """Every check of the audit, whether it ran, and why not (``name``, ``status``, ``why``).

    ``metric_name`` is the distance (``"mixed"`` or ``"euclidean"``).
    """
    inputs = res.get("inputs", {})
    non = inputs.get("nonmember_set")
    no_non = "no holdout or control table: there are no unseen records to compare the training records with"
    checks = []

    requested = set(inputs.get("checks", ("nnaa", "dcr", "inference")))

    def add(name: str, ran: bool, why: str | None = None, part: str | None = None) -> None:
        if not ran and part is not None and part not in requested:
            why = "not requested (the audit ran only: " + ", ".join(sorted(requested)) + ")"
        checks.append({"name": name, "status": "done" if ran else "skipped", "why": None if ran else why})

    nn = res.get("nnaa") or {}
    add("NNAA privacy loss", nn.get("privacy_loss") is not None, no_non, "nnaa")
    dcr = res.get("dcr") or {}
    add("DCR membership attack", dcr.get("auc") is not None, no_non, "dcr")
    add("DCR overfitting protection", bool(dcr.get("overfitting_protection")), no_non, "dcr")
    add(
        "DCR baseline protection",
        bool(dcr.get("baseline_protection")),
        f"defined for the mixed distance only (the audit used the {metric_name} distance)",
        "dcr",
    )
    inf = res.get("inference") or {}
    add("attribute inference", bool(inf), "no secret column was given", "inference")
    control = inputs.get("n_control")
    add(
        "anonymeter control-set risk",
        bool(inf) and control is not None,
        "no control table" if control is None else "no secret column was given",
    )
    for s, r in inf.items():
        note = r.get("precision_improvement_note")
        if note:
            checks.append({"name": f"precision improvement of {s!r}", "status": "n/a", "why": note})
    for fpr, why in (dcr.get("tpr_at_fpr_unresolved") or {}).items():
        checks.append({"name": f"TPR at FPR {fpr}", "status": "n/a", "why": why})
    ties = inputs.get("exact_ties") or {}
    if ties:
        checks.append(
            {"name": "exact ties", "status": "done" if ties["exact"] else "note", "why": ties["why"]}
        )
    if non == "control":
        checks.append(
            {
                "name": "unseen records",
                "status": "note",
                "why": "no holdout table: the control table serves as the unseen records of NNAA and DCR",
            }
        )
    return checks
