"""The DPIA paragraphs of the synthetic-data verbs: ``synthesize`` and ``audit-synthetic``.

Each is one paragraph a privacy officer can paste into a DPIA, in the order of :mod:`mipkit.report.dpia`:
what was released (or audited), the headline risk (or verdict) in plain words, what it means, and the
premises the figures rest on, those that depend on the data first. Functions take the results' dicts and
return text; the commands print the paragraph before their tables, and the audit's report starts with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mipkit.report.dpia import _meaning, relation_words
from mipkit.report.plain_language import copies_says, pct

__all__ = ["audit_synthetic_paragraph", "domain_sentence", "synthesize_paragraph"]

METHOD_NAMES = {
    "dpwgan-gp": "DP-WGAN-GP",
    "dpwgan-gp-scaled": "DP-WGAN-GP (centre-and-scale noise)",
    "dpwgan-clip": "DP-WGAN with per-record clipping (DP-SGD critic)",
    "aim": "AIM",
    "mst": "MST",
    "ctgan": "CTGAN",
}


# -- synthesize ---------------------------------------------------------------------------------------------
def domain_sentence(domain: Mapping[str, Any]) -> str:
    """Where a release's column domain came from, in a few words (``mipkit synthesize``'s domain line)."""
    source = domain.get("source")
    if source == "dp-estimated":
        return (
            f"estimated with differential privacy (epsilon {domain['epsilon']:.4g}, delta "
            f"{domain['delta']:.3g}; {domain['share']:.0%} of the budget, included in the epsilon above)"
        )
    if source == "public file":
        return "public (--domain), no privacy cost"
    return "read from the data (not private)"


def _domain_premise(domain: Mapping[str, Any]) -> str:
    """The data-dependent premise of a release: where its column domain came from."""
    source = domain.get("source")
    if source == "dp-estimated":
        return (
            f"the column domain was estimated from the private records with differential privacy, "
            f"{pct(float(domain['share']))} of the budget (included in the epsilon above): categories held "
            "by few records and values outside the estimated ranges are not in the synthetic data"
        )
    if source == "public file":
        return (
            "the column domain was given as public (--domain) at no privacy cost, so it must come from a "
            "public source such as a code book, not from the private records: ranges or categories read "
            "off them would disclose their rare values outside the guarantee"
        )
    return (
        "the column domain was read from the private records (not private): their rare categories and "
        "extreme values may appear in the synthetic data as they are"
    )


def synthesize_paragraph(d: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit synthesize``: the table released, its certified risk, what it
    means, and the premises (the column domain first).

    Parameters
    ----------
    d : mapping
        :meth:`mipkit.workflows.synthesize.result.SynthesizeResult.to_dict` (``method``, ``rows``,
        ``columns``, ``epsilon``, ``delta``, ``neighbours``, ``certified``, ``noise_source``, ``domain``).
    """
    method = METHOD_NAMES.get(d["method"], d["method"])
    table = f"a synthetic table of {d['rows']} records and {len(d['columns'])} columns made by {method}"
    cert = d.get("certified") or {}
    domain = _domain_premise(d.get("domain") or {})
    if cert.get("eta") is None:
        return " ".join(
            (
                f"Released: {table}, which is not differentially private.",
                "Headline risk: nothing is certified: the synthesizer bounds nothing an attacker may learn "
                "about a person from the table.",
                "What it means: only a measurement (mipkit audit-synthetic) can tell how much the table "
                "reveals of its training records, and a measurement is a lower bound, not a guarantee.",
                f"Premise: {domain}.",
                _utility(d),
            )
        ).strip()
    relation = d.get("neighbours") or "add_remove"
    released = (
        f"Released: {table}, which is (epsilon = {d['epsilon']:.3g}, delta = {d['delta']:g}) differential "
        f"privacy; it protects each person against {relation_words(relation)}."
    )
    in_out, game = 0.5 + cert["advantage"] / 2, 0.5 + cert["eta"]
    headline = (
        "Headline risk: an attacker who tries to tell whether a given person was in the training data is "
        f"right at most {pct(in_out)} of the time, against 50% by guessing"
    )
    if pct(game) != pct(in_out):
        headline += (
            f"; secondary figure: at most {pct(game)} if the attacker also knows how many records there are "
            "(the person's record then takes another's place: two changes, not one)"
        )
    premise = (
        f"Premise: {domain}; the figures are upper bounds over every attacker, whatever it knows, and hold "
        "only if each person has one record in the training table and the noise was drawn as stated"
    )
    if d.get("noise_source", "os-entropy") != "os-entropy":
        premise += " (here from a seed: a test run, not a release)"
    meaning = _meaning({"tpr_at_fpr": cert.get("tpr_at_fpr") or {}})
    return " ".join(p for p in (released, headline + ".", meaning, premise + ".", _utility(d)) if p)


