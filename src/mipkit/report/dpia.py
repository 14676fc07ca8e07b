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

__all__ = ["calibration_paragraph", "nearest_key", "relation_words", "risk_paragraph"]

_RELATION = {
    "add_remove": "their record being added to or removed from the data",
    "replace_one": "their record being replaced by another's, the number of records fixed",
}


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
            f"; at most {pct(game)} if it also knows how many records there are (the person's record then "
            "takes another's place: two changes, not one)"
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
