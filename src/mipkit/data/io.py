"""Reading tables from disk with clear errors, and turning them into (X, y) arrays.

I/O lives here, at the edge; everything downstream works on NumPy arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError, check_choice
from mipkit.data.csv_out import restore_cell
from mipkit.data.domain import check_domain, encode_features, needs_domain_message

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".data", ".parquet", ".pq")
#: Suffixes of the other files mipkit reads or writes, refused where a table is expected.
NOT_TABLES = {
    ".json": "JSON",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".joblib": "model",
    ".skops": "model",
    ".pkl": "model",
    ".pt": "model",
    ".html": "HTML",
}


def read_table(path: str | Path, *, na_values: tuple[str, ...] = ("?", "")) -> pd.DataFrame:
    """Read a CSV/TSV or Parquet file into a DataFrame.

    Raises :class:`MipkitValueError` with one clear line for a missing, empty or unreadable file, or a
    file with no rows. Column names are stripped of surrounding white space; string cells too. In a CSV
    file, a cell or name that mipkit's CSV writer neutralised for spreadsheets (``'=x``) is read back as it
    was (``=x``; :func:`mipkit.data.csv_out.restore_cell`).
    """
    p = Path(path)
    if not p.exists():
        raise MipkitValueError(f"No such file: {p}")
    if p.is_dir():
        raise MipkitValueError(f"Expected a file, got a folder: {p}")
    if p.stat().st_size == 0:
        raise MipkitValueError(f"The file {p} is empty.")
    suffix = p.suffix.lower()
    if suffix in NOT_TABLES:
        raise MipkitValueError(
            f"{p} is a {NOT_TABLES[suffix]} file, not a table: give a CSV, TSV or Parquet file."
        )
    try:
        if suffix in (".parquet", ".pq"):
            df = pd.read_parquet(p)
        else:
            sep = "\t" if suffix == ".tsv" else ","
            df = pd.read_csv(
                p, sep=sep, na_values=list(na_values), skipinitialspace=True, keep_default_na=True
            )
    except pd.errors.EmptyDataError:
        raise MipkitValueError(f"The file {p} has no data.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise MipkitValueError(f"Could not read {p}: {first}") from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise MipkitValueError(f"The file {p} has no rows.")
    csv = suffix not in (".parquet", ".pq")
    names = _raw_column_names(p, df, suffix, sep if csv else None)
    if csv:
        names = [restore_cell(n).strip() for n in names]
    _check_unique_names(p, names)
    df.columns = names
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = _strip_text(df[c], restore=csv)
    return df


def _strip_text(column: pd.Series, *, restore: bool = False) -> pd.Series:
    """The column with its text cells stripped of surrounding white space (other cells unchanged), and with
    ``restore`` the cells mipkit's CSV writer neutralised read back as they were.

    Each distinct value is stripped once (a text column of a table has few distinct values).
    """

    def clean(v: object) -> object:
        if not isinstance(v, str):
            return v
        return (restore_cell(v) if restore else v).strip()  # type: ignore[union-attr]

    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    if not all(isinstance(u, str) for u in uniques):
        return column.map(clean)
    stripped = np.array([clean(u) for u in uniques], dtype=object)
    if all(a == b for a, b in zip(stripped, uniques, strict=True)):
        return column  # nothing to strip
    out = np.where(codes >= 0, stripped[np.maximum(codes, 0)], np.nan)
    return pd.Series(out, index=column.index, name=column.name, dtype=object)


def _raw_column_names(p: Path, df: pd.DataFrame, suffix: str, sep: str | None) -> list[str]:
    """The header as written (pandas renames a repeated name ``a`` to ``a.1``), stripped of white space."""
    names = [str(c) for c in df.columns]
    if sep is not None:
        try:
            header = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError):
            header = None
        if header is not None and header.shape[1] == len(names):
            raw = [str(v) for v in header.iloc[0].tolist()]
            # a blank header cell keeps the name pandas gives it ("Unnamed: 3")
            names = [r if r.strip() else n for r, n in zip(raw, names, strict=True)]
    return [n.strip() for n in names]


def _check_unique_names(p: Path, names: list[str]) -> None:
    seen: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        seen.setdefault(name, []).append(i + 1)
    repeated = {n: cols for n, cols in seen.items() if len(cols) > 1}
    if repeated:
        shown = "; ".join(
            f"{n!r} (columns {', '.join(map(str, cols))})" for n, cols in list(repeated.items())[:5]
        )
        raise MipkitValueError(
            f"The file {p} has repeated column names: {shown}. Give every column its own name."
        )


def check_columns(df: pd.DataFrame, columns: list[str] | tuple[str, ...], *, what: str = "table") -> None:
    """Raise a clear error naming every requested column that the table lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        shown = ", ".join(map(repr, list(df.columns)[:12]))
        more = " ..." if df.shape[1] > 12 else ""
        raise MipkitValueError(
            f"Column(s) {', '.join(map(repr, missing))} not found in the {what}. "
            f"Its columns are: {shown}{more}."
        )


def check_not_mostly_numeric(column: pd.Series, name: str, where: str = "") -> None:
    """Refuse a column of numbers spoiled by a few text cells (a typo would otherwise turn every distinct
    number into a category of its own when encoded); ``where`` names the table in the message."""
    values = column.dropna()
    if values.empty or pd.api.types.is_bool_dtype(values):
        return
    numbers = pd.to_numeric(values.astype(str), errors="coerce")
    bad = numbers.isna()
    if bad.any() and (~bad).sum() >= bad.sum():  # mostly numbers, some text
        rows = [str(i + 1) if isinstance(i, (int, np.integer)) else str(i) for i in values.index[bad][:3]]
        cells = ", ".join(repr(v) for v in values[bad].astype(str).unique()[:3])
        raise MipkitValueError(
            f"Column {name!r}{f' of the {where}' if where else ''} holds numbers except for "
            f"{int(bad.sum())} cell(s) such as {cells} (data "
            f"row(s) {', '.join(rows)}); correct them, or leave them empty to mark them missing."
        )