def _utility(d: Mapping[str, Any]) -> str:
    """A sentence where the utility report's train-on-synthetic AUC is not measurable (the synthetic target
    has one class), else nothing."""
    t = (d.get("quality") or {}).get("train_synthetic_test_real")
    if not t or t.get("tstr_auc") is not None:
        return ""
    return (
        f"Utility: not measurable: every synthetic record has the same {t['target']}, so no model can be "
        f"trained on the synthetic table to predict it (the table carries none of the real {t['target']}'s "
        "relation to the other columns)."
    )


# -- audit-synthetic ----------------------------------------------------------------------------------------
_CHECK_WORDS = {
    "NNAA privacy loss": "nearest-neighbour adversarial accuracy",
    "DCR membership attack": "the distance-to-closest-record attack",
    "attribute inference": "attribute inference",
}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _audited(res: Mapping[str, Any]) -> str:
    inputs = res.get("inputs") or {}
    non = inputs.get("nonmember_set")
    unseen = (
        f"{inputs.get('n_' + non)} records it was not trained on (the {non} table)"
        if non
        else "no records it was not trained on"
    )
    done = [c["name"] for c in res.get("checks") or [] if c.get("status") == "done"]
    checks = [words for name, words in _CHECK_WORDS.items() if name in done]
    secrets = list(res.get("inference") or {})
    if secrets and "attribute inference" in checks:
        checks[-1] += " of " + ", ".join(repr(s) for s in secrets)
    if res.get("copies"):
        checks.append("copy counts")
    ran = f", by {_and(checks)}" if checks else ""
    return (
        f"Audited: a synthetic table of {inputs.get('n_synthetic')} records against the "
        f"{inputs.get('n_original')} records its generator was trained on and {unseen}{ran}."
    )


def _method(res: Mapping[str, Any]) -> str:
    """Which parts ran on a subsample (and which setting capped them), and where the searches ran."""
    samples = res.get("samples") or {}
    parts = [s["text"] for s in (samples.get(k) for k in ("nnaa", "dcr", "protection")) if s]
    backend = res.get("backend") or {}
    if backend.get("name") == "ray":
        rows, mb = backend.get("block_rows"), backend.get("peak_task_bytes", 0) / 2**20
        parts.append(
            f"The exact neighbour searches ran on Ray in {backend.get('blocks')} blocks of at most {rows:,} "
            f"x {rows:,} records, each task holding at most {mb:.0f} MB "
            "(merged exactly: the same neighbours as on one machine)"
        )
    elif backend:
        parts.append("The exact neighbour searches ran on this machine")
    return f"Method: {'. '.join(parts)}." if parts else ""


_POLICY_WORDS = {
    "headline": "each of the NNAA privacy loss, the excess of exact and near copies and the "
    "attribute-inference gain",
    "privacy_loss": "the NNAA privacy loss",
    "dcr_auc": "the AUC of the distance-to-closest-record attack",
    "inference_pi": "the attribute-inference gain",
}


def _verdict_words(verdict: Mapping[str, Any]) -> str:
    status = verdict.get("status")
    limit = verdict.get("fail_above")
    what = _POLICY_WORDS.get(verdict.get("metric"), verdict.get("metric_label"))
    policy = f"{what} at most {limit:g}" if limit is not None else ""
    if status == "finding":
        return (
            f"Headline verdict: FINDING: the synthetic data measurably expose their training records beyond "
            f"the stated limit ({policy})."
        )
    if status == "pass":
        return (
            "Headline verdict: PASS: every test the audit could run stays within the stated limit "
            f"({policy})."
        )
    if status == "inconclusive":
        if verdict.get("not_judged"):
            why = "not every test could be run"
        elif verdict.get("value") is None:
            why = "the measure could not be computed"
        else:
            why = "a measurement's interval contains the limit; more records would decide"
        return (
            f"Headline verdict: INCONCLUSIVE: the audit cannot tell whether the synthetic data stay within "
            f"the stated limit ({policy}): {why}."
        )
    return "Headline verdict: none: no limit was stated (--fail-above), so the audit gives measurements only."


