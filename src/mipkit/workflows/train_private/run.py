"""Train a model with DP-SGD to a risk target on a table: held-out split, fit, certificate, run folder.

:func:`train_private` reads the table as ``mipkit audit`` does (:func:`mipkit.data.io.features_target`),
except that its encoding comes from the public domain of the features (``domain``; one-hot levels read from
the rows would reveal a level that one training row alone holds) and without one every feature must be
numeric; it holds out a stratified, secret share of the rows for the test accuracy (drawn from OS entropy like
the noise, :func:`held_out_generator`: with the public seed anyone holding the table could recompute which
rows trained the model, and one row added to the table reshuffles its whole class), optionally standardises
the features with the mean and standard deviation *of the held-out rows* (so the training rows influence
nothing but the DP-SGD run and the certificate covers everything they influence), fits a
:class:`~mipkit.trainers.DPSGDClassifier` calibrated to the target for the exact sample rate and number of
steps of the run, and writes the run folder: ``model.joblib`` (a scikit-learn pipeline over the table's raw
columns: :class:`~mipkit.data.encoder.DomainEncoder`, the scaler and the classifier), ``certificate.json``,
with ``record_split`` ``split.parquet`` (which rows, by position and with ``id_column`` by id, trained the
model and which were held out; no feature, no label, but exactly the membership the certificate protects: as
private as the data), ``results.json`` (kind ``"train-private"``), ``report.md`` and ``report.html`` (the
certificate's trade-off curve, the held-out accuracy). With ``audit``, the fitted model is audited against its
certificate on its training rows versus the held-out rows
(:func:`mipkit.workflows.train_private.records.audit_against_certificate`); its run folder ``audit/``, whose
per-record scores carry the split, only with ``record_split``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._progress import Progress
from mipkit._validation import MipkitValueError, check_interval
from mipkit.data.io import Dataset
from mipkit.workflows.train_private.config import TrainPrivateConfig
from mipkit.workflows.train_private.data import TrainingTable
from mipkit.workflows.train_private.records import AUDIT_DIR, SPLIT_FILE
from mipkit.workflows.train_private.result import TrainPrivateResult

__all__ = ["held_out_generator", "split_held_out", "train_private"]

#: Key of the held-out split's stream of a noise seed (apart from the DP-SGD noise's).
_SPLIT_STREAM = 0x7E57


def held_out_generator(noise_seed: int | None) -> np.random.Generator:
    """The generator of the held-out split: protective randomness (which rows trained the model is what a
    membership attacker guesses), from OS entropy unless ``noise_seed`` is given
    (:func:`mipkit._random.noise_generator`)."""
    from mipkit._random import noise_generator

    return noise_generator(noise_seed, stream=(_SPLIT_STREAM,))


def split_held_out(
    y: np.ndarray, test_size: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified split: ``(train_idx, test_idx)``, each class split in the proportion ``test_size`` (at least
    one row of each class on each side), drawn from ``rng`` (:func:`held_out_generator`)."""
    frac = check_interval("test_size", test_size, 0.0, 1.0, owner="train_private")
    test = []
    for c in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == c))
        if rows.size < 2:
            raise MipkitValueError(
                f"Class {c!r} has {rows.size} row(s); a held-out split needs two per class."
            )
        k = min(max(1, int(round(frac * rows.size))), rows.size - 1)
        test.append(rows[:k])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(y.size), test_idx)
    return train_idx, test_idx


def _scaler(X_test: np.ndarray, scale: bool) -> Any:
    """A fitted StandardScaler on the held-out rows (constant columns keep scale 1), or None."""
    if not scale:
        return None
    from sklearn.preprocessing import StandardScaler

    return StandardScaler().fit(X_test)


def _arrays(
    data: Any, config: TrainPrivateConfig
) -> tuple[Dataset, np.ndarray, np.ndarray | None, dict, Any]:
    """``(dataset, rows, ids, domain, encoder)``: the arrays of ``data`` (a table read with its public domain,
    or a :class:`~mipkit.data.io.Dataset`), each record's position and id, where the encoding came from, and
    the fitted :class:`~mipkit.data.encoder.DomainEncoder` that encodes the table's raw columns (None for
    arrays)."""
    if isinstance(data, Dataset):
        return data, np.arange(data.X.shape[0]), None, {"source": "arrays given by the caller"}, None
    if not isinstance(data, TrainingTable):
        raise MipkitValueError(
            "The 'data' parameter of train_private must be a TrainingTable (a table, its label column and "
            f"its public domain) or a Dataset of arrays. Got {type(data).__name__} instead."
        )
    from mipkit.data.domain import domain_provenance, load_domain
    from mipkit.data.encoder import DomainEncoder
    from mipkit.workflows.train_private.records import read_records

    domain, path = load_domain(data.domain)
    dataset, rows, ids, columns = read_records(data, config, domain)
    encoder = DomainEncoder(domain, columns).fit()  # without a domain: numeric columns by name, as they are
    return dataset, rows, ids, domain_provenance(domain, path), encoder


