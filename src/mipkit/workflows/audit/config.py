"""The settings of a model audit: :class:`AuditConfig` (every setting, checked when built and serialised to
``config.json``); and what every model audit shares: :func:`check_measurement` (the measurement settings),
:class:`RecordInfo` and :func:`check_id_column` (who each audited record is).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.attacks.registry import attack_names
from mipkit.data.io import check_columns
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows._shape import VerbConfig
from mipkit.workflows.audit.verdict import check_policy

__all__ = [
    "DEFAULT_MODEL",
    "LABEL_SLICE",
    "ROW_COLUMN",
    "AuditConfig",
    "RecordInfo",
    "check_id_column",
    "check_measurement",
]

OWNER = "audit"
DEFAULT_MODEL = "sklearn.linear_model.LogisticRegression"
"""The trainer audited when the configuration names none."""
MAX_DEFAULT_TARGETS = 8
LABEL_SLICE = "label"
"""``slice_by`` name of the true class (when the table has no column of that name); the target's name works
too. The true class is always sliced."""
ROW_COLUMN = "row"


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


@dataclass(frozen=True)
class AuditConfig(VerbConfig):
    """Every setting of a model audit, checked when built (serialised to ``config.json``; the command line
    maps its flags here). The records audited are the verb's ``data``
    (:class:`~mipkit.workflows._records.LabelledTable`), not a setting.

    Attributes
    ----------
    model : str
        Import path of the trainer class, e.g. ``"sklearn.neural_network.MLPClassifier"`` (default
        :data:`DEFAULT_MODEL`).
    params : dict
        JSON-able constructor arguments of the trainer.
    attacks : tuple of str
        Names of :data:`mipkit.attacks.registry.ATTACKS`: a subset of ``("loss", "lira", "rmia", "ltu")``,
        kept in the registry's order.
    n_models : int
        ``K``: models trained in total (even, >= 4); each target is attacked with the other ``K - 1``.
    n_targets : int or None
        ``T``: how many of the models serve in turn as the target; None: ``min(K, 8)``
        (:attr:`n_targets_used`).
    seed : int
        Seeds the subsample, the membership matrix, every fit and the cross-fitting.
    backend, address, n_jobs
        Where the fits run (``"local"`` joblib processes or ``"ray"``).
    encode, dropna, drop, max_records
        How a table becomes arrays (see :func:`mipkit.data.io.features_target`); ``max_records`` keeps a
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
    slice_by : tuple of str
        Columns whose subgroups get their own AUC, TPR at FPR and eta with intervals
        (:func:`mipkit.metrics.slices.slice_summary`); the true class is always one of them (``"label"`` or
        the target's name ask for it explicitly). A slicing column may be a feature or not (see ``drop``);
        a comma-separated string is split.

    Raises
    ------
    MipkitValueError
        When built with a bad setting (one line saying which and what to pass).
    """

    model: str = DEFAULT_MODEL
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
    slice_by: tuple[str, ...] = ()

    def check(self) -> None:
        """Check every setting and normalise it (canonical attack order, tuples of floats and names)."""
        self._check_trainer()
        self._check_counts()
        check_choice("backend", self.backend, ("local", "ray"), owner=OWNER)
        check_choice("encode", self.encode, ("none", "onehot"), owner=OWNER)
        check_choice("ltu_strategy", self.ltu_strategy, ("loss", "retrain"), owner=OWNER)
        check_measurement(
            fprs=self.fprs,
            base_rates=self.base_rates,
            confidence=self.confidence,
            n_boot=self.n_boot,
            seed=self.seed,
            owner=OWNER,
        )
        if self.certified_eta is not None:
            check_interval("certified_eta", self.certified_eta, 0.0, 0.5, closed="right", owner=OWNER)
        self._normalise()

    def _check_trainer(self) -> None:
        """The trainer's import path and parameters, and the attacks (a subset of the registry's)."""
        if not isinstance(self.model, str) or not self.model.strip():
            raise MipkitValueError(
                "The 'model' parameter of audit must be the import path of a trainer (e.g. "
                f"{DEFAULT_MODEL}). Got {self.model!r} instead."
            )
        if not isinstance(self.params, dict):
            raise MipkitValueError(
                f"The 'params' parameter of audit must be a JSON object. Got {self.params!r}."
            )
        known = attack_names()
        names = (self.attacks,) if isinstance(self.attacks, str) else tuple(self.attacks or ())
        attacks = tuple(str(a).strip().lower() for a in names if str(a).strip())
        bad = [a for a in attacks if a not in known]
        if bad or not attacks:
            raise MipkitValueError(
                f"The 'attacks' parameter of audit must be a non-empty subset of {', '.join(known)}. "
                f"Got {', '.join(attacks) if attacks else 'nothing'} instead."
            )
        canonical = tuple(a for a in known if a in attacks)  # registry order, no duplicates
        object.__setattr__(self, "attacks", canonical)

    def _check_counts(self) -> None:
        """Models, targets, records, LTU rounds and parallel fits: integers in range."""
        k = self.n_models
        if not _is_int(k) or k < 4 or k % 2:
            raise MipkitValueError(
                f"The 'n_models' parameter of audit must be an even integer >= 4 (each record is IN for half "
                f"of the models). Got {k!r} instead."
            )
        t = self.n_targets
        if t is not None and (not _is_int(t) or not 1 <= t <= k):
            raise MipkitValueError(
                "The 'n_targets' parameter of audit must be an integer in "
                f"[1, n_models={k}]. Got {t!r} instead."
            )
        if self.max_records is not None and (not _is_int(self.max_records) or self.max_records < 8):
            raise MipkitValueError(
                "The 'max_records' parameter of audit must be an integer >= "
                f"8. Got {self.max_records!r} instead."
            )
        if self.ltu_rounds is not None and (not _is_int(self.ltu_rounds) or self.ltu_rounds < 1):
            raise MipkitValueError(
                f"The 'ltu_rounds' parameter of audit must be an integer >= 1. Got {self.ltu_rounds!r}."
            )
        if not _is_int(self.n_jobs) or self.n_jobs == 0:
            raise MipkitValueError(
                "The 'n_jobs' parameter of audit must be a non-zero integer (-1: all cores). "
                f"Got {self.n_jobs!r} instead."
            )

    def _normalise(self) -> None:
        """Tuples of floats and names, the policy's canonical metric, plain bools."""
        fprs = tuple(float(f) for f in self.fprs)
        metric = check_policy(self.fail_metric, self.fail_above, fprs)
        slices = [self.slice_by] if isinstance(self.slice_by, str) else list(self.slice_by or ())
        names = (c.strip() for item in slices for c in str(item).split(","))
        drop = [self.drop] if isinstance(self.drop, str) else list(self.drop or ())
        values = {
            "fprs": fprs,
            "base_rates": tuple(float(b) for b in self.base_rates),
            "fail_above": None if self.fail_above is None else float(self.fail_above),
            "fail_metric": metric or str(self.fail_metric or "eta"),
            "scale": bool(self.scale),
            "include_labels": bool(self.include_labels),
            "dropna": bool(self.dropna),
            "drop": tuple(str(c) for c in drop),
            "slice_by": tuple(dict.fromkeys(c for c in names if c)),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def n_targets_used(self) -> int:
        """``T``: :attr:`n_targets`, or ``min(n_models, 8)`` when it is None."""
        return min(self.n_models, MAX_DEFAULT_TARGETS) if self.n_targets is None else int(self.n_targets)

    def to_dict(self) -> dict:
        """The settings as JSON types (tuples become lists), as written to ``config.json``."""
        return json.loads(json.dumps(asdict(self), default=str))


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


# --------------------------------------------------------------------- who each audited record is


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
