"""What ``synthesize`` checks before it fits, and the column types it gives back (docs/synthesize.md).

* :func:`drop_columns`: the columns the user drops (``--drop``).
* :func:`check_finite`: ``inf`` and ``-inf`` are refused (a range with an infinite end has no coordinates).
* :func:`find_identifiers`: identifier-like columns, refused unless dropped or declared in a public domain.
  A synthesizer given an id column makes up ids in the real ones' range, some equal to real people's, or
  copies them. A column is identifier-like when a token of its name is an identifier word (``id``, ``uuid``,
  ``ssn``, ``mrn``, ...; ``patient_id``, ``PatientId``, ``record_no``), its whole name is one (``patient``,
  ``record``), or, on at least :data:`MIN_DISTINCT_ROWS` values, at least :data:`DISTINCT_SHARE` of an integer
  or text column's values are distinct. Floats with non-integer values are measurements: never flagged by
  uniqueness.
* :func:`restore_types`: integer columns come back as integers (``Int64`` where values are missing), bool
  columns as bool.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = ["check_finite", "check_identifiers", "drop_columns", "find_identifiers", "restore_types"]

#: Name tokens that make a column an identifier wherever they stand (``patient_id``, ``uuid``).
ID_TOKENS = frozenset({"id", "ids", "uuid", "guid", "ssn", "mrn", "nhs", "nino", "passport", "identifier"})
#: Names that are identifiers on their own, or followed by one of :data:`NUMBER_TOKENS` (``record_no``).
ID_NAMES = frozenset(
    {"record", "patient", "customer", "client", "subject", "person", "user", "member", "account", "clientnum"}
)
NUMBER_TOKENS = frozenset({"no", "num", "number", "nr", "key", "code"})
#: Share of distinct values from which an integer or text column is identifier-like.
DISTINCT_SHARE = 0.95
#: Fewest non-missing values on which the uniqueness rule is applied.
MIN_DISTINCT_ROWS = 20


def drop_columns(data: pd.DataFrame, drop: Iterable[str] | None) -> pd.DataFrame:
    """``data`` without the columns ``drop`` (each must exist; at least one column must stay)."""
    if drop is None:
        return data
    names = [drop] if isinstance(drop, str) else [str(c) for c in drop]
    unknown = [c for c in names if c not in {str(x) for x in data.columns}]
    if unknown:
        raise MipkitValueError(
            f"--drop: no column {unknown[0]!r} in the data; its columns: {list(map(str, data.columns))}."
        )
    kept = [c for c in data.columns if str(c) not in set(names)]
    if not kept:
        raise MipkitValueError("--drop leaves no column to synthesize.")
    return data[kept]


def check_finite(data: pd.DataFrame) -> None:
    """Refuse ``inf`` / ``-inf`` in any numeric column (one line naming the columns and counts)."""
    bad = {}
    for col in data.columns:
        s = data[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            n = int(np.isinf(pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)).sum())
            if n:
                bad[str(col)] = n
    if bad:
        listed = ", ".join(f"{c!r} ({n})" for c, n in bad.items())
        raise MipkitValueError(
            f"Infinite values (inf or -inf) in the column(s) {listed}: replace them or drop those records "
            "before synthesizing."
        )


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name))
    return [t.lower() for t in re.split(r"[^A-Za-z0-9]+", spaced) if t]


def _id_like_name(name: str) -> bool:
    tokens = _tokens(name)
    if any(t in ID_TOKENS for t in tokens):
        return True
    return bool(tokens) and tokens[0] in ID_NAMES and all(t in NUMBER_TOKENS for t in tokens[1:])


def _mostly_distinct(s: pd.Series) -> bool:
    v = s.dropna()
    if v.size < MIN_DISTINCT_ROWS or pd.api.types.is_bool_dtype(s):
        return False
    if pd.api.types.is_numeric_dtype(s):
        x = v.to_numpy(dtype=float)
        if not np.all(np.isfinite(x)) or not np.all(np.floor(x) == x):
            return False  # a measurement, not a code
    return v.nunique() >= DISTINCT_SHARE * v.size


def find_identifiers(data: pd.DataFrame, declared: Iterable[str] = ()) -> list[str]:
    """The identifier-like columns of ``data`` (module docstring), leaving out those in ``declared``."""
    skip = {str(c) for c in declared}
    return [
        str(c)
        for c in data.columns
        if str(c) not in skip and (_id_like_name(str(c)) or _mostly_distinct(data[c]))
    ]


def check_identifiers(data: pd.DataFrame, declared: Iterable[str] = ()) -> None:
    """Refuse identifier-like columns (one line naming them, and ``--drop``)."""
    found = find_identifiers(data, declared)
    if found:
        drops = " ".join(f"--drop {c}" for c in found)
        raise MipkitValueError(
            f"The column(s) {found} look like identifiers (an id-like name, or nearly every value distinct): "
            f"a synthesizer would copy or make up ids; drop them ({drops}) or declare them in --domain FILE."
        )


def restore_types(table: pd.DataFrame, dtypes: Mapping[str, Any], domain: Mapping | None) -> pd.DataFrame:
    """``table`` with integer columns as integers (the training dtype, or ``Int64`` where values are
    missing) and bool columns as bool (``boolean`` where values are missing).

    A column is an integer column when its training dtype is an integer dtype or its domain declares
    ``"integer": true``.
    """
    out = table.copy()
    for col in out.columns:
        dtype = dtypes.get(str(col))
        spec = (domain or {}).get(str(col), {})
        s = out[col]
        if dtype is not None and pd.api.types.is_bool_dtype(dtype):
            mapped = s.map(
                lambda x: x if isinstance(x, (bool, np.bool_)) else {"True": True, "False": False}.get(x)
            )
            out[col] = mapped.astype(bool) if mapped.notna().all() else mapped.astype("boolean")
            continue
        integer = (dtype is not None and pd.api.types.is_integer_dtype(dtype)) or (
            spec.get("type") == "numeric" and spec.get("integer", False)
        )
        if integer and pd.api.types.is_numeric_dtype(s):
            v = np.rint(pd.to_numeric(s, errors="coerce").astype(float))
            if v.isna().any():
                out[col] = v.astype("Int64")
            else:
                keep = dtype is not None and pd.api.types.is_integer_dtype(dtype)
                out[col] = v.astype(dtype if keep else "int64")
    return out
