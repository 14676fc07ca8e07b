"""The inputs of :func:`mipkit.audit_fitted`, checked before the model is scored.

Members, non-members and the population are tables with the target column (or ``(X, y)`` pairs); they must
not share a record, must hold values the model can score (no NaN unless the model encodes missing cells
itself, no infinity, no word in a column of numbers), must give the model every column it was fitted on,
and the target must not be one of those. The model must be a classifier (``predict_proba`` /
``decision_function``), a regressor or a torch module: a clusterer's ``predict`` is no output to audit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = ["check_features", "check_model", "check_no_overlap"]


def _is_torch_module(obj: Any) -> bool:
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(obj).__mro__)


def _is_regressor(model: Any) -> bool:
    from sklearn.base import is_regressor

    if is_regressor(model):
        return True
    has_scores = callable(getattr(model, "predict_proba", None)) or callable(
        getattr(model, "decision_function", None)
    )
    return not has_scores and callable(getattr(model, "predict", None))


def _split(data: Any, target: str | None, what: str) -> tuple[pd.DataFrame, pd.Series]:
    """``(features, target)`` of a DataFrame with the ``target`` column, or of a ``(X, y)`` pair."""
    if isinstance(data, pd.DataFrame):
        if not target or target not in data.columns:
            raise MipkitValueError(
                f"The {what} table has no target column {target!r}; its columns: "
                f"{', '.join(map(str, data.columns[:12]))}."
            )
        return data.drop(columns=[target]).reset_index(drop=True), data[target].reset_index(drop=True)
    if isinstance(data, (tuple, list)) and len(data) == 2:
        X = np.asarray(data[0])
        y = np.asarray(data[1])
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise MipkitValueError(f"The {what} must be a DataFrame or an (X, y) pair with X 2-D and y (n,).")
        return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]), pd.Series(y)
    raise MipkitValueError(
        f"The {what} must be a pandas DataFrame (with the target column) or an (X, y) pair. "
        f"Got {type(data).__name__} instead."
    )


def check_no_overlap(members: pd.DataFrame, non_members: pd.DataFrame) -> None:
    """Refuse members and non-members that share a record (an exact duplicate row, target included):
    such a record would be both a member and a non-member of the game."""
    if list(members.columns) != list(non_members.columns):
        raise MipkitValueError(
            "The members and non-members tables must have the same columns, in the same order."
        )
    hm = pd.util.hash_pandas_object(members, index=False)
    hn = pd.util.hash_pandas_object(non_members, index=False)
    shared = np.isin(hn.to_numpy(), hm.to_numpy())
    if shared.any():
        first = int(np.flatnonzero(shared)[0])
        raise MipkitValueError(
            f"Members and non-members overlap: {int(shared.sum())} non-member row(s) also occur among the "
            f"members (first: non-member row {first + 1}); a record cannot be both. Remove the duplicates."
        )


def _numeric(frame: pd.DataFrame, what: str) -> np.ndarray:
    bad = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise MipkitValueError(
            f"Training reference models needs numeric features; the {what} have non-numeric column(s) "
            f"{', '.join(map(str, bad[:5]))}. Encode them first (mipkit.data.features_target)."
        )
    return frame.to_numpy(dtype=float)


def _codes(labels: pd.Series, classes: np.ndarray, what: str) -> np.ndarray:
    """Class codes ``0..C-1`` of ``labels`` in the order of the model's ``classes_``."""
    index = {c.item() if hasattr(c, "item") else c: i for i, c in enumerate(classes)}
    unknown = sorted({str(v) for v in labels if v not in index})
    if unknown:
        raise MipkitValueError(
            f"Labels {', '.join(unknown[:5])} of {what} are not among the model's classes "
            f"{', '.join(map(str, classes))}."
        )
    return np.array([index[v] for v in labels], dtype=np.int64)


def check_model(model: Any) -> str:
    """``"torch"``, ``"regressor"`` or ``"classifier"``: what the audit takes the model's outputs as; a
    model of another kind (a clusterer, a transformer, an outlier detector) is refused."""
    if _is_torch_module(model):
        return "torch"
    try:
        from sklearn.utils import get_tags

        kind = get_tags(model).estimator_type
    except Exception:  # not a scikit-learn estimator: judged by its methods
        kind = None
    has_scores = callable(getattr(model, "predict_proba", None)) or callable(
        getattr(model, "decision_function", None)
    )
    if kind not in (None, "classifier", "regressor") or not (
        has_scores or callable(getattr(model, "predict", None))
    ):
        raise MipkitValueError(
            f"The model ({type(model).__name__}) is neither a classifier (predict_proba, decision_function) "
            f"nor a regressor{f' but a {kind}' if kind else ''}: its outputs are no predictions to audit."
        )
    return "regressor" if _is_regressor(model) else "classifier"


def _accepts_missing(model: Any) -> bool:
    """Whether the model's first step encodes missing cells itself (``accepts_missing_``: a
    :class:`mipkit.data.encoder.DomainEncoder` whose public domain allows them)."""
    steps = getattr(model, "steps", None)
    first = steps[0][1] if steps else model
    return bool(getattr(first, "accepts_missing_", False))


def check_features(X: pd.DataFrame, what: str, model: Any = None, target: str | None = None) -> None:
    """Refuse features the model cannot score: missing values, infinities, words among numbers, and (with
    ``model``) columns it was fitted on that ``X`` lacks or a ``target`` that is one of them. With ``model``
    fitted on named columns, only those columns are checked (the others are ignored)."""
    from mipkit.data.io import check_not_mostly_numeric

    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        names = [str(c) for c in names]
        if target is not None and target in names:
            raise MipkitValueError(
                f"The target {target!r} is one of the features the model was fitted on "
                f"({', '.join(names[:8])}); give the label column as the target."
            )
        lacking = [c for c in names if c not in X.columns]
        if lacking:
            raise MipkitValueError(
                f"The {what} lack the column(s) {', '.join(map(repr, lacking[:8]))} the model was fitted on."
            )
        X = X[names]  # the other columns are ignored
    missing = [str(c) for c in X.columns if X[c].isna().any()]
    if missing and not _accepts_missing(model):
        raise MipkitValueError(
            f"Missing values (empty, NA or '?' cells) in column(s) {', '.join(map(repr, missing[:8]))} of "
            f"the {what}; impute them or drop those rows first."
        )
    for c in X.columns:
        column = X[c]
        if pd.api.types.is_bool_dtype(column):
            continue
        if pd.api.types.is_numeric_dtype(column):
            if np.isinf(column.to_numpy(dtype=float)).any():
                raise MipkitValueError(f"Column {str(c)!r} of the {what} has infinite values.")
        else:
            check_not_mostly_numeric(column, str(c), what)
