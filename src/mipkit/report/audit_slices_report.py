"""The report's per-subgroup section: AUC, TPR at FPR and eta of the strongest attack per subgroup of
records (``results.json``'s ``slices``, from :func:`mipkit.metrics.slices.slice_summary`), and the same table
as rows of text for the command line.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mipkit.report.html import Section

__all__ = ["slice_rows", "slices_section", "slices_sentences", "slices_table"]

TOO_FEW = "too few records"


def _ci(ci: Any, digits: int, scale: float = 1.0) -> str:
    if not ci or ci[0] is None:
        return ""
    return f" [{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"


def _feature(column: str, info: dict) -> str:
    kind = info.get("kind")
    if kind == "true class":
        return "true class (the target)"
    is_feature = info.get("is_feature")
    text = "feature" if is_feature else ("not a feature" if is_feature is False else "")
    return f"{text}; {info['binning']}" if info.get("binning") else text


def slice_rows(slices: dict) -> list[dict[str, str]]:
    """One dict of formatted cells per subgroup (all records first): column, kind, subgroup, records,
    member / non-member trials, AUC, TPR at each FPR and eta with their intervals, and the flag."""
    columns = slices.get("columns") or {}
    rows = []
    for r in [slices["overall"], *slices["groups"]]:
        info = columns.get(r["column"], {})
        row = {
            "column": r["column"],
            "kind": _feature(r["column"], info) if info else "",
            "subgroup": str(r["group"]),
            "records": str(r["n_records"]),
            "trials (members / non-members)": f"{r['member_trials']} / {r['nonmember_trials']}",
        }
        if r.get("auc") is None:
            row["AUC [95% CI]"] = TOO_FEW
            for f in slices["overall"].get("tpr_at_fpr") or {}:
                row[f"TPR@FPR {f}"] = ""
            row["eta [95% CI]"] = ""
            row["more exposed"] = ""
        else:
            row["AUC [95% CI]"] = f"{r['auc']:.3f}{_ci(r['auc_ci'], 3)}"
            for f, v in r["tpr_at_fpr"].items():
                row[f"TPR@FPR {f}"] = f"{100 * v:.2f}%{_ci(r['tpr_at_fpr_ci'][f], 2, 100)}"
            row["eta [95% CI]"] = f"{r['eta']:.3f}{_ci(r['eta_ci'], 3)}"
            flag = r.get("more_exposed")
            row["more exposed"] = (
                "" if flag is None else ("YES (" + ", ".join(r["more_exposed_by"]) + ")" if flag else "no")
            )
        rows.append(row)
    return rows


def slices_table(results: dict) -> pd.DataFrame | None:
    """The per-subgroup table of an audit's ``results.json`` (None when it has no ``slices``)."""
    slices = results.get("slices")
    if not slices or not slices.get("overall"):
        return None
    conf = slices.get("confidence", 0.95)
    label = f"{100 * conf:g}% CI"
    rows = [{k.replace("95% CI", label): v for k, v in row.items()} for row in slice_rows(slices)]
    return pd.DataFrame(rows)


def slices_sentences(results: dict) -> list[str]:
    """What the table shows, how the intervals were computed, and which subgroups are more exposed."""
    slices = results.get("slices") or {}
    if not slices:
        return []
    flagged = [f"{r['column']} = {r['group']}" for r in slices.get("groups", []) if r.get("more_exposed")]
    out = [
        f"Metrics of the strongest attack ({slices.get('attack')}) on the trials of each subgroup's records: "
        "AUC, TPR at each FPR (threshold set on the subgroup's own non-member trials) and eta of the audit's "
        "hard guesses. Intervals: " + str(slices.get("method", "")) + ".",
        "A subgroup is flagged 'more exposed' when "
        + str(slices.get("rule", "")).removeprefix("more exposed: ")
        + f". Subgroups with fewer than {slices.get('min_trials')} member or non-member trials or fewer than "
        f"{slices.get('min_records')} records are marked '{TOO_FEW}'.",
    ]
    if flagged:
        out.append("More exposed than the records as a whole: " + "; ".join(flagged) + ".")
    else:
        out.append("No subgroup is measurably more exposed than the records as a whole.")
    return out


def slices_section(results: dict, prefix: str = "") -> Section | None:
    """The report section (None when the results have no ``slices``)."""
    table = slices_table(results)
    if table is None:
        return None
    return Section(f"{prefix}Subgroups", slices_sentences(results), [table])
