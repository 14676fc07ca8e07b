"""Audit the fitted model you release: its outputs on its training records (members) against records it did
not see (non-members).

:func:`audit_fitted` answers the question "how much does *this fitted model* reveal?", where ``mipkit audit``
(:func:`mipkit.workflows.audit.run.run_audit`) answers "how much does a model trained by *this procedure*
reveal?" by retraining on random halves. Steps:

1. The released model's outputs on members and non-members: ``predict_proba`` for a classifier (a
   scikit-learn estimator or Pipeline, or a ``torch.nn.Module`` through
   :class:`mipkit.game.torch_adapter.TorchClassifier`), the per-record squared error ``(y - f(x))^2`` for a
   regressor. LOSS needs nothing more (no retraining).
2. ``n_reference`` reference models (default :data:`DEFAULT_N_REFERENCE`) are trained by the user's training
   procedure (``reference_trainer``: an estimator, cloned with :func:`sklearn.base.clone` for every fit, or
   a callable ``fn(X, y, random_state) -> fitted model``; default: a clone of ``model``), each on a random
   subset of the population records (when given) and the audited records
   (:mod:`mipkit.workflows.audit_fitted.reference`). A model fitted on a table (a Pipeline that encodes its
   own text columns, say) is retrained on the columns it reads (``feature_names_in_``), as they are; the
   table's other columns are ignored and listed in the design. The fits run through the engine
   (:func:`mipkit.engine.runner.run_fits`): a ledger in the run folder (re-running resumes), local
   processes or Ray.
3. :func:`mipkit.workflows.audit_scores.run.audit_predictions` on those outputs, with the records named by
their
   row and ``id_column`` and measured per subgroup of ``slice_by``
   (:mod:`mipkit.workflows.audit_fitted.records`).

A regressor's outputs enter as a per-record loss ``l = (y - f(x))^2 / (2 s^2)``, the negative Gaussian
log-likelihood up to a constant with ``s^2`` the variance of the audited targets (a fixed scale, so LOSS's
ranking is that of the squared error).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.attacks.registry import ATTACKS
from mipkit.data.tables import same_rows
from mipkit.game.trainers import predict_full_proba
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows.audit.config import check_measurement
from mipkit.workflows.audit_fitted.columns import used_columns
from mipkit.workflows.audit_fitted.inputs import (
    _codes,
    _is_torch_module,
    _split,
    check_features,
    check_model,
    check_no_overlap,
)
from mipkit.workflows.audit_fitted.records import records_of_tables
from mipkit.workflows.audit_fitted.reference import LEDGER_FILE, Audited, describe, reference_outputs
from mipkit.workflows.audit_fitted.result import FittedAuditResult
from mipkit.workflows.audit_scores.run import ModelOutputs, audit_predictions

__all__ = ["DEFAULT_N_REFERENCE", "LEDGER_FILE", "audit_fitted", "check_no_overlap"]

DEFAULT_N_REFERENCE = 16
"""Reference models trained by default: enough for LiRA's per-record Gaussians (each audited record is IN
about half of them and OUT of the others) and for RMIA, at 16 fits of the released model's procedure."""


class _Coded:
    """A fitted classifier seen with class codes ``0..C-1`` (its ``classes_`` in order) for
    :func:`mipkit.game.trainers.predict_full_proba`."""

    def __init__(self, model: Any, n_classes: int) -> None:
        self._model = model
        self.classes_ = np.arange(n_classes)
        for name in ("predict_proba", "decision_function"):
            if callable(getattr(model, name, None)):
                setattr(self, name, getattr(model, name))


def _refuse_text(model: Any, X: pd.DataFrame) -> None:
    """Refuse text columns for a model fitted without column names (it takes numbers only)."""
    if getattr(model, "feature_names_in_", None) is not None:
        return
    text = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if text:
        shown = ", ".join(map(repr, text[:8])) + (" ..." if len(text) > 8 else "")
        raise MipkitValueError(
            f"The model takes numbers without column names, but the column(s) {shown} hold text: give the "
            "tables encoded as the model was trained, or audit a Pipeline that encodes its own columns."
        )