@dataclass(frozen=True)
class Dataset:
    """Features and labels as arrays, with what is needed to map them back.

    Attributes
    ----------
    X : ndarray of shape (n, d), float
    y : ndarray of shape (n,), int class codes 0..K-1
    feature_names : list of str
    classes : ndarray of the original label values, ``classes[y]`` gives them back
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    classes: np.ndarray


def features_target(
    df: pd.DataFrame,
    target: str,
    *,
    encode: str = "none",
    drop: tuple[str, ...] = (),
    dropna: bool = False,
    domain: Mapping | None = None,
    release: bool = False,
) -> Dataset:
    """Split a table into numeric features ``X`` and integer class codes ``y``.

    Parameters
    ----------
    df : DataFrame
    target : str
        The label column.
    encode : {"none", "onehot"}
        ``"none"`` requires every feature to be numeric and names the offending columns otherwise;
        ``"onehot"`` one-hot encodes non-numeric columns (missing values become their own level).
    drop : tuple of str
        Columns to leave out (identifiers, say).
    dropna : bool
        Drop rows with a missing value instead of refusing them.
    domain : mapping, optional
        The features' public domain (:mod:`mipkit.data.domain`): the encoding then comes from it alone
        (:func:`~mipkit.data.domain.encode_features`; ``encode`` is not needed) and a cell outside it is
        refused.
    release : bool
        The arrays feed a private release: without a domain, a non-numeric feature is refused (one-hot
        levels read from the rows, training rows included, would reveal them) instead of encoded.
    """
    check_choice("encode", encode, ("none", "onehot"), owner="features_target")
    if target in drop:
        raise MipkitValueError(
            f"The target column {target!r} cannot also be dropped: it is the label the models learn."
        )
    check_columns(df, [target, *drop])
    feats = df.drop(columns=[target, *drop])
    if feats.shape[1] == 0:
        raise MipkitValueError("The table has no feature columns besides the target.")
    labels = df[target]
    if dropna:
        keep = feats.notna().all(axis=1) & labels.notna()
        feats, labels = feats[keep], labels[keep]
    if labels.isna().any():
        raise MipkitValueError(
            f"The target column {target!r} has {int(labels.isna().sum())} missing value(s)."
        )
    if domain is not None:
        X, names = encode_features(feats, check_domain(domain, list(feats.columns), known=list(df.columns)))
        classes, y = np.unique(labels.to_numpy(), return_inverse=True)
        return Dataset(X=X, y=y.astype(int), feature_names=names, classes=classes)
    non_numeric = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if non_numeric and release:
        raise MipkitValueError(needs_domain_message([str(c) for c in non_numeric]))
    for c in non_numeric:
        check_not_mostly_numeric(feats[c], str(c))
    if non_numeric and encode == "none":
        raise MipkitValueError(
            f"Non-numeric feature column(s) {', '.join(map(repr, non_numeric[:8]))}: encode them "
            "first or pass encode='onehot'."
        )
    if non_numeric:
        feats = pd.get_dummies(feats, columns=non_numeric, dummy_na=True, dtype=float)
        feats = feats.loc[:, feats.std(axis=0) > 0] if feats.shape[0] > 1 else feats
    nan_cols = [c for c in feats.columns if feats[c].isna().any()]
    if nan_cols:
        raise MipkitValueError(
            f"Missing values (NaN) in column(s) {', '.join(map(repr, nan_cols[:8]))}; "
            "impute them or drop those rows (dropna=True)."
        )
    X = feats.to_numpy(dtype=float)
    if not np.all(np.isfinite(X)):
        raise MipkitValueError("The features contain infinite values.")
    classes, y = np.unique(labels.to_numpy(), return_inverse=True)
    return Dataset(X=X, y=y.astype(int), feature_names=[str(c) for c in feats.columns], classes=classes)


def read_dataset(
    data: str | Path | None,
    target: str | None,
    *,
    encode: str = "none",
    drop: tuple[str, ...] = (),
    dropna: bool = False,
    owner: str = "read_dataset",
    domain: Mapping | None = None,
    release: bool = False,
) -> Dataset:
    """Read the table ``data`` and split it with :func:`features_target` (both names required)."""
    required = (("data", data, "a CSV or Parquet file"), ("target", target, "the label column"))
    for name, value, what in required:
        if not value:
            raise MipkitValueError(f"The {name!r} parameter of {owner} is required ({what}).")
    return features_target(
        read_table(data),
        target,
        encode=encode,
        drop=tuple(drop),
        dropna=dropna,
        domain=domain,
        release=release,
    )


def read_configured_dataset(
    config, *, owner: str, domain: Mapping | None = None, release: bool = False
) -> Dataset:
    """:func:`read_dataset` with the table options of a workflow's configuration (its ``data``, ``target``,
    ``encode``, ``drop`` and ``dropna`` attributes), and ``domain`` / ``release`` as given."""
    return read_dataset(
        config.data,
        config.target,
        encode=config.encode,
        drop=tuple(config.drop),
        dropna=config.dropna,
        owner=owner,
        domain=domain,
        release=release,
    )
