"""The records a verb acts on: :class:`LabelledTable`, a table with its label column (or the arrays of an
encoded one), shared by the verbs that train on a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.data.io import Dataset, features_target, read_table

__all__ = ["LabelledTable"]


@dataclass(frozen=True, eq=False)
class LabelledTable:
    """A table of records with its label column (or the arrays of an encoded one): what a model is trained on.

    Attributes
    ----------
    table : str, Path, pandas.DataFrame or mipkit.data.io.Dataset
        A CSV or Parquet file, a DataFrame, or features and labels already encoded as arrays.
    target : str
        The label column of a table (not needed for arrays).
    id_column : str or None
        A column of unique, non-missing record ids: never a feature, it names the records in every per-record
        output (not for arrays, which have no columns).

    Raises
    ------
    MipkitValueError
        When built without a table, without the label column of a table, with an id column on arrays or
        with the label column as the id column.
    """

    table: Any = None
    target: str = ""
    id_column: str | None = None

    def __post_init__(self) -> None:
        table = self.table
        if isinstance(table, Path):
            table = str(table)
        if table is None or (isinstance(table, str) and not table.strip()):
            raise MipkitValueError(
                "The 'data' parameter is required (a CSV or Parquet file, or a DataFrame)."
            )
        if not isinstance(table, (str, pd.DataFrame, Dataset)):
            raise MipkitValueError(
                "The 'data' parameter must be a CSV or Parquet file, a pandas DataFrame or a Dataset of "
                f"arrays. Got {type(table).__name__} instead."
            )
        object.__setattr__(self, "table", table)
        target = "" if self.target is None else str(self.target).strip()
        if not isinstance(table, Dataset) and not target:
            raise MipkitValueError("The 'target' parameter is required (the label column of the table).")
        object.__setattr__(self, "target", target)
        id_column = None if self.id_column is None else str(self.id_column).strip() or None
        if id_column is not None and isinstance(table, Dataset):
            raise MipkitValueError(
                f"The 'id_column' parameter names column {id_column!r}, but the data passed are arrays "
                "without columns; pass a table."
            )
        if id_column is not None and id_column == target:
            raise MipkitValueError(
                f"The 'id_column' parameter names the target column {id_column!r}; the ids must be another "
                "column."
            )
        object.__setattr__(self, "id_column", id_column)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelledTable):
            return NotImplemented
        a, b = self.table, other.table
        same = (
            a.equals(b)
            if isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame)
            else a is b or (isinstance(a, str) and a == b)
        )
        return same and (self.target, self.id_column) == (other.target, other.id_column)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def of(cls, data: Any) -> LabelledTable:
        """``data`` itself, or arrays (a :class:`~mipkit.data.io.Dataset`) wrapped; anything else is refused
        with what to pass."""
        if isinstance(data, cls):
            return data
        if isinstance(data, Dataset):
            return cls(data)
        raise MipkitValueError(
            "The data must be a LabelledTable(table, target=...) (a table with its label column) or a "
            f"Dataset of arrays. Got {type(data).__name__} instead."
        )

    @property
    def is_arrays(self) -> bool:
        """The records are arrays (a :class:`~mipkit.data.io.Dataset`) rather than a table."""
        return isinstance(self.table, Dataset)

    @property
    def path(self) -> str | None:
        """The file the table is read from (None for a DataFrame or arrays)."""
        return self.table if isinstance(self.table, str) else None

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (read from its file), index reset to the rows' positions."""
        if self.is_arrays:
            raise MipkitValueError("The data are arrays without columns; pass a table.")
        df = read_table(self.table) if isinstance(self.table, str) else self.table
        return df.reset_index(drop=True)

    def dataset(self, *, encode: str = "none", drop: tuple[str, ...] = (), dropna: bool = False) -> Dataset:
        """Features and labels as arrays (:func:`~mipkit.data.io.features_target`; the id column is never a
        feature). Arrays are returned as they are."""
        if isinstance(self.table, Dataset):
            return self.table
        drop = tuple(drop)
        if self.id_column and self.id_column not in drop:
            drop = (*drop, self.id_column)
        return features_target(self.frame(), self.target, encode=encode, drop=drop, dropna=dropna)

    def describe(self) -> dict[str, Any]:
        """``data``, ``target`` and ``id_column`` as JSON (the file's path; None for a DataFrame or arrays):
        what a run folder's ``config.json`` says about the data."""
        return {"data": self.path, "target": self.target, "id_column": self.id_column}
