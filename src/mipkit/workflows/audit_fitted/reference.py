"""The reference models of :func:`mipkit.audit_fitted`: copies of the released model's training procedure,
each trained on a random subset of a pool of records through the engine.

The pool is the population records (when given) followed by the audited records (members, then
non-members). Every audited record is thus IN some reference models and OUT of others, which LiRA / RMIA
online and offline need (Carlini et al. 2022, Sec. IV; Zarifzadeh et al. 2024). Each reference model is
trained on as many records as the released model (the members), or, without population records, on a
random half of the audited records. A model fitted on a table is retrained on its own columns as they are
(:mod:`mipkit.workflows.audit_fitted.columns`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._random import spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.game.trainers import TrainerSpec, _set_random_state
from mipkit.workflows.audit_fitted.columns import ColumnCodec, RawColumns
from mipkit.workflows.audit_fitted.inputs import _codes, _numeric
from mipkit.workflows.audit_scores.outputs import ModelOutputs, loss_to_proba

__all__ = ["LEDGER_FILE", "Audited", "describe", "reference_outputs"]

LEDGER_FILE = "ledger.sqlite"


def describe(obj: Any) -> str:
    cls = type(obj)
    if cls.__name__ == "Pipeline" and hasattr(obj, "steps"):
        return "Pipeline(" + ", ".join(type(s).__name__ for _, s in obj.steps) + ")"
    if callable(obj) and not hasattr(obj, "fit"):
        return getattr(obj, "__qualname__", cls.__name__)
    return f"{cls.__module__.split('.')[0]}.{cls.__name__}"


class _CallableTrainer:
    """``fn(X, y, random_state) -> fitted model`` as an estimator (fit, predict_proba, predict)."""

    def __init__(self, fn: Callable, random_state: int | None = None) -> None:
        self.fn = fn
        self.random_state = random_state

    def fit(self, X, y):
        self.model_ = self.fn(X, y, self.random_state)
        if self.model_ is None:
            raise MipkitValueError("The reference trainer returned None; it must return the fitted model.")
        self.classes_ = getattr(self.model_, "classes_", None)
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


class _SquaredErrorAsProba:
    """A regressor inside the engine: ``X`` carries the target as its last column and the "probabilities"
    are :func:`mipkit.workflows.audit_scores.outputs.loss_to_proba` of ``(y - f(x))^2 / (2 s^2)``
    (label 0)."""

    def __init__(self, inner: Any, scale: float) -> None:
        self.inner = inner
        self.scale = scale
        self.classes_ = np.array([0, 1])

    def fit(self, X, y):
        self.inner.fit(X[:, :-1], X[:, -1])
        return self

    def predict_proba(self, X):
        err = (X[:, -1] - np.asarray(self.inner.predict(X[:, :-1]), dtype=float).ravel()) ** 2
        return loss_to_proba(err / (2 * self.scale))


@dataclass(frozen=True)
class _ObjectTrainer(TrainerSpec):
    """A :class:`TrainerSpec` built from a Python object (an estimator to clone, or a callable) instead of an
    import path, so that the engine (ledger, local processes, Ray) fits the user's own training procedure."""

    obj: Any = field(default=None, compare=False, repr=False)
    regression_scale: float | None = None
    codec: ColumnCodec | None = field(default=None, compare=False, repr=False)

    @property
    def trainer_class(self) -> type:
        return type(self.obj)

    def build(self, seed: int | None) -> Any:
        if hasattr(self.obj, "fit"):
            from sklearn.base import clone

            est = clone(self.obj)
            if seed is not None:
                _set_random_state(est, int(seed))
        else:
            est = _CallableTrainer(self.obj, None if seed is None else int(seed))
        if self.codec is not None:
            est = RawColumns(est, self.codec)
        return est if self.regression_scale is None else _SquaredErrorAsProba(est, self.regression_scale)

    def fingerprint(self) -> str:
        import joblib

        try:
            what = joblib.hash(self.obj)
        except Exception:  # an object joblib cannot hash (a closure): its qualified name only
            name = getattr(self.obj, "__qualname__", type(self.obj).__qualname__)
            what = f"{type(self.obj).__module__}:{name}"
        columns = "" if self.codec is None else self.codec.fingerprint()
        text = f"object-trainer|{self.import_path}|{what}|{self.regression_scale!r}|{columns}"
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Audited:
    """The audited records (members, then non-members) and what the released model fixed about them."""

    X: pd.DataFrame
    y: pd.Series
    codes: np.ndarray  # class codes in the order of the model's classes_ (zeros for a regressor)
    classes: np.ndarray | None  # the model's classes_ (None for a regressor)
    regression: bool
    scale: float | None  # the regressor's loss scale var(y) (None for a classifier)
    train_size: int  # the members' count: the size of every reference model's training set


def _pool(
    model: Any, population: tuple[pd.DataFrame, pd.Series] | None, target: str | None, audited: Audited
) -> tuple[np.ndarray, np.ndarray, int, ColumnCodec | None]:
    """``(X_fit, y_fit, n_population, codec)``: the pool the reference models are trained on, population
    records first. A model fitted on a table travels as its own columns' codes (``codec``); a regressor's
    target is the last column of ``X_fit`` (its "labels" are zeros)."""
    if population is None:
        Xp, yp = audited.X.iloc[:0], audited.y.iloc[:0]
    else:
        Xp, yp = population
    codec = None
    if getattr(model, "feature_names_in_", None) is not None:
        frames = [audited.X] if population is None else [Xp, audited.X]
        codec = ColumnCodec.of(frames, list(audited.X.columns))
        X_pool = np.vstack([codec.encode(f) for f in frames])
    else:
        parts = [] if population is None else [_numeric(Xp, "population")]
        X_pool = np.vstack([*parts, _numeric(audited.X, "audited records")])
    if not audited.regression:
        y_pop = _codes(yp, audited.classes, "the population") if len(Xp) else np.zeros(0, np.int64)
        return X_pool, np.r_[y_pop, audited.codes], len(Xp), codec
    y_pool = np.r_[pd.to_numeric(yp, errors="coerce").to_numpy(dtype=float), audited.y.to_numpy(dtype=float)]
    if not np.all(np.isfinite(y_pool)):
        raise MipkitValueError(f"The population's target {target!r} must be numeric without missing values.")
    X_fit = np.column_stack([X_pool, y_pool])
    return X_fit, np.zeros(len(X_fit), dtype=np.int64), len(Xp), codec


