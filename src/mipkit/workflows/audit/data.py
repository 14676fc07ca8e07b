"""The records an audit trains its models on: a :class:`~mipkit.workflows._records.LabelledTable` read into
arrays under the audit's settings (encoding, dropped columns and rows, a seeded subsample), with who each
record is (:class:`~mipkit.workflows.audit.config.RecordInfo`) and the checks the membership game needs.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.data.io import Dataset, check_columns, features_target
from mipkit.workflows._records import LabelledTable
from mipkit.workflows.audit.config import LABEL_SLICE, AuditConfig, RecordInfo, check_id_column

__all__ = [
    "MIN_PER_CLASS",
    "check_dataset",
    "data_hash",
    "data_sha256",
    "dataset_and_records",
    "subsample_index",
]

MIN_PER_CLASS = 4
SUBSAMPLE_STREAM = 0x5AB
"""Spawn key of the subsample's random stream, next to the audit's seed."""


def _slice_columns(config: AuditConfig, data: LabelledTable, df: pd.DataFrame | None) -> list[str]:
    """``slice_by`` without the true class (always sliced), checked against the table's columns."""
    cols = [
        c
        for c in config.slice_by
        if c != data.target and not (c == LABEL_SLICE and (df is None or c not in df.columns))
    ]
    if cols and df is None:
        raise MipkitValueError(
            f"The 'slice_by' parameter of audit names column(s) {', '.join(map(repr, cols))}, but the data "
            "passed are arrays without columns; pass a table, or slice by the true class only ('label')."
        )
    if cols:
        check_columns(df, cols)
    return cols


def _table_records(data: LabelledTable, config: AuditConfig) -> tuple[Dataset, RecordInfo]:
    """Read and encode the table, with who each record is and its subgroups (before the subsample).

    The id column (if any) is checked (:func:`~mipkit.workflows.audit.config.check_id_column`) and left out of
    the features; the rows kept after ``dropna`` keep their position in the table (``RecordInfo.rows``).
    """
    df = data.frame()
    target, drop = data.target, tuple(config.drop)
    ids = None
    if data.id_column:
        ids = check_id_column(df, data.id_column)
        drop = drop if data.id_column in drop else (*drop, data.id_column)
    slice_cols = _slice_columns(config, data, df)
    rows = np.arange(len(df))
    if config.dropna and target not in drop:
        check_columns(df, [target, *drop])
        feats = df.drop(columns=[target, *drop])
        keep = (feats.notna().all(axis=1) & df[target].notna()).to_numpy()
        df, rows, ids = df[keep], rows[keep], None if ids is None else ids[keep]
    ds = features_target(df, target, encode=config.encode, drop=drop, dropna=config.dropna)
    if ds.X.shape[0] != rows.size:  # features_target drops exactly the rows dropped above
        raise MipkitValueError("Internal error: the records kept do not match the table's rows.")
    info = RecordInfo(
        rows=rows,
        ids=ids,
        id_column=data.id_column,
        slices={c: df[c].to_numpy() for c in slice_cols},
        slice_features={c: c not in drop for c in slice_cols},
    )
    return ds, info


def dataset_and_records(data: LabelledTable, config: AuditConfig) -> tuple[Dataset, RecordInfo]:
    """The audited arrays and their :class:`~mipkit.workflows.audit.config.RecordInfo`, from a table (read and
    encoded under ``config``) or arrays, subsampled to ``config.max_records`` (seeded) in either case."""
    if data.is_arrays:
        _slice_columns(config, data, None)
        ds, info = data.table, RecordInfo(rows=np.arange(data.table.X.shape[0]))
    else:
        ds, info = _table_records(data, config)
    keep = subsample_index(ds.X.shape[0], config.max_records, seed=config.seed)
    if keep is None:
        return ds, info
    return _take(ds, keep), info.take(keep)


def subsample_index(n: int, max_records: int | None, *, seed: int) -> np.ndarray | None:
    """Sorted positions of a seeded random subset of ``max_records`` of ``n`` records (None: keep all)."""
    if max_records is None or n <= max_records:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([seed, SUBSAMPLE_STREAM]))
    return np.sort(rng.choice(n, size=max_records, replace=False))


def _take(ds: Dataset, keep: np.ndarray) -> Dataset:
    return Dataset(X=ds.X[keep], y=ds.y[keep], feature_names=ds.feature_names, classes=ds.classes)


def check_dataset(ds: Dataset) -> None:
    """At least two classes and :data:`MIN_PER_CLASS` records per class."""
    counts = np.bincount(ds.y, minlength=len(ds.classes))
    if counts.size < 2:
        raise MipkitValueError("The target column has a single class; an audit needs at least two.")
    if counts.min() < MIN_PER_CLASS:
        small = [f"{ds.classes[c]!s} ({counts[c]})" for c in np.flatnonzero(counts < MIN_PER_CLASS)]
        raise MipkitValueError(
            f"Every class needs at least {MIN_PER_CLASS} records so that random halves contain it; "
            f"too few for: {', '.join(small[:6])}."
        )


def data_sha256(ds: Dataset) -> str:
    """SHA-256 (hex) of the encoded features (float64) and labels (int64): identifies the audited arrays in
    ``results.json`` without storing or revealing them."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(ds.X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(ds.y, dtype=np.int64).tobytes())
    return h.hexdigest()


def data_hash(ds: Dataset) -> str:
    """First 16 hex digits of :func:`data_sha256`: names the data in ``config.json``."""
    return data_sha256(ds)[:16]
