"""The one paragraph every answer starts with, written for a privacy officer to paste into a DPIA.

Each paragraph says, in this order, what was released (or calibrated), the headline risk in plain words,
what it means for an attacker, and the premise the figures rest on. Functions take numbers and return text;
the command lines print the paragraph first and the tables after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mipkit.accounting.wording import describe_mechanism
from mipkit.report.plain_language import pct, relation_phrase

__all__ = [
    "audit_noise_paragraph",
    "audit_paragraph",
    "calibration_paragraph",
    "nearest_key",
    "one_run_paragraph",
    "protect_paragraph",
    "relation_words",
    "risk_paragraph",
    "train_private_paragraph",
]

_RELATION = {
    "add_remove": "their record being added to or removed from the data",
    "replace_one": "their record being replaced by another's, the number of records fixed",
}


FITTED_DATA_PREMISE = (
    "the non-members come from the same population as the training records and each record's membership is "
    "as stated (otherwise the figures measure how the two sets differ, not what the model reveals); "
)
"""The data-dependent premise of an audit of one fitted model (``audit-fitted``, ``audit-scores``)."""


def relation_words(relation: str) -> str:
    """What a neighbouring relation protects each person against, in words."""
    return _RELATION.get(relation, relation)


def nearest_key(table: Mapping[str, Any], value: float) -> str:
    """The key of ``table`` (numbers written as text) closest to ``value`` on a log scale."""
    import math

    return min(table, key=lambda k: abs(math.log(float(k)) - math.log(value)))


def _meaning(profile: Mapping[str, Any]) -> str:
    """The what-it-means sentence: members found at a low false-alarm rate, and an attack's success."""
    parts = []
    tpr = profile.get("tpr_at_fpr") or {}
    if tpr:
        a = nearest_key(tpr, 0.01)
        parts.append(
            f"if at most {pct(float(a))} of non-members may be wrongly flagged, an attacker finds at most "
            f"{pct(tpr[a])} of the members"
        )
    succ = profile.get("success_bound") or {}
    if succ:
        b = nearest_key(succ, 0.1)
        parts.append(
            f"an attack that succeeds {pct(float(b))} of the time without this release (re-identifying a "
            f"person, inferring a sensitive attribute or reconstructing a record) succeeds at most "
            f"{pct(succ[b])} of the time with it"
        )
    if not parts:
        return ""
    return f"What it means: {'; '.join(parts)}."


