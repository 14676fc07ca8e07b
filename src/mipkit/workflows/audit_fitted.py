"""Audit the fitted model you release: its outputs on its training records (members) against records it did
not see (non-members).

:func:`audit_fitted` answers the question "how much does *this fitted model* reveal?", where ``mipkit audit``
(:func:`mipkit.workflows.audit_model.run_audit`) answers "how much does a model trained by *this procedure*
reveal?" by retraining on random halves. Steps:

1. The released model's outputs on members and non-members: ``predict_proba`` for a classifier (a
   scikit-learn estimator or Pipeline, or a ``torch.nn.Module`` through
   :class:`mipkit.game.torch_adapter.TorchClassifier`), the per-record squared error ``(y - f(x))^2`` for a
   regressor. LOSS needs nothing more (no retraining).
2. With ``population`` data, ``n_reference`` reference models are trained by the user's training procedure
   (``reference_trainer``: an estimator, cloned with :func:`sklearn.base.clone` for every fit, or a callable
   ``fn(X, y, random_state) -> fitted model``; default: a clone of ``model``), each on its own uniformly
   random subset of the pool = population + audited records, as large as the released model's training set
   (the members; :func:`mipkit.game.splits.random_halves`). Every audited record is thus IN some reference
   models and OUT of others, which LiRA / RMIA online and offline need (Carlini et al. 2022, Sec. IV;
   Zarifzadeh et al. 2024). The fits run through the engine (:func:`mipkit.engine.runner.run_fits`): a ledger
   in the run folder (re-running resumes), local processes or Ray.
3. :func:`mipkit.workflows.audit_scores.audit_predictions` on those outputs.

A regressor's outputs enter as a per-record loss ``l = (y - f(x))^2 / (2 s^2)``, the negative Gaussian
log-likelihood up to a constant with ``s^2`` the variance of the audited targets (a fixed scale, so LOSS's
ranking is that of the squared error).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.attacks.registry import ATTACKS
from mipkit.data.tables import same_rows
from mipkit.game.trainers import TrainerSpec, _set_random_state, predict_full_proba
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows.audit_config import check_measurement
from mipkit.workflows.audit_fitted_inputs import (
    _codes,
    _is_torch_module,
    _numeric,
    _split,
    check_features,
    check_model,
    check_no_overlap,
)
from mipkit.workflows.audit_fitted_result import FittedAuditResult
from mipkit.workflows.audit_scores import ModelOutputs, audit_predictions, loss_to_proba

__all__ = ["audit_fitted", "check_no_overlap"]

LEDGER_FILE = "ledger.sqlite"
DEFAULT_N_REFERENCE = 8


def _describe(obj: Any) -> str:
    cls = type(obj)
    if cls.__name__ == "Pipeline" and hasattr(obj, "steps"):
        return "Pipeline(" + ", ".join(type(s).__name__ for _, s in obj.steps) + ")"
    if callable(obj) and not hasattr(obj, "fit"):
        return getattr(obj, "__qualname__", cls.__name__)
    return f"{cls.__module__.split('.')[0]}.{cls.__name__}"


class _Coded:
    """A fitted classifier seen with class codes ``0..C-1`` (its ``classes_`` in order) for
    :func:`mipkit.game.trainers.predict_full_proba`."""

    def __init__(self, model: Any, n_classes: int) -> None:
        self._model = model
        self.classes_ = np.arange(n_classes)
        for name in ("predict_proba", "decision_function"):
            if callable(getattr(model, name, None)):
                setattr(self, name, getattr(model, name))


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
    are :func:`mipkit.workflows.audit_scores.loss_to_proba` of ``(y - f(x))^2 / (2 s^2)`` (label 0)."""

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
        return est if self.regression_scale is None else _SquaredErrorAsProba(est, self.regression_scale)

    def fingerprint(self) -> str:
        import joblib

        try:
            what = joblib.hash(self.obj)
        except Exception:  # an object joblib cannot hash (a closure): its qualified name only
            name = getattr(self.obj, "__qualname__", type(self.obj).__qualname__)
            what = f"{type(self.obj).__module__}:{name}"
        text = f"object-trainer|{self.import_path}|{what}|{self.regression_scale!r}"
        return hashlib.sha256(text.encode()).hexdigest()


