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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.data.io import Dataset, read_configured_dataset

__all__ = ["OneRunConfig", "OneRunResult", "run_one_run_audit"]

CANARY_KINDS = ("mislabeled", "records")


@dataclass(frozen=True)
class OneRunConfig:
    """Everything that defines a one-run audit.

    Attributes
    ----------
    data, target, encode, dropna, drop
        The table, as for ``mipkit audit``.
    model : str
        Trainer import path (default ``"mipkit.trainers.DPSGDClassifier"``).
    params : dict
        Its constructor arguments (JSON).
    canaries : int
        ``m``, at most half of the rows.
    canary_kind : {"mislabeled", "records"}
        Canaries with a label changed to another class at random, or rows as they are.
    k_plus, k_minus : tuple of float
        Grid of "in" and "out" guess counts (fractions of ``m`` when below 1, else counts).
    delta : float or None
        Delta of the bound; default the certificate's (1e-5 without a certificate).
    confidence : float
    scale : bool
        Standardise the features with the whole table's mean and sd (the same whoever is included).
    seed : int
    """

    data: str | None = None
    target: str = ""
    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    model: str = "mipkit.trainers.DPSGDClassifier"
    params: dict = field(default_factory=dict)
    canaries: int = 1000
    canary_kind: str = "mislabeled"
    k_plus: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2)
    k_minus: tuple[float, ...] = (0.0,)
    delta: float | None = None
    confidence: float = 0.95
    scale: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        """Every setting checked when the configuration is built, before any data is read or model fitted."""
        owner = "audit_one_run"
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise MipkitValueError(f"The 'seed' parameter of {owner} must be an integer >= 0. Got {seed!r}.")
        check_positive_int("canaries", self.canaries, owner=owner)
        check_choice("canary_kind", self.canary_kind, CANARY_KINDS, owner=owner)
        for name in ("k_plus", "k_minus"):
            grid = tuple(getattr(self, name))
            if not grid:
                raise MipkitValueError(f"The {name!r} parameter of {owner} must list at least one count.")
            for k in grid:
                k = check_interval(name, k, 0.0, float(self.canaries), closed="both", owner=owner)
                if k >= 1 and not k.is_integer():
                    raise MipkitValueError(
                        f"The {name!r} parameter of {owner} holds fractions of the canaries (below 1) or "
                        f"counts (whole numbers). Got {k!r}."
                    )
        if self.delta is not None:
            check_interval("delta", self.delta, 0.0, 1.0, owner=owner)
        check_interval("confidence", self.confidence, 0.0, 1.0, owner=owner)
        if not isinstance(self.params, dict):
            raise MipkitValueError(f"The 'params' parameter of {owner} must be a dict. Got {self.params!r}.")

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)


@dataclass(frozen=True)
class OneRunResult:
    """The bound, the certificate it is checked against, and the run's facts."""

    bound: Any
    certified_epsilon: float | None
    certificate: dict | None
    n_train: int
    included: int
    test_note: str
    config: OneRunConfig
    seconds: float

    @property
    def violation(self) -> bool:
        """The measured lower bound exceeds the certified epsilon."""
        return self.certified_epsilon is not None and self.bound.epsilon > self.certified_epsilon

    def to_dict(self) -> dict:
        """The ``--json`` payload."""
        b = self.bound
        ratio = None
        if self.certified_epsilon:
            ratio = b.epsilon / self.certified_epsilon
        return {
            "epsilon_lower": b.epsilon,
            "delta": b.delta,
            "confidence": b.confidence,
            "certified_epsilon": self.certified_epsilon,
            "ratio": ratio,
            "verdict": (
                "no certificate"
                if self.certified_epsilon is None
                else (
                    "VIOLATION: lower bound above the certificate"
                    if self.violation
                    else "below the certificate"
                )
            ),
            "canaries": b.m,
            "canaries_included": self.included,
            "guesses": b.n_guess,
            "correct": b.n_correct,
            "k_plus": b.k_plus,
            "k_minus": b.k_minus,
            "rules_tried": b.rules_tried,
            "n_train": self.n_train,
            "certificate": self.certificate,
            "scores": self.test_note,
            "model": self.config.model,
            "params": self.config.params,
            "seconds": self.seconds,
        }


