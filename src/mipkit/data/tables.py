"""Mixed-type tables (numeric, categorical, missing) for auditing released and synthetic data.

A :class:`TableSchema` is inferred from the *original* table (the data the release was built from) and
checked against the other tables of an audit (synthetic, control, holdout): they must share the original's
columns with compatible types. The schema then turns any of the tables into arrays:

* :func:`encode_mixed` -> :class:`MixedArrays`: numeric columns range-normalised with the original's range,
  ``(x - min) / (max - min)`` (NaN kept for missing values), and categorical columns as integer codes
  (missing values get a code of their own). This is the input of the *mixed* distance of
  :mod:`mipkit.data.neighbors`.
* :func:`encode_euclidean` -> a float matrix: numerics standardised with the original's mean and standard
  deviation (a missing value becomes 0, the mean, plus a 0/1 missing-indicator column when the column has
  missing values in any table) and one-hot categories (missing as its own level). This is the input of the
  Euclidean distance.

Column types: a column is numeric when it is numeric (not boolean) in the original; everything else is
categorical and compared as text (so ``1`` in one file and ``"1"`` in another are the same category).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

MISSING_LABEL = "<missing>"


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _integer_valued(series: pd.Series) -> bool:
    """Whether the present values of a numeric column are integers of magnitude at most 2^53."""
    x = series.to_numpy(dtype=float)
    x = x[~np.isnan(x)]
    return bool(np.all(np.abs(x) <= 2.0**53) and np.all(x == np.round(x)))


def _as_text(series: pd.Series) -> pd.Series:
    """Categorical values as text (object dtype), missing values kept missing (NaN, or None as read)."""
    if pd.api.types.is_object_dtype(series) and pd.api.types.infer_dtype(series, skipna=True) in (
        "string",
        "empty",
    ):
        return series  # text already (a CSV's text column): no per-value conversion, no copy
    mask = series.isna().to_numpy()
    if pd.api.types.is_string_dtype(series) and not pd.api.types.is_object_dtype(series):
        out = series.astype(object)
    else:
        out = series.astype(object).map(lambda v: v if isinstance(v, str) else str(v))
    return out.where(~mask, np.nan) if mask.any() else out


@dataclass(frozen=True)
class TableSchema:
    """Column roles and the constants (taken from the original table) used to encode any table.

    Attributes
    ----------
    numeric : tuple of str
        Numeric columns, in table order.
    categorical : tuple of str
        Categorical columns, in table order.
    num_min, num_range : ndarray of shape (len(numeric),)
        Minimum and range (max - min) of each numeric column in the original (a range of 0 becomes 1).
    num_mean, num_std : ndarray of shape (len(numeric),)
        Mean and standard deviation in the original (a standard deviation of 0 becomes 1).
    num_has_missing : ndarray of bool
        Whether the numeric column has a missing value in any table of the audit.
    levels : dict
        For each categorical column, its categories (text, sorted) seen in any table of the audit.
    num_integer : ndarray of bool
        Whether the numeric column holds integers only (at most 2^53 in size) in every table of the audit.
    """

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    num_min: np.ndarray
    num_range: np.ndarray
    num_mean: np.ndarray
    num_std: np.ndarray
    num_has_missing: np.ndarray
    levels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    num_integer: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))

    @property
    def lattice(self) -> int | None:
        """``L`` such that every exact mixed distance is a multiple of ``1/L``, or None.

        With integer values in every numeric column, ``|x_a - x_b| / range_j`` is a multiple of
        ``1/range_j`` (the range is an integer too) and category mismatches are integers, so every distance
        is a multiple of ``1/L``, ``L = lcm(range_j)`` (1 without numeric columns). None when a numeric
        column holds a non-integer value.
        """
        if len(self.numeric) and not (self.num_integer.size == len(self.numeric) and self.num_integer.all()):
            return None
        return math.lcm(*(int(r) for r in self.num_range)) if len(self.numeric) else 1

    @property
    def columns(self) -> tuple[str, ...]:
        """All columns: numeric first, then categorical."""
        return self.numeric + self.categorical

    def subset(self, columns: Sequence[str]) -> TableSchema:
        """The schema restricted to ``columns`` (roles and constants kept)."""
        unknown = [c for c in columns if c not in self.columns]
        if unknown:
            raise MipkitValueError(f"Column(s) {', '.join(map(repr, unknown))} are not in the schema.")
        keep = set(columns)
        idx = [i for i, c in enumerate(self.numeric) if c in keep]
        return TableSchema(
            numeric=tuple(self.numeric[i] for i in idx),
            categorical=tuple(c for c in self.categorical if c in keep),
            num_min=self.num_min[idx],
            num_range=self.num_range[idx],
            num_mean=self.num_mean[idx],
            num_std=self.num_std[idx],
            num_has_missing=self.num_has_missing[idx],
            levels={c: v for c, v in self.levels.items() if c in keep},
            num_integer=self.num_integer[idx] if self.num_integer.size else self.num_integer,
        )

    def to_dict(self) -> dict:
        return {
            "numeric": list(self.numeric),
            "categorical": list(self.categorical),
            "numeric_min": self.num_min.tolist(),
            "numeric_range": self.num_range.tolist(),
            "n_levels": {c: len(v) for c, v in self.levels.items()},
        }


def check_tables(
    original: pd.DataFrame,
    others: Mapping[str, pd.DataFrame | None] | None = None,
    *,
    columns: Sequence[str] | None = None,
    required: Sequence[str] = (),
) -> TableSchema:
    """Validate the tables of an audit and infer their :class:`TableSchema` from the original.

    Parameters
    ----------
    original : DataFrame
        The data the release was built from; numeric ranges and column types come from it.
    others : mapping of name -> DataFrame, optional
        The other tables (e.g. ``{"synthetic": syn, "control": ctl}``); ``None`` values are skipped.
        Each must have the original's columns (extra columns are refused, named in the message).
    columns : sequence of str, optional
        Use only these columns (default: all columns of the original).
    required : sequence of str
        Columns that must exist (secrets, known attributes); a missing one is named in the error.

    Raises
    ------
    MipkitValueError
        Empty table, mismatched columns (named), a column that is entirely missing, a column numeric in
        the original but not numeric in another table, a required column that is absent.
    """
    tables = _gather_tables(original, others)
    cols = list(original.columns) if columns is None else list(columns)
    _check_columns(tables, cols, restricted=columns is not None, required=required)
    numeric, categorical = _column_types(tables, cols)
    return _schema(tables, numeric, categorical)


def _gather_tables(
    original: pd.DataFrame, others: Mapping[str, pd.DataFrame | None] | None
) -> dict[str, pd.DataFrame]:
    """``{"original": original, <name>: <table>, ...}`` (None skipped), each a non-empty DataFrame."""
    tables: dict[str, pd.DataFrame] = {"original": original}
    for name, df in (others or {}).items():
        if df is not None:
            tables[name] = df
    for name, df in tables.items():
        if not isinstance(df, pd.DataFrame):
            raise MipkitValueError(f"The {name} table must be a pandas DataFrame. Got {type(df).__name__}.")
        if df.shape[0] == 0 or df.shape[1] == 0:
            raise MipkitValueError(f"The {name} table is empty (no rows).")
    return tables


def _check_columns(
    tables: dict[str, pd.DataFrame], cols: list[str], *, restricted: bool, required: Sequence[str]
) -> None:
    """The required and chosen columns (``restricted``: ``cols`` chosen by the caller) are in the original,
    every other table has the columns (and, unless ``restricted``, no other), no column is entirely
    missing."""
    original = tables["original"]
    missing_req = [c for c in required if c not in original.columns]
    if missing_req:
        shown = ", ".join(map(repr, list(original.columns)[:12]))
        raise MipkitValueError(
            f"Column(s) {', '.join(map(repr, missing_req))} not found in the original table. "
            f"Its columns are: {shown}{' ...' if original.shape[1] > 12 else ''}."
        )
    if restricted:
        absent = [c for c in cols if c not in original.columns]
        if absent:
            raise MipkitValueError(
                f"Column(s) {', '.join(map(repr, absent))} not found in the original table."
            )
    for name, df in tables.items():
        if name == "original":
            continue
        lacking = [c for c in cols if c not in df.columns]
        extra = [c for c in df.columns if c not in original.columns] if not restricted else []
        if lacking or extra:
            parts = []
            if lacking:
                parts.append(f"lacks column(s) {', '.join(map(repr, lacking[:8]))}")
            if extra:
                parts.append(f"has column(s) not in the original: {', '.join(map(repr, extra[:8]))}")
            raise MipkitValueError(f"The {name} table does not match the original: {'; '.join(parts)}.")
    for name, df in tables.items():
        for c in cols:
            if df[c].isna().all():
                raise MipkitValueError(
                    f"Column {c!r} of the {name} table is entirely missing; drop it from all tables."
                )


def _column_types(tables: dict[str, pd.DataFrame], cols: list[str]) -> tuple[list[str], list[str]]:
    """``(numeric, categorical)`` columns, typed by the original; a column numeric there must be numeric in
    every table, and a categorical column must not be mostly numbers (a typo in a numeric column)."""
    original = tables["original"]
    numeric = [c for c in cols if _is_numeric(original[c])]
    for name, df in tables.items():
        for c in numeric:
            if not _is_numeric(df[c]):
                bad = df[c][pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()]
                example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
                raise MipkitValueError(
                    f"Column {c!r} is numeric in the original table but not in the {name} table{example}."
                )
    categorical = [c for c in cols if c not in numeric]
    from mipkit.data.io import check_not_mostly_numeric

    for name, df in tables.items():  # a column of numbers with a typo would become one category per value
        for c in categorical:
            check_not_mostly_numeric(df[c], str(c), f"{name} table")
    return numeric, categorical


def _schema(tables: dict[str, pd.DataFrame], numeric: list[str], categorical: list[str]) -> TableSchema:
    """The schema: numeric ranges and moments from the original (no infinite value in any table), missing
    and integer flags and category levels from every table."""
    original = tables["original"]
    X = original[numeric].to_numpy(dtype=float) if numeric else np.empty((len(original), 0))
    with np.errstate(all="ignore"):
        lo = np.nanmin(X, axis=0) if numeric else np.empty(0)
        hi = np.nanmax(X, axis=0) if numeric else np.empty(0)
        mean = np.nanmean(X, axis=0) if numeric else np.empty(0)
        std = np.nanstd(X, axis=0) if numeric else np.empty(0)
    rng = hi - lo
    rng = np.where(rng > 0, rng, 1.0)
    std = np.where(std > 0, std, 1.0)
    for name, df in tables.items():
        if numeric and not np.all(
            np.isfinite(df[numeric].to_numpy(dtype=float)[~df[numeric].isna().to_numpy()])
        ):
            raise MipkitValueError(f"The {name} table has infinite values in a numeric column.")
    has_missing = np.array([any(df[c].isna().any() for df in tables.values()) for c in numeric], dtype=bool)
    integer = np.array([all(_integer_valued(df[c]) for df in tables.values()) for c in numeric], dtype=bool)
    levels: dict[str, tuple[str, ...]] = {}
    for c in categorical:
        seen: set[str] = set()
        for df in tables.values():
            seen.update(_as_text(df[c]).dropna().unique().tolist())
        levels[c] = tuple(sorted(seen))
    return TableSchema(
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        num_min=lo.astype(float),
        num_range=rng.astype(float),
        num_mean=mean.astype(float),
        num_std=std.astype(float),
        num_has_missing=has_missing,
        levels=levels,
        num_integer=integer,
    )


@dataclass(frozen=True)
class MixedArrays:
    """A table encoded for the mixed distance.

    Attributes
    ----------
    numeric : ndarray of shape (n, p), float64
        Range-normalised numeric columns, ``(x - min) / range`` with the original's min and range; NaN
        where missing. Values outside the original's range are kept (they may lie outside [0, 1]).
    codes : ndarray of shape (n, c), int32
        Category codes ``0 .. n_levels[j] - 1``; the code ``n_levels[j] - 1`` is reserved for "missing".
    n_levels : tuple of int
        Number of codes of each categorical column (its categories plus one for missing).
    lattice : int or None
        ``L`` when every exact distance between rows encoded with this schema is a multiple of ``1/L``
        (:attr:`TableSchema.lattice`; integer data), else None.
    """

    numeric: np.ndarray
    codes: np.ndarray
    n_levels: tuple[int, ...]
    lattice: int | None = None

    def __len__(self) -> int:
        return int(self.numeric.shape[0])

    @property
    def n_rows(self) -> int:
        return len(self)

    def take(self, index: np.ndarray) -> MixedArrays:
        """The rows ``index`` (an integer array or boolean mask)."""
        return MixedArrays(self.numeric[index], self.codes[index], self.n_levels, self.lattice)

    def columns(self, numeric: Sequence[int], categorical: Sequence[int]) -> MixedArrays:
        """The numeric columns ``numeric`` and categorical columns ``categorical`` (positions)."""
        num, cat = list(numeric), list(categorical)
        return MixedArrays(
            np.ascontiguousarray(self.numeric[:, num]),
            np.ascontiguousarray(self.codes[:, cat]),
            tuple(self.n_levels[i] for i in cat),
            self.lattice,  # a subset's distances stay on the lattice of all the columns
        )


def encode_mixed(df: pd.DataFrame, schema: TableSchema) -> MixedArrays:
    """Encode ``df`` for the mixed distance (see :class:`MixedArrays`)."""
    n = len(df)
    lattice = schema.lattice
    if schema.numeric:
        raw = df[list(schema.numeric)].to_numpy(dtype=float)
        present = raw[~np.isnan(raw)]
        if lattice is not None and not (
            np.all(np.abs(present) <= 2.0**53) and np.all(present == np.round(present))
        ):
            lattice = None  # a table the schema was not checked against, with non-integer values
        num = (raw - schema.num_min) / schema.num_range
    else:
        num = np.empty((n, 0))
    codes = np.empty((n, len(schema.categorical)), dtype=np.int32)
    n_levels = []
    for j, c in enumerate(schema.categorical):
        lv = schema.levels[c]
        cat = pd.Categorical(_as_text(df[c]), categories=list(lv))
        col = np.asarray(cat.codes, dtype=np.int32)  # -1 for missing (or a category not in the schema)
        col[col < 0] = len(lv)
        codes[:, j] = col
        n_levels.append(len(lv) + 1)
    return MixedArrays(np.ascontiguousarray(num), codes, tuple(n_levels), lattice)


def encode_euclidean(df: pd.DataFrame, schema: TableSchema) -> np.ndarray:
    """Encode ``df`` for the Euclidean distance: standardised numerics and one-hot categories.

    Numerics: ``(x - mean) / std`` with the original's mean and standard deviation; a missing value
    becomes 0 and, for columns with missing values in any table, a 0/1 indicator column is appended.
    Categories: one 0/1 column per category of the schema plus one for "missing".
    """
    parts = []
    if schema.numeric:
        z = (df[list(schema.numeric)].to_numpy(dtype=float) - schema.num_mean) / schema.num_std
        miss = np.isnan(z)
        parts.append(np.where(miss, 0.0, z))
        if schema.num_has_missing.any():
            parts.append(miss[:, schema.num_has_missing].astype(float))
    if schema.categorical:
        mixed = encode_mixed(df[list(schema.categorical)], schema.subset(schema.categorical))
        parts.append(one_hot(mixed.codes, mixed.n_levels))
    if not parts:
        return np.empty((len(df), 0))
    return np.ascontiguousarray(np.hstack(parts))


def one_hot(codes: np.ndarray, n_levels: Sequence[int], *, dtype=np.float64) -> np.ndarray:
    """One-hot encode integer codes (one block of ``n_levels[j]`` columns per categorical column)."""
    n = codes.shape[0]
    offsets = np.concatenate([[0], np.cumsum(n_levels)[:-1]]).astype(np.int64)
    out = np.zeros((n, int(np.sum(n_levels))), dtype=dtype)
    if codes.shape[1]:
        rows = np.repeat(np.arange(n), codes.shape[1])
        cols = (codes.astype(np.int64) + offsets[None, :]).ravel()
        out[rows, cols] = 1
    return out


def decode_categories(codes: np.ndarray, column: str, schema: TableSchema) -> np.ndarray:
    """Map codes of ``column`` back to text (``MISSING_LABEL`` for the missing code)."""
    lv = np.array([*schema.levels[column], MISSING_LABEL], dtype=object)
    return lv[np.asarray(codes)]


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """True when ``a`` and ``b`` hold the same rows the same number of times (in any order) on ``a``'s
    columns: the same table given twice, shuffled or not."""
    cols = list(a.columns)
    if len(a) != len(b) or any(c not in b.columns for c in cols):
        return False
    ha = np.sort(pd.util.hash_pandas_object(a[cols], index=False).to_numpy())
    hb = np.sort(pd.util.hash_pandas_object(b[cols], index=False).to_numpy())
    return bool(np.array_equal(ha, hb))


def check_not_the_original(original: pd.DataFrame, other: pd.DataFrame, name: str) -> None:
    """Refuse a table of unseen records (a holdout, a control set) that holds the original's rows (the same
    table given twice, shuffled or not): the generator saw every one of them, and the audit would measure
    no risk. Rows that merely coincide with some of the original's (discrete data) are accepted."""
    if same_rows(original, other):
        raise MipkitValueError(
            f"The {name} table holds the same rows as the original: it must hold records the generator was "
            "not trained on. Is it the original given again?"
        )
