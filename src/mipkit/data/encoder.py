"""A scikit-learn transformer that encodes a table's raw columns from their public domain.

:class:`DomainEncoder` is the first step of a released model that reads the table as it is (the
``model.joblib`` of ``mipkit train-private``): it takes a DataFrame with the feature columns by name and
returns :func:`mipkit.data.domain.encode_features` of them, so the encoding depends on the public domain
alone, never on the rows it is fitted on. A missing cell is encoded where the domain allows it (its ``min``
and a ``<col>_nan`` indicator) and refused otherwise, as is a cell outside the domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from mipkit._validation import MipkitValueError
from mipkit.data.domain import check_domain, encode_features, validate_domain

__all__ = ["DomainEncoder"]


class DomainEncoder(TransformerMixin, BaseEstimator):
    """Encode the raw feature columns of a table from their public domain.

    Parameters
    ----------
    domain : mapping, optional
        The features' public domain (:mod:`mipkit.data.domain`). None: every column is numeric and passes
        as it is (a missing cell is refused).
    columns : sequence of str
        The feature columns, in the order they are encoded.

    Attributes
    ----------
    feature_names_in_ : ndarray of str
        ``columns``: the columns the transformer reads (others are ignored by the audits).
    n_features_in_ : int
    feature_names_out_ : list of str
        The encoded features' names.
    feature_domain_ : dict
        The checked domain entries of the feature columns (the entries the encoding reads).
    accepts_missing_ : bool
        Whether the domain lets some column be missing (an audit then passes missing cells through).
    """

    def __init__(self, domain: Mapping | None = None, columns: Sequence[str] = ()) -> None:
        self.domain = domain
        self.columns = columns

    def fit(self, X: Any = None, y: Any = None) -> DomainEncoder:
        """Check the domain of ``columns``; the rows of ``X`` are not read (the encoding is the domain's)."""
        if not list(self.columns):
            raise MipkitValueError("DomainEncoder needs the feature columns it encodes.")
        self.feature_names_in_ = np.asarray([str(c) for c in self.columns], dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)
        if self.domain is None:
            self.feature_names_out_ = list(self.feature_names_in_)
            self.accepts_missing_ = False
            return self
        # the domain may describe more than the features (the label, dropped columns): its other entries
        # were checked against the table by the caller
        known = list(validate_domain(self.domain))
        dom = check_domain(self.domain, [str(c) for c in self.columns], known=known)
        self.feature_domain_ = dom
        empty = pd.DataFrame({c: pd.Series(dtype=_dtype(dom[c])) for c in self.feature_names_in_})
        self.feature_names_out_ = encode_features(empty, dom)[1]
        self.accepts_missing_ = any(spec.get("missing") for spec in dom.values())
        return self

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """The encoded features of the table ``X`` (its other columns are ignored)."""
        if not isinstance(X, pd.DataFrame):
            raise MipkitValueError(
                "This model reads a table with its columns by name (a DataFrame); got an array. Give the "
                f"table's raw columns: {', '.join(self.feature_names_in_[:8])}."
            )
        lacking = [c for c in self.feature_names_in_ if c not in X.columns]
        if lacking:
            raise MipkitValueError(
                f"The table lacks the feature column(s) {', '.join(map(repr, lacking[:8]))}."
            )
        table = X[list(self.feature_names_in_)]
        if self.domain is not None:
            return encode_features(table, self.feature_domain_)[0]
        missing = [c for c in table.columns if table[c].isna().any()]
        if missing:
            raise MipkitValueError(
                f"Missing values (empty, NA or '?' cells) in column(s) {', '.join(map(repr, missing[:8]))}: "
                "this model was trained "
                "without a domain, on rows with no missing value; drop those rows first."
            )
        return table.to_numpy(dtype=float)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        return np.asarray(self.feature_names_out_, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags


def _dtype(spec: Mapping) -> str:
    return "float64" if spec["type"] == "numeric" else "object"
