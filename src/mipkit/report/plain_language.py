"""Plain-language sentences of mipkit's results, one function per sentence, kept apart from the numbers.

Workflows and the command line compose these; each function takes numbers and returns text, and imports
nothing heavy. Sections: certify (trade-off curves and their risks) and audit (the demo's story).
"""

from __future__ import annotations

from typing import Any

# --- certify ---
# Sentences of the certify side: what a trade-off curve's risks mean (mipkit risk) and what a calibrated
# noise guarantees (mipkit calibrate).


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


def risk_sentences(profile: dict) -> list[str]:
    """Plain-language reading of a :func:`~mipkit.accounting.risk.risk_profile` for a privacy officer."""
    eta = profile["eta"]
    out = [
        f"An attacker who tries to tell whether a given person was in the data is right at most "
        f"{pct(0.5 + eta)} of the time (MIP eta = {eta:.4g}), against 50% by guessing.",
        f"Any membership test has TPR - FPR at most {profile['advantage']:.3g}: it flags members at most "
        f"{100 * profile['advantage']:.3g} percentage points more often than non-members.",
    ]
    for key, tpr in profile["tpr_at_fpr"].items():
        out.append(
            f"If at most {pct(float(key))} of non-members may be wrongly flagged, an attacker finds at most "
            f"{pct(tpr)} of the members (eta alone would only promise "
            f"{pct(profile['mip_tpr_at_fpr'][key])})."
        )
    for key, succ in profile["success_bound"].items():
        out.append(
            f"An attack that succeeds {pct(float(key))} of the time without this release (re-identifying a "
            f"person, inferring a sensitive attribute or reconstructing a record) succeeds at most "
            f"{pct(succ)} of the time with it (+{100 * profile['advantage_over_baseline'][key]:.3g} points)."
        )
    for key, by_recall in profile["precision_at_base_rate"].items():
        pi = float(key)
        parts = [f"{pct(p)} when it finds {pct(float(r))} of them" for r, p in by_recall.items()]
        out.append(
            f"If 1 in {1 / pi:.4g} of the people checked is in the data (skew 1:{(1 - pi) / pi:.4g}), "
            f"the attacker's 'member' claims are right at most {', '.join(parts)} (precision)."
        )
    if "epsilon" in profile:
        if profile["epsilon"] is None:
            out.append(f"No finite epsilon gives (epsilon, delta)-DP at delta = {profile['delta']:g}.")
        else:
            out.append(
                f"As (epsilon, delta)-DP: epsilon = {profile['epsilon']:.4g} at delta = {profile['delta']:g}."
            )
    out.append("The eta bound alone does not limit precision at low FPR; the f-DP figures above do.")
    return out


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
    return (
        f"Use {noise} = {result.noise:.6g}{extra}: then {phrase} "
        f"(certified {certified} for a target of {result.target_value:g})."
    )


# --- audit ---
# Sentences of the audit side: the demo's before/after story (mipkit.workflows.demo).


def demo_guarantee_sentence(epsilon: float, eta: float) -> str:
    """What an ``epsilon``-DP guarantee means for a membership attacker, given its MIP ``eta``.

    The attacker's accuracy on a balanced guess is at most ``1/2 + eta`` (docs/theory.md section 3:
    ``eta = adv / 2`` for f-DP).
    """
    return (
        f"What a guarantee means: epsilon = {epsilon:g} differential privacy "
        "bounds any membership attacker's accuracy by "
        f"{100 * (0.5 + eta):.1f}% (MIP eta = {eta:.3f}); mipkit instead targets eta directly."
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


def demo_sigma_sentence(n_fits: int) -> str:
    """How the noise scale of the demo's protected model was obtained (docs/theory.md section 2b)."""
    return (
        f"sigma was estimated once from {n_fits} "
        "fits on random halves of the pool and then held "
        "fixed, so the certificate is approximate (estimated sigma) - see docs/theory.md section 2b."
    )


def demo_data_text(n_pool: int, n_test: int, c_before: float, c_after: float) -> str:
    """The demo's data and models, in one paragraph."""
    return (
        f"Data: scikit-learn's breast-cancer set, {n_pool} records in the audit pool and "
        f"{n_test} held out for test accuracy; features "
        "standardised. Model: logistic regression with "
        f"C = {c_before:g} (weak regularisation) before protection; the protected model uses "
        f"C = {c_after:g} plus MIP noise calibrated with mipkit's Gaussian Theorem A."
    )
