"""Audit the fitted model you release: its outputs on its training records (members) against records it did
not see (non-members).

:func:`audit_fitted` answers the question "how much does *this fitted model* reveal?", where
:func:`mipkit.audit` answers "how much does a model trained by *this procedure* reveal?" by retraining on
random halves. Steps:

1. The released model's outputs on members and non-members (:mod:`mipkit.workflows.audit_fitted.outputs`):
   ``predict_proba`` for a classifier (a scikit-learn estimator or Pipeline, or a ``torch.nn.Module``), the
   per-record squared error for a regressor. LOSS needs nothing more (no retraining).
2. ``n_reference`` reference models are trained by the user's training procedure (the release's
   ``reference_trainer``: an estimator, cloned with :func:`sklearn.base.clone` for every fit, or a callable
   ``fn(X, y, random_state) -> fitted model``; default: a clone of the model), each on a random subset of
   the population records (when given) and the audited records
   (:mod:`mipkit.workflows.audit_fitted.reference`). A model fitted on a table (a Pipeline that encodes its
   own text columns, say) is retrained on the columns it reads (``feature_names_in_``), as they are; the
   table's other columns are ignored and listed in the design. The fits run through the engine
   (:func:`mipkit.engine.runner.run_fits`): a ledger in the run folder (re-running resumes), local
   processes or Ray.
3. The measurement of :func:`mipkit.audit_scores` on those outputs
   (:func:`mipkit.workflows.audit_scores.run.measure`), with the records named by their row and
   ``id_column`` and measured per subgroup of ``slice_by`` (:mod:`mipkit.workflows.audit_fitted.records`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Progress
from mipkit._validation import MipkitValueError
from mipkit.data.tables import same_rows
from mipkit.workflows.audit.config import RecordInfo
from mipkit.workflows.audit_fitted.columns import used_columns
from mipkit.workflows.audit_fitted.config import AuditFittedConfig
from mipkit.workflows.audit_fitted.data import FittedRelease
from mipkit.workflows.audit_fitted.inputs import (
    _is_torch_module,
    _split,
    check_features,
    check_model,
    check_no_overlap,
)
from mipkit.workflows.audit_fitted.outputs import Released, labels_of, refuse_text, released_outputs
from mipkit.workflows.audit_fitted.records import records_of_tables
from mipkit.workflows.audit_fitted.reference import Audited, reference_outputs
from mipkit.workflows.audit_fitted.result import AuditFittedResult
from mipkit.workflows.audit_scores.outputs import Predictions
from mipkit.workflows.audit_scores.run import measure

__all__ = ["audit_fitted"]


@dataclass(frozen=True, eq=False)
class _Tables:
    """The audited records, checked: features (members, then non-members), labels, who is a member, who
    each record is, and the columns the model reads and those it ignores."""

    X: pd.DataFrame
    y: pd.Series
    member: np.ndarray
    records: RecordInfo
    used: list[str]
    ignored: list[str]


def _tables(release: FittedRelease, config: AuditFittedConfig) -> _Tables:
    """The members and non-members as one table, refused when they share a record, lack a column the model
    reads or hold values it cannot score."""
    target, model = config.target, release.model
    Xm, ym = _split(release.members, target, "members")
    Xn, yn = _split(release.non_members, target, "non-members")
    check_no_overlap(pd.concat([Xm, ym.rename("__y")], axis=1), pd.concat([Xn, yn.rename("__y")], axis=1))
    (Xm, Xn), records, ignored = records_of_tables(
        [Xm, Xn], model=model, id_column=config.id_column, slice_by=config.slice_by, target=target
    )
    check_features(Xm, "members", model, target)
    check_features(Xn, "non-members", model, target)
    refuse_text(model, Xm)
    member = np.r_[np.ones(len(Xm), bool), np.zeros(len(Xn), bool)]
    X, y = pd.concat([Xm, Xn], ignore_index=True), pd.concat([ym, yn], ignore_index=True)
    return _Tables(X, y, member, records, used_columns(model, list(X.columns))[0], ignored)


def _why_no_references(release: FittedRelease, config: AuditFittedConfig) -> str | None:
    """None when reference models are trained; else why not (the design's ``reference_models``)."""
    if release.population is not None and config.n_reference == 0:
        raise MipkitValueError(
            "The population records are for the reference models, but n_reference = 0 trains none: train at "
            "least 2 (--reference-models) or give no population."
        )
    if config.n_reference == 0:
        return "none (n_reference = 0)"
    if not {"lira", "rmia"} & set(config.attacks):
        return "none (LOSS only: no attack that needs them was requested)"
    procedure = release.model if release.reference_trainer is None else release.reference_trainer
    if not _is_torch_module(procedure):
        return None
    if release.population is not None:
        raise MipkitValueError(
            "A torch module cannot be retrained as it is: pass reference_trainer (a TorchClassifier or a "
            "callable that trains one) to train the reference models."
        )
    return "none (a torch module cannot be retrained as it is: pass reference_trainer)"


def _check_population(
    population: Any, target: str | None, X_aud: pd.DataFrame, n_members: int
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


def _references(
    release: FittedRelease,
    config: AuditFittedConfig,
    audited: Audited,
    pool: tuple[pd.DataFrame, pd.Series] | None,
    *,
    run_dir: str | Path | None,
    progress: Progress | None,
) -> tuple[list, str, dict]:
    """The reference models' outputs, the fits' run key and the design's lines."""
    engine = {
        "backend": config.backend,
        "n_jobs": config.n_jobs,
        "address": config.address,
        "progress": progress,
        "stage": "reference fits",
    }
    return reference_outputs(
        release.model,
        release.reference_trainer,
        pool,
        config.target,
        audited,
        n_reference=config.n_reference,
        random_state=config.seed,
        run_dir=run_dir,
        engine=engine,
    )


def audit_fitted(
    data: FittedRelease,
    config: AuditFittedConfig | None = None,
    *,
    run_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> AuditFittedResult:
    """Audit a fitted model on its training records (members) and records it did not see (non-members).

    Parameters
    ----------
    data : FittedRelease
        The model you release, its members and non-members, and optionally population records and the
        reference models' training procedure.
    config : AuditFittedConfig, optional
        Every setting (default: ``AuditFittedConfig()``; ``target`` names the label column of tables).
    run_dir : path, optional
        The run folder of the reference fits' ledger (``ledger.sqlite``: re-running the same audit
        resumes); ``result.write(run_dir)`` writes the results beside it.
    progress : Progress, optional
        ``progress("reference fits", done, total)`` over the reference fits
        (:func:`mipkit.engine.runner.run_fits`).

    Returns
    -------
    AuditFittedResult
        ``question`` is "this fitted model"; ``skipped`` says which attacks did not run and why; ``design``
        lists the columns the model reads and those it ignores.
    """
    config = AuditFittedConfig() if config is None else config
    if not isinstance(data, FittedRelease):
        raise MipkitValueError(
            f"audit_fitted audits a FittedRelease(model, members, non_members). Got {type(data).__name__}."
        )
    kind = check_model(data.model)
    tables = _tables(data, config)
    labels = labels_of(data.model, kind, tables.y, config.target)
    why_not = _why_no_references(data, config)
    n_members = int(tables.member.sum())
    pool = None
    if why_not is None and data.population is not None:  # checked before the model is scored
        pool = _check_population(data.population, config.target, tables.X[tables.used], n_members)
    released = released_outputs(data.model, kind, tables.X, tables.y, labels)
    reference, run_key, design = [], "", {"reference_models": why_not}
    if why_not is None:
        audited = _audited(released, tables, kind, n_members)
        reference, run_key, design = _references(
            data, config, audited, pool, run_dir=run_dir, progress=progress
        )
    predictions = _predictions(released, tables, reference, config, design)
    run_folder = None if run_dir is None else Path(run_dir)
    return AuditFittedResult(**measure(predictions, config), run_key=run_key, run_dir=run_folder)


def _audited(released: Released, tables: _Tables, kind: str, n_members: int) -> Audited:
    """The audited records on the columns the model reads, as the reference models see them."""
    labels = released.labels
    return Audited(
        tables.X[tables.used], tables.y, labels.codes, labels.classes, kind == "regressor", released.scale,
        n_members,
    )  # fmt: skip


def _predictions(
    released: Released, tables: _Tables, reference: list, config: AuditFittedConfig, design: dict
) -> Predictions:
    """The outputs of the released model and the reference models as the predictions of an audit."""
    classes = released.labels.classes
    columns = {
        "columns_used": tables.used,
        "columns_ignored": tables.ignored,
        "id_column": tables.records.id_column,
    }
    return Predictions(
        released.labels.codes,
        tables.member,
        released.outputs,
        tuple(reference),
        classes=() if classes is None else tuple(str(c) for c in classes),
        records=tables.records,
        label_name=config.target or "label",
        model_info=released.info,
        design={"source": "audit_fitted: the model's outputs computed in process", **columns, **design},
    )
