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
steps of the run, and writes the run folder: ``model.joblib`` (a scikit-learn pipeline: the scaler and the
classifier), ``certificate.json``, with ``record_split`` ``split.parquet`` (which rows, by position and with
``id_column`` by id, trained the model and which were held out; no feature, no label, but exactly the
membership the certificate protects: as private as the data), ``results.json`` (kind
``"train-private"``), ``report.md`` and ``report.html`` (the certificate's trade-off curve, the held-out
accuracy). With ``audit``, the fitted model is audited against its certificate on its training rows versus
the held-out rows (:func:`mipkit.workflows.train_private.records.audit_against_certificate`); its run folder
``audit/``, whose per-record scores carry the split, only with ``record_split``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.data.domain import domain_provenance, load_domain
from mipkit.data.io import Dataset
from mipkit.workflows.train_private.records import AUDIT_DIR, SPLIT_FILE

__all__ = ["TrainPrivateConfig", "TrainPrivateResult", "split_held_out", "train_private"]

MODEL_FILE = "model.joblib"
CERTIFICATE_FILE = "certificate.json"
REPORT_FILE = "report.md"
HTML_FILE = "report.html"


@dataclass(frozen=True)
class TrainPrivateConfig:
    """Everything that defines a private training run (the command line maps its flags here).

    Attributes
    ----------
    data, target, encode, dropna, drop
        The table and how it becomes arrays, as for ``mipkit audit``, except that a non-numeric feature
        needs ``domain``.
    domain : str, path or dict, optional
        The features' public domain (a JSON file or its mapping, :mod:`mipkit.data.domain`): the encoding
        comes from it alone, never from the rows. Without it every feature must be numeric.
    risk_target : dict or None
        ``{"name": ..., <parameters>, "value": ...}`` (``target_from_dict`` form), or None with
        ``noise_multiplier``.
    noise_multiplier : float or None
    epochs, batch_size, max_grad_norm, learning_rate, hidden
        DP-SGD settings (``hidden=()``: logistic regression).
    delta : float
        Delta of the certified epsilon (and of an epsilon target without its own).
    neighbours : {"replace_one", "add_remove"}
        Relation of the target and the certificate.
    test_size : float
        Share of the rows held out (stratified by class, secret: :func:`held_out_generator`).
    scale : bool
        Standardise the features with the held-out rows' mean and standard deviation.
    seed : int
        Seeds the initial weights.
    id_column : str or None
        A column of unique record ids: left out of the features, written beside each row in
        ``split.parquet``.
    record_split : bool
        Write ``split.parquet`` (which rows trained the model: as private as the data; off by default).
    audit : bool
        Audit the fitted model against its certificate (training rows versus the held-out rows).
    noise_seed : int or None
        None (default): the held-out split and DP-SGD's Poisson batches and noise come from OS entropy, so
        that ``seed`` (written to results.json) does not let anyone replay the training. An integer makes
        them reproducible; the model is then not private against anyone who holds it.
    """

    data: str | None = None
    target: str = ""
    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    domain: str | dict | None = None
    risk_target: dict | None = None
    noise_multiplier: float | None = None
    epochs: int = 5
    batch_size: int = 256
    max_grad_norm: float = 1.0
    learning_rate: float = 0.5
    hidden: tuple[int, ...] = (64,)
    delta: float = 1e-5
    neighbours: str = "replace_one"
    test_size: float = 0.2
    scale: bool = True
    seed: int = 0
    fprs: tuple[float, ...] = field(default=(0.001, 0.01, 0.1))
    noise_seed: int | None = None
    record_split: bool = False
    id_column: str | None = None
    audit: bool = False

    def __post_init__(self) -> None:
        """The settings the classifier does not check, checked when the configuration is built."""
        owner = "train_private"
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise MipkitValueError(f"The 'seed' parameter of {owner} must be an integer >= 0. Got {seed!r}.")
        check_interval("test_size", self.test_size, 0.0, 1.0, owner=owner)
        check_choice("neighbours", self.neighbours, ("replace_one", "add_remove"), owner=owner)

    def classifier(self) -> Any:
        """The unfitted :class:`~mipkit.trainers.DPSGDClassifier` these settings describe."""
        from mipkit.trainers import DPSGDClassifier

        return DPSGDClassifier(
            tuple(self.hidden),
            epochs=self.epochs,
            learning_rate=self.learning_rate,
            batch_size=self.batch_size,
            max_grad_norm=self.max_grad_norm,
            noise_multiplier=self.noise_multiplier,
            risk_target=self.risk_target,
            delta=self.delta,
            neighbours=self.neighbours,
            certify_fprs=tuple(self.fprs),
            random_state=self.seed,
            noise_seed=self.noise_seed,
        )

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        d = asdict(self)
        if isinstance(d["domain"], os.PathLike):
            d["domain"] = str(d["domain"])
        return d


