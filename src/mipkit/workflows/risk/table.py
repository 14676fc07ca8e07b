"""The table of ``mipkit risk``: every figure of a risk profile once, with its relation and lower end.

:func:`risk_rows` turns a profile (:func:`mipkit.accounting.profile.risk_profile`) and its mechanism into
``(label, relation, bound, lower, format)`` rows; :func:`risk_table` into the printed table with its title
and the lines that say what the relations and the two columns mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from mipkit.workflows._text_table import TextTable

__all__ = ["RiskRow", "risk_rows", "risk_table"]

INFINITE = "none (infinite)"
HEADLINE = "Accuracy telling whether a person is in the data"
"""The headline of the DPIA paragraph (:mod:`mipkit.report.dpia`): the table's first row."""
IF_COUNT_KNOWN = "Accuracy if the attacker also knows how many records there are"
"""The secondary figure, in the same words in the paragraph and the table: the MIP game's accuracy."""


def _share(key: str) -> str:
    return f"{100 * float(key):g}%"


def _success(key: str) -> str:
    return f"success of an attack that succeeds {_share(key)} of the time without it"


class RiskRow(NamedTuple):
    """One row of the table: what, for which relation, the bound and its lower end (None: infinite)."""

    label: str
    relation: str
    bound: float | None
    lower: float | None
    fmt: str


def _merged(label: str, parts: list[tuple[str, float | None, float | None]], fmt: str) -> list:
    """Runs of equal values (as printed) in ``parts`` (``(key, bound, lower)``) as one row each."""
    out: list[tuple[str, float | None, float | None]] = []
    runs: list[list[tuple[str, float | None, float | None]]] = []

    def show(v: float | None) -> str | None:
        return None if v is None else format(v, fmt)

    for part in parts:
        if runs and (show(runs[-1][-1][1]), show(runs[-1][-1][2])) == (show(part[1]), show(part[2])):
            runs[-1].append(part)
        else:
            runs.append([part])
    for run in runs:
        keys = run[0][0] if len(run) == 1 else f"{run[0][0]} to {run[-1][0]}"
        out.append((label.format(keys), run[0][1], run[0][2]))
    return out


def risk_rows(profile: Mapping[str, Any], mechanism: Mapping[str, Any]) -> list[RiskRow]:
    """Every row of the table, each figure once.

    The game's accuracy and its eta are one row; a success bound at a baseline equal to a reported FPR is
    the TPR at that FPR (one row); precisions equal over a run of recalls are one row; the epsilon of a
    guarantee given as an epsilon is not repeated.
    """
    rel = profile["relations"]
    mip, mem = rel["mip_game"], rel["membership"]
    adv, adv_low, eta_low = profile["advantage"], profile["advantage_lower"], profile["eta_lower"]
    rows = [
        # the headline of the DPIA paragraph first, then the same attacker with the premise it adds
        RiskRow(
            f"{HEADLINE} (advantage {adv:.4f})",
            mem,
            0.5 + adv / 2,
            None if adv_low is None else 0.5 + adv_low / 2,
            ".4f",
        ),
        RiskRow(
            f"{IF_COUNT_KNOWN} (MIP eta {profile['eta']:.4f})",
            mip,
            profile["accuracy"],
            None if eta_low is None else 0.5 + eta_low,
            ".4f",
        ),
    ]
    success = dict(profile["success_bound"])
    for key, v in profile["tpr_at_fpr"].items():
        label = f"Members found at {_share(key)} false alarms (TPR at FPR {key})"
        if key in success:
            success.pop(key)
            label += f"; also: {_success(key)}"
        rows.append(RiskRow(label, mem, v, profile["tpr_at_fpr_lower"][key], ".4g"))
    for key, v in success.items():
        rows.append(
            RiskRow(
                _success(key)[0].upper() + _success(key)[1:],
                mem,
                v,
                profile["success_bound_lower"][key],
                ".4g",
            )
        )
    for key, by_recall in profile["precision_at_base_rate"].items():
        low = profile["precision_at_base_rate_lower"][key]
        parts = [(r, p, low[r]) for r, p in by_recall.items()]
        label = f"Precision, 1 in {1 / float(key):.4g}, recall {{}}"
        rows += [RiskRow(lab, mem, p, lo, ".4g") for lab, p, lo in _merged(label, parts, ".4g")]
    if "epsilon" in profile and mechanism.get("name") not in ("pure_dp", "approx_dp"):
        label = f"Epsilon at delta {profile['delta']:g}"
        rows.append(RiskRow(label, mem, profile["epsilon"], profile["epsilon_lower"], ".4g"))
    return rows


def _title(profile: Mapping[str, Any], mechanism: Mapping[str, Any]) -> str:
    """The record's parameters, then what the curve derives from them (mu of a Gaussian, epsilon of a
    Laplace)."""
    curve = profile["curve"]
    derived = {k: curve[k] for k in ("mu", "epsilon") if k in curve and k not in mechanism}
    shown = {k: v for k, v in mechanism.items() if k not in ("name", "neighbours")} | derived
    params = ", ".join(f"{k}={v:g}" for k, v in shown.items() if isinstance(v, (int, float)))
    return f"Certified risk: {mechanism['name']} ({params}; {mechanism['neighbours']} neighbours)"


def risk_table(profile: Mapping[str, Any], mechanism: Mapping[str, Any]) -> TextTable:
    """The printed table: a Lower column beside Bound for a PLD (two-sided), and what the rows mean."""
    from mipkit.report.plain_language import relation_phrase

    two_sided = not profile["exact"]

    def cell(v: float | None, fmt: str) -> str:
        return INFINITE if v is None else format(v, fmt)

    rows_in = risk_rows(profile, mechanism)
    # Bound and Lower as two columns only where some printed pair differs
    two_sided = two_sided and any(cell(r.bound, r.fmt) != cell(r.lower, r.fmt) for r in rows_in)
    rows = tuple(
        (r.label, r.relation, cell(r.bound, r.fmt), *((cell(r.lower, r.fmt),) if two_sided else ()))
        for r in rows_in
    )
    rels = {profile["relations"]["mip_game"], profile["relations"]["membership"]}
    notes = [f"{rel} rows: {relation_phrase(rel)}." for rel in sorted(rels, reverse=True)]
    if two_sided:
        notes.append(
            "Bound and Lower enclose the exact value (privacy-loss distribution accounting); the lower ends "
            "are shown beside them."
        )
    columns = ("Risk", "Neighbours", "Bound", *(("Lower",) if two_sided else ()))
    return TextTable(_title(profile, mechanism), columns, rows, tuple(notes), align="llrr")