def _held_out(test_idx: np.ndarray, config: TrainPrivateConfig, data: Any, scaled: bool) -> dict:
    """What the run says of its held-out rows: how many, the file naming them, how they were drawn."""
    secret = "OS entropy" if config.noise_seed is None else "from the noise seed"
    scaling = "features standardised with the held-out rows' mean and sd" if scaled else "no scaling"
    return {
        "rows": int(test_idx.size),
        "file": SPLIT_FILE if config.record_split else None,
        "id_column": getattr(data, "id_column", None),
        "fraction": float(config.test_size),
        "method": f"stratified random split by class (secret: {secret}); {scaling}",
    }


def _fit(
    X: np.ndarray, y: np.ndarray, config: TrainPrivateConfig, progress: Progress | None, clock: float
) -> tuple[Any, np.ndarray, np.ndarray, dict]:
    """Split, scale and train: ``(pipeline, train_idx, test_idx, figures)`` with the held-out accuracy, the
    majority rate, whether the features were scaled and the times taken since ``clock``. The pipeline reads
    the encoded arrays (scaler, classifier)."""
    from sklearn.pipeline import Pipeline

    if np.unique(y).size < 2:
        raise MipkitValueError("The target column has a single class; a classifier needs at least two.")
    train_idx, test_idx = split_held_out(y, config.test_size, held_out_generator(config.noise_seed))
    clf = config.classifier()
    clf.plan(train_idx.size)  # refuses bad settings and unreachable targets before any work
    scaler = _scaler(X[test_idx], config.scale)
    Xtr = X[train_idx] if scaler is None else scaler.transform(X[train_idx])
    Xte = X[test_idx] if scaler is None else scaler.transform(X[test_idx])
    prepared = time.perf_counter()
    clf.fit(Xtr, y[train_idx], progress=progress)
    trained = time.perf_counter()
    figures = {
        "test_accuracy": float(np.mean(clf.predict(Xte) == y[test_idx])),
        "majority_rate": float(np.bincount(y[test_idx]).max() / test_idx.size),
        "scaled": scaler is not None,
        "seconds": {"prepare": prepared - clock, "train": trained - prepared},
    }
    model = Pipeline([("scale", scaler if scaler is not None else "passthrough"), ("dpsgd", clf)])
    return model, train_idx, test_idx, figures


def _released(encoder: Any, arrays_model: Any) -> Any:
    """The released model: a Pipeline that reads the table's raw columns (the encoder), then the scaler and
    the classifier, so that it is audited and used as it is."""
    from sklearn.pipeline import Pipeline

    return Pipeline([("encode", encoder), *arrays_model.steps])


def train_private(
    data: TrainingTable | Dataset,
    config: TrainPrivateConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> TrainPrivateResult:
    """Split, scale, train with DP-SGD, evaluate and (with ``out``) write the run folder.

    Parameters
    ----------
    data : TrainingTable or Dataset
        The table with its label column, public domain and id column, or arrays already encoded.
    config : TrainPrivateConfig, optional
        Every setting of the run; default ``TrainPrivateConfig()``.
    out : path, optional
        Run folder (:meth:`TrainPrivateResult.write`); with ``audit`` and ``record_split`` the audit's run
        folder ``audit/`` is written inside it.
    progress : Progress, optional
        ``progress("DP-SGD steps", done, total)`` after each DP-SGD step (the fit's keyword of the same
        name).
    """
    cfg = TrainPrivateConfig() if config is None else config
    started = time.perf_counter()
    dataset, rows, ids, domain, encoder = _arrays(data, cfg)
    arrays_model, train_idx, test_idx, figures = _fit(dataset.X, dataset.y, cfg, progress, started)
    from mipkit.workflows.train_private.records import audit_against_certificate, split_frame

    clf = arrays_model.named_steps["dpsgd"]
    labels = np.asarray(dataset.y)
    if dataset.classes is not None and len(dataset.classes) == clf.classes_.size:
        clf.classes_ = np.asarray(dataset.classes)  # the model predicts the table's own labels
        labels = clf.classes_[dataset.y]
    model = arrays_model if encoder is None else _released(encoder, arrays_model)
    audit = None
    if cfg.audit:
        audit = audit_against_certificate(
            arrays_model,
            dataset.X,
            labels,
            train_idx,
            test_idx,
            clf.certificate_.certified,
            # the audit's per-record scores and most exposed members give the split away: written with it
            out_dir=None if out is None or not cfg.record_split else Path(out) / AUDIT_DIR,
            seed=cfg.seed,
        )
    result = TrainPrivateResult(
        model=model,
        certificate=clf.certificate_,
        test_accuracy=figures["test_accuracy"],
        majority_rate=figures["majority_rate"],
        held_out=_held_out(test_idx, cfg, data, figures["scaled"]),
        config=cfg,
        seconds=figures["seconds"],
        data=data if isinstance(data, TrainingTable) else None,
        run_dir=None if out is None else Path(out),
        domain=domain,
        split=split_frame(rows, ids, train_idx, test_idx),
        audit=audit,
    )
    if out is not None:
        result.write(out)
    return result
