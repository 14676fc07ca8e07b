"""Audit a trainer in one training run (Steinke, Nasr & Jagielski, NeurIPS 2023): canaries, guesses, a bound.

1. ``m`` canaries are drawn from the table's rows (by default with their label changed to another class at
   random: "mislabeled" canaries, which a model can only fit by memorising them). Each is included in the
   training set independently with probability 1/2; every other row is always included.
2. One model is trained. A trainer with a ``dataset_size`` parameter (:class:`~mipkit.trainers.
   DPSGDClassifier`) gets the public size ``n_rest + m``, so its sample rate and number of steps do not
   depend on how many canaries went in and the certificate describes the run exactly.
3. Each canary is scored by the LOSS attack (minus its cross-entropy under the model, on its canary label);
   the auditor guesses "in" for the highest scores and "out" for the lowest, abstaining on the rest, with
   the guess counts of a grid fixed in advance (Bonferroni over the grid).
4. :func:`mipkit.metrics.dp_lower_bounds.one_run_lower_bound` turns the correct guesses into an epsilon
   lower bound at ``delta``. Canaries are added or removed, so it is compared with the certificate's
   add-or-remove epsilon at the same ``delta``: a lower bound above it is a violation (a bug in the
   training or the accounting).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._progress import Progress, report
from mipkit._random import spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.data.io import Dataset
from mipkit.workflows._records import LabelledTable
from mipkit.workflows.audit_one_run.config import AuditOneRunConfig
from mipkit.workflows.audit_one_run.result import AuditOneRunResult

__all__ = ["audit_one_run"]

OWNER = "audit_one_run"
CANARY_STREAM = 0x0E1
"""Spawn key of the canaries' random stream, next to the seed."""
TEST_NOTE = "LOSS attack: log-probability of each canary's label (higher: more likely included)"


@dataclass(frozen=True)
class _Canaries:
    """The canary rows, their (possibly changed) labels and the inclusion coin of each."""

    rows: np.ndarray
    labels: np.ndarray
    included: np.ndarray


def audit_one_run(
    data: LabelledTable | Dataset,
    config: AuditOneRunConfig | None = None,
    *,
    run_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> AuditOneRunResult:
    """Audit the trainer of ``config`` in one training run on the records ``data`` (module docstring).

    Parameters
    ----------
    data : LabelledTable or Dataset
        The table with its label column (:class:`~mipkit.workflows._records.LabelledTable`; an id column is
        left out of the features), or arrays (:class:`~mipkit.data.io.Dataset`).
    config : AuditOneRunConfig, optional
        Every setting (default ``AuditOneRunConfig()``).
    run_dir : path, optional
        Run folder: ``results.json`` is written there (:meth:`AuditOneRunResult.write`).
    progress : Progress, optional
        ``progress("training run", done, 1)`` over the one fit.

    Returns
    -------
    AuditOneRunResult
    """
    clock = time.perf_counter()
    config = AuditOneRunConfig() if config is None else config
    if not isinstance(config, AuditOneRunConfig):
        raise MipkitValueError(
            f"The config of audit_one_run must be an AuditOneRunConfig. Got {type(config).__name__}."
        )
    data = LabelledTable.of(data)
    dataset = data.dataset(encode=config.encode, drop=config.drop, dropna=config.dropna)
    rng = np.random.default_rng(np.random.SeedSequence([int(config.seed), CANARY_STREAM]))
    canaries = _canaries(dataset, config, rng)
    report(progress, "training run", 0, 1)
    est, n_train, scores = _train_and_score(dataset, canaries, config, rng)
    report(progress, "training run", 1, 1)
    result = _result(est, scores, canaries, n_train, config, data, time.perf_counter() - clock)
    if run_dir is not None:
        result.write(run_dir)
    return result


def _canaries(ds: Dataset, config: AuditOneRunConfig, rng: np.random.Generator) -> _Canaries:
    """Canary rows, their (possibly changed) labels, and the inclusion coin of each."""
    n, n_classes = ds.y.size, len(ds.classes)
    if n_classes < 2:
        raise MipkitValueError("The target column has a single class; a classifier needs at least two.")
    m = config.canaries
    if m > n // 2:
        raise MipkitValueError(
            f"The 'canaries' parameter of audit_one_run must be at most half the rows ({n // 2}). Got {m}."
        )
    rows = np.sort(rng.choice(n, size=m, replace=False))
    labels = ds.y[rows].copy()
    if config.canary_kind == "mislabeled":
        labels = (labels + rng.integers(1, n_classes, size=m)) % n_classes
    included = rng.random(m) < 0.5
    return _Canaries(rows=rows, labels=labels, included=included)


def _train_and_score(
    ds: Dataset, canaries: _Canaries, config: AuditOneRunConfig, rng: np.random.Generator
) -> tuple[Any, int, np.ndarray]:
    """Train one model on the other rows and the included canaries; score every canary by minus its loss.

    Returns the fitted estimator, the number of training records and the scores."""
    from mipkit.game.trainers import predict_full_proba, resolve_trainer

    X = ds.X
    if config.scale:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rows, labels, included = canaries.rows, canaries.labels, canaries.included
    rest = np.setdiff1d(np.arange(ds.y.size), rows)
    X_train = np.vstack([X[rest], X[rows[included]]])
    y_train = np.concatenate([ds.y[rest], labels[included]])
    est = resolve_trainer(config.model, config.params).build(spawn_seeds(rng, 1)[0])
    params = est.get_params() if hasattr(est, "get_params") else {}
    if "dataset_size" in params and params["dataset_size"] is None:
        est.set_params(dataset_size=int(rest.size + rows.size))
    est.fit(X_train, y_train)
    proba = predict_full_proba(est, X[rows], len(ds.classes))
    scores = np.log(np.clip(proba[np.arange(rows.size), labels], 1e-300, None))  # minus the loss
    return est, int(y_train.size), scores


def _certified_epsilon(cert: Any, delta: float) -> float | None:
    """The certificate's add-or-remove epsilon at ``delta`` (the replace-one one where that is all it has)."""
    if cert is not None and callable(getattr(cert, "curve", None)):  # DPSGDCertificate: either relation
        return float(cert.curve("add_remove").epsilon_for_delta(delta))
    if getattr(cert, "tradeoff_curve", None) is not None:  # the protocol's replace-one curve (larger)
        return float(cert.tradeoff_curve.epsilon_for_delta(delta))
    return None


def _result(
    est: Any,
    scores: np.ndarray,
    canaries: _Canaries,
    n_train: int,
    config: AuditOneRunConfig,
    data: LabelledTable,
    seconds: float,
) -> AuditOneRunResult:
    """The bound at the configured (or the certificate's) delta, beside the certified epsilon."""
    from mipkit.metrics.dp_lower_bounds import one_run_lower_bound

    cert = getattr(est, "certificate_", None)
    delta = config.delta
    if delta is None:
        delta = float(getattr(cert, "delta", 1e-5) or 1e-5)
    bound = one_run_lower_bound(
        scores,
        canaries.included,
        delta=delta,
        confidence=config.confidence,
        k_plus=config.k_plus,
        k_minus=config.k_minus,
    )
    return AuditOneRunResult(
        bound=bound,
        certified_epsilon=_certified_epsilon(cert, delta),
        certificate=None if cert is None else cert.to_dict(),
        n_train=n_train,
        included=int(canaries.included.sum()),
        test_note=TEST_NOTE,
        config=config,
        seconds=seconds,
        data_source=data.describe(),
    )
