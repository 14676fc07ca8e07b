"""What :func:`mipkit.audit_fitted` audits: :class:`FittedRelease`, the fitted model you release with the
records it was trained on and records it did not see."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from mipkit.workflows.audit_fitted.inputs import _split, check_model, check_no_overlap

__all__ = ["FittedRelease"]


@dataclass(frozen=True, eq=False)
class FittedRelease:
    """A fitted model with its members and non-members (and, optionally, how to retrain it).

    Attributes
    ----------
    model : fitted estimator, Pipeline, regressor or torch.nn.Module
        The model you release. A classifier needs ``predict_proba`` (or ``decision_function``) and
        ``classes_`` (a torch module: logits over classes ``0..C-1``); a regressor ``predict``.
    members, non_members : DataFrame (with the target column) or (X, y) pair
        Records the model was trained on, and records it was not (a holdout or a population sample). They
        must not share a record. Columns the model was not fitted on (``feature_names_in_``) are ignored.
    population : DataFrame or (X, y) pair, optional
        Records from the same population, neither members nor non-members, added to the reference models'
        pool; without it each reference model trains on a random half of the audited records.
    reference_trainer : estimator or callable, optional
        The training procedure of the reference models: an unfitted (or fitted) estimator cloned for every
        fit, or ``fn(X, y, random_state) -> fitted model``. Default: a clone of ``model`` (scikit-learn; a
        torch module needs ``reference_trainer``, else only LOSS runs).

    Raises
    ------
    MipkitValueError
        When built with a model that gives no predictions to audit (a clusterer, a transformer), or with
        members and non-members (both tables, or both ``(X, y)`` pairs) that share a record.
    """

    model: Any
    members: Any
    non_members: Any
    population: Any = None
    reference_trainer: Any = None

    def __post_init__(self) -> None:
        check_model(self.model)
        members, non_members = self.members, self.non_members
        if isinstance(members, (tuple, list)) and isinstance(non_members, (tuple, list)):
            members, non_members = (
                pd.concat(_split(part, None, what), axis=1)
                for part, what in ((members, "members"), (non_members, "non-members"))
            )
        if isinstance(members, pd.DataFrame) and isinstance(non_members, pd.DataFrame):
            check_no_overlap(members, non_members)
