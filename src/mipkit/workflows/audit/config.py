"""What defines a model audit: :class:`AuditConfig` (every setting, serialised to ``config.json``) and the
data it reads (table -> arrays, seeded subsample, per-class check).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.attacks.registry import attack_names
from mipkit.data.io import Dataset, check_columns, features_target, read_table
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS

__all__ = [
    "MIN_PER_CLASS",
    "AuditConfig",
    "RecordInfo",
    "check_measurement",
    "check_dataset",
    "check_id_column",
    "data_hash",
    "data_sha256",
    "dataset_and_records",
    "load_dataset",
    "load_records",
    "subsample",
    "subsample_index",
]

MIN_PER_CLASS = 4


@dataclass(frozen=True)
class AuditConfig:
    """Everything that defines an audit run (serialised to config.json; the command line maps its flags here).

    Attributes
    ----------
    data : str or None
        Path of a CSV/Parquet table; ``None`` when arrays are passed to :func:`run_audit`.
    target : str
        Label column of the table.
    model : str
        Import path of the trainer class, e.g. ``"sklearn.neural_network.MLPClassifier"``.
    params : dict
        JSON-able constructor arguments of the trainer.
    attacks : tuple of str
        Names of :data:`mipkit.attacks.registry.ATTACKS`: a subset of ``("loss", "lira", "rmia", "ltu")``.
    n_models : int
        ``K``: models trained in total (even, >= 4); each target is attacked with the other ``K - 1``.
    n_targets : int or None
        ``T``: how many of the models serve in turn as the target; default ``min(K, 8)``.
    seed : int
        Seeds the subsample, the membership matrix, every fit and the cross-fitting.
    backend, address, n_jobs
        Where the fits run (``"local"`` joblib processes or ``"ray"``).
    encode, dropna, drop, max_records
        How the table becomes arrays (see :func:`mipkit.data.io.features_target`); ``max_records`` keeps a
        seeded random subsample of that many records.
    fprs, base_rates
        FPRs for TPR-at-FPR and membership base rates for precision.
    ltu_strategy : {"loss", "retrain"}
        ``"loss"`` plays the LTU game on the audit's own fits; ``"retrain"`` calls
        :func:`mipkit.attacks.ltu.ltu_game` (refits for every round: expensive).
    ltu_rounds : int or None
        Rounds for the ``"retrain"`` strategy (default 50).
    certified_eta : float or None
        A MIP certificate to draw next to the measurement when the trainer does not carry one itself.
    confidence : float
        Confidence level of every interval.
    fail_above : float or None
        The policy: the audit's finding is that ``fail_metric`` exceeds this (see
        :func:`mipkit.workflows.audit.verdict.verdict`); None states no policy.
    fail_metric : str
        ``"eta"``, ``"auc"`` or ``"tpr@<fpr>"`` with an FPR of ``fprs``.
    scale : bool
        Standardise the features inside the trainer (a ``Pipeline(StandardScaler(), model)``), so that every
        model of the audit, the attacker's reference models included, is trained the same way.
    include_labels : bool
        Keep each record's label in the per-record outputs (``scores.parquet``, the report's most-exposed
        table, ``results.json``'s ``records.most_exposed``); off by default, as the labels are real data.
    n_boot : int
        Replicates of the cluster bootstrap behind the headline intervals (docs/theory.md section 11).
    id_column : str or None
        A column of unique, non-missing record ids (never a feature), carried into every per-record output.
        Without it the per-record outputs name each record's row in the table as read (``row``).
    slice_by : tuple of str
        Columns whose subgroups get their own AUC, TPR at FPR and eta with intervals
        (:func:`mipkit.metrics.slices.slice_summary`); the true class is always one of them (``"label"`` or
        the target's name ask for it explicitly). A slicing column may be a feature or not (see ``drop``).
    """

    data: str | None = None
    target: str = ""
    model: str = ""
    params: dict = field(default_factory=dict)
    attacks: tuple[str, ...] = ("loss", "lira", "rmia")
    n_models: int = 16
    n_targets: int | None = None
    seed: int = 0
    backend: str = "local"
    address: str | None = None
    n_jobs: int = -1
    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    max_records: int | None = None
    fprs: tuple[float, ...] = DEFAULT_FPRS
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES
    ltu_strategy: str = "loss"
    ltu_rounds: int | None = None
    certified_eta: float | None = None
    confidence: float = 0.95
    fail_above: float | None = None
    fail_metric: str = "eta"
    scale: bool = False
    include_labels: bool = False
    n_boot: int = 1000
    id_column: str | None = None
    slice_by: tuple[str, ...] = ()

    def validate(self) -> AuditConfig:
        """Check every field (clear :class:`MipkitValueError` on bad input) and return a normalised copy."""
        owner = "audit"
        if not self.model:
            raise MipkitValueError(
                "The 'model' parameter of audit is required (an import path of a trainer)."
            )
        known = attack_names()
        attacks = tuple(a.strip().lower() for a in self.attacks if a.strip())
        bad = [a for a in attacks if a not in known]
        if bad or not attacks:
            raise MipkitValueError(
                f"The 'attacks' parameter of audit must be a non-empty subset of {', '.join(known)}. "
                f"Got {', '.join(attacks) if attacks else 'nothing'} instead."
            )
        attacks = tuple(a for a in known if a in attacks)  # canonical (registry) order, no duplicates
        k = self.n_models
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 4 or k % 2:
            raise MipkitValueError(
                f"The 'n_models' parameter of audit must be an even integer >= 4 (each record is IN for half "
                f"of the models). Got {k!r} instead."
            )
        t = min(k, 8) if self.n_targets is None else self.n_targets
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 1 <= t <= k:
            raise MipkitValueError(
                "The 'n_targets' parameter of audit must be an integer in "
                f"[1, n_models={k}]. Got {t!r} instead."
            )
        check_choice("backend", self.backend, ("local", "ray"), owner=owner)
        check_choice("encode", self.encode, ("none", "onehot"), owner=owner)
        check_choice("ltu_strategy", self.ltu_strategy, ("loss", "retrain"), owner=owner)
        if self.max_records is not None and (
            not isinstance(self.max_records, (int, np.integer)) or self.max_records < 8
        ):
            raise MipkitValueError(
                "The 'max_records' parameter of audit must be an integer >= "
                f"8. Got {self.max_records!r} instead."
            )
        if self.ltu_rounds is not None and (
            isinstance(self.ltu_rounds, bool)
            or not isinstance(self.ltu_rounds, (int, np.integer))
            or self.ltu_rounds < 1
        ):
            raise MipkitValueError(
                f"The 'ltu_rounds' parameter of audit must be an integer >= 1. Got {self.ltu_rounds!r}."
            )
        check_measurement(
            fprs=self.fprs,
            base_rates=self.base_rates,
            confidence=self.confidence,
            n_boot=self.n_boot,
            seed=self.seed,
            owner=owner,
        )
        if self.certified_eta is not None:
            check_interval("certified_eta", self.certified_eta, 0.0, 0.5, closed="right", owner=owner)
        if not isinstance(self.params, dict):
            raise MipkitValueError(
                f"The 'params' parameter of audit must be a JSON object. Got {self.params!r}."
            )
        id_column = None if self.id_column is None else str(self.id_column).strip() or None
        if id_column is not None and id_column == self.target:
            raise MipkitValueError(
                f"The 'id_column' parameter of audit names the target column {id_column!r}; the ids must be "
                "another column."
            )
        slices = [self.slice_by] if isinstance(self.slice_by, str) else list(self.slice_by or ())
        names = (c.strip() for item in slices for c in str(item).split(","))
        slice_by = tuple(dict.fromkeys(c for c in names if c))
        from mipkit.workflows.audit.verdict import check_policy

        fprs = tuple(float(f) for f in self.fprs)
        metric = check_policy(self.fail_metric, self.fail_above, fprs)
        return replace(
            self,
            attacks=attacks,
            fail_above=None if self.fail_above is None else float(self.fail_above),
            fail_metric=metric or str(self.fail_metric or "eta"),
            scale=bool(self.scale),
            include_labels=bool(self.include_labels),
            n_targets=int(t),
            fprs=tuple(float(f) for f in self.fprs),
            base_rates=tuple(float(b) for b in self.base_rates),
            drop=tuple(self.drop),
            id_column=id_column,
            slice_by=slice_by,
        )

    def to_dict(self) -> dict:
        """The fields as JSON types (tuples become lists), as written to ``config.json``."""
        return json.loads(json.dumps(asdict(self), default=str))


# ----------------------------------------------------------------------------------------------- data


LABEL_SLICE = "label"
"""``slice_by`` name of the true class (when the table has no column of that name); the target's name works
too. The true class is always sliced."""
ROW_COLUMN = "row"


@dataclass(frozen=True)
class RecordInfo:
    """Who each audited record is, and its values of the slicing columns (aligned with the audited arrays).

    Attributes
    ----------
    rows : int array of shape (n,)
        0-based position of each record in the table as read, before ``dropna`` and the subsample
        (``pandas.read_csv(file).iloc[row]``; line ``row + 2`` of a CSV with a header); for arrays, the
        position in the arrays passed.
    ids : array of shape (n,) or None
        The values of ``id_column``.
    id_column : str or None
    slices : dict column -> array of shape (n,)
        Per-record values of the ``slice_by`` columns (the true class is added by the audit).
    slice_features : dict column -> bool
        Whether each slicing column is a feature of the models.
    """

    rows: np.ndarray
    ids: np.ndarray | None = None
    id_column: str | None = None
    slices: dict = field(default_factory=dict)
    slice_features: dict = field(default_factory=dict)

    def take(self, keep: np.ndarray) -> RecordInfo:
        """The records at positions ``keep``."""
        return replace(
            self,
            rows=self.rows[keep],
            ids=None if self.ids is None else self.ids[keep],
            slices={k: v[keep] for k, v in self.slices.items()},
        )

    def frame(self) -> pd.DataFrame:
        """The identity columns of the per-record outputs: ``row`` and, with an id column, the ids under the
        column's own name."""
        cols: dict = {ROW_COLUMN: self.rows.astype(np.int64)}
        if self.ids is not None and self.id_column is not None:
            cols[self.id_column] = self.ids
        return pd.DataFrame(cols)


def check_measurement(
    *,
    fprs: Sequence[float],
    base_rates: Sequence[float],
    confidence: float,
    n_boot: int,
    seed: int,
    owner: str = "audit",
) -> None:
    """Check the measurement settings every model audit shares (``audit``, ``audit-fitted``,
    ``audit-scores``): FPRs and base rates in (0, 1), a confidence in (0, 1), ``n_boot`` in [100, 100000]
    and a non-negative integer seed. Called before anything is fitted or scored."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise MipkitValueError(
            f"The 'seed' parameter of {owner} must be a non-negative integer. Got {seed!r}."
        )
    if not len(fprs):
        raise MipkitValueError(f"The 'fprs' parameter of {owner} must list at least one FPR.")
    for f in fprs:
        check_interval("fprs", f, 0.0, 1.0, owner=owner)
    for b in base_rates:
        check_interval("base_rates", b, 0.0, 1.0, owner=owner)
    check_interval("confidence", confidence, 0.0, 1.0, owner=owner)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or not 100 <= n_boot <= 100_000:
        raise MipkitValueError(
            f"The 'n_boot' parameter of {owner} must be an integer in [100, 100000]. Got {n_boot!r} instead."
        )


def check_id_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """The values of the id column, refused when the column is absent, has missing values or repeats one."""
    check_columns(df, [column])
    ids = df[column]
    missing = int(ids.isna().sum())
    if missing:
        where = ", ".join(str(i) for i in np.flatnonzero(ids.isna().to_numpy())[:3])
        raise MipkitValueError(
            f"The id column {column!r} has {missing} missing value(s) (rows {where}); every record needs "
            "an id."
        )
    dup = ids.duplicated(keep=False).to_numpy()
    if dup.any():
        shown = ", ".join(repr(v) for v in pd.unique(ids[dup])[:3])
        raise MipkitValueError(
            f"The id column {column!r} repeats {int(ids[dup].nunique())} value(s) such as {shown} "
            f"({int(dup.sum())} rows); ids must be unique."
        )
    values = ids.to_numpy()
    return values.astype(str) if values.dtype == object else values


def _slice_columns(config: AuditConfig, df: pd.DataFrame | None) -> list[str]:
    """``slice_by`` without the true class (always sliced), checked against the table's columns."""
    cols = [
        c
        for c in config.slice_by
        if c != config.target and not (c == LABEL_SLICE and (df is None or c not in df.columns))
    ]
    if cols and df is None:
        raise MipkitValueError(
            f"The 'slice_by' parameter of audit names column(s) {', '.join(map(repr, cols))}, but the data "
            "passed are arrays without columns; pass a table, or slice by the true class only ('label')."
        )
    if cols:
        check_columns(df, cols)
    return cols


def load_records(config: AuditConfig, frame: pd.DataFrame | None = None) -> tuple[Dataset, RecordInfo]:
    """Read and encode the table (``config.data``, or ``frame``), with who each record is and its subgroups.

    The id column (if any) is checked (:func:`check_id_column`) and left out of the features; the rows kept
    after ``dropna`` and the seeded subsample keep their position in the table (``RecordInfo.rows``).
    """
    if frame is None:
        if not config.data:
            raise MipkitValueError("The 'data' parameter of audit is required (a CSV or Parquet file).")
        if not config.target:
            raise MipkitValueError("The 'target' parameter of audit is required (the label column).")
        df = read_table(config.data)
    else:
        if not config.target:
            raise MipkitValueError("The 'target' parameter of audit is required (the label column).")
        df = frame
    df = df.reset_index(drop=True)
    drop = tuple(config.drop)
    ids = None
    if config.id_column:
        ids = check_id_column(df, config.id_column)
        drop = drop if config.id_column in drop else (*drop, config.id_column)
    slice_cols = _slice_columns(config, df)
    rows = np.arange(len(df))
    if config.dropna and config.target not in drop:
        check_columns(df, [config.target, *drop])
        feats = df.drop(columns=[config.target, *drop])
        keep = (feats.notna().all(axis=1) & df[config.target].notna()).to_numpy()
        df, rows, ids = df[keep], rows[keep], None if ids is None else ids[keep]
    ds = features_target(df, config.target, encode=config.encode, drop=drop, dropna=config.dropna)
    if ds.X.shape[0] != rows.size:  # features_target drops exactly the rows dropped above
        raise MipkitValueError("Internal error: the records kept do not match the table's rows.")
    info = RecordInfo(
        rows=rows,
        ids=ids,
        id_column=config.id_column,
        slices={c: df[c].to_numpy() for c in slice_cols},
        slice_features={c: c not in drop for c in slice_cols},
    )
    keep = subsample_index(ds.X.shape[0], config.max_records, seed=config.seed)
    if keep is None:
        return ds, info
    return _take(ds, keep), info.take(keep)


def dataset_and_records(
    config: AuditConfig, dataset: Dataset | pd.DataFrame | None = None
) -> tuple[Dataset, RecordInfo]:
    """The audited arrays and their :class:`RecordInfo`: from ``config.data``, a DataFrame or a Dataset
    (seeded subsample to ``max_records`` in every case)."""
    if dataset is None or isinstance(dataset, pd.DataFrame):
        return load_records(config, frame=dataset)
    if config.id_column:
        raise MipkitValueError(
            f"The 'id_column' parameter of audit names column {config.id_column!r}, but the data passed are "
            "arrays without columns; pass a table."
        )
    _slice_columns(config, None)
    info = RecordInfo(rows=np.arange(dataset.X.shape[0]))
    keep = subsample_index(dataset.X.shape[0], config.max_records, seed=config.seed)
    if keep is None:
        return dataset, info
    return _take(dataset, keep), info.take(keep)


def load_dataset(config: AuditConfig) -> Dataset:
    """Read and encode the table named by ``config.data``; subsample to ``max_records`` (seeded)."""
    return load_records(config)[0]


def subsample_index(n: int, max_records: int | None, *, seed: int) -> np.ndarray | None:
    """Sorted positions of a seeded random subset of ``max_records`` of ``n`` records (None: keep all)."""
    if max_records is None or n <= max_records:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5AB]))
    return np.sort(rng.choice(n, size=max_records, replace=False))


def _take(ds: Dataset, keep: np.ndarray) -> Dataset:
    return Dataset(X=ds.X[keep], y=ds.y[keep], feature_names=ds.feature_names, classes=ds.classes)


def subsample(ds: Dataset, max_records: int | None, *, seed: int) -> Dataset:
    """A seeded random subset of ``max_records`` records (the dataset itself when it is not larger)."""
    keep = subsample_index(ds.X.shape[0], max_records, seed=seed)
    return ds if keep is None else _take(ds, keep)


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
