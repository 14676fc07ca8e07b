"""The columns a released model reads, and its reference models trained on those columns as they are.

A model fitted on a table (``feature_names_in_``: a scikit-learn Pipeline that one-hot encodes its own text
columns, say) is retrained for LiRA and RMIA as a clone of itself on the same raw columns. The engine
(:func:`mipkit.engine.runner.run_fits`: ledger, local processes, Ray) moves numeric arrays, so the columns
travel as numbers: :class:`ColumnCodec` writes each text column as codes of its values (in the order they
first occur in the pool) and :class:`RawColumns` turns the numbers back into the table, with each column's
values and dtype as read, before every ``fit`` and ``predict_proba`` of the clone. Columns the model does not
read are ignored and listed (:func:`used_columns`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = ["ColumnCodec", "RawColumns", "used_columns"]


def used_columns(model: Any, columns: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(used, ignored)``: the columns the model was fitted on (``feature_names_in_``, in its order) and the
    other columns of the table; without ``feature_names_in_`` every column is used."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return [str(c) for c in columns], []
    used = [str(c) for c in names]
    return used, [str(c) for c in columns if str(c) not in set(used)]


@dataclass(frozen=True)
class ColumnCodec:
    """How the used columns travel through the engine as numbers, and back.

    Attributes
    ----------
    columns : tuple of str
        The columns, in the model's order.
    dtypes : tuple of str
        Each column's dtype as read (restored before the model sees the column).
    categories : tuple of (tuple or None)
        For a text column, its values (code ``j`` is ``categories[i][j]``); None for a numeric column.
    """

    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    categories: tuple[tuple | None, ...]

    @classmethod
    def of(cls, frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> ColumnCodec:
        """The codec of ``columns`` over the rows of ``frames`` (every value the engine will carry)."""
        dtypes, categories = [], []
        for c in columns:
            parts = [f[c] for f in frames]
            column = pd.concat(parts, ignore_index=True)
            if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
                dtypes.append(str(column.dtype))
                categories.append(None)
            else:
                dtypes.append("object")
                categories.append(tuple(pd.unique(column.to_numpy(dtype=object))))
        return cls(tuple(map(str, columns)), tuple(dtypes), tuple(categories))

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """``(n, len(columns))`` floats: numbers as they are, text as the codes of its values."""
        out = np.empty((len(frame), len(self.columns)), dtype=float)
        for j, (c, cats) in enumerate(zip(self.columns, self.categories, strict=True)):
            if cats is None:
                out[:, j] = frame[c].to_numpy(dtype=float)
                continue
            codes = pd.Index(cats).get_indexer(frame[c].to_numpy(dtype=object))
            if (codes < 0).any():  # the codec is built over every row it encodes
                raise MipkitValueError(f"Internal error: a value of column {c!r} has no code.")
            out[:, j] = codes
        return out

    def decode(self, X: np.ndarray) -> pd.DataFrame:
        """The table ``encode`` wrote as ``X``: each column's values and dtype as read."""
        X = np.asarray(X)
        cols = {}
        for j, (c, dtype, cats) in enumerate(zip(self.columns, self.dtypes, self.categories, strict=True)):
            if cats is None:
                cols[c] = X[:, j].astype(dtype) if dtype != "bool" else X[:, j] != 0
            else:
                cols[c] = np.asarray(cats, dtype=object)[X[:, j].astype(np.int64)]
        return pd.DataFrame(cols)

    def fingerprint(self) -> str:
        """A hash of the columns, dtypes and codes (the ledger's run key depends on them)."""
        text = json.dumps(
            [self.columns, self.dtypes, [None if c is None else list(map(repr, c)) for c in self.categories]]
        )
        return hashlib.sha256(text.encode()).hexdigest()


class RawColumns:
    """An estimator fitted and queried on the table a :class:`ColumnCodec` decodes from the engine's arrays.

    ``inner`` is the clone of the released model (or of the reference trainer); ``classes_`` are its own
    after ``fit``. It has ``predict_proba`` or ``decision_function`` exactly when ``inner`` has.
    """

    def __init__(self, inner: Any, codec: ColumnCodec) -> None:
        self.inner = inner
        self.codec = codec
        for name in ("predict_proba", "decision_function"):
            if callable(getattr(inner, name, None)):
                setattr(self, name, self._method(name))

    def _method(self, name: str):
        def call(X):
            return getattr(self.inner, name)(self.codec.decode(X))

        call.__name__ = name
        return call

    def fit(self, X, y):
        self.inner.fit(self.codec.decode(X), y)
        self.classes_ = getattr(self.inner, "classes_", None)
        return self

    def predict(self, X):
        return self.inner.predict(self.codec.decode(X))