def _tasks(n_fit: int, n_population: int, train_size: int, k: int, seed: int) -> tuple[np.ndarray, list, int]:
    """``(in_mask, tasks, size)``: which pool records each of the ``k`` reference models trains on (``size``
    of them: as many as the members, or half the audited records without population) and its fit task."""
    from mipkit.engine.runner import FitTask
    from mipkit.game.splits import random_halves

    ss_halves, ss_fits = np.random.SeedSequence([int(seed), 0xFEF]).spawn(2)
    size = min(int(train_size), n_fit - 1 if n_population else n_fit // 2)
    in_mask = random_halves(n_fit, k, k=size, random_state=np.random.default_rng(ss_halves))
    seeds = spawn_seeds(np.random.default_rng(ss_fits), k)
    tasks = [FitTask(index=j, train_idx=np.flatnonzero(in_mask[j]), seed=seeds[j]) for j in range(k)]
    return in_mask, tasks, size


def _fit(
    trainer: TrainerSpec,
    X_fit: np.ndarray,
    y_fit: np.ndarray,
    tasks: list,
    *,
    query: np.ndarray,
    n_classes: int,
    run_dir: str | Path | None,
    engine: dict[str, Any],
) -> tuple[list[np.ndarray], str]:
    """The reference models' probabilities on ``query`` (through the engine: a ledger in ``run_dir``, so a
    re-run resumes) and the run key."""
    from mipkit.engine.ledger import Ledger, make_run_key
    from mipkit.engine.runner import run_fits

    run_key = make_run_key(trainer, X_fit, y_fit, tasks, query_X=query, extra={"workflow": "audit-fitted-v1"})
    kwargs = {"query_X": query, **engine, "n_classes": n_classes}
    if run_dir is None:
        return run_fits(trainer, X_fit, y_fit, tasks, **kwargs), run_key
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    with Ledger(Path(run_dir) / LEDGER_FILE, run_key, info={"kind": "audit-fitted"}) as ledger:
        return run_fits(trainer, X_fit, y_fit, tasks, ledger=ledger, **kwargs), run_key


def _as_outputs(probs: list[np.ndarray], ref_member: np.ndarray, regression: bool) -> list[ModelOutputs]:
    """Each reference model's outputs on the audited records, with which of them it trained on; a
    regressor's back to the per-record loss ``-log exp(-l)``."""
    if regression:
        tiny = np.finfo(float).tiny
        return [
            ModelOutputs(loss=-np.log(np.maximum(p[:, 0], tiny)), member=m)
            for p, m in zip(probs, ref_member, strict=True)
        ]
    return [
        ModelOutputs(proba=np.asarray(p, dtype=float), member=m)
        for p, m in zip(probs, ref_member, strict=True)
    ]


def reference_outputs(
    model: Any,
    reference_trainer: Any,
    population: tuple[pd.DataFrame, pd.Series] | None,
    target: str | None,
    audited: Audited,
    *,
    n_reference: int,
    random_state: int,
    run_dir: str | Path | None,
    engine: dict[str, Any],
) -> tuple[list[ModelOutputs], str, dict]:
    """Train the reference models on random subsets of population + audited records through the engine: each
    as large as the members, or, without ``population``, a random half of the audited records.

    A model fitted on a table (``feature_names_in_``) is retrained on the columns of ``audited.X`` (its own)
    as they are (:class:`~mipkit.workflows.audit_fitted.columns.RawColumns`); another model on their numbers.
    ``engine`` holds the ``backend``, ``n_jobs``, ``address`` and ``progress`` arguments of
    :func:`mipkit.engine.runner.run_fits`.

    Returns
    -------
    reference, run_key, design
        The reference models' outputs on the audited records, the fits' run key and the design's lines.
    """
    k = n_reference
    procedure = model if reference_trainer is None else reference_trainer
    X_fit, y_fit, n_pop, codec = _pool(model, population, target, audited)
    trainer = _ObjectTrainer(
        import_path=describe(procedure), params={}, obj=procedure, regression_scale=audited.scale, codec=codec
    )
    in_mask, tasks, size = _tasks(len(X_fit), n_pop, audited.train_size, k, random_state)
    n_classes = 2 if audited.regression else len(audited.classes)
    probs, run_key = _fit(
        trainer, X_fit, y_fit, tasks, query=X_fit[n_pop:], n_classes=n_classes, run_dir=run_dir, engine=engine
    )
    refs = _as_outputs(probs, in_mask[:, n_pop:], audited.regression)
    where = (
        f"a random {size} of {n_pop} population + {len(audited.X)} audited records"
        if n_pop
        else f"a random half ({size}) of the {len(audited.X)} audited records (no population records given)"
    )
    design = {
        "reference_models": f"{k} trained by {describe(procedure)}, each on {where}",
        "reference_models_trained_on": "the model's own columns as they are" if codec else "numeric arrays",
        "population_records": n_pop,
    }
    return refs, run_key, design
