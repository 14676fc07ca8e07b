"""Plain-language sentences of mipkit's results, one function per sentence, kept apart from the numbers.

Workflows and the command line compose these; each function takes numbers and returns text, and imports
nothing heavy. Sections: certify (trade-off curves and their risks), audit (the demo's story)
and audit-synthetic (what the copy counts say).
"""

from __future__ import annotations

import math
from typing import Any

# --- certify ---
# Sentences of the certify side: percentages, skews and relations in words (mipkit.report.dpia builds the
# paragraphs of mipkit risk and mipkit calibrate from them) and what a calibrated noise guarantees.


def pct(x: float) -> str:
    """A probability as a percentage with the digits that matter."""
    if x >= 1.0:
        return "100%"
    if x >= 0.99:
        return f"{100 * x:.2f}%"
    if x >= 0.01:
        return f"{100 * x:.3g}%"
    return f"{100 * x:.2g}%"


def skew(pi: float) -> str:
    """A member fraction as ``1 in N (1:M)``."""
    return f"1 in {1 / pi:.4g} (1:{(1 - pi) / pi:.4g})"


_RELATION_WORDS = {
    "add_remove": "one person's record added to or removed from the data",
    "replace_one": "one person's record replaced by another's, the number of records fixed",
}


def relation_phrase(relation: str) -> str:
    """A neighbouring relation in words: ``"one person's record added to or removed from the data"``."""
    return _RELATION_WORDS.get(relation, relation)


def format_risk(x: float, target: float) -> str:
    """A risk with 6 digits, or as ``target - gap`` when 6 digits would round it up to the target."""
    text = f"{x:.6g}"
    if x < target <= float(text):
        return f"{target:g} - {target - x:.1e}"
    return text


#: What the calibrated noise is called, by the ``"name"`` of the mechanism record.
_NOISE_NAMES = {
    "gaussian": "Gaussian noise standard deviation sigma",
    "laplace": "Laplace scale b",
    "subsampled_gaussian": "DP-SGD noise multiplier",
}


def _target_phrase(target: str, value: float, params: dict) -> str:
    """What meeting a calibration target guarantees, in words."""
    if target == "eta":
        return f"no attacker in the membership game is right more than {100 * (0.5 + value):.4g}% of the time"
    if target == "advantage":
        return f"no membership test has TPR - FPR above {value:g}"
    if target == "tpr-at-fpr":
        return (
            f"at FPR {params['fpr']:g} no membership test finds more than {100 * value:.4g}% of the members"
        )
    if target == "success":
        return (
            f"an attack that succeeds {100 * params['baseline']:.4g}% of the time without the release "
            "(re-identification, attribute inference, reconstruction) succeeds at most "
            f"{100 * value:.4g}% with it"
        )
    if target == "precision":
        return (
            f"when 1 in {1 / params['base_rate']:.4g} of the people checked is a member, 'member' claims "
            f"that find {100 * params['recall']:.4g}% of the members are right at most {100 * value:.4g}% "
            "of the time"
        )
    return f"the release is ({value:g}, {params['delta']:g})-DP"


def calibration_sentence(result: Any) -> str:
    """One plain sentence saying what noise to use and what it guarantees.

    ``result`` is a :class:`~mipkit.accounting.calibration.Calibration`.
    """
    mech = result.mechanism.to_dict()
    noise = _NOISE_NAMES.get(mech["name"], result.parameter_name)
    extra = ""
    if mech["name"] == "subsampled_gaussian":
        extra = f" (sampling rate {mech['sample_rate']:g}, {mech['steps']} steps)"
    elif "sensitivity" in mech:
        extra = f" (sensitivity {mech['sensitivity']:g})"
    certified = format_risk(result.achieved_fine, result.target_value)
    phrase = _target_phrase(result.target, result.target_value, result.details)
    relation = getattr(result, "neighbours", None) or mech.get("neighbours", "add_remove")
    tol = getattr(result, "tolerance", None)
    minimal = ""
    if tol is not None and getattr(result, "minimal", False):
        minimal = f" It is within {100 * tol:.2g}% of the least noise that meets the target."
    return (
        f"Use {noise} = {result.noise:.6g}{extra}: then {phrase} "
        f"(certified {certified} for a target of {result.target_value:g}; {relation} neighbours).{minimal}"
    )


