"""The predictions file of ``mipkit audit-scores``: one row per audited record, written by any framework.

Columns (names are case-sensitive; other columns are ignored; the ``*_column`` settings of
:class:`~mipkit.workflows.audit_scores.config.AuditScoresConfig` rename them, so a vendor's file is read as it
is):

* ``id``: the record's id, unique and non-missing;
* ``label``: its true class, matching a ``<class>`` of the output columns (optional with ``loss``);
* ``member``: 1 if the record was in the audited model's training data, 0 if not;
* the audited model's output, exactly one kind: one ``p_<class>`` column per class (probabilities in
  [0, 1] that sum to 1 on each row), or one ``logit_<class>`` column per class, or a single ``loss``
  (a per-record loss >= 0, read as a negative log-likelihood);
* optional reference models ``k = 0, 1, ...`` trained by the same procedure: ``ref<k>_p_<class>``,
  ``ref<k>_logit_<class>`` or ``ref<k>_loss`` (the same kind and classes as the audited model) and
  ``ref<k>_member`` (1 if the record was in reference model k's training data; absent = 0 on every row).

A vendor's file may instead give the audited model's output as one score of the positive class of a binary
model (``score``: a probability in [0, 1]) or as probability columns named freely (``proba``), and the
membership as a column of words (``member_value`` names the members' value, say ``yes``); reference
columns are then not read.

:func:`read_predictions` checks all of this and returns the arrays
(:class:`~mipkit.workflows.audit_scores.outputs.Predictions`), which :func:`mipkit.audit_scores` audits.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.workflows.audit.config import RecordInfo
from mipkit.workflows.audit_scores.attacks import check_attacks_can_run
from mipkit.workflows.audit_scores.config import AuditScoresConfig
from mipkit.workflows.audit_scores.outputs import ModelOutputs, Predictions

__all__ = ["read_predictions"]

_KINDS = {"p": "proba", "logit": "logits"}
_OUTPUT = re.compile(r"^(?:ref(?P<ref>\d+)_)?(?:(?P<kind>p|logit)_(?P<cls>.+)|(?P<loss>loss))$")
_REF_MEMBER = re.compile(r"^ref(\d+)_member$")


_BINARY_PAIRS = (("0", "1"), ("false", "true"), ("no", "yes"), ("n", "y"), ("negative", "positive"))


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


def _member_words(df: pd.DataFrame, col: str, value: str) -> np.ndarray:
    """Members where ``col`` holds ``value`` (as text), non-members where it holds its one other value."""
    column = df[col]
    if column.isna().any():
        row = int(np.flatnonzero(column.isna().to_numpy())[0])
        raise MipkitValueError(f"The predictions file's {col!r} column has a missing value (row {row + 1}).")
    text = column.map(_text).to_numpy(dtype=object)
    kinds = sorted(set(text), key=str)
    if value not in kinds or len(kinds) != 2:
        shown = ", ".join(map(repr, kinds[:5])) + (" ..." if len(kinds) > 5 else "")
        raise MipkitValueError(
            f"The predictions file's {col!r} column must hold {value!r} for members and one other value for "
            f"non-members; it holds {shown}."
        )
    return text == value


def _text(v: Any) -> str:
    """A cell as text, integral floats without their ``.0`` (``1.0`` -> ``"1"``)."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def _member(df: pd.DataFrame, col: str) -> np.ndarray:
    vals = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isin(vals, (0.0, 1.0)))
    if bad.size:
        raise MipkitValueError(
            f"The predictions file's {col!r} column must be 0 or 1 on every row; row {bad[0] + 1} has "
            f"{str(df[col].iloc[bad[0]])!r}."
        )
    return vals == 1.0


