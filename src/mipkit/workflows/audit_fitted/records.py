"""Who the records of a fitted-model audit are: the members' and non-members' tables without the id column,
their rows, ids and subgroup columns, and the columns the model ignores.

The id column must be in each table, without a missing or repeated value over all of them, and must not be
one of the model's features; each ``slice_by`` column (other than the true class) must be in each table.
The per-record table and the subgroups are those of :mod:`mipkit.workflows.audit_scores.records`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.workflows.audit.config import LABEL_SLICE, RecordInfo, check_id_column
from mipkit.workflows.audit_fitted.columns import used_columns

__all__ = ["records_of_tables"]


def _slice_names(slice_by: Sequence[str] | str | None, target: str | None) -> list[str]:
    items = [slice_by] if isinstance(slice_by, str) else list(slice_by or ())
    names = (c.strip() for item in items for c in str(item).split(","))
    return [c for c in dict.fromkeys(n for n in names if n) if c not in (target, LABEL_SLICE)]


def records_of_tables(
    tables: Sequence[pd.DataFrame],
    *,
    model: Any = None,
    id_column: str | None = None,
    slice_by: Sequence[str] | str | None = (),
    target: str | None = None,
    what: Sequence[str] = ("members", "non-members"),
) -> tuple[list[pd.DataFrame], RecordInfo, list[str]]:
    """The feature tables without the id column, who their records are, and the columns the model ignores.

    ``tables`` are the feature tables (target removed) of the audited records, in order (members, then
    non-members). The id column must be in each, without a missing or repeated value over all of them, and
    must not be one of the model's features; each ``slice_by`` column (other than the true class, ``label``
    or ``target``) must be in each.
    """
    ids = None
    if id_column is not None:
        id_column = str(id_column).strip() or None
    if id_column is not None:
        for t, name in zip(tables, what, strict=True):
            if id_column not in t.columns:
                raise MipkitValueError(
                    f"The id column {id_column!r} is not a column of the {name} table; its columns: "
                    f"{', '.join(map(str, t.columns[:12]))}."
                )
        names = getattr(model, "feature_names_in_", None)
        if names is not None and id_column in {str(c) for c in names}:
            raise MipkitValueError(
                f"The id column {id_column!r} is one of the features the model was fitted on; name a column "
                "that only identifies the records."
            )
        ids = check_id_column(pd.concat([t[[id_column]] for t in tables], ignore_index=True), id_column)
        tables = [t.drop(columns=[id_column]) for t in tables]
    used, ignored = used_columns(model, list(tables[0].columns))
    slices, features = {}, {}
    for c in _slice_names(slice_by, target):
        for t, name in zip(tables, what, strict=True):
            if c not in t.columns:
                raise MipkitValueError(
                    f"The slice-by column {c!r} is not a column of the {name} table; its columns: "
                    f"{', '.join(map(str, t.columns[:12]))}."
                )
        slices[c] = pd.concat([t[c] for t in tables], ignore_index=True).to_numpy()
        features[c] = c in used
    rows = np.concatenate([np.arange(len(t)) for t in tables])
    return list(tables), RecordInfo(rows, ids, id_column, slices, features), ignored
