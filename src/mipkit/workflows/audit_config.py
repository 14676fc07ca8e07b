"""What defines a model audit: :class:`AuditConfig` (every setting, serialised to ``config.json``) and the
data it reads (table -> arrays, seeded subsample, per-class check).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.attacks.registry import attack_names
from mipkit.data.io import Dataset, features_target, read_table
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS

__all__ = [
    "MIN_PER_CLASS",
    "AuditConfig",
    "check_dataset",
    "data_hash",
    "data_sha256",
    "load_dataset",
    "subsample",
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
        :func:`mipkit.workflows.audit_verdict.verdict`); None states no policy.
    fail_metric : str
        ``"eta"``, ``"auc"`` or ``"tpr@<fpr>"`` with an FPR of ``fprs``.
    scale : bool
        Standardise the features inside the trainer (a ``Pipeline(StandardScaler(), model)``), so that every
        model of the audit, the attacker's reference models included, is trained the same way.
    include_labels : bool
        Keep each record's label in the per-record outputs (``scores.parquet``, the report's most-exposed
        table); off by default, as the labels are real data.
    n_boot : int
        Replicates of the cluster bootstrap behind the headline intervals (docs/theory.md section 11).
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
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise MipkitValueError(
                f"The 'seed' parameter of audit must be a non-negative integer. Got {self.seed!r}."
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
        for f in self.fprs:
            check_interval("fprs", f, 0.0, 1.0, owner=owner)
        for b in self.base_rates:
            check_interval("base_rates", b, 0.0, 1.0, owner=owner)
        if self.certified_eta is not None:
            check_interval("certified_eta", self.certified_eta, 0.0, 0.5, closed="right", owner=owner)
        check_interval("confidence", self.confidence, 0.0, 1.0, owner=owner)
        if not isinstance(self.params, dict):
            raise MipkitValueError(
                f"The 'params' parameter of audit must be a JSON object. Got {self.params!r}."
            )
        n_boot = self.n_boot
        if (
            isinstance(n_boot, bool)
            or not isinstance(n_boot, (int, np.integer))
            or not 100 <= n_boot <= 100_000
        ):
            raise MipkitValueError(
                "The 'n_boot' parameter of audit must be an integer in [100, 100000]. "
                f"Got {n_boot!r} instead."
            )
        from mipkit.workflows.audit_verdict import check_policy

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
        )

    def to_dict(self) -> dict:
        """The fields as JSON types (tuples become lists), as written to ``config.json``."""
        return json.loads(json.dumps(asdict(self), default=str))


# ----------------------------------------------------------------------------------------------- data


def load_dataset(config: AuditConfig) -> Dataset:
    """Read and encode the table named by ``config.data``; subsample to ``max_records`` (seeded)."""
    if not config.data:
        raise MipkitValueError("The 'data' parameter of audit is required (a CSV or Parquet file).")
    if not config.target:
        raise MipkitValueError("The 'target' parameter of audit is required (the label column).")
    df = read_table(config.data)
    ds = features_target(df, config.target, encode=config.encode, drop=config.drop, dropna=config.dropna)
    return subsample(ds, config.max_records, seed=config.seed)


def subsample(ds: Dataset, max_records: int | None, *, seed: int) -> Dataset:
    """A seeded random subset of ``max_records`` records (the dataset itself when it is not larger)."""
    if max_records is None or ds.X.shape[0] <= max_records:
        return ds
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5AB]))
    keep = np.sort(rng.choice(ds.X.shape[0], size=max_records, replace=False))
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