# --- audit ---
# Sentences of the audit side: the demo's before/after story (mipkit.workflows.demo).


def demo_guarantee_sentence(epsilon: float, eta: float) -> str:
    """What a pure ``epsilon``-DP guarantee (add/remove) means for a membership attacker, given its MIP
    ``eta``.

    The headline is ``mipkit risk``'s: telling whether a person is in the data, right at most
    ``e^eps / (1 + e^eps)`` of the time; the secondary figure, with its premise, the MIP game's ``1/2 + eta``
    (docs/theory.md section 3).
    """
    in_out = math.exp(epsilon) / (1 + math.exp(epsilon))
    return (
        f"What a guarantee means: epsilon = {epsilon:g} differential privacy bounds any membership "
        f"attacker's accuracy by {100 * in_out:.1f}%; secondary figure: {100 * (0.5 + eta):.1f}% if the "
        f"attacker also knows how many records there are (MIP eta = {eta:.3f}); mipkit instead targets eta "
        "directly."
    )


def demo_stage_sentence(
    label: str,
    *,
    strongest_attack: str,
    eta: float,
    eta_ci: tuple[float, float] | list[float],
    tpr_at_1pct: float,
) -> str:
    """One audit stage of the demo: the strongest attack's accuracy, eta with its interval, TPR at 1% FPR."""
    return (
        f"{label}: the strongest attack ({strongest_attack}) "
        f"is right {100 * (0.5 + eta):.1f}% of "
        f"the time (eta {eta:.3f}, 95% CI "
        f"{eta_ci[0]:.3f} to {eta_ci[1]:.3f}); at 1% false "
        f"alarms it finds {100 * tpr_at_1pct:.1f}% of members."
    )


def demo_certificate_sentence(eta_ci_low: float, certified_eta: float) -> str:
    """Whether the protected model's measurement stays compatible with its certificate."""
    if eta_ci_low <= certified_eta:
        return "The protected model's measured eta stays below its certificate, as the theory requires."
    return "The protected model's measured eta EXCEEDS its certificate: investigate (sigma was estimated)."


def demo_eta_meaning_sentence(eta: float, *, exact: bool) -> str:
    """What a certified ``eta`` alone allows, its premise and whether it is exact (docs/theory.md section 1).

    ``eta`` bounds a balanced guess's accuracy by ``1/2 + eta`` but any attack's TPR only by
    ``FPR + 2 eta``: a fraction ``2 eta`` of the members may be found with no false alarm.
    """
    first = (
        ""
        if exact
        else "This certificate is approximate because sigma was estimated from the private data, not known. "
    )
    kind = "exact" if exact else "approximate"
    return (
        f"{first}What 'certified eta <= {eta:g}' allows: an attacker guessing membership of a record is "
        f"right at most {100 * (0.5 + eta):.0f}% of the time, yet eta alone still lets it find up to "
        f"{100 * min(1.0, 2 * eta):.0f}% of the members with zero false alarms (TPR <= FPR + 2 eta). The "
        f"premise is that the model is trained on a random half of the pool; this certificate is {kind}."
    )


def demo_sigma_sentence(n_fits: int) -> str:
    """How the noise scale of the demo's protected model was obtained (docs/theory.md section 2b)."""
    return (
        f"sigma was estimated once from {n_fits} "
        "fits on random halves of the pool and then held "
        "fixed, so the certificate is approximate (estimated sigma) - see docs/theory.md section 2b."
    )