def risk_paragraph(profile: Mapping[str, Any], mechanism: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit risk``: release, headline risk, meaning, premise.

    The headline is the accuracy of telling whether one person is in the data (``1/2 + advantage/2``
    under the stated relation); where the membership game's accuracy ``1/2 + eta`` (a record replaced by
    another, so two changes under add/remove) is higher, the paragraph gives both and says why they differ.

    Parameters
    ----------
    profile : mapping
        A :func:`~mipkit.accounting.risk_profile`.
    mechanism : mapping
        The mechanism record's ``to_dict()``.
    """
    relation = profile.get("neighbours", mechanism.get("neighbours", "add_remove"))
    released = f"Released: a result computed under {describe_mechanism(mechanism)}"
    if "epsilon" in profile and mechanism.get("name") not in ("pure_dp", "approx_dp"):
        eps = profile["epsilon"]
        released += (
            f", which is (epsilon = {eps:.3g}, delta = {profile['delta']:g}) differential privacy"
            if eps is not None
            else f", which has no finite epsilon at delta = {profile['delta']:g}"
        )
    released += f"; it protects each person against {relation_words(relation)}."
    in_out = 0.5 + profile["advantage"] / 2
    game = profile["accuracy"]
    headline = (
        f"Headline risk: an attacker who tries to tell whether a given person is in the data is right at "
        f"most {pct(in_out)} of the time, against 50% by guessing"
    )
    if pct(game) != pct(in_out):
        headline += (
            f"; secondary figure: at most {pct(game)} if the attacker also knows how many records there are "
            "(the person's record then takes another's place: two changes, not one)"
        )
    headline += "."
    premise = (
        "Premise: these are upper bounds over every attacker, whatever it knows, and hold only if the "
        "release meets the stated guarantee for each person's records"
    )
    if relation == "add_remove":
        premise += " (a person with several records is protected less)"
    if not profile.get("exact", True):
        width = profile.get("width")
        premise += "; each figure is the upper end of an interval" + (
            f" at most {width:.1g} wide" if isinstance(width, float) and width > 0 else ""
        )
    premise += "."
    return " ".join(p for p in (released, headline, _meaning(profile), premise) if p)


def calibration_paragraph(result: Any) -> str:
    """The headline paragraph of ``mipkit calibrate``: the noise, what it guarantees, and the premise.

    ``result`` is a :class:`~mipkit.accounting.calibration.Calibration`.
    """
    from mipkit.report.plain_language import calibration_sentence

    mech = result.mechanism.to_dict()
    relation = mech.get("neighbours", "add_remove")
    first = calibration_sentence(result)
    premise = (
        f"Premise: the guarantee protects each person against {relation_words(relation)}; it holds only "
        "if the noise is drawn exactly as calibrated, from a secure source, and this is the only result "
        "released from the data"
    )
    if mech.get("name") == "subsampled_gaussian":
        premise += ", with every training record sampled independently at the stated rate"
    risk_relation = getattr(result, "neighbours", None) or relation
    if risk_relation != relation:
        premise += f"; the target is stated for {relation_phrase(risk_relation)} (the membership game)"
    return f"{first} {premise}."


def _model_name(results: Mapping[str, Any]) -> str:
    path = str((results.get("trainer") or {}).get("import_path") or "")
    return path.rsplit(".", 1)[-1] if path and not path.startswith("model of ") else path


def _audited(results: Mapping[str, Any]) -> str:
    """The what-was-audited sentence of an audit: the released model, or the training procedure."""
    fitted = (results.get("question") or {}).get("answered") == "this fitted model"
    name = _model_name(results)
    if fitted:
        design = results.get("design") or {}
        source = str(design.get("source") or "")
        what = (
            f"the model behind the {source}"
            if source.startswith("predictions file")
            else f"the released model ({name}) as it is"
            if name
            else "the released model as it is"
        )
        n_ref = int(design.get("n_reference_models") or 0)
        refs = f", with {n_ref} reference models retrained like it" if n_ref else ""
        return (
            f"Audited: {what}, its outputs on {design.get('members')} of its training records and "
            f"{design.get('nonmembers')} records it did not see{refs}."
        )
    game = results.get("game") or {}
    data = (results.get("config") or {}).get("data")
    on = f" on {data}" if data else ""
    return (
        f"Audited: the training procedure {name or 'of the model'}{on}: {game.get('n_models')} models, each "
        f"trained on a random half of the {game.get('n_records')} records and attacked on all of them."
    )


def _low_fpr_clause(results: Mapping[str, Any], best: str) -> str:
    """The headline's members-found-at-1%-false-alarms clause, from the attack that finds the most there
    (the summary's bullet quotes the same one); empty where no attack has a TPR table."""
    tables = {
        name: a["tpr_at_fpr"] for name, a in (results.get("attacks") or {}).items() if a.get("tpr_at_fpr")
    }
    if not tables:
        return ""
    name, tpr = max(tables.items(), key=lambda kv: kv[1][nearest_key(kv[1], 0.01)])
    a = nearest_key(tpr, 0.01)
    found, fpr = float(tpr[a]), float(a)
    if found <= fpr:
        return (
            f"; flagging at most {pct(fpr)} of non-members, no attack found more of the members than chance "
            f"would (best: {name}, {pct(found)})"
        )
    who = "it" if name == best else f"the best attack there ({name})"
    return f"; flagging at most {pct(fpr)} of non-members, {who} found {pct(found)} of the members"


def audit_paragraph(results: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit audit``, ``audit-fitted`` and ``audit-scores``: what was audited,
    the measured risk in plain words, what it means, and the premise.

    Parameters
    ----------
    results : mapping
        The audit's ``results.json`` fields (``AuditResult.to_dict()``).
    """
    best = results.get("strongest_attack")
    attack = (results.get("attacks") or {}).get(best) if best else None
    if not attack or attack.get("eta") is None:
        return f"{_audited(results)} No attack with a measured accuracy ran; see the tables below."
    lo, hi = results.get("eta_ci") or attack.get("eta_ci") or (attack["eta"], attack["eta"])
    headline = (
        f"Headline risk: the strongest attack run ({best}) told whether a given record was in the training "
        f"data {pct(0.5 + attack['eta'])} of the time (95% interval {pct(0.5 + lo)} to {pct(0.5 + hi)}), "
        "against 50% by guessing"
    )
    headline += _low_fpr_clause(results, best) + "."
    meaning = (
        "What it means: the model measurably reveals who was in its training data"
        if lo > 0
        else "What it means: this audit found no leak it could tell apart from chance (not a proof that "
        "there is none)"
    )
    verdict = results.get("verdict") or {}
    policy = verdict.get("policy")
    if isinstance(policy, Mapping) and verdict.get("status") in ("pass", "finding", "inconclusive"):
        word = {"pass": "within", "finding": "above", "inconclusive": "not clearly within"}[verdict["status"]]
        limit = policy.get("fail_above", policy.get("limit"))
        metric = policy.get("metric", "eta")
        meaning += f", {word} the stated limit ({metric} <= {limit:g})" if limit is not None else ""
    cert = results.get("certificate")
    if cert and cert.get("eta") is not None:
        bound = 0.5 + float(cert["eta"])
        meaning += f"; the certificate allows any attacker at most {pct(bound)}"
        if verdict.get("certificate_violations") or []:
            meaning += ", and the measurement is ABOVE it"
    meaning += "."
    fitted = (results.get("question") or {}).get("answered") == "this fitted model"
    premise = (
        "Premise: "
        + (FITTED_DATA_PREMISE if fitted else "")
        + "a measurement by these attacks on these records, so a lower bound on the risk (a "
        "stronger attacker may do better), not a guarantee"
        + (
            "; it is about this model and these records"
            if fitted
            else "; it is about models trained this way on data like this, averaged over training sets"
        )
        + "."
    )
    return " ".join((_audited(results), headline, meaning, premise))


def train_private_paragraph(d: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit train-private``: the model released, its certified risk, what it
    means, the measured check (``--audit``) and the premise.

    Parameters
    ----------
    d : mapping
        The run's ``to_dict()`` (``results.json`` of the run folder).
    """
    c = d["certified"]
    relation = d.get("neighbours", "replace_one")
    released = (
        f"Released: a model trained with DP-SGD on {d.get('n_train')} records ({d.get('epochs')} epochs, "
        f"batch size {d.get('batch_size')}, noise multiplier {d['noise_multiplier']:.3g}), which is "
        f"(epsilon = {c['epsilon']:.3g}, delta = {c['delta']:g}) differential privacy; it protects each "
        f"person against {relation_words(relation)}; held-out accuracy {pct(d['test_accuracy'])} "
        f"(always guessing the majority class: {pct(d['majority_rate'])})."
    )
    headline = (
        "Headline risk: an attacker who tries to tell whether a given person was in the training data is "
        f"right at most {pct(0.5 + c['eta'])} of the time, against 50% by guessing."
    )
    meaning = _meaning({"tpr_at_fpr": c.get("tpr_at_fpr") or {}})
    audit = d.get("audit")
    if audit and audit.get("tpr_at_fpr"):
        rows = audit["tpr_at_fpr"]
        k = nearest_key(rows, 0.01)
        r = rows[k]
        held = "within" if not r.get("violation") else "ABOVE"
        meaning += (
            f" Checked on the released model: {str(audit.get('attack', 'an attack')).upper()} found "
            f"{pct(r['measured'])} of the training rows at {pct(float(k))} false alarms, {held} the "
            f"certified {pct(r['certified'])}."
        )
    premise = (
        "Premise: these are upper bounds over every attacker and hold only if each person has one record, "
        "every record was sampled independently at the stated rate and the noise was drawn as stated"
    )
    if d.get("noise_source", "os-entropy") != "os-entropy":
        premise += " (here from a seed: a test run, not a release)"
    return " ".join(p for p in (released, headline, meaning, premise + ".") if p)


def _noise_premise(cert: Mapping[str, Any]) -> str:
    """The premise of a MIP-noise certificate in words, the data-dependent part first."""
    fits = cert.get("n_fits")
    if cert.get("released_with") not in (None, cert.get("calibration")):
        return "the sensitivity bound given for the DP noise holds"
    if str(cert.get("sigma_source", "")).startswith("estimated"):
        text = (
            f"sigma, the spread of the parameters that the noise is calibrated to, was estimated from {fits} "
            "fits on the private data, so the guarantee holds only if that estimate bounds the true spread"
        )
        if cert.get("train_on") == "all":
            text += (
                "; those fits ran on the training records themselves (train_on='all'), so the calibration "
                "depends on the records released: a heuristic, not a guarantee (an a-priori sigma or "
                "train_on='half' removes this premise)"
            )
        return text
    if not cert.get("exact", True):
        return (
            "sigma was given a priori, but the published izzo2024 sampler is proven for one parameter only, "
            "so the guarantee is approximate"
        )
    return "sigma, given a priori, bounds the spread of the parameters over random halves of the pool"


def _pool_words(cert: Mapping[str, Any], n: Any) -> str:
    if cert.get("train_on") == "half":
        return f"the pool is the {n} records passed and the model was trained on a secret random half of them"
    return f"the {n} training records are a uniformly random half of a pool twice as large"


def _noise_source_words(cert: Mapping[str, Any]) -> str:
    if cert.get("noise_source", "os-entropy") == "os-entropy":
        return "the noise was drawn from the operating system's entropy"
    return "the noise was drawn from a seed (a test run, not a release: not private against whoever holds it)"


def protect_paragraph(d: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit protect``: what was released, eta in words, the premises with the
    data-dependent ones first.

    Parameters
    ----------
    d : mapping
        :meth:`mipkit.workflows.protect.ProtectResult.to_dict`: the certificate's fields with ``model``,
        ``attributes`` and ``n_records``.
    """
    name = str(d.get("model") or "model").rsplit(".", 1)[-1]
    n = d.get("n_records")
    trained = f"a random half of {n} records" if d.get("train_on") == "half" else f"{n} records"
    attrs = ", ".join(d.get("attributes") or ())
    released = (
        f"Released: a {name} model trained on {trained}, with {d['released_with']} noise added to its "
        f"{d['dim']} parameters ({attrs}); the released model holds those noisy parameters and the schema, "
        "nothing else fitted on the data."
    )
    bound = float(d["accuracy_bound"])
    p = float(d.get("membership_probability", 0.5))
    base = max(p, 1.0 - p)
    chance = "50% by guessing" if p == 0.5 else f"{pct(base)} by always guessing 'out' (an odd pool)"
    headline = (
        f"Headline risk: an attacker guessing whether a given record was in the training data is right at "
        f"most {pct(bound)} of the time ({'1/2' if p == 0.5 else 'max(k/n, 1 - k/n)'} + eta, eta = "
        f"{d['eta']:g}), against {chance}."
    )
    meaning = (
        "What it means: whatever the attacker knows about the other records, the algorithm and the noise "
        f"law, the released parameters raise its chance of a right guess by at most {pct(float(d['eta']))}."
    )
    premise = (
        f"Premise: {_noise_premise(d)}; {_pool_words(d, n)}; {_noise_source_words(d)}; and nothing else "
        "computed from the data is released."
    )
    return " ".join((released, headline, meaning, premise))


def audit_noise_paragraph(d: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit audit-noise``: the measured accuracy of the optimal attack against
    the certificate's bound, and the premises (the data-dependent ones first).

    Parameters
    ----------
    d : mapping
        :meth:`mipkit.workflows.audit_noise.AuditNoiseResult.to_dict`: ``game``, ``certificate``,
        ``intervals``, ``model`` and ``n_records``.
    """
    game, cert, iv = d["game"], d["certificate"], d["intervals"]
    name = str(d.get("model") or "model").rsplit(".", 1)[-1]
    n_rel = game["trials"] // max(1, len(game["per_target"]))
    audited = (
        f"Audited: MIP noise ({cert['released_with']}, eta = {cert['eta']:g}) on a {name} model, with the "
        f"{d.get('n_records')} records as the pool: {n_rel} releases, each trained on a random half with "
        f"fresh noise, attacked by the Bayes-optimal attacker (posterior {game['posterior']}) on the "
        f"{len(game['per_target'])} most exposed records."
    )
    lo, hi = iv["accuracy_ci"]
    bound = float(iv["bound"])
    p = float(game.get("membership_probability", 0.5))
    chance = "50% by guessing" if p == 0.5 else f"{pct(max(p, 1 - p))} by always guessing 'out' (an odd pool)"
    headline = (
        f"Headline risk: the attacker told whether a record was in the released half {pct(iv['accuracy'])} "
        f"of the time (95% interval {pct(lo)} to {pct(hi)}, allowing for guesses that share a release or a "
        f"record), against the certificate's bound of {pct(bound)} and {chance}."
    )
    meaning = (
        "What it means: the measurement is ABOVE the bound: the noise is too small for this data."
        if iv["verdict"] == "above the bound"
        else "What it means: the measurement is within the bound: the attack found no more than the noise "
        "allows."
    )
    premise = (
        f"Premise: {_noise_premise(cert)}; a measurement by one attack on these records and releases, which "
        "can show the calibration wrong but not prove it right."
    )
    return " ".join((audited, headline, meaning, premise))


def _one_run_meaning(d: Mapping[str, Any]) -> str:
    """The what-it-means sentence of a one-run audit: against the certificate, or without one."""
    eps, cert = float(d["epsilon_lower"]), d.get("certified_epsilon")
    if cert is not None and eps > float(cert):
        meaning = (
            f"What it means: the bound is ABOVE the certified epsilon {cert:.3g} (add or remove one record, "
            "same delta): the certificate does not hold for this training, so the training code or its "
            "privacy accounting is wrong"
        )
    elif cert is not None:
        meaning = (
            f"What it means: the bound is below the certified epsilon {cert:.3g} (add or remove one record, "
            "same delta), so this audit found nothing against the certificate"
        )
    elif eps > 0:
        meaning = (
            f"What it means: any claim that this training is differentially private with an epsilon below "
            f"{eps:.3g} at this delta is false (the trainer states no certificate to compare with)"
        )
    else:
        meaning = (
            "What it means: this audit found no leak it could tell apart from chance (not a proof that there "
            "is none)"
        )
    limit = (d.get("config") or {}).get("fail_above")
    if limit is not None:
        side = "above" if eps > float(limit) else "within"
        meaning += f"; the bound is {side} the stated limit (epsilon <= {limit:g})"
    return meaning + "."


def one_run_paragraph(d: Mapping[str, Any]) -> str:
    """The headline paragraph of ``mipkit audit-one-run``: what was audited, the one-run lower bound on
    epsilon in words, what it means, and its premises.

    Parameters
    ----------
    d : mapping
        The one-run audit's ``to_dict()`` (``results.json`` of its run folder, with ``config``).
    """
    config = d.get("config") or {}
    name = _model_name({"trainer": {"import_path": d.get("model")}}) or "the model"
    data = config.get("data")
    m, included = d["canaries"], d["canaries_included"]
    audited = (
        f"Audited: one training run of {name}{f' on {data}' if data else ''}, {d['n_train']} training "
        f"records, {included} of them canaries: {m} records each put into the training data with "
        "probability 1/2, whose membership the auditor then guessed from the model's loss on them."
    )
    eps, delta, conf = float(d["epsilon_lower"]), float(d["delta"]), float(d["confidence"])
    headline = (
        f"Headline risk: {d['correct']} of {d['guesses']} guesses were right; with {pct(conf)} confidence "
        f"the training is no better than (epsilon = {eps:.3g}, delta = {delta:g}) differentially private"
        if eps > 0
        else f"Headline risk: {d['correct']} of {d['guesses']} guesses were right, no more than chance "
        f"explains with {pct(conf)} confidence: the lower bound on epsilon is 0 (at delta = {delta:g})"
    )
    kind = config.get("canary_kind", "mislabeled")
    canaries = f"the canaries are {m} of the records of this table" + (
        ", each with its label changed to another class at random, so that a model fits it only by "
        "memorising it"
        if kind == "mislabeled"
        else ", as they are"
    )
    premise = (
        f"Premise: {canaries}; the bound (Steinke, Nasr and Jagielski 2023) holds whatever the data, because "
        "each canary went in by an independent coin flip; it is a lower bound, so a stronger attack or more "
        "canaries may raise it, and it never shows that the training is private."
    )
    return " ".join((audited, headline + ".", _one_run_meaning(d), premise))
