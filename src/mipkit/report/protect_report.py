"""The tables and notes of ``mipkit protect`` and ``mipkit audit-noise``, as text (the command line prints
them after the paragraph of :mod:`mipkit.report.dpia`).

Functions take the results' dicts (``ProtectResult.to_dict()``, ``AuditNoiseResult.to_dict()``) and return
rows of strings or lines; an estimate withheld from the certificate reads :data:`WITHHELD`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "WITHHELD",
    "bound_name",
    "certificate_rows",
    "certificate_title",
    "domain_line",
    "noise_attack_lines",
    "noise_attack_rows",
    "noise_attack_title",
    "protect_notes",
]

WITHHELD = "withheld: estimated from the private data (--include-estimates shows them)"


def bound_name(p: float) -> str:
    """How the accuracy bound reads: ``1/2 + eta``, or with an odd pool's prior ``p = k/n``."""
    return "1/2 + eta" if p == 0.5 else f"max(k/n, 1 - k/n) + eta (k/n = {p:.4g}, an odd pool)"


def domain_line(domain: Mapping[str, Any] | None) -> str | None:
    """Where the encoding came from, as a note (None for arrays the caller encoded)."""
    if not domain:
        return None
    if domain.get("path"):
        return f"- Encoding from the public domain {domain['path']}"
    return f"- Encoding: {domain['source']}"


def certificate_rows(cert: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The certificate as (field, value) rows: the estimates as ranges, or :data:`WITHHELD`."""
    rows = [
        ("exact guarantee", "yes" if cert["exact"] else "no (estimated sigma / published sampler)"),
        ("eta (accuracy bound)", f"{cert['eta']:g} ({cert['accuracy_bound']:.4g})"),
        ("calibration", cert["calibration"]),
        ("noise added", cert["released_with"]),
    ]
    if cert["estimates_withheld"]:
        rows += [("sigma", f"{cert['sigma_source']}"), ("sigma and noise values", WITHHELD)]
    else:
        sig, std = cert["sigma"], cert["noise_std"]
        rows += [
            ("sigma", f"{cert['sigma_source']}; per coordinate {min(sig):.4g} .. {max(sig):.4g}"),
            ("sigma_1 (norm level)", f"{cert['sigma_1']:.4g}"),
            ("noise scale", f"{cert['noise_scale']:.4g}"),
            (
                "noise std per coordinate",
                f"{min(std):.4g} .. {max(std):.4g} (rms {cert['noise_std_rms']:.4g})",
            ),
        ]
    rows += [
        ("parameters released", str(cert["dim"])),
        ("seed", str(cert["seed"])),
        ("noise source", cert["noise_source"]),
    ]
    for alt in cert.get("dp_alternatives") or []:
        rows.append((f"DP alternative {alt['name']}", f"std {alt['coordinate_std']:.4g}"))
    return rows


def certificate_title(d: Mapping[str, Any]) -> str:
    """The title of the certificate table."""
    return f"MIP certificate: {d['model']}"


def protect_notes(d: Mapping[str, Any], saved_to: Any = None) -> list[str]:
    """The notes after the certificate table: the encoding, a seeded noise, where the model was saved."""
    notes = [line for line in (domain_line(d.get("domain")),) if line]
    if d.get("noise_source", "os-entropy") != "os-entropy":
        notes.append(f"- Noise {d['noise_source']} (--noise-seed).")
    if saved_to is not None:
        notes.append(f"- Noisy model saved to {saved_to}")
    return notes


def noise_attack_rows(game: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """The attack's table: (target, accuracy, 95% CI, trials) per target, then the pooled row ``all``."""
    rows = [
        (str(r["target"]), f"{r['accuracy']:.3f}", "{:.3f} - {:.3f}".format(*r["ci"]), str(r["trials"]))
        for r in game["per_target"]
    ]
    rows.append(
        ("all", f"{game['accuracy']:.4f}", "{:.4f} - {:.4f}".format(*game["ci"]), str(game["trials"]))
    )
    return rows


def noise_attack_lines(d: Mapping[str, Any]) -> list[str]:
    """The notes after the attack's table: the pooled interval, the cluster interval, the encoding."""
    game, iv = d["game"], d["intervals"]
    verdict = (
        "within"
        if game["upper_ci_within_bound"]
        else ("consistent with" if game["within_bound"] else "ABOVE")
    )
    name = bound_name(game["membership_probability"])
    lo, hi = iv["accuracy_ci"]
    lines = [
        f"- Measured accuracy {game['accuracy']:.4f} (95% CI {game['ci'][0]:.4f} - {game['ci'][1]:.4f}) is "
        f"{verdict} the bound {name} = {game['accuracy_bound']:.4f}; posterior: {game['posterior']}.",
        "- Allowing for guesses that share a release or a target (cluster bootstrap over releases and "
        f"targets, design effect {iv['design_effect']:.2f}): 95% CI {lo:.4f} - {hi:.4f}, {iv['verdict']} "
        f"{name}"
        + ("" if iv["certificate_exact"] else " (an approximate certificate: sigma was estimated)")
        + ". The Clopper-Pearson interval above treats every guess as independent and is too narrow.",
    ]
    line = domain_line(d.get("domain"))
    return lines + ([line] if line else [])


def noise_attack_title(d: Mapping[str, Any]) -> str:
    """The title of the attack's table."""
    cert = d["certificate"]
    return f"Optimal attack on MIP noise ({cert['released_with']}, eta={cert['eta']:g})"