@dataclass(frozen=True)
class TrainPrivateResult:
    """What :func:`train_private` did: the fitted pipeline, its certificate and the held-out accuracy."""

    model: Any
    certificate: Any
    test_accuracy: float
    majority_rate: float
    held_out: dict
    config: TrainPrivateConfig
    seconds: dict
    run_dir: Path | None = None
    domain: dict = field(default_factory=lambda: {"source": "arrays given by the caller"})
    split: Any = None  # split.parquet's frame (row, id, member)
    audit: dict | None = None  # audit_against_certificate's answer

    def to_dict(self) -> dict:
        """The ``--json`` payload: run settings, ``certified`` risks, accuracy, split and files."""
        cert = self.certificate
        cal = cert.calibration
        return {
            "noise_multiplier": cert.noise_multiplier,
            "sample_rate": cert.sample_rate,
            "steps": cert.steps,
            "epochs": self.config.epochs,
            "batch_size": self.config.batch_size,
            "max_grad_norm": cert.max_grad_norm,
            "n_train": cert.n_train,
            "neighbours": cert.neighbours,
            "premise": cert.to_dict()["premise"],
            "noise_source": cert.noise_source,
            "certified": cert.certified,
            "target": None
            if cal is None
            else {
                "name": cal["target"],
                "value": cal["target_value"],
                **{
                    k: cal["details"][k]
                    for k in ("fpr", "baseline", "base_rate", "recall", "delta")
                    if k in cal["details"]
                },
                "achieved": cal["achieved_fine"],
                "converged": cal["converged"],
            },
            "test_accuracy": self.test_accuracy,
            "majority_rate": self.majority_rate,
            "held_out": self.held_out,
            "domain": self.domain,
            "audit": self.audit,
            "seconds": self.seconds,
            "run_dir": None if self.run_dir is None else str(self.run_dir),
            "files": None
            if self.run_dir is None
            else {
                name: str(self.run_dir / name)
                for name in (MODEL_FILE, CERTIFICATE_FILE, SPLIT_FILE, REPORT_FILE, HTML_FILE)
                if name != SPLIT_FILE or self.config.record_split
            },
        }


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


def _domain_line(domain: dict) -> str:
    if domain.get("path"):
        return f"from the public domain {domain['path']} ({domain['columns']} columns)"
    if "columns" in domain:
        return f"from a public domain given as a mapping ({domain['columns']} columns)"
    return domain["source"]


def _report(result: TrainPrivateResult) -> str:
    d = result.to_dict()
    c = d["certified"]
    tprs = ", ".join(f"TPR <= {v:.4g} at FPR {k}" for k, v in c["tpr_at_fpr"].items())
    tgt = d["target"]
    target_line = (
        f"- Target: {tgt['name']} <= {tgt['value']:g} (certified {tgt['achieved']:.4g}).\n"
        if tgt
        else "- Noise multiplier given directly (no risk target).\n"
    )
    return (
        "# Private training (DP-SGD)\n\n"
        f"- Data: {result.config.data} ({d['n_train']} training rows; {d['held_out']['rows']} held out: "
        f"{d['held_out']['method']}).\n"
        f"- Encoding: {_domain_line(d['domain'])}.\n"
        f"{target_line}"
        f"- DP-SGD: noise multiplier {d['noise_multiplier']:.4g}, sample rate {d['sample_rate']:.4g}, "
        f"{d['steps']} steps ({d['epochs']} epochs), clipping norm {d['max_grad_norm']:g}.\n"
        f"- Certified for {d['neighbours'].replace('_', '-')} neighbours ({d['premise']}): MIP eta <= "
        f"{c['eta']:.4g}, advantage <= {c['advantage']:.4g}, {tprs}, epsilon <= {c['epsilon']:.4g} at "
        f"delta {c['delta']:g} (docs/theory.md section 3).\n"
        f"- Noise and batches: {d['noise_source']}.\n"
        f"- Held-out accuracy: {d['test_accuracy']:.4f} (always guessing the majority class: "
        f"{d['majority_rate']:.4f}).\n"
        + (
            f"- Split: {SPLIT_FILE} lists every row (position in the table"
            f"{', id' if d['held_out']['id_column'] else ''}) and whether it trained the model: keep it as "
            "private as the data.\n"
            if d["held_out"]["file"]
            else ""
        )
        + _audit_lines(d["audit"])
    )


