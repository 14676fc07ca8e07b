"""What an audit of one model's outputs says of each record: the per-record table, the most exposed members
and the subgroups.

One fitted model gives one score per record and attack, so the per-record table holds, for every attack
``a``, the record's score ``a_score`` and its rank ``a_rank`` among all audited records (1 = the most
member-like; ties share the best rank), with ``a_flagged`` (the score is at or above the attack's threshold
of FPR 1%) when 1% is one of the FPRs. The *most exposed records* are the members ranked highest by the
strongest attack: those an attacker would name first. Records are named by ``record`` (position among the
audited records), ``row`` (position in their own table: the members or non-members file, or the
predictions file) and the id column when given.

Subgroups (``slice_by`` columns and the true class) are measured as ``mipkit audit`` measures them
(:func:`mipkit.metrics.slices.slice_summary`, one target model): rare values are pooled and no label names a
real extreme.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mipkit.metrics.attack_summary import AttackSummary, fpr_label
from mipkit.metrics.slices import SliceSummary, slice_summary
from mipkit.workflows.audit.config import ROW_COLUMN, RecordInfo

__all__ = [
    "MOST_EXPOSED",
    "RANK_MEANING",
    "ROW_MEANING",
    "fitted_slices",
    "most_exposed_members",
    "record_id_field",
    "scores_table",
]

MOST_EXPOSED = 10
FLAG_FPR = 0.01
_FIXED = {"record", ROW_COLUMN, "member", "rank", "score", "flagged"}
ROW_MEANING = (
    "position of the record in its own table (the members or non-members file, or the predictions file), "
    "0-based; member says which"
)
RANK_MEANING = (
    "rank of the record's score among all audited records, members and non-members (1 = the most "
    "member-like); most_exposed lists the members ranked highest by the strongest attack"
)


def record_id_field(id_column: str | None) -> str | None:
    """The ids' column in the per-record table: the id column's own name, or ``id_<name>`` when that name is
    one of the table's fixed columns (``record``, ``row``, ``member``, ...) or ends like an attack's."""
    if id_column is None:
        return None
    taken = id_column in _FIXED or id_column.endswith(("_score", "_rank", "_flagged"))
    return f"id_{id_column}" if taken else id_column


def scores_table(
    scores: Mapping[str, np.ndarray],
    summaries: Mapping[str, AttackSummary],
    member: np.ndarray,
    records: RecordInfo,
) -> pd.DataFrame:
    """One row per audited record: ``record``, ``row``, the ids, ``member``, and for each attack its score,
    the score's rank and, with FPR 1% measured, whether the attack flags the record there."""
    n = member.size
    cols: dict[str, Any] = {"record": np.arange(n), ROW_COLUMN: np.asarray(records.rows, dtype=np.int64)}
    if records.ids is not None:
        cols[record_id_field(records.id_column)] = records.ids
    cols["member"] = member.astype(int)
    key = fpr_label(FLAG_FPR)
    for name, s in scores.items():
        s = np.asarray(s, dtype=float).ravel()
        cols[f"{name}_score"] = s
        cols[f"{name}_rank"] = pd.Series(s).rank(ascending=False, method="min").to_numpy(dtype=np.int64)
        summ = summaries[name]
        thr = next((p.threshold for p in summ.tpr_at_fpr if fpr_label(p.target_fpr) == key), None)
        if thr is not None and np.isfinite(thr):
            cols[f"{name}_flagged"] = s >= thr
    return pd.DataFrame(cols)


def most_exposed_members(
    table: pd.DataFrame, attack: str | None, k: int = MOST_EXPOSED, *, id_field: str | None = None
) -> pd.DataFrame:
    """The ``k`` members ranked highest by ``attack``: ``rank``, ``tied`` (how many audited records, members
    and non-members, share that rank: 1 when none ties), ``record``, ``row``, the id, ``score`` and
    ``flagged`` (at FPR 1%, when measured)."""
    if attack is None or f"{attack}_rank" not in table:
        return pd.DataFrame()
    ranks = table[f"{attack}_rank"]
    top = table[table["member"] == 1].sort_values([f"{attack}_rank", "record"]).head(k)
    out = {
        "rank": top[f"{attack}_rank"],
        "tied": top[f"{attack}_rank"].map(ranks.value_counts()).astype(int),
        "record": top["record"],
        ROW_COLUMN: top[ROW_COLUMN],
    }
    if id_field is not None and id_field in top:
        out[id_field] = top[id_field]
    out["score"] = top[f"{attack}_score"]
    if f"{attack}_flagged" in top:
        out["flagged"] = top[f"{attack}_flagged"]
    return pd.DataFrame(out).reset_index(drop=True)


def fitted_slices(
    scores: Mapping[str, np.ndarray],
    summaries: Mapping[str, AttackSummary],
    member: np.ndarray,
    records: RecordInfo,
    *,
    true_class: np.ndarray | None,
    label_name: str,
    fprs: tuple[float, ...],
    confidence: float,
    n_boot: int,
    random_state: Any,
    headline: Mapping[str, Any] | None = None,
) -> SliceSummary | None:
    """Per-subgroup metrics of the strongest attack (largest held-out eta) by true class (``true_class``, the
    class names of the records; None for a regressor or a loss) and by every ``slice_by`` column. None when
    there is nothing to slice by.

    With ``headline`` (:func:`mipkit.workflows.audit.verdict.headline_statistics` of the same trials), the
    "all records" row shows the main table's figures and intervals: one quantity, one computation. The
    subgroups' excess over all records keeps the slices' own bootstrap (the subgroups' replicates)."""
    groups = {} if true_class is None else {label_name: np.asarray(true_class).astype(str)}
    groups.update(records.slices)
    if not summaries or not groups:
        return None
    best = max(summaries, key=lambda a: summaries[a].eta.eta)  # the first one on a tie, as AuditResult
    n = member.size
    guesses = summaries[best].guesses
    summary = slice_summary(
        np.asarray(scores[best], dtype=float).reshape(1, n),
        member.reshape(1, n),
        groups,
        guesses=None if guesses is None else np.asarray(guesses).reshape(1, n),
        features={**({} if true_class is None else {label_name: False}), **records.slice_features},
        kinds={label_name: "true class"} if true_class is not None else None,
        fprs=fprs,
        confidence=confidence,
        n_boot=n_boot,
        attack=best,
        random_state=random_state,
    )
    stats = (headline or {}).get("attacks", {}).get(best)
    if stats is not None:
        _headline_row(summary.overall, summaries[best], stats, headline)
    return summary


def _headline_row(row: dict, summary: AttackSummary, stats: Mapping[str, Any], headline: Mapping) -> None:
    """Write the main table's figures of the attack into the "all records" row (in place)."""
    top = headline.get("headline") or {}
    row["auc"], row["auc_ci"] = stats["auc"], list(stats["auc_ci"])
    row["eta"] = stats["eta"]
    row["eta_ci"] = list(top["eta_ci"] if top.get("attack") == summary.name else stats["eta_ci_simultaneous"])
    tpr = {fpr_label(p.target_fpr): p.tpr for p in summary.tpr_at_fpr}
    row["tpr_at_fpr"] = {k: tpr[k] for k in row.get("tpr_at_fpr") or {} if k in tpr}
    row["tpr_at_fpr_ci"] = {
        k: [max(0.0, lo), min(1.0, hi)]
        for k in row["tpr_at_fpr"]
        if k in stats["tpr_at_fpr"]
        for lo, hi in [stats["tpr_at_fpr"][k]["tpr_ci"]]
    }