def _canaries(
    ds: Dataset, config: OneRunConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Canary rows, their (possibly changed) labels, and the inclusion coin of each."""
    n, n_classes = ds.y.size, len(ds.classes)
    if n_classes < 2:
        raise MipkitValueError("The target column has a single class; a classifier needs at least two.")
    m = check_positive_int("canaries", config.canaries, owner="audit_one_run")
    if m > n // 2:
        raise MipkitValueError(
            f"The 'canaries' parameter of audit_one_run must be at most half the rows ({n // 2}). Got {m}."
        )
    kind = check_choice("canary_kind", config.canary_kind, CANARY_KINDS, owner="audit_one_run")
    rows = np.sort(rng.choice(n, size=m, replace=False))
    labels = ds.y[rows].copy()
    if kind == "mislabeled":
        labels = (labels + rng.integers(1, n_classes, size=m)) % n_classes
    included = rng.random(m) < 0.5
    return rows, labels, included


def run_one_run_audit(
    config: OneRunConfig, out_dir: str | Path | None = None, *, dataset: Dataset | None = None
) -> OneRunResult:
    """Run the one-run audit described by ``config`` (module docstring); write ``results.json`` to
    ``out_dir`` when given."""
    from mipkit.game.trainers import predict_full_proba, resolve_trainer
    from mipkit.metrics.dp_lower_bounds import one_run_lower_bound

    clock = time.perf_counter()
    conf = check_interval("confidence", config.confidence, 0.0, 1.0, owner="audit_one_run")
    if dataset is None:
        dataset = read_configured_dataset(config, owner="audit_one_run")
    rng = np.random.default_rng(np.random.SeedSequence([int(config.seed), 0x0E1]))
    rows, labels, included = _canaries(dataset, config, rng)
    X = dataset.X
    if config.scale:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rest = np.setdiff1d(np.arange(dataset.y.size), rows)
    X_train = np.vstack([X[rest], X[rows[included]]])
    y_train = np.concatenate([dataset.y[rest], labels[included]])
    spec = resolve_trainer(config.model, config.params)
    est = spec.build(int(rng.integers(2**31 - 1)))
    params = est.get_params() if hasattr(est, "get_params") else {}
    if "dataset_size" in params and params["dataset_size"] is None:
        est.set_params(dataset_size=int(rest.size + rows.size))
    est.fit(X_train, y_train)
    proba = predict_full_proba(est, X[rows], len(dataset.classes))
    scores = np.log(np.clip(proba[np.arange(rows.size), labels], 1e-300, None))  # minus the loss
    cert = getattr(est, "certificate_", None)
    delta = config.delta
    if delta is None:
        delta = float(getattr(cert, "delta", 1e-5) or 1e-5)
    bound = one_run_lower_bound(
        scores, included, delta=delta, confidence=conf, k_plus=config.k_plus, k_minus=config.k_minus
    )
    certified = None
    if cert is not None and callable(getattr(cert, "curve", None)):  # DPSGDCertificate: either relation
        certified = float(cert.curve("add_remove").epsilon_for_delta(delta))
    elif getattr(cert, "tradeoff_curve", None) is not None:  # the protocol's replace-one curve (larger)
        certified = float(cert.tradeoff_curve.epsilon_for_delta(delta))
    result = OneRunResult(
        bound=bound,
        certified_epsilon=certified,
        certificate=None if cert is None else cert.to_dict(),
        n_train=int(y_train.size),
        included=int(included.sum()),
        test_note="LOSS attack: log-probability of each canary's label (higher: more likely included)",
        config=config,
        seconds=time.perf_counter() - clock,
    )
    if out_dir is not None:
        from mipkit.report.results import write_results

        write_results(Path(out_dir), {**result.to_dict(), "config": config.to_dict()}, kind="audit-one-run")
    return result
