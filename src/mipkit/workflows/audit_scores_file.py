"""The predictions file of ``mipkit audit-scores``: one row per audited record, written by any framework.

Columns (names are case-sensitive; other columns are ignored):

* ``id``: the record's id, unique and non-missing;
* ``label``: its true class, matching a ``<class>`` of the output columns (optional with ``loss``);
* ``member``: 1 if the record was in the audited model's training data, 0 if not;
* the audited model's output, exactly one kind: one ``p_<class>`` column per class (probabilities in
  [0, 1] that sum to 1 on each row), or one ``logit_<class>`` column per class, or a single ``loss``
  (a per-record loss >= 0, read as a negative log-likelihood);
* optional reference models ``k = 0, 1, ...`` trained by the same procedure: ``ref<k>_p_<class>``,
  ``ref<k>_logit_<class>`` or ``ref<k>_loss`` (the same kind and classes as the audited model) and
  ``ref<k>_member`` (1 if the record was in reference model k's training data; absent = 0 on every row).

:func:`read_predictions` checks all of this and returns the arrays; :func:`audit_predictions_file` audits
them with :func:`mipkit.workflows.audit_scores.audit_predictions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.workflows.audit_fitted_result import FittedAuditResult
from mipkit.workflows.audit_scores import ModelOutputs, audit_predictions

__all__ = ["PredictionsTable", "audit_predictions_file", "read_predictions"]

_KINDS = {"p": "proba", "logit": "logits"}
_OUTPUT = re.compile(r"^(?:ref(?P<ref>\d+)_)?(?:(?P<kind>p|logit)_(?P<cls>.+)|(?P<loss>loss))$")
_REF_MEMBER = re.compile(r"^ref(\d+)_member$")


@dataclass(frozen=True)
class PredictionsTable:
    """The arrays a predictions file holds (see the module docstring)."""

    ids: np.ndarray
    labels: np.ndarray
    member: np.ndarray
    outputs: ModelOutputs
    reference: list[ModelOutputs] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)


def _check_values(df: pd.DataFrame, cols: list[str], what: str) -> np.ndarray:
    vals = df[cols].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(vals)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise MipkitValueError(
            f"The predictions file has a missing or non-numeric {what} value in column {cols[col]!r} "
            f"(row {row + 1}); every output must be a finite number."
        )
    return vals


def _member(df: pd.DataFrame, col: str) -> np.ndarray:
    vals = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isin(vals, (0.0, 1.0)))
    if bad.size:
        raise MipkitValueError(
            f"The predictions file's {col!r} column must be 0 or 1 on every row; row {bad[0] + 1} has "
            f"{str(df[col].iloc[bad[0]])!r}."
        )
    return vals == 1.0


def _ids(df: pd.DataFrame) -> np.ndarray:
    ids = df["id"]
    if ids.isna().any():
        raise MipkitValueError(
            f"The predictions file's 'id' column has {int(ids.isna().sum())} missing value(s) (first at row "
            f"{int(np.flatnonzero(ids.isna().to_numpy())[0]) + 1}); every record needs an id."
        )
    dup = ids[ids.duplicated(keep=False)]
    if not dup.empty:
        raise MipkitValueError(
            f"The predictions file's 'id' column has duplicates ({dup.nunique()} id(s), e.g. "
            f"{dup.iloc[0]!r}); ids must be unique."
        )
    return ids.to_numpy()


def _group_outputs(columns: list[str]) -> dict[str | None, dict[str, Any]]:
    """``{None or ref index: {"kind": ..., "classes": [...], "columns": [...]}}`` from the column names."""
    groups: dict[str | None, dict[str, Any]] = {}
    for col in columns:
        m = _OUTPUT.match(col)
        if m is None:
            continue
        key = m.group("ref")
        kind = "loss" if m.group("loss") else _KINDS[m.group("kind")]
        g = groups.setdefault(key, {"kind": kind, "classes": [], "columns": []})
        if g["kind"] != kind:
            who = "the audited model" if key is None else f"reference model {key}"
            raise MipkitValueError(
                f"The predictions file mixes {g['kind']} and {kind} columns for {who}; give one kind "
                "(p_<class>, logit_<class> or loss)."
            )
        g["columns"].append(col)
        if kind != "loss":
            g["classes"].append(m.group("cls"))
    return groups


def _label_codes(df: pd.DataFrame, classes: list[str]) -> np.ndarray:
    if "label" not in df.columns:
        raise MipkitValueError("The predictions file has no 'label' column (the true class of each record).")
    lab = df["label"]
    if lab.isna().any():
        raise MipkitValueError("The predictions file's 'label' column has missing values.")
    if pd.api.types.is_float_dtype(lab) and np.all(np.mod(lab.to_numpy(), 1) == 0):
        lab = lab.astype(np.int64)
    text = lab.astype(str).to_numpy()
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(text) - set(index))
    if unknown:
        raise MipkitValueError(
            f"The predictions file's labels {', '.join(map(repr, unknown[:5]))} have no output column; "
            f"the classes of the output columns are {', '.join(map(repr, classes))}."
        )
    return np.array([index[t] for t in text], dtype=np.int64)


def read_predictions(source: str | Path | pd.DataFrame) -> PredictionsTable:
    """Read and check a predictions table (a CSV/Parquet path or a DataFrame; see the module docstring).

    Raises
    ------
    MipkitValueError
        For a missing column, a missing or duplicate id, a member value other than 0/1, a missing or
        non-finite output, probabilities outside [0, 1] or not summing to 1, labels without an output column,
        or reference columns whose kind or classes differ from the audited model's.
    """
    if isinstance(source, pd.DataFrame):
        df = source.reset_index(drop=True)
    else:
        from mipkit.data.io import read_table

        df = read_table(source)
    missing = [c for c in ("id", "member") if c not in df.columns]
    if missing:
        raise MipkitValueError(
            f"The predictions file lacks the column(s) {', '.join(missing)}; it needs id, label, member and "
            "the model's outputs (p_<class> columns, logit_<class> columns or loss)."
        )
    if len(df) < 4:
        raise MipkitValueError(f"The predictions file has {len(df)} rows; an audit needs at least 4 records.")
    ids = _ids(df)
    member = _member(df, "member")
    groups = _group_outputs([str(c) for c in df.columns])
    if None not in groups:
        raise MipkitValueError(
            "The predictions file has no output columns for the audited model: give p_<class> columns, "
            "logit_<class> columns or a loss column."
        )
    target = groups.pop(None)
    kind, classes = target["kind"], target["classes"]
    if kind != "loss" and len(classes) < 2:
        raise MipkitValueError(
            f"The predictions file has one {kind} column; give one per class (at least 2)."
        )
    vals = _check_values(df, target["columns"], kind)
    outputs = ModelOutputs(**{kind: vals[:, 0] if kind == "loss" else vals})
    labels = _label_codes(df, classes) if kind != "loss" else np.zeros(len(df), dtype=np.int64)
    reference = []
    members = {m.group(1) for c in df.columns if (m := _REF_MEMBER.match(str(c)))}
    orphans = sorted(members - set(groups), key=int)
    if orphans:
        raise MipkitValueError(
            f"The predictions file has ref{orphans[0]}_member but no ref{orphans[0]} outputs."
        )
    for key in sorted(groups, key=int):
        g = groups[key]
        if g["kind"] != kind or g["classes"] != classes:
            raise MipkitValueError(
                f"Reference model {key}'s columns ({', '.join(g['columns'][:4])}) must be the same kind and "
                f"classes as the audited model's ({', '.join(target['columns'][:4])})."
            )
        rv = _check_values(df, g["columns"], kind)
        mem = _member(df, f"ref{key}_member") if key in members else None
        reference.append(ModelOutputs(**{kind: rv[:, 0] if kind == "loss" else rv}, member=mem))
    return PredictionsTable(ids, labels, member, outputs, reference, list(classes))


def audit_predictions_file(
    source: str | Path | pd.DataFrame | PredictionsTable, *, out_dir: str | Path | None = None, **kwargs: Any
) -> FittedAuditResult:
    """Audit the model whose outputs a predictions table holds (:func:`read_predictions`, or its result),
    with :func:`mipkit.workflows.audit_scores.audit_predictions` (``kwargs`` are its settings)."""
    table = source if isinstance(source, PredictionsTable) else read_predictions(source)
    design = {"source": "predictions file" if isinstance(source, (str, Path)) else "predictions table"}
    info = kwargs.pop("model_info", None) or {"import_path": "model of the predictions file"}
    return audit_predictions(
        table.labels,
        table.member,
        table.outputs,
        reference=table.reference,
        ids=table.ids,
        classes=table.classes or None,
        model_info=info,
        design={**design, **kwargs.pop("design", {})},
        out_dir=out_dir,
        **kwargs,
    )