def _ids(df: pd.DataFrame, col: str = "id") -> np.ndarray:
    ids = df[col]
    if ids.isna().any():
        raise MipkitValueError(
            f"The predictions file's {col!r} column has {int(ids.isna().sum())} missing value(s) (first at "
            f"row {int(np.flatnonzero(ids.isna().to_numpy())[0]) + 1}); every record needs an id."
        )
    dup = ids[ids.duplicated(keep=False)]
    if not dup.empty:
        raise MipkitValueError(
            f"The predictions file's {col!r} column has duplicates ({dup.nunique()} id(s), e.g. "
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


def _label_text(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df.columns:
        raise MipkitValueError(f"The predictions file has no {col!r} column (the true class of each record).")
    lab = df[col]
    if lab.isna().any():
        raise MipkitValueError(f"The predictions file's {col!r} column has missing values.")
    return lab.map(_text).to_numpy(dtype=object).astype(str)


def _label_codes(df: pd.DataFrame, classes: list[str], col: str = "label") -> np.ndarray:
    if col not in df.columns:
        raise MipkitValueError(f"The predictions file has no {col!r} column (the true class of each record).")
    lab = df[col]
    if lab.isna().any():
        raise MipkitValueError(f"The predictions file's {col!r} column has missing values.")
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


def _read(source: str | Path | pd.DataFrame, config: AuditScoresConfig) -> pd.DataFrame:
    """The table, with the id and member columns and at least 4 rows; the slice-by columns among its own."""
    if isinstance(source, pd.DataFrame):
        df = source.reset_index(drop=True)
    else:
        from mipkit.data.io import read_table

        df = read_table(source)
    missing = [c for c in (config.id_column, config.member_column) if c not in df.columns]
    if missing:
        raise MipkitValueError(
            f"The predictions file lacks the column(s) {', '.join(missing)}; it needs {config.id_column}, "
            f"{config.label_column}, {config.member_column} and the model's outputs (p_<class> columns, "
            f"logit_<class> columns or loss). Its columns: {', '.join(map(str, df.columns[:12]))}."
        )
    absent = [c for c in _slice_by(config) if c not in df.columns]
    if absent:
        raise MipkitValueError(
            f"The slice-by column(s) {', '.join(map(repr, absent))} are not columns of the predictions file."
        )
    if len(df) < 4:
        raise MipkitValueError(f"The predictions file has {len(df)} rows; an audit needs at least 4 records.")
    return df


def _slice_by(config: AuditScoresConfig) -> list[str]:
    return [c for c in config.slice_by if c not in (config.label_column, "label")]


def _described(source: str | Path | pd.DataFrame) -> dict[str, Any]:
    """``model_info`` and ``design`` of the predictions: named after the file, or a table."""
    if isinstance(source, pd.DataFrame):
        return {"model_info": {"import_path": "model of the predictions table"},
                "design": {"source": "predictions table"}}  # fmt: skip
    name = Path(source).name
    return {
        "model_info": {"import_path": f"model of {name}"},
        "design": {"source": f"predictions file {name}"},
    }


def read_predictions(
    source: str | Path | pd.DataFrame, config: AuditScoresConfig | None = None
) -> Predictions:
    """Read and check a predictions table (a CSV/Parquet path or a DataFrame; see the module docstring), its
    columns named by ``config`` (default: mipkit's own names).

    Raises
    ------
    MipkitValueError
        For a missing column, a missing or duplicate id, a member value other than 0/1 (or than
        ``member_value`` and one other), a missing or non-finite output, probabilities outside [0, 1] or not
        summing to 1, labels without an output column, or reference columns whose kind or classes differ
        from the audited model's.
    """
    config = AuditScoresConfig() if config is None else config
    df = _read(source, config)
    ids = _ids(df, config.id_column)
    if config.member_value is not None:
        member = _member_words(df, config.member_column, config.member_value)
    else:
        member = _member(df, config.member_column)
    slice_by = _slice_by(config)
    slices = {c: df[c].to_numpy() for c in slice_by}
    records = RecordInfo(np.arange(len(df)), ids, config.id_column, slices, dict.fromkeys(slice_by))
    if config.score_column is not None or config.proba_columns:
        outputs, labels, classes = _named_outputs(df, config)
        reference: list[ModelOutputs] = []
    else:
        outputs, labels, classes, reference = _mipkit_outputs(df, config)
    check_attacks_can_run(config.attacks, len(reference))
    return Predictions(
        labels, member, outputs, tuple(reference), ids, tuple(classes), records, config.label_column,
        **_described(source),
    )  # fmt: skip


def _mipkit_outputs(
    df: pd.DataFrame, config: AuditScoresConfig
) -> tuple[ModelOutputs, np.ndarray, list[str], list[ModelOutputs]]:
    """The outputs, label codes, classes and reference models' outputs of a file with mipkit's output
    columns (``p_<class>``, ``logit_<class>`` or ``loss``, and ``ref<k>_...``)."""
    groups = _group_outputs([str(c) for c in df.columns])
    if None not in groups:
        raise MipkitValueError(
            "The predictions file has no output columns for the audited model: give p_<class> columns, "
            "logit_<class> columns or a loss column, or say which columns hold the outputs (one score column "
            "or probability columns)."
        )
    target = groups.pop(None)
    kind, classes = target["kind"], target["classes"]
    if kind != "loss" and len(classes) < 2:
        raise MipkitValueError(
            f"The predictions file has one {kind} column; give one per class (at least 2)."
        )
    vals = _check_values(df, target["columns"], kind)
    outputs = ModelOutputs(**{kind: vals[:, 0] if kind == "loss" else vals})
    if kind == "loss":
        labels = np.zeros(len(df), dtype=np.int64)
    else:
        labels = _label_codes(df, classes, config.label_column)
    return outputs, labels, list(classes), _reference_outputs(df, groups, target)


def _reference_outputs(df: pd.DataFrame, groups: dict, target: dict) -> list[ModelOutputs]:
    """The reference models' outputs (``ref<k>_...`` columns) with their ``ref<k>_member``, of the target's
    kind and classes."""
    kind = target["kind"]
    members = {m.group(1) for c in df.columns if (m := _REF_MEMBER.match(str(c)))}
    orphans = sorted(members - set(groups), key=int)
    if orphans:
        raise MipkitValueError(
            f"The predictions file has ref{orphans[0]}_member but no ref{orphans[0]} outputs."
        )
    reference = []
    for key in sorted(groups, key=int):
        g = groups[key]
        if g["kind"] != kind or g["classes"] != target["classes"]:
            raise MipkitValueError(
                f"Reference model {key}'s columns ({', '.join(g['columns'][:4])}) must be the same kind and "
                f"classes as the audited model's ({', '.join(target['columns'][:4])})."
            )
        rv = _check_values(df, g["columns"], kind)
        mem = _member(df, f"ref{key}_member") if key in members else None
        reference.append(ModelOutputs(**{kind: rv[:, 0] if kind == "loss" else rv}, member=mem))
    return reference


def _named_outputs(df: pd.DataFrame, cols: AuditScoresConfig) -> tuple[ModelOutputs, np.ndarray, list[str]]:
    """The outputs, label codes and classes of a file whose outputs are one score or named probability
    columns."""
    text = _label_text(df, cols.label_column)
    values = sorted(set(text))
    if cols.score_column is not None:
        if cols.score_column not in df.columns:
            raise MipkitValueError(f"The predictions file has no score column {cols.score_column!r}.")
        score = _check_values(df, [cols.score_column], "score")[:, 0]
        outside = np.flatnonzero((score < 0) | (score > 1))
        if outside.size:
            raise MipkitValueError(
                f"The score column {cols.score_column!r} must hold the probability of the positive class, in "
                f"[0, 1]; row {outside[0] + 1} has {score[outside[0]]:g}."
            )
        classes = _binary_classes(values, cols)
        labels = (text == classes[1]).astype(np.int64)
        return ModelOutputs(proba=np.column_stack([1.0 - score, score])), labels, classes
    pairs = [_proba_pair(spec, values, df) for spec in cols.proba_columns]
    classes = [c for c, _ in pairs]
    if len(set(classes)) != len(classes) or len(classes) < 2:
        raise MipkitValueError(
            f"The probability columns must name one column per class, at least 2 (classes: "
            f"{', '.join(classes)})."
        )
    vals = _check_values(df, [col for _, col in pairs], "proba")
    unknown = sorted(set(values) - set(classes))
    if unknown:
        raise MipkitValueError(
            f"The labels {', '.join(map(repr, unknown[:5]))} have no probability column; the classes of "
            f"probability columns are {', '.join(map(repr, classes))}."
        )
    index = {c: i for i, c in enumerate(classes)}
    return ModelOutputs(proba=vals), np.array([index[t] for t in text], dtype=np.int64), classes


def _binary_classes(values: list[str], cols: AuditScoresConfig) -> list[str]:
    """``[negative, positive]``: the positive class as given, or that of a known pair (0/1, no/yes, ...)."""
    shown = ", ".join(map(repr, values[:5])) + (" ..." if len(values) > 5 else "")
    if len(values) > 2:
        raise MipkitValueError(
            f"A score column is the output of a binary model, but the {cols.label_column!r} column holds "
            f"{len(values)} values ({shown}); give one probability column per class instead."
        )
    if cols.positive_class is not None:
        pos = str(cols.positive_class).strip()
        others = [v for v in values if v != pos]
        if len(others) > 1:
            raise MipkitValueError(
                f"The positive class {pos!r} is not a value of the {cols.label_column!r} column ({shown})."
            )
        return [others[0] if others else f"not {pos}", pos]
    lower = {v.lower(): v for v in values}
    for neg, pos in _BINARY_PAIRS:
        if set(lower) <= {neg, pos}:
            return [lower.get(neg, neg), lower.get(pos, pos)]
    raise MipkitValueError(
        f"Which label is the score the probability of? The {cols.label_column!r} column holds {shown}: name "
        "the positive class."
    )


def _proba_pair(spec: str, values: list[str], df: pd.DataFrame) -> tuple[str, str]:
    """``(class, column)`` of one ``--proba-columns`` item: ``class=column``, or a column whose name ends
    with one of the label values (the longest)."""
    spec = str(spec).strip()
    cls, sep, col = spec.partition("=")
    if not sep:
        col = spec
        ends = sorted((v for v in values if col.endswith(v)), key=len, reverse=True)
        if not ends:
            raise MipkitValueError(
                f"The probability column {col!r} does not end with a label value ({', '.join(values[:5])}); "
                "write class=column."
            )
        cls = ends[0]
    cls, col = cls.strip(), col.strip()
    if col not in df.columns:
        raise MipkitValueError(f"The predictions file has no probability column {col!r}.")
    return cls, col