def _model_input(model: Any, X: pd.DataFrame) -> Any:
    """A DataFrame for a model fitted with column names, else a float array."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return X[list(names)]
    _refuse_text(model, X)
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
    id_column: str | None = None,
    slice_by: Sequence[str] | str = (),
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
        must not share a record. Columns the model was not fitted on (``feature_names_in_``) are ignored.
    target : str
        The label column of the tables.
    reference_trainer : estimator or callable, optional
        The training procedure of the reference models: an unfitted (or fitted) estimator cloned for every
        fit, or ``fn(X, y, random_state) -> fitted model``. Default: a clone of ``model`` (scikit-learn;
        a torch module needs ``reference_trainer``, else only LOSS runs).
    n_reference : int
        Reference models to train: 0 (none: LOSS only) or at least 2.
    population : DataFrame or (X, y) pair, optional
        Records from the same population, neither members nor non-members, added to the reference models'
        pool; without it each reference model trains on a random half of the audited records.
    id_column : str, optional
        A column of both tables naming each record (unique, never a feature): the per-record table and the
        most exposed records carry it.
    slice_by : column names
        Columns of both tables to measure per subgroup (the true class always is), as ``mipkit audit``.
    random_state : int
        Seeds the reference models' subsets and fits, the cross-fitting and the bootstrap.
    attacks, fprs, base_rates, confidence, n_boot, fail_above, fail_metric
        As for :func:`mipkit.workflows.audit_scores.run.audit_predictions`.
    out_dir : path, optional
        Run folder (``results.json`` of kind ``"audit-fitted"``, ``scores.parquet``, ``report.html`` and the
        reference fits' ``ledger.sqlite``).
    backend, n_jobs, address, progress
        Where and how the reference models are fitted (:func:`mipkit.engine.runner.run_fits`).

    Returns
    -------
    FittedAuditResult
        ``question`` is "this fitted model"; ``skipped`` says which attacks did not run and why; ``design``
        lists the columns the model reads and those it ignores.
    """
    check_measurement(
        fprs=fprs, base_rates=base_rates, confidence=confidence, n_boot=n_boot, seed=random_state,
        owner="audit_fitted",
    )  # fmt: skip
    requested = {a.strip().lower() for a in attacks}
    if "loss" not in requested or any(a not in ATTACKS for a in requested):
        raise MipkitValueError(f"The 'attacks' parameter must include loss, among {', '.join(ATTACKS)}.")
    k = n_reference
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0 or k == 1:
        raise MipkitValueError(
            f"The 'n_reference' parameter of audit_fitted must be 0 (none) or an integer >= 2. Got {k!r}."
        )
    model_kind = check_model(model)
    regression = model_kind == "regressor"
    Xm, ym = _split(members, target, "members")
    Xn, yn = _split(non_members, target, "non-members")
    check_no_overlap(pd.concat([Xm, ym.rename("__y")], axis=1), pd.concat([Xn, yn.rename("__y")], axis=1))
    (Xm, Xn), records, ignored = records_of_tables(
        [Xm, Xn], model=model, id_column=id_column, slice_by=slice_by, target=target
    )
    check_features(Xm, "members", model, target)
    check_features(Xn, "non-members", model, target)
    _refuse_text(model, Xm)
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
    procedure = model if reference_trainer is None else reference_trainer
    used, _ = used_columns(model, list(X_aud.columns))
    train_refs, why_not = k >= 2 and bool(requested & {"lira", "rmia"}), None
    if train_refs and _is_torch_module(procedure):
        if population is not None:
            raise MipkitValueError(
                "A torch module cannot be retrained as it is: pass reference_trainer (a TorchClassifier or a "
                "callable that trains one) to train the reference models."
            )
        why_not = "none (a torch module cannot be retrained as it is: pass reference_trainer)"
        train_refs = False
    pool = None
    if train_refs and population is not None:  # checked before the model is scored
        pool = _check_population(population, target, X_aud[used], len(Xm), id_column)
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
        "import_path": describe(model),
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
    columns = {"columns_used": used, "columns_ignored": ignored, "id_column": records.id_column}
    reference, run_key = [], ""
    design: dict[str, Any] = {"reference_models": why_not or "none (n_reference = 0)"}
    if train_refs:
        audited = Audited(X_aud[used], y_aud, codes, classes, regression, scale, int(member.sum()))
        engine = {"backend": backend, "n_jobs": n_jobs, "address": address, "progress": progress}
        reference, run_key, design = reference_outputs(
            model,
            reference_trainer,
            pool,
            target,
            audited,
            n_reference=k,
            random_state=random_state,
            out_dir=out_dir,
            engine=engine,
        )
    return audit_predictions(
        codes,
        member,
        outputs,
        reference=reference,
        records=records,
        label_name=target or "label",
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
        design={"source": "audit_fitted: the model's outputs computed in process", **columns, **design},
        out_dir=out_dir,
        write_report=write_report,
        run_key=run_key,
    )


def _check_population(
    population: Any, target: str | None, X_aud: pd.DataFrame, n_members: int, id_column: str | None
) -> tuple[pd.DataFrame, pd.Series]:
    """The population as ``(features, target)`` on the columns of ``X_aud`` (those the reference models are
    trained on), checked as the audited records are."""
    Xp, yp = _split(population, target, "population")
    lacking = [str(c) for c in X_aud.columns if c not in Xp.columns]
    if lacking:
        raise MipkitValueError(
            f"The population table lacks the column(s) {', '.join(map(repr, lacking[:8]))} the reference "
            "models are trained on; give it the columns of the members and non-members."
        )
    Xp = Xp[list(X_aud.columns)]
    check_features(Xp, "population")
    # the members and non-members together may be the population (reference models with and without each
    # target); one of them alone is the wrong file
    parts = (X_aud.iloc[:n_members], X_aud.iloc[n_members:])
    if any(same_rows(Xp, part) for part in parts):
        raise MipkitValueError(
            "The population holds the same records as the members or the non-members: it must hold other "
            "records of the population. Is it the members or non-members file given again?"
        )
    return Xp, yp
