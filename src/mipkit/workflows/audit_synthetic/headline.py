"""The default verdict of a synthetic-data audit: a family of tests corrected for multiplicity.

Every test of the family measures one way the synthetic table can expose its training records, on one
scale (0: what unseen records show, 1: every training record exposed), and compares its interval with the
policy's threshold ``t`` (``--fail-above``):

* ``privacy_loss``: NNAA privacy loss ``AA_test - AA_train`` (needs unseen records);
* ``exact_copies``: the share of training records with an identical synthetic record, minus that share for
  the reference records (:mod:`mipkit.metrics.copies`; without unseen records, the training records'
  twins among themselves);
* ``near_copies``: the share of training records closer to the synthetic table than 95% of the unseen
  records are, minus that share for the unseen records (needs unseen records);
* ``inference_pi``: attribute inference's like-for-like precision improvement over its non-member baseline,
  every (secret, attack) pair (when secrets are attacked).

With ``K`` tests judged, each interval is at level ``1 - (1 - confidence) / K`` (the inference test's pairs
at ``1 - (1 - confidence) / (K J)`` for ``J`` pairs): a **finding** when any lies wholly above ``t`` (the
first step of Holm's procedure, which decides whether any test rejects: at most ``1 - confidence`` false
alarms over the family). A **pass** only when every test that the inputs allow was judged and all upper
ends lie at or below ``t``: a table is never passed while a test it could fail was not run (no unseen
records: NNAA and near copies are not judged, so the best verdict is inconclusive).
"""

from __future__ import annotations

from scipy.stats import norm

from mipkit.metrics.copies import excess_interval

LABELS = {
    "privacy_loss": "NNAA privacy loss",
    "exact_copies": "excess share of training records copied exactly",
    "near_copies": "excess share of training records nearly copied",
    "inference_pi": "attribute-inference precision improvement (like for like)",
}
HEADLINE_LABEL = (
    "privacy family (NNAA, exact copies, near copies, attribute inference), corrected for testing several "
    "things at once (Holm)"
)


def headline_size(*, nnaa: bool, copies: dict | None, inference: bool) -> int:
    """``K``, the number of tests of the family that the audit's measurements allow."""
    c = copies or {}
    return int(nnaa) + int("exact" in c) + int("near" in c) + int(inference)


def _members(res: dict, confidence: float) -> tuple[list[dict], list[str]]:
    """The judged tests (``name``, ``value``, ``interval``, ``level``) and why the others were not judged."""
    nn = res.get("nnaa") or {}
    copies = res.get("copies") or {}
    family = res.get("inference_family") or []
    k = headline_size(nnaa=nn.get("privacy_loss") is not None, copies=copies, inference=bool(family))
    a = 1.0 - confidence
    level = 1.0 - a / max(k, 1)
    out, missing = [], []
    if nn.get("privacy_loss") is not None:
        iv = nn.get("intervals") or {}
        se = iv.get("privacy_loss_se")
        if se is None:  # an interval without a standard error: read one off its half-width
            lo, hi = iv["privacy_loss_ci"]
            se = (hi - lo) / (2 * norm.ppf(0.5 + iv.get("confidence", 0.95) / 2))
        z = float(norm.ppf(0.5 + level / 2))
        v = nn["privacy_loss"]
        out.append({"name": "privacy_loss", "value": v, "interval": [v - z * se, v + z * se]})
    else:
        missing.append(f"{LABELS['privacy_loss']} ({nn.get('note') or 'not computed'})")
    for key in ("exact_copies", "near_copies"):
        rate = copies.get(key.split("_")[0])
        if rate is None:
            why = "no unseen records" if copies else "the DCR part was not run"
            missing.append(f"{LABELS[key]} ({why})")
            continue
        out.append({"name": key, "value": rate["excess"], "interval": excess_interval(rate, level)})
    usable = [p for p in family if (p.get("ci_headline") or [None])[0] is not None]
    if usable:
        top = max(usable, key=lambda p: p["ci_headline"][0])
        out.append(
            {
                "name": "inference_pi",
                "value": max(p["value"] for p in usable),
                "interval": top["ci_headline"],
                "pair": f"{top['secret']!r} by {top['attack']}",
            }
        )
    elif family:
        missing.append(f"{LABELS['inference_pi']} (every baseline is already perfect)")
    for m in out:
        m["level"] = level if m["name"] != "inference_pi" else usable[0]["level_headline"]
        m["label"] = LABELS[m["name"]]
    return out, missing


def headline_verdict(res: dict, *, fail_above: float | None, confidence: float = 0.95) -> dict:
    """The family verdict (see the module docstring): the fields of
    :func:`mipkit.workflows.audit_synthetic.verdict.synthetic_verdict` plus ``members`` (each judged test
    with its
    ``status``) and ``not_judged``."""
    members, missing = _members(res, confidence)
    out = {"metric": "headline", "metric_label": HEADLINE_LABEL, "fail_above": fail_above}
    for m in members:
        lo, hi = m["interval"]
        if fail_above is not None:
            m["status"] = "finding" if lo > fail_above else "pass" if hi <= fail_above else "inconclusive"
    k = len(members)
    detail = (
        f"{k} tests, each interval at {100 * (1 - (1 - confidence) / max(k, 1)):.4g}% (Holm's first step)"
    )
    common = {"members": members, "not_judged": missing, "detail": detail, "confidence": confidence}
    if fail_above is None:
        reason = "no threshold was stated: measurements only (state one to get a pass or a finding)"
        return {**out, "status": "no policy", "reason": reason, **common}
    if not members:
        reason = "no test of the family could be computed: " + "; ".join(missing)
        return {**out, "status": "inconclusive", "reason": reason, **common}

    def text(m: dict) -> str:
        lo, hi = m["interval"]
        return f"{m['label']} {m['value']:.4f}: its {100 * m['level']:.4g}% interval [{lo:.4f}, {hi:.4f}]"

    found = [m for m in members if m["status"] == "finding"]
    if found:
        top = max(found, key=lambda m: m["interval"][0])
        status = "finding"
        reason = "; ".join(f"{text(m)} lies above {fail_above:g}" for m in found)
    else:
        top = max(members, key=lambda m: m["interval"][1])
        if missing:
            status = "inconclusive"
            reason = "not every test could be judged: " + "; ".join(missing)
            if top["status"] == "inconclusive":
                reason += f"; {text(top)} contains {fail_above:g}"
        elif top["status"] == "pass":
            status = "pass"
            reason = f"every test lies at or below {fail_above:g}; the closest, {text(top)}"
        else:
            status = "inconclusive"
            reason = f"{text(top)} contains {fail_above:g}; more records would decide"
    return {
        **out,
        "status": status,
        "reason": reason,
        "value": top["value"],
        "interval": top["interval"],
        **common,
        "confidence": top["level"],
    }