def _copies(copies: Mapping[str, Any] | None, confidence: float) -> tuple[str, bool]:
    """The copy-count sentence and whether it measured copies beyond chance."""
    if not copies or copies.get("exact") is None:
        return "Copies: not counted (the distance part of the audit was not run).", False
    exact = copies["exact"]
    says, (lo, _) = copies_says(exact, confidence)
    ref = (
        "of the records it was not trained on"
        if copies.get("reference") == "unseen records"
        else "of training records with a twin among the other training records"
    )
    return (
        f"Copies: {round(exact['share'] * exact['n'])} of {exact['n']} training records "
        f"({pct(exact['share'])}) have an exact copy in the synthetic data, against "
        f"{pct(exact['reference_share'])} {ref}: {says}.",
        lo > 0,
    )


def _leaks(res: Mapping[str, Any], copied: bool, confidence: float) -> list[str]:
    """What the audit measured beyond chance, each in the words of the summary's sentences."""
    out = ["exact copies of training records"] if copied else []
    near = (res.get("copies") or {}).get("near")
    if near is not None and copies_says(near, confidence)[1][0] > 0:
        out.append("near copies of training records")
    iv = (res.get("nnaa") or {}).get("intervals") or {}
    if (iv.get("privacy_loss_ci") or [0.0])[0] > 0:
        out.append("synthetic records closer to training records than to unseen ones")
    if any(((p.get("ci_corrected") or [None])[0] or 0.0) > 0 for p in res.get("inference_family") or []):
        out.append("secret attributes inferred beyond what other people's records give")
    return out


def _audit_premise(res: Mapping[str, Any], certified: Mapping[str, Any] | None) -> str:
    inputs = res.get("inputs") or {}
    non = inputs.get("nonmember_set")
    parts = []
    if non is None:
        parts.append(
            "there were no records the generator was not trained on (--holdout or --control), so neither "
            "the nearest-neighbour test nor the distance attack nor near copies could be measured"
        )
    else:
        parts.append(
            f"the {inputs.get('n_' + non)} records of the {non} table come from the same population as the "
            "training records and were not used in training; more of them narrow every interval"
        )
    if certified is None:
        parts.append("no synthesizer certificate was given, so nothing bounds what a stronger attacker does")
    elif not certified.get("certified"):
        parts.append("the synthesizer is not private: its certificate bounds nothing")
    else:
        n = len(certified.get("violations") or [])
        parts.append(
            "the synthesizer's certificate bounds every attacker only if it ran as it states; "
            + ("no measured value lies above its bounds" if n == 0 else f"{n} measured values lie ABOVE them")
        )
    parts.append(
        "the figures are measurements by these attacks on these records, so lower bounds on the risk (a "
        "stronger attacker may do better), not a guarantee"
    )
    return "Premise: " + "; ".join(parts) + "."


def audit_synthetic_paragraph(res: Mapping[str, Any], certified: Mapping[str, Any] | None = None) -> str:
    """The headline paragraph of ``mipkit audit-synthetic``: what was audited, the headline verdict in
    words, the copy count, what it means, and the premises (the unseen records and the certificate first).

    Parameters
    ----------
    res : mapping
        The audit's ``results.json`` fields (``AuditSyntheticResult.to_dict()``).
    certified : mapping, optional
        The certified bounds of the synthesizer's certificate (``certified_bounds.json``), when given.
    """
    confidence = (res.get("inputs") or {}).get("confidence", 0.95)
    copies, copied = _copies(res.get("copies"), confidence)
    leaks = _leaks(res, copied, confidence)
    meaning = (
        f"What it means: the synthetic data measurably reveal their training records ({'; '.join(leaks)})."
        if leaks
        else "What it means: this audit found no sign, beyond chance, that the synthetic data reveal their "
        "training records (not a proof that they do not)."
    )
    verdict = _verdict_words(res.get("verdict") or {})
    parts = (_audited(res), _method(res), verdict, copies, meaning, _audit_premise(res, certified))
    return " ".join(p for p in parts if p)