def _model_input(model: Any, X: pd.DataFrame) -> Any:
    """A DataFrame for a model fitted with column names, else a float array."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return X[list(names)]
    text = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if text:
        shown = ", ".join(map(repr, text[:8])) + (" ..." if len(text) > 8 else "")
        raise MipkitValueError(
            f"The model takes numbers without column names, but the column(s) {shown} hold text: give the "
            "tables encoded as the model was trained, or audit a Pipeline that encodes its own columns."
        )
    return X.to_numpy(dtype=np.float32 if _is_torch_module(model) else float)


def audit_fitted(
    model: Any,
    members: Any,
    non_members: Any,
    *,
    target: str | None = None,
    reference_trainer: Any = None,
    n_reference: int = DEFAULT_N_REFERENCE,
    population: Any = None,
    random_state: int = 0,
    attacks: Sequence[str] = ("loss", "lira", "rmia"),
    out_dir: str | Path | None = None,
    backend: str = "local",
    n_jobs: int = -1,
    address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    fprs: tuple[float, ...] = DEFAULT_FPRS,
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES,
    confidence: float = 0.95,
    n_boot: int = 1000,
    fail_above: float | None = None,
    fail_metric: str = "eta",
    write_report: bool = True,
) -> FittedAuditResult:
    """Audit a fitted model on its training records (members) and records it did not see (non-members).

    Parameters
    ----------
    model : fitted estimator, Pipeline, regressor or torch.nn.Module
        The model you release. A classifier needs ``predict_proba`` (or ``decision_function``) and
        ``classes_`` (a torch module: logits over classes ``0..C-1``); a regressor ``predict``.
    members, non_members : DataFrame (with the ``target`` column) or (X, y) pair
        Records the model was trained on, and records it was not (a holdout or a population sample). They
        must not share a record.
    target : str
        The label column of the tables.
    reference_trainer : estimator or callable, optional
        The training procedure of the reference models: an unfitted (or fitted) estimator cloned for every
        fit, or ``fn(X, y, random_state) -> fitted model``. Default: a clone of ``model`` (scikit-learn).
    n_reference : int
        Reference models to train (>= 2), only when ``population`` is given.
    population : DataFrame or (X, y) pair, optional
        Records from the same population, neither members nor non-members; without it only LOSS runs.
    random_state : int
        Seeds the reference models' halves and fits, the cross-fitting and the bootstrap.
    attacks, fprs, base_rates, confidence, n_boot, fail_above, fail_metric
        As for :func:`mipkit.workflows.audit_scores.audit_predictions`.
    out_dir : path, optional
        Run folder (``results.json`` of kind ``"audit-fitted"``, ``scores.parquet``, ``report.html`` and the
        reference fits' ``ledger.sqlite``).
    backend, n_jobs, address, progress
        Where and how the reference models are fitted (:func:`mipkit.engine.runner.run_fits`).

    Returns
    -------
    FittedAuditResult
        ``question`` is "this fitted model"; ``skipped`` says which attacks did not run and why.
    """
    check_measurement(
        fprs=fprs, base_rates=base_rates, confidence=confidence, n_boot=n_boot, seed=random_state,
        owner="audit_fitted",
    )  # fmt: skip
    requested = {a.strip().lower() for a in attacks}
    if "loss" not in requested or any(a not in ATTACKS for a in requested):
        raise MipkitValueError(f"The 'attacks' parameter must include loss, among {', '.join(ATTACKS)}.")
    model_kind = check_model(model)
    regression = model_kind == "regressor"
    Xm, ym = _split(members, target, "members")
    Xn, yn = _split(non_members, target, "non-members")
    check_no_overlap(pd.concat([Xm, ym.rename("__y")], axis=1), pd.concat([Xn, yn.rename("__y")], axis=1))
    check_features(Xm, "members", model, target)
    check_features(Xn, "non-members", model, target)
    X_aud = pd.concat([Xm, Xn], ignore_index=True)
    y_aud = pd.concat([ym, yn], ignore_index=True)
    member = np.r_[np.ones(len(Xm), bool), np.zeros(len(Xn), bool)]
    yv, codes, classes = None, np.zeros(len(y_aud), np.int64), None
    if regression:
        yv = pd.to_numeric(y_aud, errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(yv)):
            raise MipkitValueError(f"A regressor's target {target!r} must be numeric without missing values.")
    elif model_kind == "classifier":
        classes = np.asarray(getattr(model, "classes_", None) if hasattr(model, "classes_") else [])
        if classes.size < 2:
            raise MipkitValueError("The model has no classes_ with at least two classes; is it fitted?")
        codes = _codes(y_aud, classes, "the audited records")
    pool = None
    if population is not None and requested & {"lira", "rmia"}:  # checked before the model is scored
        procedure = model if reference_trainer is None else reference_trainer
        pool = _check_population(procedure, population, target, X_aud, len(Xm), n_reference)
    fitted, logits = model, None
    if model_kind == "torch":
        from mipkit.game.torch_adapter import TorchClassifier, import_torch

        torch = import_torch()
        model.eval()
        with torch.no_grad():  # logits in float64: a float32 softmax would round confident records to 1
            logits = model(torch.from_numpy(_model_input(model, X_aud))).double().numpy()
        fitted = TorchClassifier()
        fitted.module_, fitted.classes_ = model, np.arange(logits.shape[1])
        classes = fitted.classes_
        codes = _codes(y_aud, classes, "the audited records")
    info = {
        "import_path": _describe(model),
        "params": {},
        "kind": "regressor" if regression else "classifier",
    }
    scale = None
    if regression:
        scale = float(np.var(yv)) or 1.0
        Xin = _model_input(model, X_aud)
        loss = (yv - np.asarray(fitted.predict(Xin), dtype=float).ravel()) ** 2 / (2 * scale)
        outputs, n_classes = ModelOutputs(loss=loss), 2
        info["loss"] = "squared error / (2 var(y)) over the audited records"
    elif logits is not None:
        outputs, n_classes = ModelOutputs(logits=logits), classes.size
    else:
        n_classes = classes.size
        Xin = _model_input(model, X_aud)
        outputs = ModelOutputs(proba=predict_full_proba(_Coded(fitted, n_classes), Xin, n_classes))
    reference, run_key, design = [], "", {"reference_models": "none (no population data given)"}
    if pool is not None:
        audited = _Audited(X_aud, y_aud, codes, classes, regression, scale, int(member.sum()))
        engine = {"backend": backend, "n_jobs": n_jobs, "address": address, "progress": progress}
        reference, run_key, design = _reference_outputs(
            model,
            reference_trainer,
            pool,
            target,
            audited,
            n_reference=n_reference,
            random_state=random_state,
            out_dir=out_dir,
            engine=engine,
        )
    return audit_predictions(
        codes,
        member,
        outputs,
        reference=reference,
        classes=None if classes is None else [str(c) for c in classes],
        attacks=attacks,
        fprs=fprs,
        base_rates=base_rates,
        confidence=confidence,
        n_boot=n_boot,
        seed=random_state,
        fail_above=fail_above,
        fail_metric=fail_metric,
        model_info=info,
        design={"source": "audit_fitted: the model's outputs computed in process", **design},
        out_dir=out_dir,
        write_report=write_report,
        run_key=run_key,
    )


@dataclass(frozen=True)
class _Audited:
    """The audited records (members, then non-members) and what the released model fixed about them."""

    X: pd.DataFrame
    y: pd.Series
    codes: np.ndarray  # class codes in the order of the model's classes_ (zeros for a regressor)
    classes: np.ndarray | None  # the model's classes_ (None for a regressor)
    regression: bool
    scale: float | None  # the regressor's loss scale var(y) (None for a classifier)
    train_size: int  # the members' count: the size of every reference model's training set


def _check_population(
    procedure: Any, population: Any, target: str | None, X_aud: pd.DataFrame, n_members: int, n_reference: int
) -> tuple[pd.DataFrame, pd.Series]:
    """The population as ``(features, target)``, checked with the settings of the reference models."""
    k = n_reference
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise MipkitValueError(
            f"The 'n_reference' parameter of audit_fitted must be an integer >= 2. Got {k!r}."
        )
    if _is_torch_module(procedure):
        raise MipkitValueError(
            "A torch module cannot be retrained as it is: pass reference_trainer (a TorchClassifier or a "
            "callable that trains one) to train the reference models."
        )
    Xp, yp = _split(population, target, "population")
    if list(Xp.columns) != list(X_aud.columns):
        raise MipkitValueError(
            "The population table must have the same columns as the members and non-members."
        )
    check_features(Xp, "population")
    # the members and non-members together may be the population (reference models with and without each
    # target); one of them alone is the wrong file
    parts = (X_aud.iloc[:n_members], X_aud.iloc[n_members:])
    if any(same_rows(Xp, part) for part in parts):
        raise MipkitValueError(
            "The population holds the same records as the members or the non-members: it must hold other "
            "records of the population. Is it the members or non-members file given again?"
        )
    _numeric(Xp, "population")
    _numeric(X_aud, "audited records")
    return Xp, yp


def _reference_outputs(
    model: Any,
    reference_trainer: Any,
    population: tuple[pd.DataFrame, pd.Series],
    target: str | None,
    audited: _Audited,
    *,
    n_reference: int,
    random_state: int,
    out_dir: str | Path | None,
    engine: dict[str, Any],
) -> tuple[list[ModelOutputs], str, dict]:
    """Train the reference models on random subsets (of the members' size) of population + audited records,
    through the engine.

    ``engine`` holds the ``backend``, ``n_jobs``, ``address`` and ``progress`` arguments of
    :func:`mipkit.engine.runner.run_fits`.
    """
    from mipkit.engine.ledger import Ledger, make_run_key
    from mipkit.engine.runner import FitTask, run_fits
    from mipkit.game.splits import random_halves

    k = n_reference
    procedure = model if reference_trainer is None else reference_trainer
    Xp, yp = population
    X_pool = np.vstack([_numeric(Xp, "population"), _numeric(audited.X, "audited records")])
    if audited.regression:
        y_pool_num = np.r_[
            pd.to_numeric(yp, errors="coerce").to_numpy(dtype=float), audited.y.to_numpy(dtype=float)
        ]
        if not np.all(np.isfinite(y_pool_num)):
            raise MipkitValueError(
                f"The population's target {target!r} must be numeric without missing values."
            )
        X_fit = np.column_stack([X_pool, y_pool_num])
        y_fit = np.zeros(len(X_fit), dtype=np.int64)
        query = X_fit[len(Xp) :]
        n_classes = 2
    else:
        X_fit, y_fit = X_pool, np.r_[_codes(yp, audited.classes, "the population"), audited.codes]
        query, n_classes = X_pool[len(Xp) :], len(audited.classes)
    trainer = _ObjectTrainer(
        import_path=_describe(procedure), params={}, obj=procedure, regression_scale=audited.scale
    )
    ss = np.random.SeedSequence([int(random_state), 0xFEF])
    ss_halves, ss_fits = ss.spawn(2)
    size = min(int(audited.train_size), len(X_fit) - 1)
    in_mask = random_halves(len(X_fit), k, k=size, random_state=np.random.default_rng(ss_halves))
    seeds = np.random.default_rng(ss_fits).integers(0, 2**31 - 1, size=k)
    tasks = [FitTask(index=j, train_idx=np.flatnonzero(in_mask[j]), seed=int(seeds[j])) for j in range(k)]
    run_key = make_run_key(trainer, X_fit, y_fit, tasks, query_X=query, extra={"workflow": "audit-fitted-v1"})
    kwargs = {"query_X": query, **engine, "n_classes": n_classes}
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        with Ledger(Path(out_dir) / LEDGER_FILE, run_key, info={"kind": "audit-fitted"}) as ledger:
            probs = run_fits(trainer, X_fit, y_fit, tasks, ledger=ledger, **kwargs)
    else:
        probs = run_fits(trainer, X_fit, y_fit, tasks, **kwargs)
    ref_member = in_mask[:, len(Xp) :]
    if audited.regression:  # back to the per-record loss: -log exp(-l)
        tiny = np.finfo(float).tiny
        refs = [
            ModelOutputs(loss=-np.log(np.maximum(probs[j][:, 0], tiny)), member=ref_member[j])
            for j in range(k)
        ]
    else:
        refs = [ModelOutputs(proba=np.asarray(probs[j], dtype=float), member=ref_member[j]) for j in range(k)]
    design = {
        "reference_models": f"{k} trained by {_describe(procedure)}, each on a random {size} of "
        f"{len(Xp)} population + {len(audited.X)} audited records",
        "population_records": len(Xp),
    }
    return refs, run_key, design