def demo_outcome_paragraph(
    *,
    eta_before: float,
    eta_before_ci: tuple[float, float] | list[float],
    eta_after: float,
    eta_after_ci: tuple[float, float] | list[float],
    certified_eta: float,
    accuracy_before: float,
    accuracy_after: float,
) -> str:
    """The demo's answer in one paragraph: what was audited, the leak before and after, its cost, premise."""
    leak = (
        "a measurable leak (its 95% interval excludes 0)"
        if eta_before_ci[0] > 0
        else "no leak this audit can tell from chance (its 95% interval includes 0)"
    )
    within = "within" if eta_after_ci[0] <= certified_eta else "ABOVE"
    cost = 100 * (accuracy_before - accuracy_after)
    cost_text = f"a cost of {cost:.1f} points" if cost >= 0 else f"a gain of {-cost:.1f} points"
    return (
        "Audited: a model trained on breast-cancer records, before and after protection. Headline: "
        f"unprotected, the best membership attack is right {100 * (0.5 + eta_before):.1f}% of the time "
        f"(eta {eta_before:.3f}, 95% CI {eta_before_ci[0]:.3f} to {eta_before_ci[1]:.3f}), {leak}; "
        f"protected, {100 * (0.5 + eta_after):.1f}% (eta {eta_after:.3f}, 95% CI {eta_after_ci[0]:.3f} to "
        f"{eta_after_ci[1]:.3f}), {within} its certificate eta <= {certified_eta:g}, at {cost_text} of test "
        f"accuracy ({100 * accuracy_before:.1f}% to {100 * accuracy_after:.1f}%). What it means: the "
        "unprotected model tells an attacker who was in its training data; the protected one is certified "
        f"to let no attacker be right more than {100 * (0.5 + certified_eta):.0f}% of the time. Premise: "
        "the model is trained on a random half of the pool, and the attacks know the rest "
        "of the pool; the certificate is approximate (its noise scale was estimated from fits)."
    )


def demo_data_text(n_pool: int, n_test: int, features: tuple[str, ...], c_after: float) -> str:
    """The demo's data and models, in one paragraph."""
    return (
        f"Data: scikit-learn's breast-cancer set, {n_pool} records in the audit pool and "
        f"{n_test} held out for test accuracy; features standardised. Before protection: a random forest "
        "(100 fully grown trees) on all 30 features. Protected: a logistic regression with "
        f"C = {c_after:g} on {len(features)} features fixed in advance ({', '.join(features)}), plus MIP "
        "noise calibrated with mipkit's Gaussian Theorem A."
    )


# --- audit-synthetic ---


def _f(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def copies_says(rate: dict, confidence: float = 0.95) -> tuple[str, list[float]]:
    """What one copy rate (a :func:`mipkit.metrics.copies.copy_rates` entry) says, and its interval: the
    words of :func:`copies_sentences` and of the synthetic audit's DPIA paragraph."""
    from mipkit.metrics.copies import excess_interval

    lo, hi = excess_interval(rate, confidence)
    if lo > 0:
        says = f"the synthetic data copies about {_f(100 * rate['excess'], 1)}% of its training records"
        return says, [lo, hi]
    if hi <= 0.01:
        return "no more than chance gives", [lo, hi]
    return f"no measurable excess, up to {_f(100 * hi, 1)}% of training records not ruled out", [lo, hi]


def copies_sentences(copies: dict | None, confidence: float = 0.95) -> list[str]:
    """What the copy counts say, in the words the verdict uses (:mod:`mipkit.metrics.copies`)."""
    if not copies:
        return []
    out = []
    near = "a near copy (closer than 95% of unseen records)"
    for key, what in (("exact", "an exact copy"), ("near", near)):
        r = copies.get(key)
        if r is None:
            continue
        says, (lo, hi) = copies_says(r, confidence)
        ref = "for unseen records"
        if copies["reference"] != "unseen records":
            ref = "with a twin among the other training records (no unseen records)"
        out.append(
            f"Copies: {_f(100 * r['share'], 2)}% of training records have {what} in the synthetic data, "
            f"against {_f(100 * r['reference_share'], 2)}% {ref} (excess {_f(r['excess'])}, "
            f"{100 * confidence:.3g}% interval {_f(lo)} to {_f(hi)}): {says}."
        )
    return out