def _audit_lines(audit: dict | None) -> str:
    if not audit:
        return ""
    tprs = ", ".join(
        f"TPR at FPR {k}: {r['measured']:.4g} measured, {r['certified']:.4g} certified" for k, r in
        audit["tpr_at_fpr"].items()
    )  # fmt: skip
    verdict = "within its certificate" if audit["holds"] else "ABOVE its certificate beyond sampling error"
    return (
        f"- Audit: {audit['attack'].upper()} on {audit['members']} training rows vs "
        f"{audit['non_members']} held-out rows: {tprs}; the model is {verdict}. {audit['note']}\n"
    )


def train_private(
    config: TrainPrivateConfig,
    out_dir: str | Path | None = None,
    *,
    dataset: Dataset | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TrainPrivateResult:
    """Split, scale, train with DP-SGD, evaluate and (with ``out_dir``) write the run folder.

    Parameters
    ----------
    config : TrainPrivateConfig
    out_dir : path, optional
        Run folder for ``model.joblib``, ``certificate.json``, ``results.json`` and ``report.md``.
    dataset : Dataset, optional
        Arrays to use instead of reading ``config.data``.
    progress : callable, optional
        ``progress(done, total)`` after each DP-SGD step (the fit's keyword of the same name).
    """
    clock = time.perf_counter()
    check_choice("neighbours", config.neighbours, ("replace_one", "add_remove"), owner="train_private")
    domain_used = {"source": "arrays given by the caller"}
    ids = None
    if dataset is None:
        from mipkit.workflows.train_private.records import read_records

        domain, path = load_domain(config.domain)
        dataset, rows, ids = read_records(config, domain)
        domain_used = domain_provenance(domain, path)
    elif config.id_column:
        raise MipkitValueError(
            f"The 'id_column' parameter of train_private names column {config.id_column!r}, but the data "
            "passed are arrays without columns; pass config.data."
        )
    else:
        rows = np.arange(dataset.X.shape[0])
    X, y = dataset.X, dataset.y
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
    acc = float(np.mean(clf.predict(Xte) == y[test_idx]))
    majority = float(np.bincount(y[test_idx]).max() / test_idx.size)
    from sklearn.pipeline import Pipeline

    model = Pipeline([("scale", scaler if scaler is not None else "passthrough"), ("dpsgd", clf)])
    from mipkit.workflows.train_private.records import split_frame

    split = split_frame(rows, ids, train_idx, test_idx)
    held_out = {
        "rows": int(test_idx.size),
        "file": SPLIT_FILE if config.record_split else None,
        "id_column": config.id_column,
        "fraction": float(config.test_size),
        "method": "stratified random split by class (secret: "
        + ("OS entropy" if config.noise_seed is None else "from the noise seed")
        + "); "
        + (
            "features standardised with the held-out rows' mean and sd"
            if scaler is not None
            else "no scaling"
        ),
    }
    audit = None
    if config.audit:
        from mipkit.workflows.train_private.records import audit_against_certificate

        audit = audit_against_certificate(
            model,
            X,
            y,
            train_idx,
            test_idx,
            clf.certificate_.certified,
            # the audit's per-record scores and most exposed members give the split away: written with it
            out_dir=None if out_dir is None or not config.record_split else Path(out_dir) / AUDIT_DIR,
            seed=config.seed,
        )
    result = TrainPrivateResult(
        model=model,
        certificate=clf.certificate_,
        test_accuracy=acc,
        majority_rate=majority,
        held_out=held_out,
        config=config,
        seconds={"prepare": prepared - clock, "train": trained - prepared},
        run_dir=None if out_dir is None else Path(out_dir),
        domain=domain_used,
        split=split,
        audit=audit,
    )
    if out_dir is not None:
        _write(result, Path(out_dir))
    return result


def _write(result: TrainPrivateResult, out: Path) -> None:
    import joblib

    from mipkit._runfolder import atomic_write, staged_writes
    from mipkit.report.html import write_html_report
    from mipkit.report.results import write_json_atomic, write_results
    from mipkit.report.train_private_report import report_parts

    payload = result.to_dict()
    title, summary, sections = report_parts(payload, result.certificate.curve(result.certificate.neighbours))
    replaces = (MODEL_FILE, CERTIFICATE_FILE, SPLIT_FILE, "results.json", REPORT_FILE, HTML_FILE)
    with staged_writes(out, replaces=replaces):
        atomic_write(out / MODEL_FILE, lambda f: joblib.dump(result.model, f))
        write_json_atomic(out / CERTIFICATE_FILE, {**result.certificate.to_dict(), "domain": result.domain})
        if result.config.record_split:  # the membership the certificate protects: only when asked
            atomic_write(out / SPLIT_FILE, lambda f: result.split.to_parquet(f, index=False))
        write_results(out, {**payload, "config": result.config.to_dict()}, kind="train-private")
        atomic_write(out / REPORT_FILE, _report(result))
        write_html_report(out, title=title, summary=summary, sections=sections)
