"""The report of an audit of one fitted model (``results.json`` of kind ``"audit-fitted"``).

Built from the run folder like the model audit's report (:mod:`mipkit.report.audit_report`, whose figures and
tables it reuses), with the question answered stated first: "this fitted model" (one released object,
its training records against records it did not see) rather than "this training procedure".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from mipkit.report.audit_report import audit_sections, plain_summary, read_run
from mipkit.report.audit_verdict_report import verdict_section
from mipkit.report.html import Section

__all__ = ["answer_lines", "build", "most_exposed_line"]

ATTACKS_TEXT = (
    "Each attack scores every audited record from the released model's outputs (LOSS) and, where reference "
    "models were given, from how those outputs compare with the reference models' (LiRA, RMIA). TPR at FPR "
    "uses the lowest threshold with at most that FPR; eta is accuracy - 1/2 of hard guesses with a threshold "
    "chosen on the other half of the records. Intervals: a bootstrap over records (one model, independent "
    "records); the headline's is simultaneous over the attacks."
)


def answer_lines(results: dict) -> list[str]:
    """The lines printed after the paragraph of ``audit-fitted`` and ``audit-scores``: the question answered,
    the attacks not run and why, and the columns the model does not read."""
    q = results.get("question") or {}
    lines = [f"Question answered: {q.get('answered')}."]
    lines += [f"Not run: {name}: {why}." for name, why in (results.get("skipped") or {}).items()]
    ignored = (results.get("design") or {}).get("columns_ignored")
    if ignored:
        lines.append(f"Columns the model does not read (ignored): {', '.join(map(str, ignored))}.")
    return lines


def most_exposed_line(results: dict) -> str | None:
    """The line that names the most exposed members (by id, else by record) and their ranks, ties said as
    ties, and how many records share the top score; with no leak measured (the headline eta interval reaches
    0) it says the ranking is by score, not a finding; where every listed member shares the top score it names
    none; None when no member is ranked."""
    rec = results.get("records") or {}
    top = rec.get("most_exposed") or []
    if not top:
        return None
    key = rec.get("id_field") or "record"
    n = (results.get("design") or {}).get("n_records")

    def rank(r: dict) -> str:
        tied = int(r.get("tied") or 1)
        return f"rank {r.get('rank')}" + (
            f", tied with {tied - 1} other{'s' if tied > 2 else ''}" if tied > 1 else ""
        )

    first = int(top[0].get("tied") or 1) if top[0].get("rank") == 1 else 1
    shared = f" {first} records (members and non-members) share the top score." if first > 1 else ""
    attack = rec.get("most_exposed_attack")
    if len({r.get("rank") for r in top}) == 1 and first > 1:  # a tie names no one in particular
        return (
            f"Most exposed members ({attack}): none named: the {first} highest-scoring records (members and "
            "non-members) tie, so no member stands out; all scores in scores.parquet."
        )
    lo = (results.get("eta_ci") or [None])[0]
    caveat = (
        "no leak was measured; these are the records the attack scores highest, not a finding about them; "
        if lo is not None and lo <= 0
        else ""
    )
    names = ", ".join(f"{r.get(key)} ({rank(r)})" for r in top)
    return (
        f"Most exposed members ({attack}; {caveat}the {len(top)} members ranked highest; "
        f"rank of the score among {n} records, 1 = most member-like, tied scores share a rank): {names}; "
        f"all in scores.parquet.{shared}"
    )


def _question_section(results: dict) -> Section:
    q = results.get("question") or {}
    design = results.get("design") or {}
    rows = [(k, str(v)) for k, v in design.items()]
    skipped = results.get("skipped") or {}
    text = [f"Question answered: {q.get('answered', '')}. {q.get('meaning', '')}"]
    text += [f"Not run: {name}: {why}." for name, why in skipped.items()]
    return Section("What this audit answers", text, [pd.DataFrame(rows, columns=["setting", "value"])])


def _most_exposed_section(results: dict) -> Section | None:
    rec = results.get("records") or {}
    top = rec.get("most_exposed") or []
    if not top:
        return None
    text = [
        "The training records (members) the strongest attack ranks highest: those an attacker would name "
        f"first. rank: {rec.get('rank', '')}; score: the attack's score (higher = more member-like); "
        "flagged: at or above the attack's threshold of FPR 1%; record: position among the audited records; "
        f"row: {rec.get('row', '')}. The full table is scores.parquet."
    ]
    if (results.get("eta_ci") or [1.0])[0] <= 0:
        text.append("No leak was measured: these are the records the attack scores highest, not a finding.")
    title = f"Most exposed records ({rec.get('most_exposed_attack')})"
    return Section(title, text, [pd.DataFrame(top)])


def build(run_dir: str | Path) -> tuple[str, list[str], list[Section]]:
    """``(title, summary, sections)`` of an ``audit-fitted`` run folder (``REPORT_BUILDERS``)."""
    results, scores = read_run(Path(run_dir))
    model = results.get("trainer", {}).get("import_path", "model")
    title = f"Membership-inference audit of a fitted model ({model})"
    util = results.get("utility") or {}
    summary = plain_summary({**results, "utility": util if "accuracy_nonmembers" in util else {}})
    q = (results.get("question") or {}).get("answered")
    if q:
        summary.insert(0, f"This audit answers the question about {q}: {results['question']['meaning']}")
    if "mean_loss_members" in util:
        summary.append(
            f"Mean loss on members {util['mean_loss_members']:.4g}, on non-members "
            f"{util['mean_loss_nonmembers']:.4g}."
        )
    sections = audit_sections({**results, "notes": []}, scores)
    if sections and sections[0].title == "Attacks":
        sections[0] = replace(sections[0], text=[ATTACKS_TEXT, *(results.get("notes") or [])])
    exposed = _most_exposed_section(results)
    sections = [
        exposed if s.title.startswith("Most exposed records") else s
        for s in sections
        if exposed is not None or not s.title.startswith("Most exposed records")
    ]
    box = verdict_section(results)
    return title, summary, ([box] if box else []) + [_question_section(results), *sections]
